/**
 * fit's callbacks (Keras's and tfjs's): hooks called at the start and end of training, of each epoch and
 * after each batch, and factories for the common ones — earlyStopping, learningRateScheduler,
 * modelCheckpoint and progressEvents (a DOM-style `progress` event, for a page). Runtime-neutral: the
 * terminal progress bar is progressBar (callbacks-progress.ts), which loads cli-progress only when used.
 */
import { describeValue, InvalidArgumentError } from '@polyhal/hal';
import type { Module } from './nn.js';
import type { Optimizer } from './optim.js';
import { saveSafetensors } from './safetensors.js';

/** Named values of a batch or an epoch: `loss`, each metric, `val_` + each for validation, `lr`. */
export type Logs = Record<string, number>;

/** Where training stands, given to onBatchEnd and onEpochEnd (and in progressEvents' event detail). */
export interface Progress {
  /** Epoch, from 0. */
  epoch: number;
  /** Epochs of the run. */
  epochs: number;
  /** Batch within the epoch, from 0 (at onEpochEnd: batches − 1). */
  batch: number;
  /** Batches per epoch. */
  batches: number;
  /** Samples trained on in this epoch so far. */
  samples: number;
  /** Fraction of the whole run done, in (0, 1]. */
  fraction: number;
  /** Milliseconds since training began. */
  elapsedMs: number;
  /** This batch's (or epoch's) logs. */
  logs: Logs;
}

/** What fit returns: per epoch, each logged value (Keras's History). */
export interface History {
  /** Epoch numbers run, from 0. */
  epoch: number[];
  /** Name (`loss`, `accuracy`, `val_loss`, `lr`, ...) → one value per epoch. */
  history: Record<string, number[]>;
}

/** The run a callback watches; setting `stopTraining` ends it after the current batch. */
export interface FitContext {
  /** The model being trained. */
  model: Module;
  /** Its optimizer (created by fit at the first step when given by name: null before that). */
  optimizer: Optimizer | null;
  /** Epochs of the run. */
  epochs: number;
  /** Batches per epoch. */
  batches: number;
  /** Set to true to stop after the current batch (earlyStopping does). */
  stopTraining: boolean;
  /** The history so far. */
  history: History;
}

type Awaitable = void | Promise<void>;

/** Hooks fit calls (each may be async: fit awaits it). */
export interface Callback {
  /** Before the first epoch. */
  onTrainBegin?(ctx: FitContext): Awaitable;
  /** After the last epoch (or a stop), with the history complete. */
  onTrainEnd?(ctx: FitContext): Awaitable;
  /** Before each epoch. */
  onEpochBegin?(epoch: number, ctx: FitContext): Awaitable;
  /** After each training batch: `logs` has the batch's loss and metrics (running over the epoch). */
  onBatchEnd?(batch: number, logs: Logs, progress: Progress, ctx: FitContext): Awaitable;
  /** After each epoch and its validation: `logs` has the epoch's values (also written to the history). */
  onEpochEnd?(epoch: number, logs: Logs, progress: Progress, ctx: FitContext): Awaitable;
}

/** Whether a lower value of `monitor` is better ('auto': accuracies and precision/recall are higher-better). */
function lowerIsBetter(monitor: string, mode: 'auto' | 'min' | 'max'): boolean {
  if (mode !== 'auto') return mode === 'min';
  return !/acc|precision|recall/.test(monitor);
}

/** The monitored value of an epoch's logs; InvalidArgumentError naming what exists when absent. */
function monitored(owner: string, logs: Logs, monitor: string): number {
  const v = logs[monitor];
  if (v === undefined)
    throw new InvalidArgumentError(
      `${owner}: '${monitor}' is not in the epoch's logs (${Object.keys(logs).join(', ')}); ` +
        `val_ values need validationSplit or validationData`,
    );
  return v;
}

