// The webgpu softmax over the last axis (backends/webgpu/src/dispatch-softmax.ts): rows of up to 1024 elements on the
// short-row kernel (kernels/softmax-short.ts: groups of 4 to 32 invocations a row, the row in registers), longer rows
// on the workgroup-per-row kernel (kernels/softmax.ts). Each call is checked against a float64 softmax computed here
// within the op table's wgsl tolerance (abs 1e-6 + rel 1e-5), NaN where it is NaN, and the kernel that ran is read
// from the pipeline key of its dispatch. Row counts are not multiples of the rows a workgroup holds; views start at
// offsets that are not multiples of the row; rows hold NaN, ±∞ and values near the float32 range; one call needs
// more than 65,535 workgroups (a two-dimensional grid).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';

let be: WebGpuBackend;
/** The pipeline keys of the softmax dispatches since the last call of `ran`. */
let keys: string[] = [];
beforeAll(async () => {
  be = await createWebGpuBackend();
  const batch = (be as unknown as { batch: { dispatch: (op: string, key: string, ...rest: unknown[]) => void } }).batch;
  const dispatch = batch.dispatch.bind(batch);
  batch.dispatch = (op: string, key: string, ...rest: unknown[]): void => {
    if (op === 'softmax') keys.push(key);
    dispatch(op, key, ...rest);
  };
});
afterAll(() => be?.dispose());

const ran = (): string[] => {
  const k = keys;
  keys = [];
  return k;
};
const rand = (n: number, seed: number, scale: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * scale);

/** softmax over rows of n in float64: exp(x − max) / Σ exp(x − max); a row holding NaN, or whose max is ±∞, NaN. */
function oracle(x: ArrayLike<number>, n: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let r = 0; r < x.length / n; r++) {
    const row = Array.from({ length: n }, (_, i) => x[r * n + i]!);
    const m = row.some(Number.isNaN) ? Number.NaN : Math.max(...row);
    if (!Number.isFinite(m)) {
      y.fill(Number.NaN, r * n, (r + 1) * n);
      continue;
    }
    let s = 0;
    for (const v of row) s += Math.exp(v - m);
    for (let i = 0; i < n; i++) y[r * n + i] = Math.exp(row[i]! - m) / s;
  }
  return y;
}

/** The worst error over the op's wgsl bound 1e-6 + 1e-5·|want| (≤ 1 passes); NaN exactly where the oracle's is. */
function worst(got: ArrayLike<number>, want: Float64Array): number {
  expect(got.length).toBe(want.length);
  let w = 0;
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i]!) !== Number.isNaN(got[i]!)) return Number.POSITIVE_INFINITY;
    if (!Number.isNaN(want[i]!)) w = Math.max(w, Math.abs(got[i]! - want[i]!) / (1e-6 + 1e-5 * Math.abs(want[i]!)));
  }
  return w;
}

/** softmax of `data` as rows of n, read from a view starting `offset` elements into its buffer. */
async function softmax(data: Float32Array, n: number, offset = 0): Promise<{ y: ArrayLike<number>; keys: string[] }> {
  const rows = data.length / n;
  const flat = new Float32Array(offset + data.length + 2);
  flat.fill(7);
  flat.set(data, offset);
  const buf = be.fromArray(flat, [flat.length]);
  const view = be.shrink(buf, [[offset, offset + data.length]]);
  const x: NDArray = be.reshape(view, [rows, n]);
  ran();
  const out = be.softmax(x, -1);
  const y = await be.read(out);
  be.free(out);
  be.free(buf); // x and view are views of it
  return { y, keys: ran() };
}

const kernelOf = (n: number): RegExp => (n <= 1024 ? /^softmax\/short\/\d+x\d+$/ : /^softmax\/rows$/);

