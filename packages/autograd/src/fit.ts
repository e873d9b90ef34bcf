/**
 * The training loop users don't write: fit(model, data, options) → history, evaluate and predict, as
 * Keras's and tfjs's model.fit/evaluate/predict. Batches come from a DataLoader over host copies of
 * the data (shuffled with a seed each epoch); each step is forward, loss, backward, optional gradient
 * clipping, optimizer step, in a scope. The batch loss (and, with metrics, the predictions) is read back
 * after each step: the only reads.
 */
import { type ComputeBackend, DTypeError, describeValue, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import type { Callback, FitContext, History, Logs, Progress } from './callbacks.js';
import { clipGradNorm, clipGradValue } from './clip.js';
import { DataLoader, type LoaderSample } from './data.js';
import { Dataset } from './dataset.js';
import { concat } from './layout.js';
import { binaryCrossEntropyWithLogits, crossEntropy } from './losses.js';
import { type Metric, type MetricSpec, toMetric } from './metrics.js';
import { type Module, mseLoss } from './nn.js';
import { abs, mean, sub } from './ops.js';
import { Adam, AdamW, type Optimizer, SGD } from './optim.js';
import { Adadelta, Adagrad, Adamax, RMSprop } from './optim-adaptive.js';
import { scope } from './scope.js';
import { noGrad, Tensor } from './tensor.js';
import { UninitializedParameterError } from './uninitialized.js';

/** Host data: row-major values and the shape of the whole set ([N, ...sample shape]). */
export interface HostData {
  /**
   * Values: inputs float32, or int32 (token ids for an Embedding: they stay int32); labels float32 (one-hot,
   * targets) or int32 (class indices).
   */
  data: Float32Array | Int32Array | readonly number[];
  /** Shape of the whole set, the N samples first: [N, ...]. */
  shape: readonly number[];
}

/** Inputs and labels: tensors (read to the host once) or host data, with the same N. */
export interface FitData {
  /** Inputs [N, ...]. */
  x: Tensor | HostData;
  /** Labels [N, ...]: int32 class indices [N], one-hot [N, C], or targets of the output's shape. */
  y: Tensor | HostData;
}

/**
 * Streamed data: a Dataset of `{ x, y }` samples (batched by fit's batchSize; a random-access one shuffled as host
 * arrays are, with the same seed giving the same batches), or a DataLoader (its own batches, order and backend).
 */
export type FitSource = Dataset<LoaderSample> | DataLoader;

/** A loss by name, or a function (predictions, labels) → scalar tensor. */
export type LossSpec =
  | 'crossEntropy'
  | 'categoricalCrossentropy'
  | 'sparseCategoricalCrossentropy'
  | 'binaryCrossentropy'
  | 'mse'
  | 'meanSquaredError'
  | 'mae'
  | 'meanAbsoluteError'
  | ((pred: Tensor, labels: Tensor) => Tensor);

/** An optimizer, or a name for one with its defaults over model.parameters() (created at the first step). */
export type OptimizerSpec = Optimizer | 'sgd' | 'adam' | 'adamw' | 'rmsprop' | 'adagrad' | 'adadelta' | 'adamax';

/** Options of fit. */
export interface FitOptions {
  /**
   * The loss: crossEntropy (from logits; int32 indices or one-hot labels), binaryCrossentropy (from logits),
   * mse, mae, or a function.
   */
  loss: LossSpec;
  /** The optimizer (an instance, or a name: 'sgd' has lr 0.01, the others their class defaults). */
  optimizer: OptimizerSpec;
  /** Passes over the data, an integer ≥ 1 (default 1). */
  epochs?: number;
  /** Samples per step, an integer ≥ 1 (default 32; a DataLoader's own). */
  batchSize?: number;
  /** Shuffle the training samples each epoch (default true; false for a stream Dataset; a DataLoader's own). */
  shuffle?: boolean;
  /** Seed of the shuffle (default 0). */
  seed?: number;
  /** Hold out this last fraction of the samples (before shuffling) for validation, in [0, 1) (default 0). */
  validationSplit?: number;
  /** Validation data (instead of validationSplit): arrays, a Dataset or a DataLoader. */
  validationData?: FitData | FitSource;
  /** Metrics logged per epoch, for training and validation ('accuracy', 'precision', 'mae', a Metric...). */
  metrics?: readonly MetricSpec[];
  /** Called at the start and end of training, each epoch and each batch. */
  callbacks?: readonly Callback[];
  /** Clip the gradients' joint 2-norm to this before each step (clipGradNorm). */
  clipGradNorm?: number;
  /** Clamp each gradient to ±this before each step (clipGradValue). */
  clipGradValue?: number;
  /** Where batches are uploaded (default: the model's parameters' backend). */
  backend?: ComputeBackend;
}

/** Options of evaluate. */
export interface EvaluateOptions {
  /** The loss (as fit's), or none: then only the metrics. */
  loss?: LossSpec;
  /** Metrics to compute. */
  metrics?: readonly MetricSpec[];
  /** Samples per forward pass (default 256). */
  batchSize?: number;
  /** Where batches are uploaded (default: the model's parameters' backend). */
  backend?: ComputeBackend;
}

const CLASS_LOSSES = new Set(['crossEntropy', 'categoricalCrossentropy', 'sparseCategoricalCrossentropy']);

/** The loss function of a spec; InvalidArgumentError for an unknown name. */
function lossOf(spec: LossSpec): (pred: Tensor, y: Tensor) => Tensor {
  if (typeof spec === 'function') return spec;
  if (CLASS_LOSSES.has(spec)) return (p, y) => crossEntropy(p, y);
  if (spec === 'binaryCrossentropy') return (p, y) => binaryCrossEntropyWithLogits(p, y);
  if (spec === 'mse' || spec === 'meanSquaredError') return mseLoss;
  if (spec === 'mae' || spec === 'meanAbsoluteError') return (p, y) => mean(abs(sub(p, y)));
  throw new InvalidArgumentError(
    `fit: unknown loss ${describeValue(spec)} (crossEntropy, categoricalCrossentropy, ` +
      `sparseCategoricalCrossentropy, binaryCrossentropy, mse, mae, or a function (pred, labels) => Tensor)`,
  );
}

/** An optimizer from a spec, over `params`; InvalidArgumentError for an unknown name. */
function optimizerOf(spec: OptimizerSpec, params: Tensor[]): Optimizer {
  if (typeof spec === 'object' && spec !== null && typeof (spec as Optimizer).step === 'function') return spec;
  const made: Record<string, () => Optimizer> = {
    sgd: () => new SGD(params, { lr: 0.01 }),
    adam: () => new Adam(params),
    adamw: () => new AdamW(params),
    rmsprop: () => new RMSprop(params),
    adagrad: () => new Adagrad(params),
    adadelta: () => new Adadelta(params),
    adamax: () => new Adamax(params),
  };
  const f = typeof spec === 'string' ? made[spec] : undefined;
  if (!f)
    throw new InvalidArgumentError(
      `fit: optimizer must be an Optimizer or one of ${Object.keys(made).join(', ')}, got ${describeValue(spec)}`,
    );
  return f();
}

/** Host copy of one side of the data, checked: values of prod(shape), N ≥ 1. */
async function hostOf(
  name: string,
  d: Tensor | HostData,
): Promise<{ data: Float32Array | Int32Array; shape: number[] }> {
  if (d instanceof Tensor) {
    const v = await d.data();
    return { data: v instanceof Int32Array ? v : Float32Array.from(v), shape: [...d.shape] };
  }
  if (d === null || typeof d !== 'object' || !Array.isArray(d.shape) || d.data === undefined)
    throw new InvalidArgumentError(`fit: ${name} must be a Tensor or { data, shape }, got ${describeValue(d)}`);
  const size = d.shape.reduce((p, k) => p * k, 1);
  if (d.shape.length < 1 || d.data.length !== size)
    throw new ShapeMismatchError(
      `fit: ${name} has ${d.data.length} values, not the ${size} of [${d.shape.join(', ')}]`,
    );
  const data = d.data instanceof Int32Array ? d.data : Float32Array.from(d.data);
  return { data, shape: [...d.shape] };
}

/** The pair of host sets, checked to have the same N; float32 class indices are a DTypeError under a class loss. */
async function hostPair(op: string, d: FitData, loss: LossSpec | undefined) {
  if (d === null || typeof d !== 'object' || !('x' in d) || !('y' in d))
    throw new InvalidArgumentError(`${op}: data must be { x, y }, got ${describeValue(d)}`);
  const x = await hostOf('x', d.x);
  const y = await hostOf('y', d.y);
  if (x.shape[0] !== y.shape[0])
    throw new ShapeMismatchError(`${op}: x has ${x.shape[0]} samples and y ${y.shape[0]}`, [x.shape, y.shape]);
  if (typeof loss === 'string' && CLASS_LOSSES.has(loss) && y.shape.length === 1 && !(y.data instanceof Int32Array))
    throw new DTypeError(
      `${op}: labels [${y.shape.join(', ')}] are float32 class indices; ${loss} takes int32 indices ` +
        `(an Int32Array, or labels.cast('int32')) or one-hot float32 rows [N, C]`,
    );
  return { x, y }; // int32 inputs (an Embedding's token ids) stay int32
}

/** A loader over a host pair (or a slice [from, to) of its samples). */
function loaderOf(
  pair: Awaited<ReturnType<typeof hostPair>>,
  backend: ComputeBackend,
  batchSize: number,
  opts: { from?: number; to?: number; shuffle?: boolean; seed?: number } = {},
): DataLoader {
  const inSize = pair.x.data.length / pair.x.shape[0]!;
  const labSize = pair.y.data.length / pair.y.shape[0]!;
  const from = opts.from ?? 0;
  const to = opts.to ?? pair.x.shape[0]!;
  return new DataLoader({
    inputs: pair.x.data.subarray(from * inSize, to * inSize),
    labels: pair.y.data.subarray(from * labSize, to * labSize),
    inputShape: pair.x.shape.slice(1),
    labelShape: pair.y.shape.slice(1),
    batchSize,
    backend,
    shuffle: opts.shuffle ?? false,
    seed: opts.seed ?? 0,
  });
}

/**
 * The loader of streamed data: a DataLoader as it is (InvalidArgumentError when batchSize, shuffle or seed are also
 * given), a Dataset batched with fit's options (shuffled by default only when it has random access).
 */
function streamLoader(op: string, d: FitSource, backend: ComputeBackend, o: FitOptions, batchSize: number): DataLoader {
  if (d instanceof DataLoader) {
    const given = (['batchSize', 'shuffle', 'seed'] as const).filter((k) => o[k] !== undefined);
    if (given.length)
      throw new InvalidArgumentError(
        `${op}: ${given.join(', ')} belong to the DataLoader passed as data; leave them out`,
      );
    return d;
  }
  const shuffle = o.shuffle ?? d.randomAccess;
  return new DataLoader(d, { backend, batchSize, shuffle, seed: o.seed ?? 0 });
}

const isSource = (d: unknown): d is FitSource => d instanceof Dataset || d instanceof DataLoader;

/**
 * Where batches go: `chosen`, else the backend of the model's first parameter that exists (a lazy layer
 * has none before its first forward), else x's when x is a Tensor; InvalidArgumentError when none tells.
 */
function backendOf(op: string, model: Module, x: unknown, chosen?: ComputeBackend): ComputeBackend {
  if (chosen) return chosen;
  for (const [, m] of model.namedModules()) {
    try {
      const p = m.parameters()[0]; // a lazy layer's throws before its first forward: the next module tells
      if (p) return p.backend;
    } catch (e) {
      if (!(e instanceof UninitializedParameterError)) throw e;
    }
  }
  if (x instanceof Tensor) return x.backend;
  throw new InvalidArgumentError(
    `${op}: the model has no parameters yet (a lazy layer) and x is not a Tensor: pass options.backend`,
  );
}

const intIn = (v: unknown, lo: number): boolean => typeof v === 'number' && Number.isInteger(v) && v >= lo;

/** Runs the metrics and the loss over a loader in evaluation mode, without gradients. */
async function evaluateLoader(
  model: Module,
  loader: DataLoader,
  lossFn: ((p: Tensor, y: Tensor) => Tensor) | null,
  metrics: Metric[],
): Promise<Logs> {
  const wasTraining = model.training;
  model.eval();
  let lossSum = 0;
  let n = 0;
  for (const m of metrics) m.reset();
  try {
    for await (const { x, y } of loader) {
      await scope(async () => {
        const out = noGrad(() => model.forward(x));
        const rows = x.shape[0]!;
        if (lossFn) lossSum += (await noGrad(() => lossFn(out, y)).item()) * rows;
        if (metrics.length) await updateMetrics(metrics, out, y);
        n += rows;
      });
    }
  } finally {
    model.train(wasTraining);
  }
  const logs: Logs = {};
  if (lossFn) logs['loss'] = lossSum / n;
  for (const m of metrics) logs[m.name] = m.result();
  return logs;
}

async function updateMetrics(metrics: Metric[], out: Tensor, y: Tensor): Promise<void> {
  const [pred, labels] = await Promise.all([out.data(), y.data()]);
  for (const m of metrics) m.update({ pred, predShape: out.shape, labels, labelShape: y.shape, labelDtype: y.dtype });
}

/**
 * Trains `model` on `data` (`{ x, y }` arrays, or a Dataset or DataLoader: FitSource) for `epochs` and returns
 * the History (per epoch: loss, each metric, and with validation `val_loss` and `val_<metric>`; `lr`). Each
 * epoch's loss and metrics are means over its samples (the batch losses weighted by batch size). Callbacks may
 * stop training (earlyStopping) and change the learning rate. The model is in training mode during the epochs
 * and evaluation mode for validation; its mode is restored at the end.
 *
 * Errors, before any step: InvalidArgumentError for options outside their domain (epochs, batchSize,
 * validationSplit, an unknown loss, optimizer or metric, both validationSplit and validationData; validationSplit
 * with a Dataset; batchSize, shuffle or seed with a DataLoader; shuffle: true with a stream Dataset);
 * ShapeMismatchError when x and y have different N or data and shape disagree; DTypeError for float32
 * class indices [N] under a cross-entropy loss (pass int32 indices or one-hot rows).
 */
export async function fit(model: Module, data: FitData | FitSource, options: FitOptions): Promise<History> {
  if (options === null || typeof options !== 'object')
    throw new InvalidArgumentError(`fit: options { loss, optimizer, ... } are required, got ${describeValue(options)}`);
  const { epochs = 1, batchSize = 32, shuffle = true, seed = 0, validationSplit = 0, validationData } = options;
  if (!intIn(epochs, 1))
    throw new InvalidArgumentError(`fit: epochs must be an integer ≥ 1, got ${describeValue(epochs)}`);
  if (!intIn(batchSize, 1))
    throw new InvalidArgumentError(`fit: batchSize must be an integer ≥ 1, got ${describeValue(batchSize)}`);
  if (typeof validationSplit !== 'number' || !(validationSplit >= 0 && validationSplit < 1))
    throw new InvalidArgumentError(`fit: validationSplit must be in [0, 1), got ${describeValue(validationSplit)}`);
  if (validationSplit > 0 && validationData)
    throw new InvalidArgumentError('fit: pass validationSplit or validationData, not both');
  const lossFn = lossOf(options.loss);
  const metrics = (options.metrics ?? []).map(toMetric);
  const valMetrics = (options.metrics ?? []).map((m) => (typeof m === 'string' ? toMetric(m) : m));
  const callbacks = [...(options.callbacks ?? [])];
  const chosen = options.backend ?? (data instanceof DataLoader ? data.backend : undefined);
  const backend = backendOf('fit', model, isSource(data) ? undefined : data?.x, chosen);
  const valBatch = Math.max(batchSize, 256);
  let train: DataLoader;
  let val: DataLoader | null = null;
  if (isSource(data)) {
    if (validationSplit > 0)
      throw new InvalidArgumentError('fit: validationSplit needs { x, y } arrays; pass validationData with a Dataset');
    train = streamLoader('fit', data, backend, options, batchSize);
  } else {
    const pair = await hostPair('fit', data, options.loss);
    const total = pair.x.shape[0]!;
    const nTrain = validationSplit > 0 ? Math.floor(total * (1 - validationSplit)) : total;
    if (nTrain < 1) throw new InvalidArgumentError(`fit: validationSplit ${validationSplit} leaves no training sample`);
    train = loaderOf(pair, backend, batchSize, { to: nTrain, shuffle, seed });
    if (validationSplit > 0 && nTrain < total) val = loaderOf(pair, backend, valBatch, { from: nTrain });
  }
  if (validationData && isSource(validationData))
    val =
      validationData instanceof DataLoader
        ? validationData
        : new DataLoader(validationData, { backend, batchSize: valBatch });
  else if (validationData)
    val = loaderOf(await hostPair('fit (validationData)', validationData, options.loss), backend, valBatch);

  const history: History = { epoch: [], history: {} };
  // An optimizer named by a string is created at the first step, after the forward that gives a lazy model
  // its parameters.
  let optimizer: Optimizer | null = typeof options.optimizer === 'string' ? null : optimizerOf(options.optimizer, []);
  if (typeof options.optimizer === 'string') optimizerOf(options.optimizer, []); // checks the name now
  const ctx: FitContext = { model, optimizer, epochs, batches: train.length, stopTraining: false, history };
  const wasTraining = model.training;
  const start = performance.now();
  const progress = (epoch: number, batch: number, samples: number, logs: Logs): Progress => ({
    epoch,
    epochs,
    batch,
    batches: train.length,
    samples,
    fraction: (epoch + (batch + 1) / train.length) / epochs,
    elapsedMs: performance.now() - start,
    logs,
  });
  for (const c of callbacks) await c.onTrainBegin?.(ctx);
  try {
    for (let epoch = 0; epoch < epochs && !ctx.stopTraining; epoch++) {
      model.train();
      for (const c of callbacks) await c.onEpochBegin?.(epoch, ctx);
      for (const m of metrics) m.reset();
      let lossSum = 0;
      let seen = 0;
      let last = 0;
      for await (const { x, y, index } of train) {
        const rows = x.shape[0]!;
        const loss = await scope(async () => {
          const out = model.forward(x);
          const l = lossFn(out, y);
          if (!optimizer) {
            optimizer = optimizerOf(options.optimizer, model.parameters());
            ctx.optimizer = optimizer;
          }
          optimizer.zeroGrad();
          l.backward();
          if (options.clipGradValue !== undefined) clipGradValue(model.parameters(), options.clipGradValue);
          if (options.clipGradNorm !== undefined) clipGradNorm(model.parameters(), options.clipGradNorm);
          optimizer.step();
          const [v] = await Promise.all([l.item(), metrics.length ? updateMetrics(metrics, out, y) : null]);
          return v;
        });
        lossSum += loss * rows;
        seen += rows;
        last = index;
        const logs: Logs = { loss: lossSum / seen };
        for (const m of metrics) logs[m.name] = m.result();
        for (const c of callbacks) await c.onBatchEnd?.(index, logs, progress(epoch, index, seen, logs), ctx);
        if (ctx.stopTraining) break;
      }
      const logs: Logs = { loss: lossSum / seen };
      for (const m of metrics) logs[m.name] = m.result();
      if (val) {
        const v = await evaluateLoader(model, val, lossFn, valMetrics);
        for (const [k, value] of Object.entries(v)) logs[`val_${k}`] = value;
      }
      logs['lr'] = (optimizer as Optimizer | null)?.lr ?? Number.NaN;
      history.epoch.push(epoch);
      for (const [k, value] of Object.entries(logs)) (history.history[k] ??= []).push(value);
      for (const c of callbacks) await c.onEpochEnd?.(epoch, logs, progress(epoch, last, seen, logs), ctx);
    }
  } finally {
    model.train(wasTraining);
  }
  for (const c of callbacks) await c.onTrainEnd?.(ctx);
  return history;
}

/**
 * The loss (with `loss`) and each metric over `data` (arrays, a Dataset of `{ x, y }` samples or a DataLoader), in
 * evaluation mode without gradients: means over every sample. Errors as fit's.
 */
export async function evaluate(model: Module, data: FitData | FitSource, options: EvaluateOptions = {}): Promise<Logs> {
  const { batchSize = 256 } = options;
  if (!intIn(batchSize, 1))
    throw new InvalidArgumentError(`evaluate: batchSize must be an integer ≥ 1, got ${describeValue(batchSize)}`);
  const lossFn = options.loss === undefined ? null : lossOf(options.loss);
  const metrics = (options.metrics ?? []).map(toMetric);
  const chosen = options.backend ?? (data instanceof DataLoader ? data.backend : undefined);
  const backend = backendOf('evaluate', model, isSource(data) ? undefined : data?.x, chosen);
  const loader = isSource(data)
    ? data instanceof DataLoader
      ? data
      : new DataLoader(data, { backend, batchSize })
    : loaderOf(await hostPair('evaluate', data, options.loss), backend, batchSize);
  return evaluateLoader(model, loader, lossFn, metrics);
}

/**
 * The model's outputs for every sample of `x` ([N, ...]), computed in batches of `batchSize` (default 256)
 * in evaluation mode without gradients, concatenated along dim 0 on the model's backend.
 */
export async function predict(
  model: Module,
  x: Tensor | HostData,
  options: { batchSize?: number; backend?: ComputeBackend } = {},
): Promise<Tensor> {
  const { batchSize = 256 } = options;
  if (!intIn(batchSize, 1))
    throw new InvalidArgumentError(`predict: batchSize must be an integer ≥ 1, got ${describeValue(batchSize)}`);
  const host = await hostOf('x', x);
  const n = host.shape[0]!;
  const pair = { x: host, y: { data: new Float32Array(n), shape: [n] } };
  const wasTraining = model.training;
  model.eval();
  const parts: Tensor[] = [];
  try {
    for await (const b of loaderOf(pair, backendOf('predict', model, x, options.backend), batchSize))
      parts.push(noGrad(() => model.forward(b.x)));
    if (parts.length === 1) return parts[0]!;
    const out = concat(parts, 0);
    for (const p of parts) p.dispose();
    return out;
  } finally {
    model.train(wasTraining);
  }
}