/** Options of earlyStopping. */
export interface EarlyStoppingOptions {
  /** Logged value to watch (default 'val_loss'). */
  monitor?: string;
  /** Smallest change that counts as an improvement, ≥ 0 (default 0). */
  minDelta?: number;
  /** Epochs without improvement before stopping, an integer ≥ 0 (default 0). */
  patience?: number;
  /** 'min', 'max' or 'auto' (default: max for accuracy-like names, else min). */
  mode?: 'auto' | 'min' | 'max';
  /** At the end, put back the parameters of the best epoch (default false). */
  restoreBestWeights?: boolean;
}

/**
 * Stops training when `monitor` has not improved by more than minDelta for `patience` epochs (Keras's
 * EarlyStopping). With restoreBestWeights the best epoch's parameters are copied to the host at that
 * epoch and written back at the end. InvalidArgumentError for options outside their domain.
 */
export function earlyStopping(options: EarlyStoppingOptions = {}): Callback {
  const { monitor = 'val_loss', minDelta = 0, patience = 0, mode = 'auto', restoreBestWeights = false } = options;
  if (!Number.isInteger(patience) || patience < 0)
    throw new InvalidArgumentError(`earlyStopping: patience must be an integer ≥ 0, got ${describeValue(patience)}`);
  if (!Number.isFinite(minDelta) || minDelta < 0)
    throw new InvalidArgumentError(
      `earlyStopping: minDelta must be a finite number ≥ 0, got ${describeValue(minDelta)}`,
    );
  const lower = lowerIsBetter(monitor, mode);
  let best = Number.NaN;
  let wait = 0;
  let saved: { data: ArrayLike<number>; tensorIndex: number }[] | null = null;
  return {
    onTrainBegin() {
      best = lower ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
      wait = 0;
      saved = null;
    },
    async onEpochEnd(_epoch, logs, _progress, ctx) {
      const v = monitored('earlyStopping', logs, monitor);
      if (lower ? v < best - minDelta : v > best + minDelta) {
        best = v;
        wait = 0;
        if (restoreBestWeights) {
          const ps = ctx.model.parameters();
          saved = await Promise.all(ps.map(async (p, i) => ({ data: await p.data(), tensorIndex: i })));
        }
      } else if (++wait >= patience) ctx.stopTraining = true;
    },
    onTrainEnd(ctx) {
      if (!saved) return;
      const ps = ctx.model.parameters();
      for (const { data, tensorIndex } of saved) {
        const p = ps[tensorIndex]!;
        p.backend.write(p.value.buffer, data as Float32Array);
      }
    },
  };
}

/** A per-epoch (or per-batch) schedule: a function of the step and current lr, or a scheduler object. */
export type Schedule = ((step: number, lr: number) => number) | { step(value?: number): void };

/** Options of learningRateScheduler. */
export interface LearningRateSchedulerOptions {
  /** Step the schedule after every 'epoch' (default) or every 'batch' (OneCycleLR, warm-ups). */
  per?: 'epoch' | 'batch';
  /** Logged value passed to a scheduler's step(value) each epoch (ReduceLROnPlateau: 'val_loss'). */
  monitor?: string;
}

/**
 * Drives the learning rate from fit: a function `(step, lr) => newLr` (Keras's LearningRateScheduler; step
 * is the epoch, or the batch counted over the run with per 'batch'), or a scheduler object (StepLR,
 * CosineAnnealingLR, OneCycleLR, ReduceLROnPlateau with `monitor`) whose step() is called.
 */
