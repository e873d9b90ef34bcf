// attention and attentionBackward on webgpu for sequences past workgroup memory (dispatch-attention.ts): the
// forward stages k and v in blocks of key rows (one dispatch), the backward runs as three dispatches (statistics,
// dk and dv per key row, dq per query row) where the one-dispatch backward does not fit; each against a float64
// oracle (conformance's oAttention, oAttentionBackward) within the op table's wgsl bound. Shapes: a ViT-S head
// (197 tokens, heads of 64), L ≠ S over two heads (permuted views of [N, L, H, D]) with S not a multiple of the
// block and widths not multiples of 4 (the kernels' vec4 rows padded), scores up to ±54 whose row maxima lie in
// the last key block (128 + 72 keys: the online softmax rescales across blocks); heads wider than 64 are declined
// (the composite runs). Workgroup memory: lavapipe's 32 KiB. The tiled kernels run on a backend created with
// tiledAttention (default off: slower than the composite on an H100 and on lavapipe); the default one declines.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';
import { oAttention, oAttentionBackward } from '../../packages/conformance/src/cases-attention.js';
import type { Ref } from '../../packages/conformance/src/oracle.js';

// the tiled kernels run where asked for (option tiledAttention; by default such sequences take the composite)
let tiled: WebGpuBackend | undefined;
let plain: WebGpuBackend | undefined;
beforeAll(async () => {
  tiled = await createWebGpuBackend({ tiledAttention: true });
  plain = await createWebGpuBackend();
});
afterAll(() => {
  tiled?.dispose();
  plain?.dispose();
});
const need = (): WebGpuBackend | undefined => tiled;
const rand = (n: number, seed: number, hi = 1): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(hi * Math.sin(i * 12.9898 + seed * 78.233)));

async function refOf(be: WebGpuBackend, x: NDArray): Promise<Ref> {
  return { shape: [...x.shape], data: Float64Array.from(await be.read(x)), dtype: 'float32' };
}

/** The worst error over the op table's wgsl bound 2e-6 + 3e-5·scale (≤ 1 passes). */
async function worst(be: WebGpuBackend, got: NDArray, want: Ref): Promise<number> {
  expect(got.shape).toEqual(want.shape);
  const g = await be.read(got);
  let w = 0;
  for (let i = 0; i < g.length; i++) w = Math.max(w, Math.abs(g[i]! - want.data[i]!) / (2e-6 + 3e-5 * want.scale![i]!));
  return w;
}

describe('webgpu attention over long sequences', () => {
  // [N, L, S, H, d, dv], the spread of q and k, and the dispatches forward and backward (0: the composite)
  for (const [tag, [N, L, S, H, d, dv], hi, fused] of [
    ['a ViT-S head: 197 tokens, heads of 64 (key blocks of 64)', [1, 197, 197, 1, 64, 64], 1, [1, 3]],
    ['two heads, L = 70, S = 300, d = 30, dv = 45 (key blocks of 102)', [1, 70, 300, 2, 30, 45], 1, [1, 3]],
    ['scores up to ±54, the row maxima in the last key block', [1, 40, 200, 1, 32, 32], 3, [1, 3]],
    ['d = 80: declined', [1, 9, 300, 1, 80, 16], 1, [0, 0]],
  ] as const) {
    const how = fused[0] ? `${fused[0]} and ${fused[1]} dispatches` : 'the composite';
    test(`${tag}: ${how}, as the oracle`, async () => {
      const be = need();
      if (!be) return;
      const base = be.liveBufferCount();
      const up = (T: number, D: number, seed: number, h = 1): NDArray =>
        be.permute(be.fromArray(rand(N * T * H * D, seed, h), [N, T, H, D]), [0, 2, 1, 3]);
      const [q, v, g] = [up(L, d, 1, hi), up(S, dv, 3), up(L, dv, 4)];
      // keys: the last 10 doubled, so that each row's maximum comes late
      const kHost = rand(N * S * H * d, 2, hi).map((x, i) => (Math.floor(i / (H * d)) % S >= S - 10 ? 2 * x : x));
      const k = be.permute(be.fromArray(kHost, [N, S, H, d]), [0, 2, 1, 3]);
      const scale = 1 / Math.sqrt(d);
      const [rq, rk, rv, rg] = await Promise.all([q, k, v, g].map((x) => refOf(be, x)));
      await be.synchronize();
      const k0 = be.kernelStats().dispatches;
      const out = be.attention(q, k, v, scale);
      const k1 = be.kernelStats().dispatches;
      const grads = be.attentionBackward(q, k, v, g, scale);
      const k2 = be.kernelStats().dispatches;
      if (fused[0]) expect([k1 - k0, k2 - k1]).toEqual(fused);
      else expect(Math.min(k1 - k0, k2 - k1)).toBeGreaterThan(3);
      expect(await worst(be, out, oAttention(rq!, rk!, rv!, scale))).toBeLessThanOrEqual(1);
      const want = oAttentionBackward(rq!, rk!, rv!, rg!, scale);
      for (let i = 0; i < 3; i++) expect(await worst(be, grads[i]!, want[i]!)).toBeLessThanOrEqual(1);
      for (const x of [out, ...grads, q, k, v, g]) be.free(x);
      expect(be.liveBufferCount()).toBe(base);
    });
  }

  test('without tiledAttention, a sequence past workgroup memory takes the composite', async () => {
    const be = plain!;
    const [L, d] = [197, 64];
    const q = be.fromArray(rand(L * d, 1), [1, L, d]);
    await be.synchronize();
    const k0 = be.kernelStats().dispatches;
    const out = be.attention(q, q, q, 1 / 8);
    expect(be.kernelStats().dispatches - k0).toBeGreaterThan(3);
    const rq = await refOf(be, q);
    expect(await worst(be, out, oAttention(rq, rq, rq, 1 / 8))).toBeLessThanOrEqual(1);
    for (const x of [out, q]) be.free(x);
  });
});
