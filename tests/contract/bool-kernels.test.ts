import { describe, expect, test } from '@jest/globals';
import {
  type BinaryOp,
  binaryTakes,
  type ComputeBackend,
  type DType,
  type HostArray,
  type NDArray,
} from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

// The bool kernels (the comparisons, fmod, the logical and bitwise ops, where, and bool through any, all,
// the predicates, cast, fill and gather) on wasm and webgpu against cpu, bit for bit, on random inputs
// with NaN, ±Inf, ±0 and subnormals, over dense, broadcast, permuted, negative-stride, offset and
// expanded views, at sizes 1, 7, 1031 and past the wasm threads' split (its threshold is lowered to 2^16
// here). Computed NaNs compare as NaN (their bits are the runtime's); where, gather and copies compare
// every bit. The reference backend is checked too: an independent implementation of the same table.

const NEW_OPS = [
  'equal',
  'notEqual',
  'less',
  'lessEqual',
  'greater',
  'greaterEqual',
  'fmod',
  'logicalAnd',
  'logicalOr',
  'logicalXor',
  'bitwiseAnd',
  'bitwiseOr',
  'bitwiseXor',
] as const satisfies readonly BinaryOp[];

const BIG = 70001;
const SIZES = [1, 7, 1031, BIG];

/** mulberry32: a small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const F32_SPECIAL = [
  NaN,
  Infinity,
  -Infinity,
  0,
  -0,
  1,
  -1,
  2,
  -3,
  0.5,
  1e-45,
  -3e-45,
  1.17549435e-38,
  3.4e38,
  -3.4e38,
];
const I32_SPECIAL = [0, 1, -1, 2, -2, 3, 7, -7, -2147483648, 2147483647];

function hostData(dtype: DType, n: number, seed: number): HostArray {
  const r = rng(seed);
  if (dtype === 'bool') return Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0));
  if (dtype === 'int32') {
    return Int32Array.from({ length: n }, () => {
      const u = r();
      if (u < 0.4) return I32_SPECIAL[Math.floor(r() * I32_SPECIAL.length)]!;
      if (u < 0.7) return Math.floor(r() * 21) - 10;
      return Math.floor((r() - 0.5) * 4e9) | 0;
    });
  }
  const out = Float32Array.from({ length: n }, () => {
    const u = r();
    if (u < 0.3) return F32_SPECIAL[Math.floor(r() * F32_SPECIAL.length)]!;
    if (u < 0.6) return Math.floor(r() * 7) - 3;
    return (r() - 0.5) * 40;
  });
  // A few NaN payloads (where and gather move them untouched).
  const bits = new Uint32Array(out.buffer);
  for (let i = 3; i < n; i += 97) bits[i] = i % 2 ? 0x7fc01234 : 0xffc00001;
  return out;
}

interface Input {
  data: HostArray;
  shape: number[];
  dtype: DType;
}

interface Case {
  name: string;
  inputs: Input[];
  /** The op under test on the inputs; `t` records intermediate arrays to free. */
  build: (be: ComputeBackend, xs: NDArray[], t: (x: NDArray) => NDArray) => NDArray;
  /** Compare NaNs as NaN (computed results); false compares every bit. */
  anyNaN?: boolean;
}

let seed = 1;
const input = (dtype: DType, shape: number[]): Input => ({
  data: hostData(
    dtype,
    shape.reduce((p, d) => p * d, 1),
    seed++,
  ),
  shape,
  dtype,
});

interface Result {
  dtype: DType;
  shape: readonly number[];
  values: ArrayLike<number>;
}

async function evaluate(be: ComputeBackend, c: Case): Promise<Result> {
  const xs = c.inputs.map((i) => be.fromArray(i.data, i.shape, i.dtype));
  const temps: NDArray[] = [];
  try {
    const y = c.build(be, xs, (x) => {
      temps.push(x);
      return x;
    });
    temps.push(y);
    const data = await be.read(y);
    let values: ArrayLike<number> = data;
    if (data instanceof Float32Array) {
      const bits = new Uint32Array(data.slice().buffer);
      if (c.anyNaN) for (let i = 0; i < data.length; i++) if (Number.isNaN(data[i])) bits[i] = 0x7fc00000;
      values = bits;
    }
    return { dtype: y.dtype, shape: y.shape, values };
  } finally {
    for (const x of [...temps, ...xs]) be.free(x);
  }
}

