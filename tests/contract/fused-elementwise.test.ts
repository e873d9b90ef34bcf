/**
 * fusedElementwise on every backend of the repository: chains of unary ops and ops with a number, against a
 * float64 oracle that applies each step and rounds to float32 after it (what separate ops compute), within a
 * few float32 roundings per step; int32 chains exactly. Contiguous (vec4 on webgpu), odd-length and strided
 * inputs; one kernel per chain on webgpu (its fusedElementwiseKernel); the input untouched; typed errors.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type ComputeBackend,
  type ElementwiseStep,
  InvalidArgumentError,
  type NDArray,
  shrinkView,
  transposeView,
  UnsupportedOpError,
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
    if (!('scalar' in s)) v = round(UNARY[s.op]!(v));
    else v = round(s.scalarFirst ? BINARY[s.op]!(s.scalar, v) : BINARY[s.op]!(v, s.scalar));
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
        let z = x;
        for (const s of steps) {
          const next = !('scalar' in s)
            ? be.unary(s.op, z)
            : s.scalarFirst
              ? be.binary(s.op, s.scalar, z)
              : be.binary(s.op, z, s.scalar);
          if (z !== x) be.free(z);
          z = next;
        }
        const [got, want] = [(await be.read(y)) as Float32Array, (await be.read(z)) as Float32Array];
        const first = got.findIndex((v, i) => !Object.is(v, want[i]));
        expect(first === -1 ? 'all equal' : `[${first}]: ${got[first]} vs ${want[first]}`).toBe('all equal');
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