export function learningRateScheduler(schedule: Schedule, options: LearningRateSchedulerOptions = {}): Callback {
  const { per = 'epoch', monitor } = options;
  if (typeof schedule !== 'function' && (typeof schedule !== 'object' || typeof schedule?.step !== 'function'))
    throw new InvalidArgumentError(
      `learningRateScheduler: schedule must be a function or a scheduler, got ${describeValue(schedule)}`,
    );
  let n = 0;
  const advance = (ctx: FitContext, logs: Logs): void => {
    n++;
    if (typeof schedule === 'function') {
      if (ctx.optimizer) ctx.optimizer.lr = schedule(n, ctx.optimizer.lr);
    } else if (monitor !== undefined) schedule.step(monitored('learningRateScheduler', logs, monitor));
    else schedule.step();
  };
  return {
    onTrainBegin(ctx) {
      n = 0;
      if (typeof schedule === 'function' && ctx.optimizer) ctx.optimizer.lr = schedule(0, ctx.optimizer.lr);
    },
    onBatchEnd(_b, logs, _p, ctx) {
      if (per === 'batch') advance(ctx, logs);
    },
    onEpochEnd(_e, logs, _p, ctx) {
      if (per === 'epoch') advance(ctx, logs);
    },
  };
}

/** What modelCheckpoint passes to its save function. */
export interface CheckpointInfo {
  /** The epoch saved, from 0. */
  epoch: number;
  /** Its logs. */
  logs: Logs;
}

/** Options of modelCheckpoint. */
export interface ModelCheckpointOptions {
  /**
   * Stores the bytes (a safetensors file of model.stateDict()): in Node,
   * `(bytes, { epoch }) => writeFile(\`model-\${epoch}.safetensors\`, bytes)`; in a page, IndexedDB or a download.
   */
  save: (bytes: Uint8Array, info: CheckpointInfo) => void | Promise<void>;
  /** Save only when `monitor` improves (default false: every epoch). */
  saveBestOnly?: boolean;
  /** Logged value for saveBestOnly (default 'val_loss'). */
  monitor?: string;
  /** 'min', 'max' or 'auto' (as earlyStopping). */
  mode?: 'auto' | 'min' | 'max';
}

/** Saves the model's state dict as safetensors bytes at the end of each epoch (or of each best epoch). */
export function modelCheckpoint(options: ModelCheckpointOptions): Callback {
  if (typeof options?.save !== 'function')
    throw new InvalidArgumentError(
      `modelCheckpoint: options.save must be a function (bytes, info) => void, got ${describeValue(options?.save)}`,
    );
  const { save, saveBestOnly = false, monitor = 'val_loss', mode = 'auto' } = options;
  const lower = lowerIsBetter(monitor, mode);
  let best = Number.NaN;
  return {
    onTrainBegin() {
      best = lower ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    },
    async onEpochEnd(epoch, logs, _p, ctx) {
      if (saveBestOnly) {
        const v = monitored('modelCheckpoint', logs, monitor);
        if (!(lower ? v < best : v > best)) return;
        best = v;
      }
      await save(await saveSafetensors(ctx.model.stateDict(), { epoch: String(epoch) }), { epoch, logs });
    },
  };
}

/**
 * What progressEvents dispatches on: anything with an EventTarget's `dispatchEvent` (a DOM element, `new
 * EventTarget()` in Node or a worker). Declared structurally so the declarations need no DOM lib.
 */
export interface ProgressEventTarget {
  /** Called with a CustomEvent whose detail is the Progress and its phase. */
  dispatchEvent(event: never): unknown;
}

/**
 * Dispatches a `type` event (default 'progress') on `target` after every batch and epoch: a CustomEvent
 * whose detail is the Progress (with `phase`: 'batch' or 'epoch') — a page's progress bar listens to it.
 * Any EventTarget (a DOM element, `new EventTarget()` in Node or a worker) serves.
 */
export function progressEvents(target: ProgressEventTarget, type = 'progress'): Callback {
  if (typeof target?.dispatchEvent !== 'function')
    throw new InvalidArgumentError(`progressEvents: target must be an EventTarget, got ${describeValue(target)}`);
  const send = (phase: 'batch' | 'epoch', progress: Progress): void => {
    target.dispatchEvent(new CustomEvent(type, { detail: { phase, ...progress } }) as never);
  };
  return {
    onBatchEnd: (_b, _l, p) => send('batch', p),
    onEpochEnd: (_e, _l, p) => send('epoch', p),
  };
}
