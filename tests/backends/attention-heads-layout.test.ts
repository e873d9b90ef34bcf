/**
 * The layout of attention's result (hal/src/base.ts `attention`, the attentionKernel hook's outStrides): over two
 * leading dims [N, H] the fused kernel writes [N, L, H, dv] in memory and the HAL returns the [N, H, L, dv] view
 * of it (strides [L·H·dv, dv, H·dv, 1], as PyTorch's flash attention returns its output), so that merging the
 * heads — permute [0, 2, 1, 3], reshape [N, L, H·dv] — is a view: no kernel. One or three leading dims, and a
 * backend without the hook (cpu), give contiguous results. Values against a float64 oracle written here from the
 * definition, read through the returned view and through the merged heads.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { ComputeBackend, NDArray } from '@polyhal/hal';

const sizeOf = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);
const rand = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i * 12.9898 + seed * 78.233)));

/** float64 softmax(q·kᵀ·scale)·v per leading index: q [B, L, d], k [B, S, d], v [B, S, dv] → [B, L, dv]. */
function oracle(q: number[], k: number[], v: number[], [B, L, S, d, dv]: number[], scale: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < B!; b++)
    for (let i = 0; i < L!; i++) {
      const s = Array.from({ length: S! }, (_, j) => {
        let t = 0;
        for (let c = 0; c < d!; c++) t += q[(b * L! + i) * d! + c]! * k[(b * S! + j) * d! + c]!;
        return t * scale;
      });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, x) => a + x, 0);
      for (let c = 0; c < dv!; c++) out.push(e.reduce((a, x, j) => a + x * v[(b * S! + j) * dv! + c]!, 0) / z);
    }
  return out;
}

const close = (got: ArrayLike<number>, want: readonly number[]): void => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => expect(Math.abs(got[i]! - w)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(w))));
};

/** Runs attention on `lead` × [L, d] operands; returns the result and the oracle's values in [..., L, dv] order. */
function run(be: ComputeBackend, lead: number[], [L, S, d, dv]: number[]) {
  const B = sizeOf(lead);
  const [q, k, v] = [rand(B * L! * d!, 1), rand(B * S! * d!, 2), rand(B * S! * dv!, 3)];
  const scale = 1 / Math.sqrt(d!);
  const arrays = [
    be.fromArray(q, [...lead, L!, d!]),
    be.fromArray(k, [...lead, S!, d!]),
    be.fromArray(v, [...lead, S!, dv!]),
  ] as [NDArray, NDArray, NDArray];
  const y = be.attention(...arrays, scale);
  for (const a of arrays) be.free(a);
  return { y, want: oracle(q, k, v, [B, L!, S!, d!, dv!], scale) };
}

describe('the layout of attention’s result', () => {
  let gpu: WebGpuBackend;
  let cpu: ComputeBackend;
  beforeAll(async () => {
    gpu = await createWebGpuBackend();
    cpu = new CpuBackend();
  });
  afterAll(() => {
    gpu?.dispose();
    cpu?.dispose();
  });

  test('webgpu, [N, H] leading: [N, L, H, dv] in memory, the heads merge as a view (no kernel)', async () => {
    const [N, H, L, S, d, dv] = [2, 3, 5, 7, 4, 6];
    const { y, want } = run(gpu, [N, H], [L, S, d, dv]);
    expect(y.shape).toEqual([N, H, L, dv]);
    expect(y.strides).toEqual([L * H * dv, dv, H * dv, 1]);
    close(await gpu.read(y), want);
    await gpu.synchronize();
    const k0 = gpu.kernelStats().dispatches;
    const merged = gpu.reshape(gpu.permute(y, [0, 2, 1, 3]), [N, L, H * dv]);
    expect(gpu.kernelStats().dispatches - k0).toBe(0);
    expect(merged.buffer).toBe(y.buffer);
    // merged[n, l, h·dv + c] = y[n, h, l, c]
    const m = await gpu.read(merged);
    const wantMerged = Array.from({ length: N * L * H * dv }, (_, i) => {
      const [n, l, h, c] = [Math.floor(i / (L * H * dv)), Math.floor(i / (H * dv)) % L, Math.floor(i / dv) % H, i % dv];
      return want[((n * H + h) * L + l) * dv + c]!;
    });
    close(m, wantMerged);
    gpu.free(y);
  });

  test('webgpu, one or three leading dims: contiguous', async () => {
    for (const lead of [[4], [2, 2, 3]]) {
      const { y, want } = run(gpu, lead, [3, 4, 5, 2]);
      expect(y.strides).toEqual([...lead.map((_, i) => sizeOf(lead.slice(i + 1)) * 6), 2, 1]);
      close(await gpu.read(y), want);
      gpu.free(y);
    }
  });

  test('cpu (no fused kernel): contiguous over [N, H] too, the same values', async () => {
    const { y, want } = run(cpu, [2, 3], [5, 7, 4, 6]);
    expect(y.strides).toEqual([3 * 5 * 6, 5 * 6, 6, 1]);
    close(await cpu.read(y), want);
    cpu.free(y);
  });
});
