/**
 * One training run of the main job: builds the model on a backend, trains it with Adam (AdamW with a
 * one-epoch warm-up for the transformer; learning rate annealed by a cosine schedule over the run) on MNIST,
 * and evaluates test accuracy after every epoch. Everything stays on the device except the per-step
 * loss, which is read back for the progress bar and the cross-backend comparison.
 */
import { type ComputeBackend, InvalidArgumentError, mulberry32 } from '@polyhal/hal';
import {
  Adam,
  AdamW,
  autocast,
  compile,
  type CompileStats,
  CosineAnnealingLR,
  crossEntropy,
  DataLoader,
  GradScaler,
  type Module,
  noGrad,
  scope,
  type Tensor,
} from '@polyhal/autograd';
import { buildModel, type ModelKind, randomShift, toModelInput } from '@polyhal/models';
import type { MnistSplit } from './mnist.js';

export type { ModelKind } from '@polyhal/models';

export interface TrainOptions {
  model: ModelKind;
  epochs: number;
  batchSize: number;
  seed: number;
  lr: number;
  /** Mixed precision: the forward under autocast('float16'), the loss scaled by a GradScaler (--amp). */
  amp?: boolean;
  /**
   * The whole step compiled (--compile; @polyhal/autograd's `compile`): zeroGrad, forward, backward and the
   * optimizer's step recorded at the first step and replayed after, with the same bits as eager steps, on a backend
   * that captures (webgpu); elsewhere the step runs as called. Not with `amp` (GradScaler's step reads the device).
   */
  compile?: boolean;
  /** Called after every step with the loss and samples done in this epoch. */
  onStep?: (epoch: number, step: number, steps: number, loss: number, samples: number) => void;
  onEpoch?: (epoch: number, testAccuracy: number, meanLoss: number) => void;
  /** Runs on the trained model before it is freed (e.g. --quantize's int8 evaluation). */
  afterTraining?: (model: Module) => Promise<void>;
}

export interface TrainResult {
  losses: number[];
  finalLoss: number;
  testAccuracy: number;
  seconds: number;
  samplesPerSecond: number;
  peakBytes: number;
  /**
   * --compile: the compiled step's traces, replays and eager calls, the reasons of refusals, and the kernels one
   * replay runs (null where nothing was recorded: cpu, wasm).
   */
  compiled?: { traces: number; replays: number; eager: number; refused: string[]; kernels: number | null };
}

/**
 * A training step whose loss is NaN or ±Infinity (a diverging run: learning rate too large, or
 * inputs out of range). Training stops at that step; `epoch`/`step` (1-based step within the epoch)
 * say where, `loss` is the value read back, `backend` names the backend.
 */
export class NonFiniteLossError extends Error {
  constructor(
    readonly epoch: number,
    readonly step: number,
    readonly loss: number,
    readonly backend: string,
  ) {
    super(
      `${backend}: loss is ${loss} at epoch ${epoch + 1}, step ${step}; training stopped: the run ` +
        `diverged (try a smaller learning rate)`,
    );
    this.name = 'NonFiniteLossError';
  }
}

/**
 * What --amp prints about float16 on `backend`, or null where float16 is stored and computed natively: a
 * backend that stores float16 in float32 (cpu, wasm: each result rounded to float16) emulates it, so mixed
 * precision there has float16's rounding but neither its memory nor its speed; webgpu stores binary16 and, on a
 * device without shader-f16, decodes it to f32 for elementwise ops and reductions (`float16Arithmetic`).
 */
export function float16Emulation(backend: ComputeBackend): string | null {
  const be = backend as { hasPackedFloat16?: () => boolean; float16Arithmetic?: string };
  if (be.hasPackedFloat16?.() !== true)
    return (
      `${backend.name}: float16 is emulated here (stored as float32, each result rounded to float16): --amp ` +
      "trains with float16's rounding, without its memory or speed gains"
    );
  if (be.float16Arithmetic === 'emulated')
    return (
      `${backend.name}: float16 arithmetic is emulated here (binary16 storage, but no shader-f16: elementwise ops ` +
      'and reductions decode it to f32)'
    );
  return null;
}

/** Fraction of test digits whose largest logit is the label. */
export async function evaluate(
  model: Module,
  kind: ModelKind,
  backend: ComputeBackend,
  data: MnistSplit,
  batchSize = 500,
): Promise<number> {
  let correct = 0;
  const loader = new DataLoader({
    inputs: data.testX,
    labels: data.testY,
    inputShape: [784],
    labelShape: [10],
    batchSize,
    backend,
  });
  for await (const { x, y } of loader) {
    const logits = await scope(() => noGrad(() => model.forward(toModelInput(kind, x))).data());
    const labels = await y.data();
    const n = x.shape[0]!;
    for (let i = 0; i < n; i++) {
      let best = 0;
      for (let c = 1; c < 10; c++) if (logits[i * 10 + c]! > logits[i * 10 + best]!) best = c;
      if (labels[i * 10 + best] === 1) correct++;
    }
  }
  return correct / data.testSize;
}

/** A run's model, optimizer, loader and step (--profile builds one for each measurement: profile.ts). */
export interface Trainer {
  model: Module;
  opt: Adam;
  loader: DataLoader;
  /** One training step on a batch (forward, backward, optimizer and schedule step); returns the loss. */
  step(x: Tensor, y: Tensor): Promise<number>;
  /** The compiled step (--compile), else null. */
  compiled: { readonly stats: Readonly<CompileStats>; release(): void } | null;
  dispose(): void;
}

