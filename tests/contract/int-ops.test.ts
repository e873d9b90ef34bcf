import { describe, expect, test } from '@jest/globals';
import {
  type BinaryOp,
  binaryTakes,
  type ComputeBackend,
  type DType,
  type HostArray,
  type NDArray,
} from '@polyhal/hal';
import * as ag from '@polyhal/autograd';
import { crossBackends } from '../support/cross-backend.js';

// floorDiv, truncDiv and the int32 shifts (hal/src/ops/binary-int.ts) on wasm, webgpu and reference
// against cpu, bit for bit (NaN as NaN), on random inputs with NaN, ±Inf, ±0, subnormals, quotients
// next to integers and past 2^24, int32 edges and shift counts outside [0, 31], dense, broadcast, viewed
// and past the wasm threads' split; and special values against NumPy's and PyTorch's results.

const NEW_OPS = ['floorDiv', 'truncDiv', 'bitShiftLeft', 'bitShiftRight'] as const satisfies readonly BinaryOp[];
const BIG = 70001;

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

const F32_SPECIAL = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 3, -7, 0.1, 1e-45, -3e-45, 1.17549435e-38, 3.4e38];
const I32_SPECIAL = [0, 1, -1, 2, -2, 7, -7, 31, 32, 40, -32, -2147483648, 2147483647];

/** Pairs (x, y) in two arrays: specials, random bits, and x = k·y (± an ulp) with k up to 2^40. */
function hostPair(dtype: DType, n: number, seed: number): [HostArray, HostArray] {
  const r = rng(seed);
  if (dtype === 'int32') {
    const draw = (): number => {
      const u = r();
      if (u < 0.4) return I32_SPECIAL[Math.floor(r() * I32_SPECIAL.length)]!;
      if (u < 0.7) return Math.floor(r() * 81) - 20;
      return Math.floor((r() - 0.5) * 4e9) | 0;
    };
    return [Int32Array.from({ length: n }, draw), Int32Array.from({ length: n }, draw)];
  }
  const x = new Float32Array(n);
  const y = new Float32Array(n);
  const bits = new Uint32Array(x.buffer);
  for (let i = 0; i < n; i++) {
    const u = r();
    if (u < 0.25) {
      x[i] = F32_SPECIAL[Math.floor(r() * F32_SPECIAL.length)]!;
      y[i] = F32_SPECIAL[Math.floor(r() * F32_SPECIAL.length)]!;
    } else if (u < 0.45) {
      bits[i] = (r() * 2 ** 32) >>> 0;
      y[i] = (r() - 0.5) * 10 ** (r() * 20 - 10);
    } else {
      y[i] = (r() - 0.5) * 10 ** (r() * 8 - 4);
      x[i] = Math.round((r() - 0.5) * 2 ** (r() * 40)) * y[i]!;
      if (r() < 0.5) bits[i] = bits[i]! + (r() < 0.5 ? 1 : -1);
    }
  }
  return [x, y];
}

interface Case {
  name: string;
  shapes: [number[], number[]];
  build: (be: ComputeBackend, op: BinaryOp, a: NDArray, b: NDArray) => NDArray;
}

const CASES: Case[] = [
  ...[1, 7, 1031, BIG].map(
    (n): Case => ({ name: `dense [${n}]`, shapes: [[n], [n]], build: (be, op, a, b) => be.binary(op, a, b) }),
  ),
  {
    name: 'outer broadcast [37, 1] × [1, 29]',
    shapes: [
      [37, 1],
      [1, 29],
    ],
    build: (be, op, a, b) => be.binary(op, a, b),
  },
  {
    name: 'permuted [33, 47]ᵀ with [47, 33]',
    shapes: [
      [33, 47],
      [47, 33],
    ],
    build: (be, op, a, b) => be.binary(op, be.permute(a, [1, 0]), b),
  },
  {
    name: 'flipped [1031] with stride 2',
    shapes: [[1031], [2062]],
    build: (be, op, a, b) => be.binary(op, be.flip(a), be.stride(b, [2])),
  },
  {
    name: `expanded [1] → [${BIG}] as the divisor or count`,
    shapes: [[BIG], [1]],
    build: (be, op, a, b) => be.binary(op, a, be.expand(b, [BIG])),
  },
];

const fixture = crossBackends();
const backends = fixture.backends;

/** The result's 32-bit words, NaN as one pattern. */
async function run(be: ComputeBackend, op: BinaryOp, c: Case, data: [HostArray, HostArray]): Promise<number[]> {
  const dtype: DType = data[0] instanceof Float32Array ? 'float32' : 'int32';
  const a = be.fromArray(data[0], c.shapes[0], dtype);
  const b = be.fromArray(data[1], c.shapes[1], dtype);
  try {
    const y = c.build(be, op, a, b);
    const v = await be.read(y);
    be.free(y);
    if (!(v instanceof Float32Array)) return Array.from(v);
    return Array.from(new Uint32Array(v.slice().buffer), (w, i) => (Number.isNaN(v[i]) ? 0x7fc00000 : w));
  } finally {
    be.free(a);
    be.free(b);
  }
}

const size = (s: number[]): number => s.reduce((p, d) => p * d, 1);

