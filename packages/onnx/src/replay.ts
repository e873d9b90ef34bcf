/**
 * Captured runs of an InferenceSession (the HAL's capture: hal/src/capture.ts, on backends that have it:
 * webgpu). A run is a pure function of its feeds' contents once their types, dims and host values (small
 * integer feeds, which shape arithmetic reads) are fixed: that signature is the key. The first run of a key
 * runs eagerly (node plans made, constant subgraphs folded); the second is captured; later runs of the key
 * replay the recording: the feeds are written into the captured input buffers and the recorded kernels are
 * encoded again in one submission, with no node lowered in JavaScript. The outputs are the same bits as an
 * eager run's (the same kernels on the same params).
 *
 * Not captured: runs with an `onNode` observer, feeds that are arrays of the session's backend (read in
 * place), graphs with random ops, and a run that reads a device value back (a condition or a shape computed
 * on the device): that key stays eager, and the reason is kept (`InferenceSession.captureRefusals`).
 */
import {
  type CapturedWork,
  type ComputeBackend,
  type DeviceBuffer,
  type DType,
  type HostArray,
  type NDArray,
  newHostArray,
} from '@polyhal/hal';
import { isWholeBuffer } from '@polyhal/hal/internal';
import type { RunStats } from './executor.js';
import { type OutputTensor, type PreparedFeed, toOutput } from './feeds.js';
import { deviceDType } from './types.js';
import { readHost, type Value } from './values.js';

/** An output of a captured run: read from the recording's output `slot`, or host data fixed by the key. */
export type CapturedOutput = {
  readonly name: string;
  readonly type: string;
  readonly dims: readonly number[];
} & ({ readonly slot: number } | { readonly host: Float64Array });

export interface CapturedRun {
  readonly work: CapturedWork;
  /** Indices of the prepared feeds that replay writes, in the recording's input order. */
  readonly feeds: readonly number[];
  readonly outputs: readonly CapturedOutput[];
  /** The stats of the captured run (a replay does the same work). */
  readonly stats: RunStats;
}

/** Recordings kept per session (each holds a run's intermediates on the device); the least recent goes first. */
export const MAX_CAPTURED_RUNS = 4;
/** Signatures remembered as seen once (a second run of one is captured). */
const MAX_SEEN = 64;

/** The key of a run: each feed's type, dims and host values; null where a feed is an array read in place. */
export function runKey(prepared: readonly PreparedFeed[]): string | null {
  if (prepared.some((p) => p.array)) return null;
  return JSON.stringify(prepared.map((p) => [p.type, p.dims, p.host ? Array.from(p.host) : 0]));
}

/** A feed's data as the HAL's `write` takes it for the device dtype of its type. */
export function feedData(type: string, data: ArrayLike<number>): HostArray {
  const dtype = deviceDType(type) as DType;
  const out = newHostArray(dtype, data.length);
  if (data.constructor === out.constructor) return data as HostArray;
  out.set(data);
  return out;
}

/** The recordings of one session by key, the keys seen once, and why keys were refused. */
export class CapturedRuns {
  private readonly runs = new Map<string, CapturedRun>();
  private readonly seen = new Set<string>();
  /** Keys that cannot be captured, with why. */
  readonly refused = new Map<string, string>();

  /** The recording of `key`, if any (marked most recent). */
  get(key: string): CapturedRun | undefined {
    const run = this.runs.get(key);
    if (run) {
      this.runs.delete(key);
      this.runs.set(key, run);
    }
    return run;
  }

  /** Whether a run of `key` should be captured (it ran once already); otherwise notes that it ran. */
  shouldCapture(key: string): boolean {
    if (this.refused.has(key) || this.runs.has(key)) return false;
    if (this.seen.has(key)) return true;
    if (this.seen.size >= MAX_SEEN) this.seen.delete(this.seen.values().next().value!);
    this.seen.add(key);
    return false;
  }

  store(key: string, run: CapturedRun): void {
    this.seen.delete(key);
    this.runs.set(key, run);
    for (const [k, old] of this.runs) {
      if (this.runs.size <= MAX_CAPTURED_RUNS) break;
      this.runs.delete(k);
      old.work.release();
    }
  }

  refuse(key: string, reason: string): void {
    this.seen.delete(key);
    if (this.refused.size >= MAX_SEEN) this.refused.delete(this.refused.keys().next().value!);
    this.refused.set(key, reason);
  }

  /** Device bytes the recordings hold. */
  get bytes(): number {
    let n = 0;
    for (const r of this.runs.values()) n += r.work.reservedBytes;
    return n;
  }

  get size(): number {
    return this.runs.size;
  }

  releaseAll(): void {
    for (const r of this.runs.values()) r.work.release();
    this.runs.clear();
    this.seen.clear();
  }
}

/**
 * Ends the capture of a run whose outputs are `values` (named `names`): outputs that are views are first
 * copied whole (a recording reads whole buffers; the copies go to `copies`, for the caller to free). Returns
 * the recording, or the backend's reason why the run cannot be replayed.
 */
export function endRunCapture(
  be: ComputeBackend,
  names: readonly string[],
  values: readonly Value[],
  feeds: readonly number[],
  stats: RunStats,
  copies: NDArray[],
): CapturedRun | string {
  const buffers: DeviceBuffer[] = [];
  const outputs: CapturedOutput[] = values.map((v, k) => {
    const base = { name: names[k]!, type: v.type, dims: v.dims };
    if (v.host) return { ...base, host: v.host };
    let x = v.dev!;
    if (!isWholeBuffer(x)) copies.push((x = be.contiguous(x)));
    buffers.push(x.buffer);
    return { ...base, slot: buffers.length - 1 };
  });
  const result = be.endCapture!(buffers);
  if ('broken' in result) return result.broken;
  stats.captured = true;
  return { work: result.work, feeds, outputs, stats }; // the caller still sets its peakBytes
}

/** A run that replays a recording: the feeds written into its inputs, its outputs read back. */
export async function replayRun(
  run: CapturedRun,
  prepared: readonly PreparedFeed[],
): Promise<Record<string, OutputTensor>> {
  const data: HostArray[] = [];
  for (const i of run.feeds) {
    const p = prepared[i]!;
    data.push(feedData(p.type, p.upload ?? (await readHost(p.foreign!.backend, p.foreign!.value))));
  }
  run.work.replay(data, { readOutputs: run.outputs.flatMap((o) => ('slot' in o ? [o.slot] : [])) });
  const read = await Promise.all(run.outputs.map((o) => ('host' in o ? o.host : run.work.read(o.slot))));
  const out: Record<string, OutputTensor> = {};
  run.outputs.forEach((o, k) => {
    out[o.name] = toOutput(o.type, o.dims, read[k]!);
  });
  return out;
}
