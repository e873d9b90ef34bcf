// nonFiniteCheckAndUnscale on webgpu: the gradients of one call share a dispatch, up to one slot per storage
// binding the adapter allows beyond the flag's (at most 16): counted with kernelStats().dispatches, against the
// float32 products computed on the host and against the composite of HAL ops (about six kernels per gradient),
// whose bits it gives. GradScaler's unscale then costs one fill for the flag and those dispatches.
import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { GradScaler, Tensor } from '@polyhal/autograd';
import type { WebGpuBackend } from '@polyhal/backend-webgpu';
import { type DeviceBuffer, viewOf } from '@polyhal/hal';
import { nonFiniteCheckAndUnscaleComposite } from '@polyhal/hal/internal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const need = (): WebGpuBackend | undefined => fixture.backends['webgpu'] as WebGpuBackend | undefined;
const SIZES = [1, 255, 256, 257, 1000, 3, 4097, 64, 512, 7, 300, 2, 1500, 9, 129, 33, 600, 5, 8, 1024];
const rand = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(1000 * Math.sin(i * 12.9898 + seed * 78.233)));
/** Gradients per dispatch: a storage binding each, one more for the flag (dispatch-unscale.ts). */
const slotsOf = (be: WebGpuBackend): number => Math.min(16, be.device.limits.maxStorageBuffersPerShaderStage - 1);
const bits = (x: ArrayLike<number>): number[] => Array.from(new Uint32Array(Float32Array.from(x).buffer));

describe('webgpu nonFiniteCheckAndUnscale', () => {
  test('one dispatch per slots of gradients, each the float32 product; the composite gives the same bits', async () => {
    const be = need();
    if (!be) return;
    const slots = slotsOf(be);
    expect(slots).toBeGreaterThanOrEqual(7); // WebGPU's minimum of 8 storage bindings
    for (const count of [slots, SIZES.length]) {
      const host = SIZES.slice(0, count).map((n, k) => rand(n, k + count));
      const run = async (fused: boolean): Promise<{ kernels: number; out: number[][]; flag: number }> => {
        const grads = host.map((h) => be.fromArray(h, [h.length]).buffer);
        const flag = be.full([1], 0, 'float32');
        await be.synchronize();
        const k0 = be.kernelStats().dispatches;
        if (fused) be.nonFiniteCheckAndUnscale(grads, flag.buffer, 1 / 3000);
        else nonFiniteCheckAndUnscaleComposite(be, grads, flag.buffer, 1 / 3000);
        const kernels = be.kernelStats().dispatches - k0;
        const out = await Promise.all(grads.map(async (g: DeviceBuffer) => Array.from(await be.read(viewOf(g)))));
        const f = (await be.read(flag))[0]!;
        for (const g of grads) be.deallocate(g);
        be.free(flag);
        return { kernels, out, flag: f };
      };
      const fused = await run(true);
      const composite = await run(false);
      expect(fused.kernels).toBe(Math.ceil(count / slots));
      expect(composite.kernels).toBeGreaterThanOrEqual(4 * count);
      expect([fused.flag, composite.flag]).toEqual([0, 0]);
      const inv = Math.fround(1 / 3000);
      for (let k = 0; k < count; k++) {
        expect(bits(fused.out[k]!)).toEqual(bits(host[k]!.map((x) => x * inv)));
        expect(bits(fused.out[k]!)).toEqual(bits(composite.out[k]!));
      }
    }
  });

  test('an Inf or NaN in any slot of any dispatch sets the flag', async () => {
    const be = need();
    if (!be) return;
    for (const at of [0, 7, SIZES.length - 1]) {
      for (const bad of [Number.POSITIVE_INFINITY, Number.NaN]) {
        const host = SIZES.map((n, k) => rand(n, k));
        host[at]![host[at]!.length - 1] = bad;
        const grads = host.map((h) => be.fromArray(h, [h.length]).buffer);
        const flag = be.full([1], 0, 'float32');
        be.nonFiniteCheckAndUnscale(grads, flag.buffer, 2 ** -16);
        expect({ at, bad, flag: (await be.read(flag))[0] }).toEqual({ at, bad, flag: 1 });
        for (const g of grads) be.deallocate(g);
        be.free(flag);
      }
    }
  });

  test("GradScaler's unscale: a fill for the flag and one dispatch per slots of gradients", async () => {
    const be = need();
    if (!be) return;
    const ps = SIZES.map((n, k) => {
      const p = Tensor.fromArray(be, new Float32Array(n), [n], { requiresGrad: true });
      p.grad = Tensor.fromArray(be, rand(n, k), [n]);
      return p;
    });
    const scaler = new GradScaler();
    await be.synchronize();
    const k0 = be.kernelStats().dispatches;
    await scaler.unscale(new ag.SGD(ps, { lr: 0.1 }));
    expect(be.kernelStats().dispatches - k0).toBe(1 + Math.ceil(SIZES.length / slotsOf(be)));
    for (const p of ps) {
      p.grad?.dispose();
      p.grad = null;
      p.dispose();
    }
  });
});