function describeMismatch(want: Result, got: Result): string | null {
  if (want.dtype !== got.dtype) return `dtype ${got.dtype}, want ${want.dtype}`;
  if (want.shape.join() !== got.shape.join()) return `shape [${got.shape}], want [${want.shape}]`;
  if (want.values.length !== got.values.length) return `${got.values.length} values, want ${want.values.length}`;
  for (let i = 0; i < want.values.length; i++) {
    if (want.values[i] !== got.values[i]) {
      const show = (v: number): string =>
        want.dtype === 'float32' ? `${new Float32Array(new Uint32Array([v]).buffer)[0]} (0x${v.toString(16)})` : `${v}`;
      return `element ${i}: ${show(got.values[i]!)}, want ${show(want.values[i]!)}`;
    }
  }
  return null;
}

/** Scalar operands: −0 for float32 (equal to the data's +0), 3 for int32, true for bool. */
const SCALAR: Record<DType, number> = { float32: -0, int32: 3, bool: 1, int8: 3, uint8: 3, float16: -0, float64: -0 };

function binaryCases(op: BinaryOp, dtype: DType): Case[] {
  const anyNaN = true;
  const cases: Case[] = SIZES.map((n) => ({
    name: `dense [${n}]`,
    inputs: [input(dtype, [n]), input(dtype, [n])],
    build: (be, [a, b]) => be.binary(op, a!, b!),
    anyNaN,
  }));
  cases.push(
    {
      name: 'scalar right',
      inputs: [input(dtype, [1031])],
      build: (be, [a]) => be.binary(op, a!, SCALAR[dtype]),
      anyNaN,
    },
    {
      name: 'scalar left',
      inputs: [input(dtype, [1031])],
      build: (be, [a]) => be.binary(op, SCALAR[dtype], a!),
      anyNaN,
    },
    {
      name: 'outer broadcast [37, 1] × [1, 29]',
      inputs: [input(dtype, [37, 1]), input(dtype, [1, 29])],
      build: (be, [a, b]) => be.binary(op, a!, b!),
      anyNaN,
    },
    {
      name: 'outer broadcast [300, 1] × [250] (threads by rows)',
      inputs: [input(dtype, [300, 1]), input(dtype, [250])],
      build: (be, [a, b]) => be.binary(op, a!, b!),
      anyNaN,
    },
    {
      name: 'permuted [33, 47]ᵀ with [47, 33]',
      inputs: [input(dtype, [33, 47]), input(dtype, [47, 33])],
      build: (be, [a, b]) => be.binary(op, be.permute(a!, [1, 0]), b!),
      anyNaN,
    },
    {
      name: 'flipped [1031] with stride 2',
      inputs: [input(dtype, [1031]), input(dtype, [2062])],
      build: (be, [a, b]) => be.binary(op, be.flip(a!), be.stride(b!, [2])),
      anyNaN,
    },
    {
      name: `offset 5 [${BIG}] (threads by element ranges) with expanded [1]`,
      inputs: [input(dtype, [BIG + 5]), input(dtype, [1])],
      build: (be, [a, b]) => be.binary(op, be.shrink(a!, [[5, BIG + 5]]), be.expand(b!, [BIG])),
      anyNaN,
    },
    {
      name: 'flipped both axes [29, 37] with permuted',
      inputs: [input(dtype, [29, 37]), input(dtype, [37, 29])],
      build: (be, [a, b]) => be.binary(op, be.flip(a!), be.permute(b!, [1, 0])),
      anyNaN,
    },
  );
  return cases;
}

function whereCases(dtype: DType): Case[] {
  const cases: Case[] = SIZES.map((n) => ({
    name: `dense [${n}]`,
    inputs: [input('bool', [n]), input(dtype, [n]), input(dtype, [n])],
    build: (be, [c, x, y]) => be.where(c!, x!, y!),
  }));
  cases.push(
    {
      name: 'broadcast cond [37, 1], x [1, 29], y [29]',
      inputs: [input('bool', [37, 1]), input(dtype, [1, 29]), input(dtype, [29])],
      build: (be, [c, x, y]) => be.where(c!, x!, y!),
    },
    {
      name: 'broadcast [300, 1], [250], [300, 250] (threads)',
      inputs: [input('bool', [300, 1]), input(dtype, [250]), input(dtype, [300, 250])],
      build: (be, [c, x, y]) => be.where(c!, x!, y!),
    },
    {
      name: 'x a number',
      inputs: [input('bool', [1031]), input(dtype, [1031])],
      build: (be, [c, y]) => be.where(c!, SCALAR[dtype], y!),
    },
    {
      name: 'y a number',
      inputs: [input('bool', [7]), input(dtype, [7])],
      build: (be, [c, x]) => be.where(c!, x!, SCALAR[dtype]),
    },
    {
      name: 'permuted cond, flipped x, strided y',
      inputs: [input('bool', [33, 47]), input(dtype, [47, 33]), input(dtype, [47, 66])],
      build: (be, [c, x, y]) => be.where(be.permute(c!, [1, 0]), be.flip(x!, 0), be.stride(y!, [1, 2])),
    },
    {
      name: `offset cond, expanded x [${BIG}]`,
      inputs: [input('bool', [BIG + 3]), input(dtype, [1]), input(dtype, [BIG])],
      build: (be, [c, x, y]) => be.where(be.shrink(c!, [[3, BIG + 3]]), be.expand(x!, [BIG]), be.flip(y!)),
    },
  );
  return cases;
}

