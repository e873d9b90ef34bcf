/**
 * `polyhal --json FILE`: the figures of a training run as JSON, so that what the README and the results
 * pages quote comes from a recorded run (scripts/main-job-figures.mjs), never from hand-copied numbers.
 */
import { closeSync, openSync, statSync, unlinkSync, writeFileSync } from 'node:fs';

/** One epoch of a run: mean training loss and test accuracy after it. */
export interface EpochRecord {
  epoch: number;
  meanLoss: number;
  testAccuracy: number;
}

/** One backend's run. */
export interface RunRecord {
  model: string;
  backend: string;
  /** The backend's deviceName (adapter, threads). */
  device: string;
  epochs: number;
  batchSize: number;
  lr: number;
  seed: number;
  /**
   * Mixed precision (--amp): the forward under autocast('float16'), the loss scaled by a GradScaler; false for a
   * float32 run. Records written before the flag existed have no field (they are float32 runs).
   */
  amp: boolean;
  /** --compile: the whole step recorded once and replayed. Records written before the flag have no field. */
  compile?: boolean;
  /** --compile: the compiled step's traces, replays, eager calls, refusals and kernels per replay (train.ts). */
  compiled?: { traces: number; replays: number; eager: number; refused: string[]; kernels: number | null };
  train: number;
  test: number;
  /** Test accuracy after the last epoch, in [0, 1]. */
  testAccuracy: number;
  finalLoss: number;
  /** Wall-clock seconds of training and the per-epoch test passes. */
  seconds: number;
  samplesPerSecond: number;
  /** memoryStats().peakBytes: the most bytes of live HAL buffers at once. */
  peakBytes: number;
  perEpoch: EpochRecord[];
  /** `process.version` and the platform the run was on. */
  runtime: string;
  /** ISO date of the end of the run. */
  date: string;
}

/**
 * Throws an Error naming the path when `path` cannot be written (a missing folder, a folder, a read-only
 * place): checked before training, so a long run never ends without its record. A file that did not exist
 * is removed again.
 */
export function checkWritable(path: string): void {
  let existed = false;
  try {
    existed = statSync(path).isFile();
  } catch {
    existed = false;
  }
  try {
    closeSync(openSync(path, existed ? 'r+' : 'wx'));
    if (!existed) unlinkSync(path);
  } catch (e) {
    throw new Error(`--json ${path}: cannot be written (${(e as Error).message})`);
  }
}

/** Writes `runs` (one per backend) as pretty-printed JSON. */
export function writeRecord(path: string, runs: RunRecord[]): void {
  writeFileSync(path, `${JSON.stringify({ runs }, null, 2)}\n`);
}
