/**
 * Composite ops built once from HAL primitives. Every backend inherits them; a backend may override
 * one with a fused kernel, and the conformance suite holds both to the same oracle.
 */
import type { AdamStepParams, ComputeBackend, SgdStepParams } from '../../backend.js';
import { ShapeMismatchError } from '../../core/errors.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import { normalizeAxis, shapesEqual } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { checkAdamParams, checkSgdParams } from '../../contract/validate.js';

export { withTemps } from '../../core/temps.js';

/** The most negative finite float32: a stand-in for −Inf in label-0 terms (see softmaxCrossEntropyComposite). */
const NEG_FLT_MAX = -3.4028234663852886e38;

/** softmax along `axis`: exp(x − max) / Σ exp(x − max). Same shape as x. */
export function softmaxComposite(be: ComputeBackend, x: NDArray, axis: number): NDArray {
  const ax = normalizeAxis(axis, x.shape.length);
  return withTemps(be, (t) => {
    const m = t(be.max(x, ax, true));
    const e = t(be.exp(t(be.sub(x, m))));
    const s = t(be.sum(e, ax, true));
    return be.div(e, s);
  });
}

/** log-softmax along `axis`: (x − max) − log Σ exp(x − max). Same shape as x. */
export function logSoftmaxComposite(be: ComputeBackend, x: NDArray, axis: number): NDArray {
  const ax = normalizeAxis(axis, x.shape.length);
  return withTemps(be, (t) => {
    const m = t(be.max(x, ax, true));
    const z = t(be.sub(x, m));
    const lse = t(be.log(t(be.sum(t(be.exp(z)), ax, true))));
    return be.sub(z, lse);
  });
}

/**
 * log Σ exp(x) over `axes` (normalized), stably: m + log Σ exp(x − m) with m the max where it is finite
 * and 0 elsewhere, so a row of −Inf gives −Inf, one holding +Inf gives +Inf and one holding NaN NaN
 * (scipy.special.logsumexp, torch.logsumexp); an empty axis gives −Inf.
 */
export function logsumexpComposite(be: ComputeBackend, x: NDArray, axes: readonly number[], keepdims: boolean) {
  return withTemps(be, (t) => {
    const m = t(be.max(x, axes, true));
    const shift = t(be.where(t(be.isfinite(m)), m, 0));
    const lse = be.add(t(be.log(t(be.sum(t(be.exp(t(be.sub(x, shift)))), axes, true)))), shift);
    // without keepdims: a view of the contiguous result in the kept shape
    return keepdims
      ? lse
      : be.reshape(
          lse,
          x.shape.filter((_, i) => !axes.includes(i)),
        );
  });
}

/**
 * logits [N, C], labels [N, C] → loss [N] = −Σ_c xlogy(labels, softmax(logits)); grad = softmax − labels.
 * The rule of ops.ts: a term whose label is 0 contributes exactly 0 unless its log-probability is
 * NaN. Built from primitives without a select: where the label is 0 the log-probability is clamped
 * from below at −FLT_MAX (so 0·(−Inf) never forms), elsewhere at −Inf (no clamp):
 * floor = −FLT_MAX / (1 − [label ≠ 0]) is −FLT_MAX or −FLT_MAX/0 = −Inf; `maximum` keeps NaN.
 */
export function softmaxCrossEntropyComposite(
  be: ComputeBackend,
  logits: NDArray,
  labels: NDArray,
  withGrad: boolean,
): { loss: NDArray; grad?: NDArray } {
  if (logits.shape.length !== 2 || !shapesEqual(logits.shape, labels.shape)) {
    throw new ShapeMismatchError(
      `softmaxCrossEntropy expects logits and labels of the same shape [N, C], got ` +
        `[${logits.shape.join(', ')}] and [${labels.shape.join(', ')}]`,
      [logits.shape, labels.shape],
    );
  }
  return withTemps(be, (t) => {
    const ls = t(be.logSoftmax(logits, 1));
    const nonzero = t(be.add(t(be.cmplt(labels, 0)), t(be.cmplt(0, labels))));
    const floor = t(be.div(NEG_FLT_MAX, t(be.sub(1, nonzero))));
    const loss = be.neg(t(be.sum(t(be.mul(labels, t(be.maximum(ls, floor)))), 1)));
    if (!withGrad) return { loss };
    const grad = be.sub(t(be.exp(ls)), labels);
    return { loss, grad };
  });
}

