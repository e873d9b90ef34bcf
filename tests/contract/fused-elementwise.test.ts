/**
 * fusedElementwise on every backend of the repository: chains of unary ops, ops with a number and ops with an
 * array operand (broadcast rows, columns, 0-d, transposed, first or second), against a
 * float64 oracle that applies each step and rounds to float32 after it (what separate ops compute), within a
 * few float32 roundings per step; int32 chains exactly. Contiguous (vec4 on webgpu), odd-length and strided
 * inputs; one kernel per chain on webgpu (its fusedElementwiseKernel); the input untouched; typed errors.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type ComputeBackend,
  DTypeError,
  type ElementwiseStep,
  InvalidArgumentError,
  type NDArray,
  ShapeMismatchError,
  shrinkView,
  transposeView,
  UnsupportedOpError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const f = Math.fround;
const UNARY: Record<string, (x: number) => number> = {
  hardSwish: (x) => x * (Math.min(Math.max(x + 3, 0), 6) / 6),
  relu: (x) => Math.max(x, 0),
  sqrt: Math.sqrt,
  neg: (x) => -x,
  exp: Math.exp,
  recip: (x) => 1 / x,
};
const BINARY: Record<string, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  maximum: Math.max,
  minimum: Math.min,
};

/** The chain in float64, rounded to float32 after each step (int32: wrapped). */
function oracle(x: number, steps: readonly ElementwiseStep[], int = false): number {
  const round = int ? (v: number) => v | 0 : f;
  let v = x;
  for (const s of steps) {
    if ('scalar' in s) v = round(s.scalarFirst ? BINARY[s.op]!(s.scalar, v) : BINARY[s.op]!(v, s.scalar));
    else if (!('array' in s)) v = round(UNARY[s.op]!(v));
  }
  return v;
}

const CHAINS: [string, ElementwiseStep[], number][] = [
  // name, steps, the half-width of the input range
  [
    'hard swish, then a scalar affine (PP-LCNet)',
    [{ op: 'hardSwish' }, { op: 'mul', scalar: 0.7 }, { op: 'add', scalar: 0.25 }],
    5,
  ],
  [
    'ONNX HardSigmoid as its four steps',
    [
      { op: 'mul', scalar: 0.2 },
      { op: 'add', scalar: 0.5 },
      { op: 'maximum', scalar: 0 },
      { op: 'minimum', scalar: 1 },
    ],
    4,
  ],
  [
    'relu6(x + 3) / 6 (paddle hard sigmoid)',
    [
      { op: 'add', scalar: 3 },
      { op: 'maximum', scalar: 0 },
      { op: 'minimum', scalar: 6 },
      { op: 'div', scalar: 6 },
    ],
    5,
  ],
  [
    'a scalar first: −sqrt(relu(1 − x))',
    [{ op: 'sub', scalar: 1, scalarFirst: true }, { op: 'relu' }, { op: 'sqrt' }, { op: 'neg' }],
    3,
  ],
  ['1 / (1 + exp(x))', [{ op: 'exp' }, { op: 'add', scalar: 1 }, { op: 'recip' }], 3],
];

/** The chain as separate ops (a number or an array operand on either side), each intermediate freed. */
function separately(be: ComputeBackend, x: NDArray, steps: readonly ElementwiseStep[]): NDArray {
  let z = x;
  for (const s of steps) {
    const next =
      'array' in s
        ? s.arrayFirst
          ? be.binary(s.op, s.array, z)
          : be.binary(s.op, z, s.array)
        : 'scalar' in s
          ? s.scalarFirst
            ? be.binary(s.op, s.scalar, z)
            : be.binary(s.op, z, s.scalar)
          : be.unary(s.op, z);
    if (z !== x) be.free(z);
    z = next;
  }
  return z;
}

