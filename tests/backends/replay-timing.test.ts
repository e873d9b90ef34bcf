/**
 * GPU time of each kernel of a replayed capture (webgpu option kernelTimestamps: backends/webgpu/src/replay-timing.ts
 * and replay-plan.ts; lavapipe offers `timestamp-query`): a timed replay gives one time per kernel it ran, in
 * replay order, named by the kernel's key (a merged kernel by its parts), non-negative and finite; its results are
 * the bits of an untimed replay (each kernel in a pass of its own changes nothing but the passes); without the
 * option, or after the work is released, replayKernelTimes() is null.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

/** exp(x)·w (a product after an elementwise kernel: two dependent kernels) and x·3 (independent of both). */
function work(be: WebGpuBackend, x: NDArray, w: NDArray): NDArray[] {
  return [be.matmul(be.unary('exp', x), w), be.binary('mul', x, 3)];
}

/** Captures `work` on be, replays it on new values; returns the replay's outputs, kernels and kernel times. */
async function timedRun(be: WebGpuBackend) {
  const [M, K, N] = [24, 20, 28];
  const x = be.fromArray(data(M * K, 1), [M, K]);
  const w = be.fromArray(data(K * N, 2), [K, N]);
  be.beginCapture([x.buffer]);
  const outs = work(be, x, w);
  const r = be.endCapture(outs.map((o) => o.buffer));
  if (!('work' in r)) throw new Error(`capture broken: ${r.broken}`);
  const k0 = be.kernelStats().dispatches;
  r.work.replay([data(M * K, 7)]);
  const kernels = be.kernelStats().dispatches - k0;
  const times = await be.replayKernelTimes();
  const values = await Promise.all(outs.map(async (_, i) => Array.from((await r.work.read(i)) as Float32Array)));
  r.work.release();
  const afterRelease = await be.replayKernelTimes();
  for (const t of [...outs, x, w]) be.free(t);
  return { values, kernels, times, afterRelease };
}

describe('kernel times of a replayed capture', () => {
  let timed: WebGpuBackend;
  let plain: WebGpuBackend;
  let unmerged: WebGpuBackend;
  beforeAll(async () => {
    timed = await createWebGpuBackend({ kernelTimestamps: true });
    unmerged = await createWebGpuBackend({ kernelTimestamps: true, mergeInCapture: false });
    plain = await createWebGpuBackend();
  });
  afterAll(() => {
    for (const be of [timed, plain, unmerged]) be?.dispose();
  });

  test('one time per kernel, in replay order, named by key; the same bits as an untimed replay', async () => {
    expect(timed.device.features.has('timestamp-query')).toBe(true);
    const t = await timedRun(timed);
    const p = await timedRun(plain);
    expect(t.values).toEqual(p.values);
    expect(t.times).not.toBeNull();
    expect(t.times!.length).toBe(t.kernels);
    for (const k of t.times!) {
      expect(Number.isFinite(k.ns)).toBe(true);
      expect(k.ns).toBeGreaterThanOrEqual(0);
    }
    // the exp alone (the product reads it), then the product merged with the independent mul, named by both
    expect(t.kernels).toBe(2);
    expect(t.times![0]!.kernel).toMatch(/^unary4\/exp\//);
    expect(t.times![1]!.kernel).toMatch(/^merge\[.*matmul\/.* \+ .*binary4s\/mul\/.*\]$/);
    expect(t.afterRelease).toBeNull();
  });

  test('unmerged: a time for each of the three kernels, in the order they ran', async () => {
    const t = await timedRun(unmerged);
    expect(t.kernels).toBe(3);
    expect(t.times!.map((k) => k.kernel.split('/')[0])).toEqual(['unary4', 'matmul', 'binary4s']);
  });

  test('without the option: null', async () => {
    const p = await timedRun(plain);
    expect(p.times).toBeNull();
  });
});
