/**
 * A summary of one timed replay's kernels (the webgpu backend's `replayKernelTimes()`, option `kernelTimestamps`):
 * the GPU time of all of them, per kernel family (a pipeline key's first two parts; a merged kernel under
 * `merged`) sorted by time, and the `slowest` kernels. Times in µs, rounded to 0.1.
 */
import type { KernelTime } from '@polyhal/backend-webgpu';

export interface KernelTimeSummary {
  kernels: number;
  kernelsGpuUs: number;
  byFamily: { kernel: string; n: number; us: number }[];
  /** The `keys` pipeline keys of most GPU time (all their calls together). */
  byKey: { kernel: string; n: number; us: number }[];
  slowest: { kernel: string; us: number }[];
}

const us = (x: number): number => +x.toFixed(1);

/** The family of a pipeline key: `matmul/64x64x16/4x4/...` → `matmul/64x64x16`; `merge[...]` → `merged`. */
export function kernelFamily(key: string): string {
  return key.startsWith('merge[') ? 'merged' : key.split('/').slice(0, 2).join('/');
}

export function summarizeKernelTimes(times: readonly KernelTime[], slowest = 12, keys = 0): KernelTimeSummary {
  const total = (by: (key: string) => string): { kernel: string; n: number; us: number }[] => {
    const m = new Map<string, { n: number; us: number }>();
    for (const t of times) {
      const a = m.get(by(t.kernel)) ?? { n: 0, us: 0 };
      m.set(by(t.kernel), { n: a.n + 1, us: a.us + t.ns / 1e3 });
    }
    return [...m]
      .sort((a, b) => b[1].us - a[1].us)
      .map(([k, v]) => ({ kernel: k.slice(0, 200), n: v.n, us: us(v.us) }));
  };
  return {
    kernels: times.length,
    kernelsGpuUs: us(times.reduce((a, t) => a + t.ns / 1e3, 0)),
    byFamily: total(kernelFamily),
    byKey: total((k) => k).slice(0, keys),
    slowest: [...times]
      .sort((a, b) => b.ns - a.ns)
      .slice(0, slowest)
      .map((t) => ({ kernel: t.kernel.slice(0, 160), us: us(t.ns / 1e3) })),
  };
}