function boolCases(): Case[] {
  const cases: Case[] = [];
  for (const op of ['any', 'all'] as const) {
    const red = (be: ComputeBackend, x: NDArray, axes?: number | number[], keep?: boolean): NDArray =>
      op === 'any' ? be.any(x, axes, keep) : be.all(x, axes, keep);
    cases.push(
      { name: `${op} [1031]`, inputs: [input('bool', [1031])], build: (be, [x]) => red(be, x!) },
      { name: `${op} [37, 29] axis 0`, inputs: [input('bool', [37, 29])], build: (be, [x]) => red(be, x!, 0) },
      {
        name: `${op} [37, 29] axis 1 kept`,
        inputs: [input('bool', [37, 29])],
        build: (be, [x]) => red(be, x!, 1, true),
      },
      {
        name: `${op} permuted [29, 37] axis 1`,
        inputs: [input('bool', [37, 29])],
        build: (be, [x]) => red(be, be.permute(x!, [1, 0]), 1),
      },
      {
        name: `${op} expanded [1, 29] → [37, 29] axis 0`,
        inputs: [input('bool', [1, 29])],
        build: (be, [x]) => red(be, be.expand(x!, [37, 29]), 0),
      },
      {
        name: `${op} of one odd element in [${BIG}]`,
        inputs: [
          {
            data: Uint8Array.from({ length: BIG }, (_, i) =>
              i === 50000 ? (op === 'any' ? 1 : 0) : op === 'any' ? 0 : 1,
            ),
            shape: [BIG],
            dtype: 'bool',
          },
        ],
        build: (be, [x]) => red(be, x!),
      },
      {
        name: `${op} of a comparison [300, 250] axis 0`,
        inputs: [input('float32', [300, 250])],
        build: (be, [x], t) => red(be, t(be.greater(x!, 0)), 0),
      },
    );
  }
  for (const op of ['isnan', 'isinf', 'isfinite'] as const) {
    cases.push(
      { name: `${op} float32 [1031]`, inputs: [input('float32', [1031])], build: (be, [x]) => be[op](x!) },
      {
        name: `${op} float32 flipped [${BIG}]`,
        inputs: [input('float32', [BIG])],
        build: (be, [x]) => be[op](be.flip(x!)),
      },
      { name: `${op} int32 [7]`, inputs: [input('int32', [7])], build: (be, [x]) => be[op](x!) },
    );
  }
  cases.push(
    { name: 'logicalNot [1031]', inputs: [input('bool', [1031])], build: (be, [x]) => be.logicalNot(x!) },
    { name: 'bitwiseNot [1031]', inputs: [input('int32', [1031])], build: (be, [x]) => be.bitwiseNot(x!) },
  );
  for (const [from, to] of [
    ['float32', 'bool'],
    ['int32', 'bool'],
    ['bool', 'float32'],
    ['bool', 'int32'],
    ['bool', 'bool'],
  ] as const) {
    cases.push(
      { name: `cast ${from} → ${to} [1031]`, inputs: [input(from, [1031])], build: (be, [x]) => be.cast(x!, to) },
      {
        name: `cast ${from} → ${to} permuted [47, 33]`,
        inputs: [input(from, [33, 47])],
        build: (be, [x]) => be.cast(be.permute(x!, [1, 0]), to),
      },
      { name: `cast ${from} → ${to} [${BIG}]`, inputs: [input(from, [BIG])], build: (be, [x]) => be.cast(x!, to) },
    );
  }
  for (const dtype of ['float32', 'int32', 'bool'] as const) {
    const indices: Input = { data: Int32Array.from([0, 4, 5, -1, -6, 100, -5, 2]), shape: [8], dtype: 'int32' };
    cases.push(
      {
        name: `gather ${dtype} axis 0, indices out of range`,
        inputs: [input(dtype, [5, 3]), indices],
        build: (be, [x, i]) => be.gather(x!, i!, 0),
      },
      {
        name: `gather ${dtype} axis 1 of a permuted view`,
        inputs: [input(dtype, [5, 3]), indices],
        build: (be, [x, i]) => be.gather(be.permute(x!, [1, 0]), i!, 1),
      },
      {
        name: `concat, flip and pad of ${dtype}`,
        inputs: [input(dtype, [3, 4]), input(dtype, [2, 4])],
        build: (be, [a, b], t) =>
          be.pad(
            t(be.concat([be.flip(a!, 1), b!], 0)),
            [
              [1, 0],
              [0, 2],
            ],
            1,
          ),
      },
    );
  }
  for (const v of [0, 1, 5, NaN, -0])
    cases.push({ name: `full bool ${v}`, inputs: [], build: (be) => be.full([7], v, 'bool') });
  return cases;
}

