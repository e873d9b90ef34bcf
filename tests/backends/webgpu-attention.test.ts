// attention and attentionBackward on webgpu (dispatch-attention.ts): the main job's ViT heads (17 tokens, heads of
// 16, permuted views of [N, L, H, D]) run as ONE dispatch forward and ONE backward, counted with
// kernelStats().dispatches, against a float64 oracle (conformance's oAttention, oAttentionBackward) and against
// the composite of HAL ops (about a dozen kernels); a shape past the workgroup memory is declined and runs the
// composite, with the same results.
import { describe, expect, test } from '@jest/globals';
import type { WebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';
import { attentionBackwardComposite, attentionComposite } from '@polyhal/hal/internal';
import { oAttention, oAttentionBackward } from '../../packages/conformance/src/cases-attention.js';
import type { Ref } from '../../packages/conformance/src/oracle.js';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const need = (): WebGpuBackend | undefined => fixture.backends['webgpu'] as WebGpuBackend | undefined;
const rand = (n: number, seed: number, hi = 1): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(hi * Math.sin(i * 12.9898 + seed * 78.233)));

/** Host values of x (row-major over its shape) as a Ref. */
async function refOf(be: WebGpuBackend, x: NDArray): Promise<Ref> {
  return { shape: [...x.shape], data: Float64Array.from(await be.read(x)), dtype: 'float32' };
}

/** Every element within 2e-6 + 3e-5·scale of the oracle (the op table's wgsl bound). */
async function expectNear(be: WebGpuBackend, got: NDArray, want: Ref): Promise<void> {
  const g = await be.read(got);
  let worst = 0;
  for (let i = 0; i < g.length; i++)
    worst = Math.max(worst, Math.abs(g[i]! - want.data[i]!) / (2e-6 + 3e-5 * want.scale![i]!));
  expect(got.shape).toEqual(want.shape);
  expect(worst).toBeLessThanOrEqual(1);
}

describe('webgpu attention', () => {
  for (const [tag, [N, L, S, H, d, dv], fused] of [
    ['the ViT heads', [8, 17, 17, 4, 16, 16], true],
    ['L ≠ S, d ≠ dv, 70 queries (two row blocks)', [2, 70, 9, 3, 8, 5], true],
    ['S = 600, d = 80: heads past 64 declined', [1, 3, 600, 2, 80, 64], false],
  ] as const) {
    test(`${tag}: ${fused ? 'one dispatch each way' : 'the composite'}, as the oracle`, async () => {
      const be = need();
      if (!be) return;
      const base = be.liveBufferCount();
      const up = (T: number, D: number, seed: number, hi = 1): NDArray =>
        be.permute(be.fromArray(rand(N * T * H * D, seed, hi), [N, T, H, D]), [0, 2, 1, 3]);
      const [q, k, v, g] = [up(L, d, 1, 2), up(S, d, 2, 2), up(S, dv, 3), up(L, dv, 4)];
      const scale = 1 / Math.sqrt(d);
      const [rq, rk, rv, rg] = await Promise.all([q, k, v, g].map((x) => refOf(be, x)));
      await be.synchronize();
      const k0 = be.kernelStats().dispatches;
      const out = be.attention(q, k, v, scale);
      const k1 = be.kernelStats().dispatches;
      const grads = be.attentionBackward(q, k, v, g, scale);
      const k2 = be.kernelStats().dispatches;
      if (fused) expect([k1 - k0, k2 - k1]).toEqual([1, 1]);
      else expect(Math.min(k1 - k0, k2 - k1)).toBeGreaterThan(3);
      await expectNear(be, out, oAttention(rq!, rk!, rv!, scale));
      const want = oAttentionBackward(rq!, rk!, rv!, rg!, scale);
      for (let i = 0; i < 3; i++) await expectNear(be, grads[i]!, want[i]!);
      // the composite of HAL ops: many more kernels, the same values within the bound
      const k3 = be.kernelStats().dispatches;
      const cOut = attentionComposite(be, q, k, v, scale);
      const cGrads = attentionBackwardComposite(be, q, k, v, g, scale);
      if (fused) expect(be.kernelStats().dispatches - k3).toBeGreaterThanOrEqual(12);
      await expectNear(be, cOut, oAttention(rq!, rk!, rv!, scale));
      for (const x of [out, ...grads, cOut, ...cGrads, q, k, v, g]) be.free(x);
      expect(be.liveBufferCount()).toBe(base);
    });
  }
});
