/** Capturing a stretch of HAL work on webgpu and replaying it: the shared helper of the fusion tests. */
import type { CapturedWork, ComputeBackend, DeviceBuffer, NDArray } from '@polyhal/hal';

/** A backend with the HAL's capture methods and webgpu's kernel counts. */
export type Capturing = ComputeBackend & {
  beginCapture(inputs: readonly DeviceBuffer[]): void;
  endCapture(outputs: readonly DeviceBuffer[]): { work: CapturedWork } | { broken: string };
  abortCapture(): void;
  kernelStats(): { dispatches: number };
};

/**
 * Captures `work` on x (an array of x0's values and `shape`; it returns its outputs), replays it on `next`, and
 * returns the captured and replayed outputs' values and the kernels one replay dispatched; frees all it made.
 */
export async function captureRun(
  be: Capturing,
  x0: Float32Array,
  next: Float32Array,
  shape: number[],
  work: (be: Capturing, x: NDArray) => NDArray[],
): Promise<{ first: number[][]; replayed: number[][]; kernels: number }> {
  const x = be.fromArray(x0, shape);
  be.beginCapture([x.buffer]);
  let outs: NDArray[];
  try {
    outs = work(be, x);
  } catch (e) {
    be.abortCapture();
    throw e;
  }
  const r = be.endCapture(outs.map((o) => o.buffer));
  if (!('work' in r)) throw new Error(`capture broken: ${r.broken}`);
  const first = await Promise.all(outs.map(async (o) => Array.from((await be.read(o)) as Float32Array)));
  const k0 = be.kernelStats().dispatches;
  r.work.replay([next]);
  const kernels = be.kernelStats().dispatches - k0;
  const replayed = await Promise.all(outs.map(async (_, i) => Array.from((await r.work.read(i)) as Float32Array)));
  r.work.release();
  for (const o of outs) be.free(o);
  be.free(x);
  return { first, replayed, kernels };
}
