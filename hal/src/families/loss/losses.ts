/**
 * Loss functions composed from HAL ops, installed on BaseBackend so every backend has them (table
 * entries and the exact rules: ops/loss-ops.ts). PyTorch's semantics and names:
 *
 * - `nllLoss(logProbs [N, C, d1, …], labels int32 [N, d1, …], {weight [C], ignoreIndex = −100, reduction})`
 *   (torch.nn.functional.nll_loss, ONNX NegativeLogLikelihoodLoss);
 * - `crossEntropy(logits, labels, {…, labelSmoothing})` = nllLoss(logSoftmax(logits, 1), …) with class
 *   indices (torch.nn.functional.cross_entropy, ONNX SoftmaxCrossEntropyLoss);
 * - `binaryCrossEntropyWithLogits(logits, targets, {weight, posWeight, reduction})`
 *   (torch.nn.functional.binary_cross_entropy_with_logits).
 *
 * The class-index losses read one score per target with a gather of the flattened scores at int32 flat
 * positions n·C·D + label·D + d (D = d1·d2·…), computed on the device from the labels: a label outside
 * [0, C) points past the end, so the gather's fill rule gives NaN (PyTorch and ONNX raise an error; a
 * kernel cannot throw on device data). A target whose label is ignoreIndex must give exactly 0 even when
 * its scores are NaN or ±Inf, which no arithmetic mask does (0·NaN is NaN): the per-target losses are
 * padded with one 0 and gathered again, ignored targets reading that 0. Every argument is checked before
 * anything is allocated.
 */
import type { ComputeBackend } from '../../backend.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { broadcastShapes, sizeOf } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { checkOptionsObject, describeValue } from '../../contract/validate.js';

/** How a loss reduces its per-element terms: 'none' keeps them, 'sum' adds them, 'mean' averages them. */
export type LossReduction = 'none' | 'sum' | 'mean';

/** Options of `nllLoss` (PyTorch nll_loss, ONNX NegativeLogLikelihoodLoss). */
export interface NllLossOptions {
  /** float32 [C]: each class's weight (default 1). */
  weight?: NDArray;
  /** Targets with this label contribute 0 and no weight (default −100, PyTorch's). */
  ignoreIndex?: number;
  /** 'mean' (default): Σ loss / Σ weight of the targets not ignored; 'sum'; 'none': one loss per target. */
  reduction?: LossReduction;
}

/** Options of `crossEntropy`: NllLossOptions plus label smoothing (PyTorch cross_entropy). */
export interface CrossEntropyOptions extends NllLossOptions {
  /** ε in [0, 1]: the target distribution is (1 − ε)·one-hot + ε/C (default 0). */
  labelSmoothing?: number;
}

/** Options of `binaryCrossEntropyWithLogits` (PyTorch binary_cross_entropy_with_logits). */
export interface BinaryCrossEntropyOptions {
  /** float32, broadcast to the logits' shape: each element's weight. */
  weight?: NDArray;
  /** float32, broadcast to the logits' shape (usually [C]): the weight of positive targets. */
  posWeight?: NDArray;
  /** 'mean' (default, over every element), 'sum' or 'none'. */
  reduction?: LossReduction;
}

/** The loss functions of every backend (BaseBackend's). Semantics: ops/loss-ops.ts. */
export interface LossMethods {
  /**
   * Negative log-likelihood of int32 class labels under float32 log-probabilities [N, C, d1, …]:
   * −weight[label]·logProbs[n, label, …] per target, reduced. A label outside [0, C) other than
   * ignoreIndex gives NaN. DTypeError, ShapeMismatchError, InvalidArgumentError for bad arguments.
   */
  nllLoss(logProbs: NDArray, labels: NDArray, options?: NllLossOptions): NDArray;
  /** nllLoss(logSoftmax(logits, 1), labels, options), with optional label smoothing. */
  crossEntropy(logits: NDArray, labels: NDArray, options?: CrossEntropyOptions): NDArray;
  /** −weight·[posWeight·y·log σ(x) + (1 − y)·log(1 − σ(x))] elementwise, reduced; stable for any finite x. */
  binaryCrossEntropyWithLogits(logits: NDArray, targets: NDArray, options?: BinaryCrossEntropyOptions): NDArray;
}

