/**
 * Metrics, as Keras and tfjs name them: accuracy, top-k accuracy, precision, recall, mean squared and
 * mean absolute error. Each is a stateful Metric (update per batch, result over every batch since the
 * last reset: what fit and evaluate report), and a function of two tensors (`await accuracy(pred, y)`).
 * They read predictions and labels back to the host and count there, in float64.
 *
 * Labels of a classification metric (predictions [N, C], C ≥ 2): int32 class indices [N], or one-hot
 * (or probability) rows [N, C] of any float dtype, whose largest entry is the class. float32 labels of
 * shape [N] are a DTypeError that says to cast them to int32. Predictions [N] or [N, 1] are a binary
 * classifier's: the positive class where the prediction exceeds `threshold` (0.5: probabilities; use
 * 0 for logits), labels 0/1 of the same size.
 */
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { Tensor } from './tensor.js';

/** Host values of a batch: predictions and labels with their shapes and the labels' dtype. */
export interface MetricBatch {
  /** Predictions (logits, probabilities or regression outputs), row-major. */
  pred: ArrayLike<number>;
  /** Shape of `pred`. */
  predShape: readonly number[];
  /** Labels, row-major. */
  labels: ArrayLike<number>;
  /** Shape of `labels`. */
  labelShape: readonly number[];
  /** dtype of the labels ('int32' for class indices). */
  labelDtype: string;
}

/** A metric accumulated over batches. */
export interface Metric {
  /** Its name in fit's history and logs ('accuracy', 'top3Accuracy', 'precision', ...). */
  readonly name: string;
  /** Adds one batch. Errors (shapes, dtypes) are typed: ShapeMismatchError, DTypeError. */
  update(batch: MetricBatch): void;
  /** The value over every batch since the last reset (NaN before any sample). */
  result(): number;
  /** Forgets every batch. */
  reset(): void;
}

/** Names fit and evaluate accept for the built-in metrics, or a Metric. */
export type MetricSpec = 'accuracy' | 'acc' | 'topKAccuracy' | 'precision' | 'recall' | 'mse' | 'mae' | Metric;

/** Predicted class of each row: argmax of [N, C] rows (first on ties), or pred > threshold for [N] / [N, 1]. */
function predictedClasses(b: MetricBatch, threshold: number): { n: number; c: number; cls: Int32Array } {
  const n = b.predShape[0] ?? 1;
  const c = b.predShape.length === 2 ? b.predShape[1]! : 1;
  if (b.predShape.length < 1 || b.predShape.length > 2)
    throw new ShapeMismatchError(`metrics: predictions must be [N, C] or [N], got [${b.predShape.join(', ')}]`);
  const cls = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (c === 1) cls[i] = b.pred[i]! > threshold ? 1 : 0;
    else {
      let best = 0;
      for (let j = 1; j < c; j++) if (b.pred[i * c + j]! > b.pred[i * c + best]!) best = j;
      cls[i] = best;
    }
  }
  return { n, c, cls };
}

/** True class of each row, from int32 indices [N], one-hot rows [N, C], or 0/1 labels for a binary classifier. */
function trueClasses(b: MetricBatch, n: number, c: number): Int32Array {
  const shape = `[${b.labelShape.join(', ')}]`;
  const out = new Int32Array(n);
  if (c > 1 && b.labelShape.length === 2 && b.labelShape[0] === n && b.labelShape[1] === c) {
    for (let i = 0; i < n; i++) {
      let best = 0;
      for (let j = 1; j < c; j++) if (b.labels[i * c + j]! > b.labels[i * c + best]!) best = j;
      out[i] = best;
    }
    return out;
  }
  if (b.labels.length !== n)
    throw new ShapeMismatchError(
      `metrics: labels ${shape} fit neither predictions [${b.predShape.join(', ')}] as one-hot rows nor as ` +
        `${n} class indices`,
    );
  if (c > 1 && b.labelDtype !== 'int32')
    throw new DTypeError(
      `metrics: class labels ${shape} are ${b.labelDtype}; class indices must be int32 ` +
        `(labels.cast('int32'), or an Int32Array) — or pass one-hot rows [N, ${c}]`,
    );
  for (let i = 0; i < n; i++) {
    const v = b.labels[i]!;
    if (!Number.isInteger(v) || v < 0 || v >= Math.max(c, 2))
      throw new InvalidArgumentError(`metrics: label ${v} of row ${i} is not a class in [0, ${Math.max(c, 2)})`);
    out[i] = v;
  }
  return out;
}