/** What TrainResult.compiled reports of a compiled step's stats. */
function compileFigures(s: Readonly<CompileStats>): NonNullable<TrainResult['compiled']> {
  const { traces, replays, eager, refused } = s;
  return { traces, replays, eager, refused: [...refused], kernels: s.recording?.kernels ?? null };
}

/** Validates the options and builds the model, optimizer, schedule and loader of a run. */
export function makeTrainer(
  backend: ComputeBackend,
  data: MnistSplit,
  o: Omit<TrainOptions, 'onStep' | 'onEpoch'>,
): Trainer {
  if (!Number.isInteger(o.batchSize) || o.batchSize < 1 || o.batchSize > data.trainSize) {
    throw new InvalidArgumentError(
      `batch size must be an integer from 1 to the training-set size (${data.trainSize}), got ${o.batchSize}`,
    );
  }
  if (!Number.isInteger(o.epochs) || o.epochs < 1)
    throw new InvalidArgumentError(`epochs must be a positive integer, got ${o.epochs}`);
  if (!Number.isFinite(o.lr) || o.lr <= 0)
    throw new InvalidArgumentError(`learning rate must be a positive finite number, got ${o.lr}`);
  if (o.compile && o.amp)
    throw new InvalidArgumentError(
      'compile and amp do not combine yet: GradScaler.step reads the gradients on the host every step',
    );
  const model = buildModel(o.model, backend, o.seed);
  // The transformer trains with AdamW (decoupled weight decay) and a one-epoch linear warm-up, as ViTs do.
  const opt =
    o.model === 'vit'
      ? new AdamW(model.parameters(), { lr: o.lr, weightDecay: 0.05 })
      : new Adam(model.parameters(), { lr: o.lr });
  const loader = new DataLoader({
    inputs: data.trainX,
    labels: data.trainY,
    inputShape: [784],
    labelShape: [10],
    batchSize: o.batchSize,
    backend,
    shuffle: true,
    seed: o.seed,
    dropLast: true,
  });
  // Cosine annealing of the learning rate over every step of the run (to 0 at the end).
  const schedule = new CosineAnnealingLR(opt, o.epochs * loader.length, 0, o.model === 'vit' ? loader.length : 0);
  // The transformer sees each digit shifted by up to 2 pixels (seeded: the same run on every backend).
  const shiftRng = mulberry32(o.seed + 77);
  const scaler = new GradScaler({ enabled: o.amp === true });
  // the whole step, recorded once and replayed (the schedule steps outside: a replay takes the lr it set)
  const compiled = o.compile
    ? compile((input: Tensor, labels: Tensor): Tensor => {
        opt.zeroGrad();
        const l = crossEntropy(model.forward(input), labels);
        l.backward();
        opt.step();
        return l;
      })
    : null;
  return {
    model,
    opt,
    loader,
    compiled,
    step: (x, y) =>
      scope(async () => {
        const input = o.model === 'vit' ? randomShift(x, shiftRng) : toModelInput(o.model, x);
        if (compiled) {
          const l = compiled(input, y);
          schedule.step();
          return l.item();
        }
        const l = autocast('float16', () => crossEntropy(model.forward(input), y), { enabled: o.amp === true });
        opt.zeroGrad();
        scaler.scale(l).backward(); // without amp: l itself, and step/update below are opt.step()
        await scaler.step(opt);
        scaler.update();
        schedule.step();
        return l.item();
      }),
    dispose() {
      compiled?.release();
      opt.zeroGrad();
      opt.dispose();
      model.dispose();
    },
  };
}

/**
 * Trains and evaluates one model. Throws `InvalidArgumentError` (before building anything) when a
 * batch is larger than the training set (no full batch, so no step would run), and
 * `NonFiniteLossError` at the first step whose loss is not finite.
 */
export async function train(backend: ComputeBackend, data: MnistSplit, o: TrainOptions): Promise<TrainResult> {
  const { model, loader, step, compiled, dispose } = makeTrainer(backend, data, o);
  const losses: number[] = [];
  let testAccuracy = 0;
  let trained = false;
  const t0 = performance.now();
  try {
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      let samples = 0;
      let sumLoss = 0;
      for await (const { x, y, index } of loader) {
        const loss = await step(x, y);
        if (!Number.isFinite(loss)) throw new NonFiniteLossError(epoch, index + 1, loss, backend.name);
        losses.push(loss);
        sumLoss += loss;
        samples += x.shape[0]!;
        o.onStep?.(epoch, index + 1, loader.length, loss, samples);
      }
      testAccuracy = await evaluate(model, o.model, backend, data);
      o.onEpoch?.(epoch, testAccuracy, sumLoss / loader.length);
    }
    await backend.synchronize();
    trained = true;
  } finally {
    if (!trained || !o.afterTraining) dispose();
  }
  const seconds = (performance.now() - t0) / 1000;
  if (o.afterTraining)
    try {
      await o.afterTraining(model);
    } finally {
      dispose();
    }
  return {
    losses,
    finalLoss: losses[losses.length - 1] ?? NaN,
    testAccuracy,
    seconds,
    samplesPerSecond: (o.epochs * loader.length * o.batchSize) / seconds,
    peakBytes: backend.memoryStats().peakBytes,
    ...(compiled ? { compiled: compileFigures(compiled.stats) } : {}),
  };
}