describe('webgpu softmax over the last axis', () => {
  const lengths = [1, 2, 3, 31, 64, 197, 255, 256, 257, 1000, 1025, 3000];

  test.each(lengths)('rows of %i at offsets 0 and 5, row counts off the workgroup’s', async (n) => {
    for (const [rows, offset] of [
      [n > 1024 ? 3 : 37, 0],
      [n > 1024 ? 2 : 5, 5],
    ] as const) {
      const data = rand(rows * n, n + offset, 8);
      const { y, keys } = await softmax(data, n, offset);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(kernelOf(n));
      expect(worst(y, oracle(data, n))).toBeLessThanOrEqual(1);
    }
  });

  test.each([3, 197, 256, 1000, 1025])('rows of %i holding NaN, ±∞ and large magnitudes', async (n) => {
    const rows: number[][] = [];
    const base = (seed: number): number[] => Array.from(rand(n, seed, 4));
    const at = (row: number[], i: number, v: number): number[] => row.map((u, k) => (k === i ? v : u));
    for (const i of [0, n >> 1, n - 1]) {
      rows.push(at(base(i), i, Number.NaN)); // NaN anywhere: the row NaN
      rows.push(at(base(i + 1), i, Number.POSITIVE_INFINITY)); // max +∞: the row NaN
      rows.push(at(base(i + 2), i, Number.NEGATIVE_INFINITY)); // one −∞: that element 0
    }
    rows.push(new Array(n).fill(Number.NEGATIVE_INFINITY)); // max −∞: the row NaN
    rows.push(at(new Array(n).fill(-3e38), n - 1, 3e38)); // x − max overflows to −∞: one-hot
    rows.push(base(9).map((v) => v * 1e30)); // huge spread: one-hot, or near it
    rows.push(base(10).map((v) => 1e4 + v)); // a large offset the max removes
    rows.push(new Array(n).fill(-5)); // uniform: 1/n each
    const data = Float32Array.from(rows.flat());
    const { y, keys } = await softmax(data, n, 1);
    expect(keys[0]).toMatch(kernelOf(n));
    expect(worst(y, oracle(data, n))).toBeLessThanOrEqual(1);
  });

  test('a ViT-S attention block of scores [1, 6, 197, 197]', async () => {
    const data = rand(6 * 197 * 197, 3, 6);
    const x = be.fromArray(data, [1, 6, 197, 197]);
    ran();
    const out = be.softmax(x, -1);
    const y = await be.read(out);
    be.free(out);
    be.free(x);
    expect(ran()).toEqual(['softmax/short/16x13']);
    expect(worst(y, oracle(data, 197))).toBeLessThanOrEqual(1);
  });

  test('rows past 65,535 workgroups of the short kernel (a 2-D grid, its last workgroup idle)', async () => {
    // rows of 2: groups of 4 invocations, 32 rows a workgroup; 65,537 workgroups on a 32,769 × 2 grid
    const rows = 65535 * 32 + 40;
    const data = new Float32Array(rows * 2);
    for (let r = 0; r < rows; r++) data[2 * r] = ((r % 2001) - 1000) / 100;
    const { y, keys } = await softmax(data, 2);
    expect(keys).toEqual(['softmax/short/4x1']);
    let bad = 0;
    for (let r = 0; r < rows; r++) {
      const p = 1 / (1 + Math.exp(-data[2 * r]!));
      const e0 = Math.abs(y[2 * r]! - p) / (1e-6 + 1e-5 * p);
      const e1 = Math.abs(y[2 * r + 1]! - (1 - p)) / (1e-6 + 1e-5 * (1 - p));
      if (!(e0 <= 1 && e1 <= 1)) bad++;
    }
    expect(bad).toBe(0);
  });

  test('captured softmaxes of rows of 197, 64 and 1500: the short ones merge; new inputs', async () => {
    // independent kernels of one capture run in one dispatch (plan-merge.ts) where their workgroups agree: the two
    // short-row kernels (128 invocations) do; the workgroup-per-row kernel (64, with barriers) stays apart
    const shapes: [number, number][] = [
      [9, 197],
      [11, 64],
      [3, 1500],
    ];
    const xs = shapes.map(([r, n]) => be.fromArray(new Float32Array(r * n), [r, n]));
    const merged = be.kernelStats().planMerged;
    be.beginCapture(xs.map((x) => x.buffer));
    const ys = xs.map((x) => be.softmax(x, -1));
    const r = be.endCapture(ys.map((y) => y.buffer));
    if (!('work' in r)) throw new Error(`capture broke: ${r.broken}`);
    const data = shapes.map(([rows, n], k) => rand(rows * n, 40 + k, 7));
    r.work.replay(data);
    const got = await Promise.all(ys.map((y) => be.read(y)));
    expect(r.work.kernels).toBe(2);
    expect(be.kernelStats().planMerged - merged).toBe(1);
    for (const [k, [, n]] of shapes.entries()) expect(worst(got[k]!, oracle(data[k]!, n))).toBeLessThanOrEqual(1);
    r.work.release();
    for (const a of [...xs, ...ys]) be.free(a);
  });

  test('a transposed view takes the composite', async () => {
    const data = rand(6 * 9, 2, 3);
    const x = be.fromArray(data, [6, 9]);
    const t = be.permute(x, [1, 0]);
    ran();
    const out = be.softmax(t, -1);
    const y = await be.read(out);
    be.free(out);
    be.free(x);
    expect(ran()).toEqual([]);
    const rowsOfT = Float32Array.from({ length: 54 }, (_, i) => data[(i % 6) * 9 + Math.floor(i / 6)]!);
    expect(worst(y, oracle(rowsOfT, 6))).toBeLessThanOrEqual(1);
  });
});