/** Fraction of rows whose predicted class is the label (Keras's accuracy / categorical accuracy). */
export class Accuracy implements Metric {
  /** 'accuracy'. */
  readonly name: string = 'accuracy';
  private hits = 0;
  private count = 0;
  constructor(
    /** A binary classifier's decision value (default 0.5: probabilities; 0 for logits). */
    readonly threshold = 0.5,
  ) {}
  update(b: MetricBatch): void {
    const { n, c, cls } = predictedClasses(b, this.threshold);
    const y = trueClasses(b, n, c);
    for (let i = 0; i < n; i++) if (cls[i] === y[i]) this.hits++;
    this.count += n;
  }
  result(): number {
    return this.count ? this.hits / this.count : Number.NaN;
  }
  reset(): void {
    this.hits = 0;
    this.count = 0;
  }
}

/** Fraction of rows whose label is among the k highest predictions (fewer than k classes score above it). */
export class TopKAccuracy implements Metric {
  /** `top${k}Accuracy` (top5Accuracy by default). */
  readonly name: string;
  private hits = 0;
  private count = 0;
  constructor(
    /** How many of the highest predictions may hold the label: an integer ≥ 1 (default 5; InvalidArgumentError). */
    readonly k = 5,
  ) {
    if (!Number.isInteger(k) || k < 1)
      throw new InvalidArgumentError(`TopKAccuracy: k must be an integer ≥ 1, got ${k}`);
    this.name = `top${k}Accuracy`;
  }
  update(b: MetricBatch): void {
    const n = b.predShape[0]!;
    const c = b.predShape[1]!;
    if (b.predShape.length !== 2)
      throw new ShapeMismatchError(`TopKAccuracy: predictions must be [N, C], got [${b.predShape.join(', ')}]`);
    const y = trueClasses(b, n, c);
    for (let i = 0; i < n; i++) {
      const s = b.pred[i * c + y[i]!]!;
      let above = 0;
      for (let j = 0; j < c; j++) if (b.pred[i * c + j]! > s) above++;
      if (above < this.k) this.hits++;
    }
    this.count += n;
  }
  result(): number {
    return this.count ? this.hits / this.count : Number.NaN;
  }
  reset(): void {
    this.hits = 0;
    this.count = 0;
  }
}

/** Options of Precision and Recall. */
export interface PrecisionRecallOptions {
  /** A binary classifier's decision value (default 0.5; 0 for logits). */
  threshold?: number;
  /** One class against the rest (multi-class); absent: binary for [N] predictions, macro average for [N, C]. */
  classId?: number;
}

/** Counts of true positives, false positives and false negatives per class. */
abstract class ConfusionMetric implements Metric {
  /** Its name in fit's history and logs. */
  abstract readonly name: string;
  private tp = new Float64Array(0);
  private fp = new Float64Array(0);
  private fn = new Float64Array(0);
  constructor(
    /** The decision threshold and the class scored (see PrecisionRecallOptions). */
    readonly options: PrecisionRecallOptions = {},
  ) {}
  update(b: MetricBatch): void {
    const { n, c, cls } = predictedClasses(b, this.options.threshold ?? 0.5);
    const y = trueClasses(b, n, c);
    const k = Math.max(c, 2);
    if (this.tp.length !== k) [this.tp, this.fp, this.fn] = [0, 0, 0].map(() => new Float64Array(k));
    for (let i = 0; i < n; i++) {
      if (cls[i] === y[i]) this.tp[y[i]!]!++;
      else {
        this.fp[cls[i]!]!++;
        this.fn[y[i]!]!++;
      }
    }
  }
  /** The per-class ratio tp / (tp + other), 0 where the class has no count. */
  protected ratio(other: Float64Array): number {
    if (this.tp.length === 0) return Number.NaN;
    const per = (j: number): number => (this.tp[j]! + other[j]! ? this.tp[j]! / (this.tp[j]! + other[j]!) : 0);
    const { classId } = this.options;
    if (classId !== undefined) return per(classId);
    if (this.tp.length === 2) return per(1); // binary: the positive class
    let s = 0;
    for (let j = 0; j < this.tp.length; j++) s += per(j);
    return s / this.tp.length;
  }
  /** False positives per class since the last reset. */
  protected get falsePositives(): Float64Array {
    return this.fp;
  }
  /** False negatives per class since the last reset. */
  protected get falseNegatives(): Float64Array {
    return this.fn;
  }
  /** The value over every batch since the last reset (NaN before any sample). */
  abstract result(): number;
  reset(): void {
    this.tp = new Float64Array(0);
    this.fp = new Float64Array(0);
    this.fn = new Float64Array(0);
  }
}