function checkSameSize(op: string, param: DeviceBuffer, grad: NDArray, ...state: (DeviceBuffer | null)[]): void {
  const n = grad.shape.reduce((p, d) => p * d, 1);
  for (const b of [param, ...state]) {
    if (b && b.size !== n)
      throw new ShapeMismatchError(`${op}: buffers of ${b.size} elements do not match the gradient's ${n}`);
  }
}

/**
 * The per-step constants of a fused Adam/AdamW kernel, computed in float64 from validated hyper-parameters:
 * decay 1 − lr·wd, the bias corrections 1/(1 − β1^t) and 1/(1 − β2^t), and 1 − β1, 1 − β2. A float32 kernel
 * must take 1 − β from here, not compute it from f32(β): 1 − f32(0.999) is 1.3e-5 off, which moves a step of
 * lr 0.5 by 3e-6 (conformance case adamStep/.../lr0.5).
 */
export function adamStepConstants(p: AdamStepParams): {
  decay: number;
  c1: number;
  c2: number;
  oneMinusBeta1: number;
  oneMinusBeta2: number;
} {
  return {
    decay: 1 - p.lr * p.weightDecay,
    c1: 1 / (1 - p.beta1 ** p.step),
    c2: 1 / (1 - p.beta2 ** p.step),
    oneMinusBeta1: 1 - p.beta1,
    oneMinusBeta2: 1 - p.beta2,
  };
}

/** Adam/AdamW from primitives: m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²; p ← p − lr·m̂/(√v̂ + ε). */
export function adamStepComposite(
  be: ComputeBackend,
  param: DeviceBuffer,
  grad: NDArray,
  m: DeviceBuffer,
  v: DeviceBuffer,
  p: AdamStepParams,
): void {
  checkAdamParams(p);
  checkSameSize('adamStep', param, grad, m, v);
  const shape = grad.shape;
  const P = viewOf(param, shape);
  const M = viewOf(m, shape);
  const V = viewOf(v, shape);
  withTemps(be, (t) => {
    const m2 = t(be.add(t(be.mul(M, p.beta1)), t(be.mul(grad, 1 - p.beta1))));
    const v2 = t(be.add(t(be.mul(V, p.beta2)), t(be.mul(t(be.mul(grad, grad)), 1 - p.beta2))));
    const c1 = 1 - p.beta1 ** p.step;
    const c2 = 1 - p.beta2 ** p.step;
    const denom = t(be.add(t(be.sqrt(t(be.div(v2, c2)))), p.eps));
    const upd = t(be.mul(t(be.div(t(be.div(m2, c1)), denom)), p.lr));
    const decayed = p.weightDecay > 0 ? t(be.mul(P, 1 - p.lr * p.weightDecay)) : P;
    const p2 = t(be.sub(decayed, upd));
    be.assign(m, m2);
    be.assign(v, v2);
    be.assign(param, p2);
  });
}

/** SGD with momentum (PyTorch convention): g' = g + wd·p; v ← μ v + g'; p ← p − lr·v (v = g' without momentum). */
export function sgdStepComposite(
  be: ComputeBackend,
  param: DeviceBuffer,
  grad: NDArray,
  velocity: DeviceBuffer | null,
  p: SgdStepParams,
): void {
  checkSgdParams(p);
  checkSameSize('sgdStep', param, grad, velocity);
  const shape = grad.shape;
  const P = viewOf(param, shape);
  withTemps(be, (t) => {
    const g = p.weightDecay > 0 ? t(be.add(grad, t(be.mul(P, p.weightDecay)))) : grad;
    let step = g;
    if (velocity && p.momentum > 0) {
      const v2 = t(be.add(t(be.mul(viewOf(velocity, shape), p.momentum)), g));
      be.assign(velocity, v2);
      step = v2;
    }
    be.assign(param, t(be.sub(P, t(be.mul(step, p.lr)))));
  });
}
