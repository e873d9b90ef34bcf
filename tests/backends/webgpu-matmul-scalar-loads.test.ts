import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type TileName, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { mulberry32, type NDArray, transposeView } from '@polyhal/hal';
import { requiredBackends } from '../support/backends.js';

// The 64-multiple tiles with scalar loads (kernels/matmul-scalar-loads.ts): operands that cannot be read as vec4
// (K or N not a multiple of 4, transposed views, offset views with odd row strides), read along M, N or K as the
// strides say, prefetched a slab ahead; against a float64 oracle. Tiles are forced (a software adapter otherwise
// runs the register blocks), unsplit and split over K (3 ways: an empty split where K = 64, a last split ending
// inside a slab).

/** How an operand is stored: row-major, a transposed view of its transpose, or an offset view of a wider array. */
type Layout = 'rows' | 'cols' | 'offset';
interface Case {
  name: string;
  batchA: number[];
  batchB: number[];
  M: number;
  K: number;
  N: number;
  la: Layout;
  lb: Layout;
  /** A bias of out's last dim ([N]) or a column ([M, 1]). */
  bias?: 'n' | 'm';
}

const cases: Case[] = [
  {
    name: 'q·kᵀ (B transposed, K along B rows)',
    batchA: [2],
    batchB: [2],
    M: 197,
    K: 64,
    N: 197,
    la: 'rows',
    lb: 'cols',
  },
  { name: 'P·V (K = 197)', batchA: [], batchB: [], M: 197, K: 197, N: 64, la: 'rows', lb: 'rows', bias: 'n' },
  { name: 'Pᵀ·dO (A transposed)', batchA: [], batchB: [], M: 197, K: 197, N: 64, la: 'cols', lb: 'rows' },
  { name: 'both transposed, batched', batchA: [2], batchB: [2], M: 70, K: 45, N: 33, la: 'cols', lb: 'cols' },
  {
    name: 'broadcast batch [2, 1]·[3], A offset',
    batchA: [2, 1],
    batchB: [3],
    M: 70,
    K: 45,
    N: 33,
    la: 'offset',
    lb: 'rows',
  },
  {
    name: 'B broadcast over the batch, transposed',
    batchA: [3],
    batchB: [],
    M: 70,
    K: 45,
    N: 33,
    la: 'rows',
    lb: 'cols',
    bias: 'm',
  },
  { name: 'offset views, bias', batchA: [], batchB: [], M: 70, K: 45, N: 33, la: 'offset', lb: 'offset', bias: 'n' },
  { name: 'A transposed, B offset', batchA: [], batchB: [], M: 130, K: 29, N: 70, la: 'cols', lb: 'offset' },
];

const size = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);

/** Logical values (float32) and the stored array and view of an operand [...batch, rows, cols] of layout l. */
function operand(
  be: WebGpuBackend,
  values: Float32Array,
  batch: number[],
  rows: number,
  cols: number,
  l: Layout,
): { store: NDArray; view: NDArray } {
  const items = size(batch);
  if (l === 'rows') {
    const store = be.fromArray(values, [...batch, rows, cols]);
    return { store, view: store };
  }
  if (l === 'cols') {
    const t = new Float32Array(values.length);
    for (let i = 0; i < items; i++)
      for (let r = 0; r < rows; r++)
        for (let c = 0; c < cols; c++) t[i * rows * cols + c * rows + r] = values[i * rows * cols + r * cols + c]!;
    const store = be.fromArray(t, [...batch, cols, rows]);
    return { store, view: transposeView(store) };
  }
  // rows 2.. and columns 1.. of [rows + 2, cols + 3], the rest 1e3 (read by mistake, it shows)
  const [R, C] = [rows + 2, cols + 3];
  const w = new Float32Array(items * R * C).fill(1e3);
  for (let i = 0; i < items; i++)
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) w[i * R * C + (r + 2) * C + c + 1] = values[i * rows * cols + r * cols + c]!;
  const store = be.fromArray(w, [...batch, R, C]);
  const bounds: [number, number][] = [...batch.map((d): [number, number] => [0, d]), [2, rows + 2], [1, cols + 1]];
  return { store, view: be.shrink(store, bounds) };
}