/**
 * Precision tp / (tp + fp): of the positive class for a binary classifier (or a two-column one), of
 * `classId` against the rest, or else the mean over classes (macro; a class never predicted counts 0).
 */
export class Precision extends ConfusionMetric {
  /** 'precision'. */
  readonly name: string = 'precision';
  /** Precision over every batch since the last reset (NaN before any sample). */
  result(): number {
    return this.ratio(this.falsePositives);
  }
}

/** Recall tp / (tp + fn), averaged as Precision is. */
export class Recall extends ConfusionMetric {
  /** 'recall'. */
  readonly name: string = 'recall';
  /** Recall over every batch since the last reset (NaN before any sample). */
  result(): number {
    return this.ratio(this.falseNegatives);
  }
}

/** Mean of (pred − label)² (MSE) or |pred − label| (MAE) over every element; labels of pred's size. */
class ErrorMean implements Metric {
  private sum = 0;
  private count = 0;
  constructor(
    /** 'mse' or 'mae': its name in fit's history and logs. */
    readonly name: string,
    private readonly f: (d: number) => number,
  ) {}
  update(b: MetricBatch): void {
    if (b.pred.length !== b.labels.length)
      throw new ShapeMismatchError(
        `${this.name}: predictions [${b.predShape.join(', ')}] and labels [${b.labelShape.join(', ')}] differ in size`,
      );
    for (let i = 0; i < b.pred.length; i++) this.sum += this.f(b.pred[i]! - b.labels[i]!);
    this.count += b.pred.length;
  }
  result(): number {
    return this.count ? this.sum / this.count : Number.NaN;
  }
  reset(): void {
    this.sum = 0;
    this.count = 0;
  }
}

/** Mean squared error over every element. */
export class MeanSquaredError extends ErrorMean {
  constructor() {
    super('mse', (d) => d * d);
  }
}

/** Mean absolute error over every element. */
export class MeanAbsoluteError extends ErrorMean {
  constructor() {
    super('mae', Math.abs);
  }
}

/** A fresh Metric from a name or a Metric; InvalidArgumentError for an unknown name. */
export function toMetric(spec: MetricSpec): Metric {
  if (typeof spec === 'object' && spec !== null && typeof spec.update === 'function') return spec;
  const made: Record<string, () => Metric> = {
    accuracy: () => new Accuracy(),
    acc: () => new Accuracy(),
    topKAccuracy: () => new TopKAccuracy(),
    precision: () => new Precision(),
    recall: () => new Recall(),
    mse: () => new MeanSquaredError(),
    mae: () => new MeanAbsoluteError(),
  };
  const f = typeof spec === 'string' ? made[spec] : undefined;
  if (!f)
    throw new InvalidArgumentError(
      `metrics: unknown metric ${JSON.stringify(spec)} (${Object.keys(made).join(', ')}, or a Metric object)`,
    );
  return f();
}

/** Reads two tensors and runs `metric` over them as one batch. */
async function measure(metric: Metric, pred: Tensor, labels: Tensor): Promise<number> {
  if (!(pred instanceof Tensor) || !(labels instanceof Tensor))
    throw new InvalidArgumentError('metrics: pred and labels must be Tensors');
  const [p, y] = await Promise.all([pred.data(), labels.data()]);
  metric.update({ pred: p, predShape: pred.shape, labels: y, labelShape: labels.shape, labelDtype: labels.dtype });
  return metric.result();
}

/** Accuracy of predictions [N, C] (or [N] for a binary classifier, with `threshold`) against labels. */
export const accuracy = (pred: Tensor, labels: Tensor, threshold = 0.5): Promise<number> =>
  measure(new Accuracy(threshold), pred, labels);
/** Top-k accuracy of predictions [N, C] against labels. */
export const topKAccuracy = (pred: Tensor, labels: Tensor, k = 5): Promise<number> =>
  measure(new TopKAccuracy(k), pred, labels);
/** Precision (see Precision for the averaging). */
export const precision = (pred: Tensor, labels: Tensor, options?: PrecisionRecallOptions): Promise<number> =>
  measure(new Precision(options), pred, labels);
/** Recall (see Precision for the averaging). */
export const recall = (pred: Tensor, labels: Tensor, options?: PrecisionRecallOptions): Promise<number> =>
  measure(new Recall(options), pred, labels);
/** Mean squared error over every element. */
export const meanSquaredError = (pred: Tensor, labels: Tensor): Promise<number> =>
  measure(new MeanSquaredError(), pred, labels);
/** Mean absolute error over every element. */
export const meanAbsoluteError = (pred: Tensor, labels: Tensor): Promise<number> =>
  measure(new MeanAbsoluteError(), pred, labels);