describe('floorDiv, truncDiv and the shifts: wasm, webgpu and reference against cpu, bit for bit', () => {
  test('the backends under test started', () => {
    expect(Object.keys(backends)).toEqual(expect.arrayContaining(['wasm', 'reference']));
  });

  let seed = 1;
  for (const op of NEW_OPS) {
    test(`${op} on ${binaryTakes(op).join(', ')}`, async () => {
      const failures: string[] = [];
      for (const dtype of binaryTakes(op)) {
        for (const c of CASES) {
          // Both operands drawn as pairs over the larger size; each takes its own prefix.
          const n = Math.max(size(c.shapes[0]), size(c.shapes[1]));
          const [x, y] = hostPair(dtype, n, seed++);
          const data: [HostArray, HostArray] = [x.slice(0, size(c.shapes[0])), y.slice(0, size(c.shapes[1]))];
          const want = await run(fixture.cpu, op, c, data);
          for (const [name, be] of Object.entries(backends)) {
            if (name === 'reference' && n > 2 ** 16) continue;
            const got = await run(be, op, c, data);
            const i = got.findIndex((w, k) => w !== want[k]);
            if (got.length !== want.length || i >= 0) failures.push(`${dtype} ${name} ${c.name}: element ${i}`);
          }
        }
      }
      expect(failures).toEqual([]);
    });
  }

  test('special values as NumPy (floor_divide) and PyTorch (div with rounding_mode) give them', async () => {
    const xs = [1, -1, 0.7, -0, 0, 5, -5, 5, Infinity, 0, 7, -7, 50331652, -50331652];
    const ys = [0.1, 0.1, 0.1, 3, -3, Infinity, Infinity, -Infinity, 2, 0, 0, -0, 3, 3];
    const show = (v: number): string => (Object.is(v, -0) ? '-0' : String(v));
    const floor = ['9', '-10', '6', '-0', '-0', '0', '-1', '-1', 'NaN', 'NaN', 'Infinity', 'Infinity', '16777216'];
    floor.push('-16777218');
    const trunc = ['9', '-9', '6', '-0', '-0', '0', '-0', '-0', 'Infinity', 'NaN', 'Infinity', 'Infinity'];
    trunc.push('16777216', '-16777216');
    const ix = [7, -7, 7, -7, -2147483648, -2147483648, 5, -5];
    const iy = [2, 2, -2, -2, -1, 1, 0, 0];
    const sx = [1, 1, -8, -8, 1, -1, -2147483648, 5];
    const ss = [31, 32, 1, 40, -1, 0, 31, 33];
    for (const be of [fixture.cpu, ...Object.values(backends)]) {
      const x = be.fromArray(xs, [xs.length]);
      const y = be.fromArray(ys, [ys.length]);
      const a = be.fromArray(Int32Array.from(ix), [ix.length]);
      const b = be.fromArray(Int32Array.from(iy), [iy.length]);
      const c = be.fromArray(Int32Array.from(sx), [sx.length]);
      const s = be.fromArray(Int32Array.from(ss), [ss.length]);
      const outs = [be.floorDiv(x, y), be.truncDiv(x, y), be.floorDiv(a, b), be.truncDiv(a, b)];
      outs.push(be.bitShiftLeft(c, s), be.bitShiftRight(c, s));
      const [f, t, fi, ti, l, r] = await Promise.all(outs.map((o) => be.read(o)));
      expect([be.name, Array.from(f!, show)]).toEqual([be.name, floor]);
      expect([be.name, Array.from(t!, show)]).toEqual([be.name, trunc]);
      expect([be.name, Array.from(fi!)]).toEqual([be.name, [3, -4, -4, 3, -2147483648, -2147483648, 0, 0]]);
      expect([be.name, Array.from(ti!)]).toEqual([be.name, [3, -3, -3, 3, -2147483648, -2147483648, 0, 0]]);
      expect([be.name, Array.from(l!)]).toEqual([be.name, [-2147483648, 0, -16, 0, 0, -1, 0, 0]]);
      expect([be.name, Array.from(r!)]).toEqual([be.name, [0, 0, -4, -1, 0, -1, -1, 0]]);
      for (const v of [x, y, a, b, c, s, ...outs]) be.free(v);
    }
  });

  test('autograd: floorDiv and truncDiv pass a zero gradient, the shifts none', async () => {
    const x = ag.Tensor.fromArray(fixture.cpu, [7.5, -7.5, 1], [3], { requiresGrad: true });
    const y = ag.Tensor.fromArray(fixture.cpu, [2, 2, 0.1], [3], { requiresGrad: true });
    const loss = ag.sum(ag.add(ag.floorDiv(x, y), ag.truncDiv(x, y)));
    expect(Array.from(await loss.data())).toEqual([3 - 4 + 9 + (3 - 3 + 9)]);
    loss.backward();
    expect(Array.from(await x.grad!.data())).toEqual([0, 0, 0]);
    expect(Array.from(await y.grad!.data())).toEqual([0, 0, 0]);
    const i = ag.Tensor.fromArray(fixture.cpu, [1, -8], [2], { dtype: 'int32' });
    expect(Array.from(await ag.bitShiftRight(ag.bitShiftLeft(i, 3), 1).data())).toEqual([4, -32]);
  });
});