/** Float64 a·b (+ bias) with broadcast batch dims, and the sum of |a·b| terms per output (the error scale). */
function oracle(c: Case, a: Float32Array, b: Float32Array, bias: Float32Array | null): [Float64Array, Float64Array] {
  const r = Math.max(c.batchA.length, c.batchB.length);
  const pa = [...Array(r - c.batchA.length).fill(1), ...c.batchA];
  const pb = [...Array(r - c.batchB.length).fill(1), ...c.batchB];
  const out = pa.map((d, i) => Math.max(d, pb[i]!));
  const { M, K, N } = c;
  const want = new Float64Array(size(out) * M * N);
  const scale = new Float64Array(want.length);
  for (let o = 0; o < size(out); o++) {
    let [rem, ia, ib, sa, sb] = [o, 0, 0, 1, 1];
    for (let d = r - 1; d >= 0; d--) {
      const q = rem % out[d]!;
      rem = Math.floor(rem / out[d]!);
      if (pa[d]! > 1) ia += q * sa;
      if (pb[d]! > 1) ib += q * sb;
      sa *= pa[d]!;
      sb *= pb[d]!;
    }
    const a0 = ia * M * K;
    const b0 = ib * K * N;
    const o0 = o * M * N;
    for (let m = 0; m < M; m++)
      for (let n = 0; n < N; n++) {
        let s = 0;
        let t = 0;
        for (let k = 0, ai = a0 + m * K, bi = b0 + n; k < K; k++, ai++, bi += N) {
          const p = (a[ai] as number) * (b[bi] as number);
          s += p;
          t += p < 0 ? -p : p;
        }
        const bv = bias ? (bias[c.bias === 'n' ? n : m] as number) : 0;
        want[o0 + m * N + n] = s + bv;
        scale[o0 + m * N + n] = t + Math.abs(bv);
      }
  }
  return [want, scale];
}

/** Each case's operands and oracle, made once for all tiles. */
const made = new Map<Case, ReturnType<typeof make>>();
const rng = mulberry32(17);
const rand = (n: number): Float32Array => Float32Array.from({ length: n }, () => rng() * 2 - 1);
function make(c: Case) {
  const a = rand(size(c.batchA) * c.M * c.K);
  const b = rand(size(c.batchB) * c.K * c.N);
  const bias = c.bias ? rand(c.bias === 'n' ? c.N : c.M) : null;
  const [want, scale] = oracle(c, a, b, bias);
  return { a, b, bias, want, scale };
}
const data = (c: Case): ReturnType<typeof make> => made.get(c) ?? made.set(c, make(c)).get(c)!;

describe('webgpu tiled matmul with scalar loads', () => {
  const backends = new Map<string, WebGpuBackend>();
  let unavailable = '';
  beforeAll(async () => {
    try {
      await createWebGpuBackend().then((be) => be.dispose());
    } catch (e) {
      unavailable = (e as Error).message;
    }
  });
  afterAll(() => {
    for (const be of backends.values()) be.dispose();
  });
  const backend = async (tile: TileName, splitK: number): Promise<WebGpuBackend | null> => {
    if (unavailable) {
      if (requiredBackends().includes('webgpu'))
        throw new Error(`webgpu is required here but unavailable: ${unavailable}`);
      return null;
    }
    const key = `${tile}/${splitK}`;
    if (!backends.has(key)) backends.set(key, await createWebGpuBackend({ matmulTile: tile, matmulSplitK: splitK }));
    return backends.get(key)!;
  };

  test.each([
    ['medium', 1],
    ['large', 1],
    ['wide', 1],
    ['tall', 1],
    ['medium', 3],
    ['large', 3],
    ['wide', 3],
    ['tall', 3],
    ['large16', 2],
  ] as const)('tile %s, split-K %i: transposed, offset, broadcast and ragged operands as float64', async (tile, s) => {
    const be = await backend(tile, s);
    if (!be) return;
    for (const c of cases) {
      const { a, b, bias, want, scale } = data(c);
      const x = operand(be, a, c.batchA, c.M, c.K, c.la);
      const y = operand(be, b, c.batchB, c.K, c.N, c.lb);
      const bb = bias ? be.fromArray(bias, c.bias === 'n' ? [c.N] : [c.M, 1]) : null;
      const z = be.matmul(x.view, y.view, bb);
      const got = (await be.read(z)) as Float32Array;
      for (const t of [x.store, y.store, z, ...(bb ? [bb] : [])]) be.free(t);
      expect([c.name, got.length]).toEqual([c.name, want.length]);
      // the error relative to Σ|a·b| (float32 rounding of the sum), NaN as the worst; where, for the message
      let [worst, at] = [0, -1];
      for (let i = 0; i < want.length; i++) {
        const err = Math.abs(got[i]! - want[i]!) / (scale[i]! + 1e-6);
        if (!(err <= worst)) [worst, at] = [Number.isNaN(err) ? Infinity : err, i];
      }
      expect({ case: c.name, at, worst: worst < 1e-5 ? 'within 1e-5' : worst }).toEqual({
        case: c.name,
        at,
        worst: 'within 1e-5',
      });
    }
  });
});
