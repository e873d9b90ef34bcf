/**
 * The float64 oracle of the loss functions (hal/src/ops/loss-ops.ts), by their definitions on
 * contiguous arrays — one loop over targets, no gathers or flat indices, nothing shared with
 * hal/src/families/loss/losses.ts: nllLoss and crossEntropy (PyTorch's nll_loss and cross_entropy with class indices,
 * label smoothing as PyTorch composes it) and binaryCrossEntropyWithLogits (−w·[p·y·log σ(x) +
 * (1 − y)·log(1 − σ(x))]). Error scale: Σ|terms| of each loss (and of the sums), divided like the mean.
 */
import { numel, type Ref } from './oracle.js';

export type Reduction = 'none' | 'sum' | 'mean';

export interface ClassLossParams {
  ignoreIndex: number;
  reduction: Reduction;
  /** crossEntropy's ε (0 for nllLoss). */
  labelSmoothing: number;
  /** true: the scores are logits (crossEntropy), log-softmaxed along dim 1 here first. */
  logits: boolean;
}

/** log-softmax along dim 1 of [N, C, d1, …], in float64. */
function logSoftmaxDim1(x: Ref): Float64Array {
  const [N, C] = x.shape as [number, number];
  const D = numel(x.shape.slice(2));
  const out = new Float64Array(x.data.length);
  for (let n = 0; n < N; n++)
    for (let d = 0; d < D; d++) {
      const at = (c: number): number => (n * C + c) * D + d;
      let m = -Infinity;
      for (let c = 0; c < C; c++) m = Math.max(m, x.data[at(c)]!);
      let s = 0;
      for (let c = 0; c < C; c++) s += Math.exp(x.data[at(c)]! - m);
      for (let c = 0; c < C; c++) out[at(c)] = x.data[at(c)]! - m - Math.log(s);
    }
  return out;
}

/** Reduces per-target losses (with their scales) by `reduction`; the mean divides by `den`. */
function reduce(shape: number[], loss: Float64Array, scale: Float64Array, reduction: Reduction, den: number): Ref {
  if (reduction === 'none') return { shape, data: loss, dtype: 'float32', scale };
  let s = 0;
  let m = 0;
  for (let i = 0; i < loss.length; i++) {
    s += loss[i]!;
    if (Number.isFinite(scale[i]!)) m += scale[i]!;
  }
  const div = reduction === 'mean' ? den : 1;
  return { shape: [], data: Float64Array.of(s / div), dtype: 'float32', scale: Float64Array.of(m / Math.abs(div)) };
}

/** nllLoss (logits false) or crossEntropy (logits true): labels [N, d1, …], weight [C] or undefined. */
export function oClassLoss(scores: Ref, labels: Ref, weight: Ref | undefined, p: ClassLossParams): Ref {
  const [N, C] = scores.shape as [number, number];
  const D = numel(scores.shape.slice(2));
  const logp = p.logits ? logSoftmaxDim1(scores) : scores.data;
  const w = (c: number): number => (weight ? weight.data[c]! : 1);
  const loss = new Float64Array(N * D);
  const scale = new Float64Array(N * D);
  let den = 0;
  const eps = p.labelSmoothing;
  for (let n = 0; n < N; n++)
    for (let d = 0; d < D; d++) {
      const t = n * D + d;
      const label = labels.data[t]!;
      if (label === p.ignoreIndex) continue; // 0, and no weight in the mean
      if (!(label >= 0 && label < C)) {
        // PyTorch and ONNX raise an error; the HAL's rule is NaN
        loss[t] = NaN;
        den = NaN;
        continue;
      }
      const lp = logp[(n * C + label) * D + d]!;
      // log-probabilities from logits carry an absolute error of their magnitude's order, at least 1
      const mag = (v: number): number => (p.logits ? Math.max(Math.abs(v), 1) : Math.abs(v));
      loss[t] = -(1 - eps) * w(label) * lp;
      scale[t] = (1 - eps) * Math.abs(w(label)) * mag(lp);
      if (eps > 0)
        for (let c = 0; c < C; c++) {
          const v = logp[(n * C + c) * D + d]!;
          loss[t]! -= (eps / C) * w(c) * v;
          scale[t]! += (eps / C) * Math.abs(w(c)) * mag(v);
        }
      den += w(label);
    }
  return reduce([...labels.shape], loss, scale, p.reduction, den);
}

/** log σ(z) = −log(1 + e^(−z)), without overflow, in float64. */
const logSigmoid = (z: number): number => (z >= 0 ? -Math.log1p(Math.exp(-z)) : z - Math.log1p(Math.exp(z)));

/** The index of `shape`'s element i in an array of `from` broadcast to `shape` (NumPy rules). */
function broadcastIndex(i: number, shape: readonly number[], from: readonly number[]): number {
  let rest = i;
  let f = 0;
  let stride = 1;
  for (let k = shape.length - 1, j = from.length - 1; k >= 0; k--, j--) {
    const c = rest % shape[k]!;
    rest = Math.floor(rest / shape[k]!);
    if (j >= 0) {
      if (from[j]! !== 1) f += c * stride;
      stride *= from[j]!;
    }
  }
  return f;
}

/** binaryCrossEntropyWithLogits by its definition, weight and posWeight broadcast to x's shape. */
export function oBinaryCrossEntropyWithLogits(
  x: Ref,
  y: Ref,
  weight: Ref | undefined,
  posWeight: Ref | undefined,
  reduction: Reduction,
): Ref {
  const n = x.data.length;
  const loss = new Float64Array(n);
  const scale = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const xi = x.data[i]!;
    const yi = y.data[i]!;
    const w = weight ? weight.data[broadcastIndex(i, x.shape, weight.shape)]! : 1;
    const pw = posWeight ? posWeight.data[broadcastIndex(i, x.shape, posWeight.shape)]! : 1;
    const a = pw * yi * logSigmoid(xi);
    const b = (1 - yi) * logSigmoid(-xi);
    loss[i] = -w * (a + b);
    // the terms, and x·y: float32 inputs make |x|·ulp(y) an inherent error
    scale[i] = Math.abs(w) * (Math.abs(a) + Math.abs(b) + Math.abs(xi) * (1 + Math.abs(pw * yi)));
  }
  return reduce([...x.shape], loss, scale, reduction, n);
}