type LossHost = ComputeBackend & { check(x: NDArray, op: string, arg?: string): void };

const shp = (x: NDArray | readonly number[]): string => `[${('shape' in x ? x.shape : x).join(', ')}]`;
const REDUCTIONS: readonly string[] = ['none', 'sum', 'mean'];

function reductionOf(v: unknown, op: string): LossReduction {
  if (v === undefined) return 'mean';
  if (typeof v !== 'string' || !REDUCTIONS.includes(v))
    throw new InvalidArgumentError(`${op}: reduction must be 'none', 'sum' or 'mean', got ${describeValue(v)}`);
  return v as LossReduction;
}

function checkFloat(be: LossHost, x: NDArray, op: string, arg: string): void {
  be.check(x, op, arg);
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: ${arg} must be float32, got ${x.dtype}`);
}

interface ClassTargets {
  weight?: NDArray;
  ignoreIndex: number;
  reduction: LossReduction;
  smoothing: number;
}

/** Checks the operands of nllLoss / crossEntropy; returns the options with their defaults. */
function checkClassTargets(be: LossHost, op: string, scores: NDArray, labels: NDArray, options: unknown): ClassTargets {
  const arg = op === 'nllLoss' ? 'logProbs' : 'logits';
  const keys = ['weight', 'ignoreIndex', 'reduction', ...(op === 'crossEntropy' ? ['labelSmoothing'] : [])];
  const o = checkOptionsObject(options, op, keys);
  checkFloat(be, scores, op, arg);
  be.check(labels, op, 'labels');
  if (labels.dtype !== 'int32')
    throw new DTypeError(
      `${op}: labels must be int32 class indices, got ${labels.dtype}; cast them with backend.cast(labels, 'int32')`,
    );
  const s = scores.shape;
  if (s.length < 2)
    throw new ShapeMismatchError(`${op}: ${arg} must be [N, C, d1, …] (rank ≥ 2), got ${shp(scores)}`, [s]);
  const want = [s[0]!, ...s.slice(2)];
  if (labels.shape.length !== want.length || want.some((d, i) => d !== labels.shape[i]))
    throw new ShapeMismatchError(
      `${op}: labels of shape ${shp(labels)} do not match ${arg} ${shp(scores)} (want ${shp(want)})`,
      [s, labels.shape],
    );
  const weight = o['weight'] as NDArray | undefined;
  if (weight !== undefined) {
    checkFloat(be, weight, op, 'weight');
    if (weight.shape.length !== 1 || weight.shape[0] !== s[1])
      throw new ShapeMismatchError(`${op}: weight must be [${s[1]}] (one per class), got ${shp(weight)}`, [
        s,
        weight.shape,
      ]);
  }
  const ignoreIndex = o['ignoreIndex'] ?? -100;
  if (!Number.isInteger(ignoreIndex) || (ignoreIndex as number) < -(2 ** 31) || (ignoreIndex as number) >= 2 ** 31)
    throw new InvalidArgumentError(`${op}: ignoreIndex must be an int32 integer, got ${describeValue(ignoreIndex)}`);
  const smoothing = o['labelSmoothing'] ?? 0;
  if (typeof smoothing !== 'number' || !(smoothing >= 0 && smoothing <= 1))
    throw new InvalidArgumentError(`${op}: labelSmoothing must be in [0, 1], got ${describeValue(smoothing)}`);
  if (sizeOf(s) > 2 ** 31 - 1)
    throw new InvalidArgumentError(`${op}: ${arg} has ${sizeOf(s)} elements, more than an int32 index reaches`);
  return { weight, ignoreIndex: ignoreIndex as number, reduction: reductionOf(o['reduction'], op), smoothing };
}

/** An int32 [rows, cols] array a·i + b·j (a column and a row uploaded, added with broadcasting). */
function grid(be: LossHost, t: <A extends NDArray>(a: A) => A, rows: number, a: number, cols: number): NDArray {
  const col = t(
    be.fromArray(
      Int32Array.from({ length: rows }, (_, i) => i * a),
      [rows, 1],
      'int32',
    ),
  );
  const row = t(
    be.fromArray(
      Int32Array.from({ length: cols }, (_, j) => j),
      [1, cols],
      'int32',
    ),
  );
  return t(be.add(col, row));
}

/** The class-index loss on checked operands; `scores` are log-probabilities. Caller frees the result. */
function classLoss(be: LossHost, scores: NDArray, labels: NDArray, o: ClassTargets): NDArray {
  const [N, C] = scores.shape as [number, number];
  const D = sizeOf(scores.shape.slice(2));
  const M = N * D;
  const T = N * C * D;
  return withTemps(be, (t) => {
    // views of the operands: freed only when the reshape had to copy
    const flatOf = (x: NDArray, shape: number[]): NDArray => {
      const r = be.reshape(x, shape);
      return r.buffer === x.buffer ? r : t(r);
    };
    const L = flatOf(labels, [N, D]);
    const inRange = t(be.mul(t(be.cmplt(-1, L)), t(be.cmplt(L, C))));
    // flat position of the target's score; out of range → T (past the end: the gather's NaN)
    const pos = t(be.add(grid(be, t, N, C * D, D), t(be.mul(L, D))));
    const at = t(be.add(t(be.mul(inRange, t(be.sub(pos, T)))), T));
    const picked = t(be.gather(flatOf(scores, [T]), at, 0));
    let w: NDArray | undefined;
    let loss = t(be.neg(picked));
    if (o.weight) {
      const cls = t(be.add(t(be.mul(inRange, t(be.sub(L, C)))), C)); // out of range → C (NaN weight)
      w = t(be.gather(o.weight, cls, 0));
      loss = t(be.mul(loss, w));
    }
    if (o.smoothing > 0) {
      const wc = o.weight ? flatOf(o.weight, [C, ...scores.shape.slice(2).map(() => 1)]) : null;
      const ws = wc ? t(be.mul(scores, wc)) : scores;
      const smooth = flatOf(t(be.neg(t(be.sum(ws, 1)))), [N, D]);
      loss = t(be.add(t(be.mul(loss, 1 - o.smoothing)), t(be.mul(smooth, o.smoothing / C))));
    }
    // ignored targets: 0 (and weight 0), selected by a gather from the values padded with one 0
    let count: NDArray | number = M;
    if (M > 0) {
      const ign = t(be.sub(t(be.sub(1, t(be.cmplt(L, o.ignoreIndex)))), t(be.cmplt(o.ignoreIndex, L))));
      const k = grid(be, t, N, D, D);
      const sel = t(be.add(k, t(be.mul(ign, t(be.sub(M, k))))));
      const select = (v: NDArray): NDArray => t(be.gather(t(be.pad(flatOf(v, [M]), [[0, 1]], 0)), sel, 0));
      loss = select(loss);
      if (o.reduction === 'mean')
        count = w ? t(be.sum(select(w))) : t(be.sub(M, t(be.sum(t(be.cast(ign, 'float32'))))));
    } else if (w) count = t(be.sum(w));
    if (o.reduction === 'none') return be.reshape(be.contiguous(loss), labels.shape);
    const total = t(be.sum(loss));
    return o.reduction === 'sum' ? be.contiguous(total) : be.div(total, count);
  });
}

function nllLoss(be: LossHost, logProbs: NDArray, labels: NDArray, options?: NllLossOptions): NDArray {
  return classLoss(be, logProbs, labels, checkClassTargets(be, 'nllLoss', logProbs, labels, options));
}

function crossEntropy(be: LossHost, logits: NDArray, labels: NDArray, options?: CrossEntropyOptions): NDArray {
  const o = checkClassTargets(be, 'crossEntropy', logits, labels, options);
  return withTemps(be, (t) => classLoss(be, t(be.logSoftmax(logits, 1)), labels, o));
}

function binaryCrossEntropyWithLogits(
  be: LossHost,
  x: NDArray,
  y: NDArray,
  options?: BinaryCrossEntropyOptions,
): NDArray {
  const op = 'binaryCrossEntropyWithLogits';
  const o = checkOptionsObject(options, op, ['weight', 'posWeight', 'reduction']);
  checkFloat(be, x, op, 'logits');
  checkFloat(be, y, op, 'targets');
  if (x.shape.length !== y.shape.length || x.shape.some((d, i) => d !== y.shape[i]))
    throw new ShapeMismatchError(`${op}: targets of shape ${shp(y)} must have the logits' shape ${shp(x)}`, [
      x.shape,
      y.shape,
    ]);
  const weight = o['weight'] as NDArray | undefined;
  const posWeight = o['posWeight'] as NDArray | undefined;
  for (const [arg, v] of [
    ['weight', weight],
    ['posWeight', posWeight],
  ] as const) {
    if (v === undefined) continue;
    checkFloat(be, v, op, arg);
    let ok = v.shape.length <= x.shape.length;
    try {
      ok &&= broadcastShapes(v.shape, x.shape).every((d, i) => d === x.shape[i]);
    } catch {
      ok = false;
    }
    if (!ok)
      throw new ShapeMismatchError(`${op}: ${arg} of shape ${shp(v)} does not broadcast to the logits' ${shp(x)}`, [
        x.shape,
        v.shape,
      ]);
  }
  const reduction = reductionOf(o['reduction'], op);
  return withTemps(be, (t) => {
    // max(x, 0) − x·y + lw·log1p(exp(−|x|)) + (posWeight − 1)·y·max(−x, 0), lw = 1 + (posWeight − 1)·y
    const log1pExp = t(be.softplus(t(be.neg(t(be.abs(x)))))); // log1p(exp(−|x|)), one kernel
    let loss: NDArray = t(be.sub(t(be.relu(x)), t(be.mul(x, y))));
    // the last elementwise op's result is the output under reduction 'none' (not a temporary)
    const last = (v: NDArray): NDArray => (reduction === 'none' ? v : t(v));
    let extra = log1pExp;
    if (posWeight) {
      const py = t(be.mul(t(be.sub(posWeight, 1)), y));
      extra = t(be.add(t(be.mul(t(be.add(py, 1)), log1pExp)), t(be.mul(py, t(be.relu(t(be.neg(x))))))));
    }
    loss = weight ? last(be.mul(t(be.add(loss, extra)), weight)) : last(be.add(loss, extra));
    if (reduction === 'none') return loss;
    return reduction === 'sum' ? be.sum(loss) : be.mean(loss);
  });
}

/** The loss methods (LossMethods) as BaseBackend has them (FAMILIES, base.ts): composed from primitives. */
export const LOSS_METHODS: FamilyTable<LossMethods> = {
  nllLoss(logProbs: NDArray, labels: NDArray, options?: NllLossOptions) {
    return nllLoss(this, logProbs, labels, options);
  },
  crossEntropy(logits: NDArray, labels: NDArray, options?: CrossEntropyOptions) {
    return crossEntropy(this, logits, labels, options);
  },
  binaryCrossEntropyWithLogits(x: NDArray, y: NDArray, options?: BinaryCrossEntropyOptions) {
    return binaryCrossEntropyWithLogits(this, x, y, options);
  },
} satisfies FamilyTable<LossMethods, LossHost>;