/** 'all equal' where y and z hold the same bits, else the first element that differs. */
async function firstDifference(be: ComputeBackend, y: NDArray, z: NDArray): Promise<string> {
  const [got, want] = [(await be.read(y)) as Float32Array, (await be.read(z)) as Float32Array];
  const first = got.findIndex((v, i) => !Object.is(v, want[i]));
  return first === -1 ? 'all equal' : `[${first}]: ${got[first]} vs ${want[first]}`;
}

const data = (n: number, half: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => f(half * Math.sin(i * 12.9898 + seed * 78.233)));

describe.each(Object.keys(REPO_BACKENDS))('fusedElementwise on %s', (name) => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS[name]!();
  });
  afterAll(() => be?.dispose());

  const kernels = (): number | undefined =>
    (be as unknown as { kernelStats?: () => { dispatches: number } }).kernelStats?.().dispatches;

  test.each(CHAINS)('%s: within a few roundings per step of the float64 oracle', async (_, steps, half) => {
    for (const [shape, view] of [
      [[2, 3, 64], false],
      [[37], false],
      [[16, 12], true],
    ] as const) {
      const n = shape.reduce((p, d) => p * d, 1);
      const xd = data(n, half, n);
      const x0 = be.fromArray(xd, [...shape]);
      const x: NDArray = view ? transposeView(x0) : x0;
      const before = kernels();
      const y = be.fusedElementwise(x, steps);
      if (name === 'webgpu') expect(kernels()! - before!).toBe(1);
      expect(y.shape).toEqual(x.shape);
      const got = (await be.read(y)) as Float32Array;
      // x's elements in the view's row-major order
      const at = (i: number): number => {
        if (!view) return xd[i]!;
        const [r, c] = [Math.floor(i / shape[0]!), i % shape[0]!]; // x is [12, 16]: x[r][c] = xd[c][r]
        return xd[c * shape[1]! + r]!;
      };
      for (let i = 0; i < n; i++) {
        const want = oracle(at(i), steps);
        const tol = 4 * steps.length * 2 ** -23 * Math.max(1, Math.abs(want));
        if (!(Math.abs(got[i]! - want) <= tol))
          throw new Error(`${shape}${view ? 'ᵀ' : ''}[${i}]: ${got[i]} vs ${want}`);
      }
      expect(Array.from((await be.read(x0)) as Float32Array)).toEqual(Array.from(xd)); // x untouched
      be.free(y);
      be.free(x0);
    }
  });

  // cpu and wasm round each step as its op does, with no contraction: a fused chain must give the separate ops'
  // bits. 70,001 elements cross wasm's blocks of 2,048 and its thread split (at 2^16 elements × steps); the views
  // are a contiguous slice at an offset and a transpose.
  if (name !== 'webgpu')
    test.each(CHAINS)('%s: the same bits as the separate ops, large and offset inputs', async (_, steps, half) => {
      const base = be.fromArray(data(70_003, half, 7), [70_003]);
      const t0 = be.fromArray(data(300 * 257, half, 9), [300, 257]);
      for (const x of [shrinkView(base, [[2, 70_003]]), base, transposeView(t0)]) {
        const y = be.fusedElementwise(x, steps);
        const z = separately(be, x, steps);
        expect(await firstDifference(be, y, z)).toBe('all equal');
        be.free(y);
        be.free(z);
      }
      be.free(base);
      be.free(t0);
    });

  test('int32 chains run as the separate ops, exactly (wrapping)', async () => {
    const steps: ElementwiseStep[] = [
      { op: 'add', scalar: 3 },
      { op: 'mul', scalar: -2 },
      { op: 'neg' },
      { op: 'maximum', scalar: 1 },
    ];
    const xd = Int32Array.from([0, 1, -5, 2 ** 30, -(2 ** 31), 7, -3, 100]);
    const x = be.fromArray(xd, [8], 'int32');
    const y = be.fusedElementwise(x, steps);
    expect(y.dtype).toBe('int32');
    expect(Array.from((await be.read(y)) as Int32Array)).toEqual(Array.from(xd, (v) => oracle(v, steps, true)));
    be.free(x);
    be.free(y);
  });

  // Array operands: the bandwidth probe's chain (add a bias row, relu, mul, add a residual) and one with the arrays
  // first, a column broadcast, a 0-d operand and a transposed one. The float64 oracle broadcasts each operand; on
  // cpu and wasm the fused chain gives the separate ops' bits, on webgpu it is one kernel.
  const arrayChains = (x: NDArray, ops: NDArray[]): [string, ElementwiseStep[]][] => [
    [
      'bias, relu, mul, residual',
      [{ op: 'add', array: ops[0]! }, { op: 'relu' }, { op: 'mul', array: ops[1]! }, { op: 'add', array: ops[2]! }],
    ],
    [
      'arrays first, column and 0-d broadcasts, transposed',
      [
        { op: 'sub', array: ops[3]!, arrayFirst: true },
        { op: 'mul', scalar: 0.5 },
        { op: 'tanh' },
        { op: 'div', array: ops[4]! },
        { op: 'maximum', array: ops[5]!, arrayFirst: true },
        { op: 'mul', array: ops[6]! },
        { op: 'add', array: x },
      ],
    ],
  ];
  /** Operands of a [rows, cols] chain: [cols], full, full, [rows, 1], full in [1, 2), 0-d, transposed. */
  const arrayOperands = (rows: number, cols: number): { ops: NDArray[]; host: Float32Array[]; free: NDArray[] } => {
    const n = rows * cols;
    const host = [
      data(cols, 1, 11),
      data(n, 2, 12),
      data(n, 2, 13),
      data(rows, 1, 14),
      Float32Array.from(data(n, 0.5, 15), (v) => f(v + 1.5)),
      Float32Array.of(f(-0.25)),
      data(n, 2, 16),
    ];
    const t = be.fromArray(host[6]!, [cols, rows]);
    const ops = [
      be.fromArray(host[0]!, [cols]),
      be.fromArray(host[1]!, [rows, cols]),
      be.fromArray(host[2]!, [rows, cols]),
      be.fromArray(host[3]!, [rows, 1]),
      be.fromArray(host[4]!, [rows, cols]),
      be.fromArray(host[5]!, []),
      transposeView(t),
    ];
    return { ops, host, free: [...ops.slice(0, 6), t] };
  };

  test('array operands: within a few roundings per step of the float64 oracle, one kernel on webgpu', async () => {
    const EXTRA: Record<string, (x: number) => number> = { tanh: Math.tanh };
    for (const [rows, cols] of [
      [6, 64],
      [5, 7],
    ] as const) {
      const n = rows * cols;
      const xd = data(n, 2, 3);
      const x = be.fromArray(xd, [rows, cols]);
      const { ops, host, free } = arrayOperands(rows, cols);
      // host[k][element i of the chain], each operand broadcast to [rows, cols]
      const at = (k: number, i: number): number => {
        const [r, c] = [Math.floor(i / cols), i % cols];
        return (
          [host[0]![c]!, host[1]![i]!, host[2]![i]!, host[3]![r]!, host[4]![i]!, host[5]![0]!][k] ??
          host[6]![c * rows + r]!
        );
      };
      for (const [label, steps] of arrayChains(x, ops)) {
        const before = kernels();
        const y = be.fusedElementwise(x, steps);
        if (name === 'webgpu') expect(kernels()! - before!).toBe(1);
        expect(y.shape).toEqual([rows, cols]);
        const got = (await be.read(y)) as Float32Array;
        for (let i = 0; i < n; i++) {
          let v = xd[i]!;
          for (const s of steps) {
            if ('array' in s) {
              const k = ops.indexOf(s.array);
              const a = k < 0 ? xd[i]! : at(k, i);
              v = f(s.arrayFirst ? BINARY[s.op]!(a, v) : BINARY[s.op]!(v, a));
            } else if ('scalar' in s) v = f(BINARY[s.op]!(v, s.scalar));
            else v = f((UNARY[s.op] ?? EXTRA[s.op])!(v));
          }
          const tol = 4 * steps.length * 2 ** -23 * Math.max(1, Math.abs(v));
          if (!(Math.abs(got[i]! - v) <= tol)) throw new Error(`${label} [${rows},${cols}][${i}]: ${got[i]} vs ${v}`);
        }
        be.free(y);
      }
      for (const o of free) be.free(o);
      be.free(x);
    }
  });

  if (name !== 'webgpu')
    test('array operands: the same bits as the separate ops, large, offset and strided inputs', async () => {
      const [rows, cols] = [300, 257]; // 77,100 elements: wasm's blocks and its thread split
      const base = be.fromArray(data(rows * cols + 3, 2, 21), [rows * cols + 3]);
      const x = be.reshape(shrinkView(base, [[3, rows * cols + 3]]), [rows, cols]);
      const { ops, free } = arrayOperands(rows, cols);
      for (const [label, steps] of arrayChains(x, ops)) {
        const y = be.fusedElementwise(x, steps);
        const z = separately(be, x, steps);
        expect(`${label}: ${await firstDifference(be, y, z)}`).toBe(`${label}: all equal`);
        be.free(y);
        be.free(z);
      }
      for (const o of free) be.free(o);
      if (x.buffer !== base.buffer) be.free(x);
      be.free(base);
    });

  test('array operands: typed errors for another dtype, a shape that does not broadcast, a freed array', () => {
    const x = be.fromArray([1, 2, 3, 4, 5, 6], [2, 3]);
    const live = be.liveBufferCount();
    const i = be.fromArray([1, 2, 3], [3], 'int32');
    const wide = be.fromArray([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [2, 2, 3]);
    const col = be.fromArray([1, 2, 3], [3, 1]);
    const gone = be.fromArray([1, 2, 3], [3]);
    be.free(gone);
    expect(() => be.fusedElementwise(x, [{ op: 'add', array: i }])).toThrow(DTypeError);
    expect(() => be.fusedElementwise(x, [{ op: 'add', array: wide }])).toThrow(ShapeMismatchError); // grows x
    expect(() => be.fusedElementwise(x, [{ op: 'add', array: col }])).toThrow(ShapeMismatchError); // 3 vs 2 rows
    expect(() => be.fusedElementwise(x, [{ op: 'add', array: gone }])).toThrow(UseAfterFreeError);
    expect(() => be.fusedElementwise(x, [{ op: 'add', array: null } as unknown as ElementwiseStep])).toThrow(
      InvalidArgumentError,
    );
    expect(() => be.fusedElementwise(x, [{ op: 'add', array: col, scalar: 1 } as unknown as ElementwiseStep])).toThrow(
      InvalidArgumentError,
    );
    expect(() => be.fusedElementwise(x, [{ op: 'greater', array: x }])).toThrow(InvalidArgumentError);
    expect(be.liveBufferCount()).toBe(live + 3); // i, wide, col: nothing left behind by the failed calls
    for (const a of [i, wide, col]) be.free(a);
  });

  test('bad steps get typed errors and leave the input as it was', async () => {
    const x = be.fromArray([1, 2, 3], [3]);
    const live = be.liveBufferCount();
    expect(() => be.fusedElementwise(x, [])).toThrow(InvalidArgumentError);
    expect(() => be.fusedElementwise(x, [{ op: 'greater', scalar: 0 }])).toThrow(InvalidArgumentError);
    expect(() => be.fusedElementwise(x, [{ op: 'nope' } as unknown as ElementwiseStep])).toThrow(UnsupportedOpError);
    expect(() => be.fusedElementwise(x, [{ op: 'add', scalar: '1' } as unknown as ElementwiseStep])).toThrow(
      InvalidArgumentError,
    );
    const i = be.fromArray([1, 2], [2], 'int32');
    expect(() => be.fusedElementwise(i, [{ op: 'exp' }])).toThrow(UnsupportedOpError); // exp takes floats
    expect(be.liveBufferCount()).toBe(live + 1); // i: nothing left behind by the failed calls
    expect(Array.from((await be.read(x)) as Float32Array)).toEqual([1, 2, 3]);
  });
});