const fixture = crossBackends();
const backends = fixture.backends;

/** Runs every case on cpu and on each backend; the failures, one line each. */
async function compare(cases: Case[], only?: string[]): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const want = await evaluate(fixture.cpu, c);
    for (const [name, be] of Object.entries(backends)) {
      if (only && !only.includes(name)) continue;
      if (name === 'reference' && c.inputs.some((i) => i.shape.reduce((p, d) => p * d, 1) > 2 ** 16)) continue;
      let why: string | null;
      try {
        why = describeMismatch(want, await evaluate(be, c));
      } catch (e) {
        why = `threw ${(e as Error).name}: ${(e as Error).message}`;
      }
      if (why) failures.push(`${name}: ${c.name}: ${why}`);
    }
  }
  return failures;
}

describe('bool kernels: wasm, webgpu and reference against cpu, bit for bit', () => {
  test('the backends under test started', () => {
    expect(Object.keys(backends)).toEqual(expect.arrayContaining(['wasm', 'reference']));
  });

  for (const op of NEW_OPS) {
    test(`${op} on ${binaryTakes(op).join(', ')}`, async () => {
      const failures: string[] = [];
      for (const dtype of binaryTakes(op)) {
        for (const f of await compare(binaryCases(op, dtype))) failures.push(`${dtype} ${f}`);
      }
      expect(failures).toEqual([]);
    });
  }

  test('where on float32, int32 and bool (every bit, NaN payloads and −0 included)', async () => {
    const failures: string[] = [];
    for (const dtype of ['float32', 'int32', 'bool'] as const)
      for (const f of await compare(whereCases(dtype))) failures.push(`${dtype} ${f}`);
    failures.push(
      ...(await compare([
        {
          name: 'where of two numbers',
          inputs: [input('bool', [7])],
          build: (be, [c]) => be.where(c!, 1.5, -0),
        },
      ])),
    );
    expect(failures).toEqual([]);
  });

  test('any, all, the predicates, logicalNot, bitwiseNot, cast, gather, layout and full with bool', async () => {
    expect(await compare(boolCases())).toEqual([]);
  });

  test('fmod and the comparisons on special values, as C and IEEE 754 define them', async () => {
    const xs = [-1, 1, 5.5, -5.5, Infinity, -Infinity, NaN, 0, -0, 7, 1e-45, 3.4e38, -7.25, 1];
    const ys = [3, -3, Infinity, -Infinity, 2, 2, 2, 3, 3, 0, 3e-45, 1e-45, 0.5, NaN];
    const fmod = xs.map((x, i) => Math.fround(x % ys[i]!));
    const ix = [7, -7, 7, -7, -2147483648, -2147483648, 5, 0];
    const iy = [3, 3, -3, -3, -1, 1, 0, 0];
    for (const be of [fixture.cpu, ...Object.values(backends)]) {
      const x = be.fromArray(xs, [xs.length]);
      const y = be.fromArray(ys, [ys.length]);
      const a = be.fromArray(Int32Array.from(ix), [ix.length]);
      const b = be.fromArray(Int32Array.from(iy), [iy.length]);
      const negX = be.neg(x);
      const outs = [be.fmod(x, y), be.fmod(a, b), be.less(x, y), be.notEqual(x, y), be.equal(x, negX)];
      const [f, i, lt, ne, eqNeg] = await Promise.all(outs.map((o) => be.read(o)));
      expect([be.name, Array.from(f!, (v) => (Object.is(v, -0) ? '-0' : v))]).toEqual([
        be.name,
        fmod.map((v) => (Object.is(v, -0) ? '-0' : v)),
      ]);
      expect([be.name, Array.from(i!)]).toEqual([be.name, [1, -1, 1, -1, 0, 0, 0, 0]]);
      expect([be.name, Array.from(lt!)]).toEqual([be.name, xs.map((v, k) => (v < ys[k]! ? 1 : 0))]);
      expect([be.name, Array.from(ne!)]).toEqual([be.name, xs.map((v, k) => (v !== ys[k]! ? 1 : 0))]);
      expect([be.name, Array.from(eqNeg!)]).toEqual([be.name, xs.map((v) => (v === -v ? 1 : 0))]);
      for (const t of [x, y, a, b, negX, ...outs]) be.free(t);
    }
  });
});
