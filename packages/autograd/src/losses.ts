/**
 * Differentiable losses (PyTorch's torch.nn.functional names) on the HAL's loss composites
 * (hal/src/families/loss/losses.ts): nllLoss, crossEntropy — class indices (int32 labels) or class probabilities
 * (float32 labels of the logits' shape) — and binaryCrossEntropyWithLogits. Gradients are written with
 * HAL ops, so every backend has them:
 *
 * - nllLoss: −weight[label]·s at each target's picked score (s = g, or g / Σ weights kept for 'mean'),
 *   0 at ignored targets and at labels out of range (whose loss is NaN);
 * - crossEntropy: with G the gradient at the log-probabilities (nll term plus the smoothing term
 *   −ε/C·weight[c]·s), G − softmax·Σ_c G;
 * - binaryCrossEntropyWithLogits: weight·(lw·σ(x) − posWeight·y)·s to the logits, weight·(posWeight·
 *   softplus(−x) − softplus(x))·s to the targets.
 *
 * Labels never receive a gradient; class weights and posWeight are constants (InvalidArgumentError when
 * they require grad, as PyTorch has no derivative for nll_loss's weight).
 */
import {
  type BinaryCrossEntropyOptions,
  type ComputeBackend,
  DTypeError,
  describeValue,
  InvalidArgumentError,
  type LossReduction,
  type NDArray,
  ShapeMismatchError,
  withTemps,
} from '@polyhal/hal';
import { mean, record, softmaxCrossEntropy, sum } from './ops.js';
import { Tensor } from './tensor.js';

/** Options of `nllLoss` (PyTorch nll_loss). */
export interface LossOptions {
  /** float32 [C] class weights (a constant). */
  weight?: Tensor;
  /** Targets with this label contribute 0 (default −100). */
  ignoreIndex?: number;
  /** 'mean' (default), 'sum' or 'none'. */
  reduction?: LossReduction;
}

/** Options of `crossEntropy`: LossOptions plus label smoothing (PyTorch cross_entropy). */
export interface CrossEntropyLossOptions extends LossOptions {
  /** ε in [0, 1]: targets (1 − ε)·one-hot + ε/C (class indices only). */
  labelSmoothing?: number;
}

/** Options of `binaryCrossEntropyWithLogits` (PyTorch binary_cross_entropy_with_logits). */
export interface BceWithLogitsOptions {
  /** Element weights broadcast to the logits (a constant). */
  weight?: Tensor;
  /** Weights of positive targets broadcast to the logits, usually [C] (a constant). */
  posWeight?: Tensor;
  /** 'mean' (default, over every element), 'sum' or 'none'. */
  reduction?: LossReduction;
}

function constants(op: string, ws: Record<string, Tensor | undefined>): Tensor[] {
  const out: Tensor[] = [];
  for (const [name, w] of Object.entries(ws)) {
    if (w === undefined) continue;
    if (w.requiresGrad)
      throw new InvalidArgumentError(`${op}: ${name} is a constant here and takes no gradient (detach it)`);
    out.push(w);
  }
  return out;
}

const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;

/**
 * Which labels a class loss has: int32 class indices, or (crossEntropy only) float32 class
 * probabilities of the scores' shape. Other labels are refused with a message that teaches the fix:
 * float32 class indices (what a DataLoader yields) and labels of any other dtype are a DTypeError that
 * says to cast them with labels.cast('int32'); for crossEntropy, float32 labels of neither the indices'
 * shape nor the scores' are a ShapeMismatchError naming both forms.
 */
function labelKind(op: string, scores: Tensor, labels: Tensor, probabilities: boolean): 'indices' | 'probabilities' {
  const arg = op === 'nllLoss' ? 'logProbs' : 'logits';
  if (!(scores instanceof Tensor))
    throw new InvalidArgumentError(`${op}: ${arg} must be a Tensor, got ${describeValue(scores)}`);
  if (!(labels instanceof Tensor))
    throw new InvalidArgumentError(`${op}: labels must be a Tensor, got ${describeValue(labels)}`);
  if (labels.dtype === 'int32') return 'indices';
  const s = scores.shape;
  const same = (want: readonly number[]): boolean =>
    labels.shape.length === want.length && want.every((d, i) => d === labels.shape[i]);
  if (probabilities && labels.dtype === 'float32' && same(s)) return 'probabilities';
  const index = s.length >= 2 ? [s[0]!, ...s.slice(2)] : null;
  const probs = probabilities ? ` (float32 labels are class probabilities of the ${arg}' shape ${shp(s)})` : '';
  if (index && !same(index) && labels.dtype === 'float32' && probabilities)
    throw new ShapeMismatchError(
      `${op}: labels of shape ${shp(labels.shape)} fit neither form for ${arg} ${shp(s)}: int32 class indices ` +
        `${shp(index)} or float32 class probabilities ${shp(s)}`,
      [labels.shape, s],
    );
  throw new DTypeError(
    `${op}: labels of shape ${shp(labels.shape)} are class indices, which must be int32, got ${labels.dtype}; ` +
      `cast them with labels.cast('int32')${probs}`,
  );
}

/**
 * d loss / d scores of a class-index loss, [N, C, d1, …]: −(1 − ε)·[c = label]·w_c·s − ε/C·w_c·s over the
 * targets kept, s = g per target ('none'), g ('sum') or g / Σ w_label ('mean').
 */
function classGrad(
  be: ComputeBackend,
  g: NDArray,
  scores: NDArray,
  labels: NDArray,
  weight: NDArray | undefined,
  o: { ignoreIndex: number; reduction: LossReduction; smoothing: number },
): NDArray {
  const C = scores.shape[1]!;
  const r = scores.shape.length;
  return withTemps(be, (t) => {
    const own = (x: NDArray, v: NDArray): NDArray => (v.buffer === x.buffer ? v : t(v));
    const ii = o.ignoreIndex;
    const ign = t(be.sub(t(be.sub(1, t(be.cmplt(labels, ii)))), t(be.cmplt(ii, labels))));
    const inRange = t(be.mul(t(be.cmplt(-1, labels)), t(be.cmplt(labels, C))));
    const kept = t(be.mul(inRange, t(be.sub(1, ign))));
    // the label where kept, else C (oneHot: a row of zeros)
    const cls = t(be.add(t(be.mul(kept, t(be.sub(labels, C)))), C));
    const perm = [0, r - 1, ...Array.from({ length: r - 2 }, (_, i) => i + 1)];
    let hot = be.permute(t(be.oneHot(cls, C)), perm); // [N, C, d1, …]
    const wc = weight ? own(weight, be.reshape(weight, [C, ...Array<number>(r - 2).fill(1)])) : null;
    if (wc) hot = t(be.mul(hot, wc));
    let coef = hot;
    if (o.smoothing > 0) {
      const keptC = t(be.cast(kept, 'float32'));
      const keptF = own(keptC, be.reshape(keptC, [scores.shape[0]!, 1, ...scores.shape.slice(2)]));
      const smooth = wc ? t(be.mul(keptF, wc)) : keptF;
      coef = t(be.add(t(be.mul(hot, 1 - o.smoothing)), t(be.mul(smooth, o.smoothing / C))));
    }
    let s = g;
    if (o.reduction === 'none') s = own(g, be.reshape(g, [scores.shape[0]!, 1, ...scores.shape.slice(2)]));
    else if (o.reduction === 'mean') s = t(be.div(g, t(be.sum(hot))));
    return be.mul(coef, t(be.neg(s)));
  });
}

/** The nll / cross-entropy options with their defaults (the HAL validates them). */
const classOptions = (o: CrossEntropyLossOptions) => ({
  ignoreIndex: o.ignoreIndex ?? -100,
  reduction: o.reduction ?? 'mean',
  smoothing: o.labelSmoothing ?? 0,
});

const halOptions = (o: CrossEntropyLossOptions, weight: NDArray | undefined) => ({
  ...o,
  weight,
});

/**
 * Negative log-likelihood: logProbs [N, C, d1, …], int32 labels [N, d1, …] → [N, d1, …] or a scalar
 * (PyTorch nll_loss). Gradient to logProbs only. Labels of another dtype (DataLoader's float32
 * included) are a DTypeError that says to cast them with `labels.cast('int32')`.
 */
export function nllLoss(logProbs: Tensor, labels: Tensor, options: LossOptions = {}): Tensor {
  labelKind('nllLoss', logProbs, labels, false);
  const w = constants('nllLoss', { weight: options.weight });
  return record(
    'nllLoss',
    [logProbs, labels, ...w],
    (be, [x, l, wt]) => be.nllLoss(x!, l!, halOptions(options, wt)),
    (be, g, [x, l, wt], _out, needs) => [
      needs[0] ? classGrad(be, g, x!, l!, wt, classOptions(options)) : null,
      null,
      ...w.map(() => null),
    ],
  );
}

/**
 * Cross-entropy of logits [N, C, d1, …] (PyTorch cross_entropy). Two forms of labels are accepted:
 *
 * - int32 class indices [N, d1, …]: nllLoss(logSoftmax(logits, 1)) with weight, ignoreIndex and
 *   labelSmoothing;
 * - float32 class probabilities (or one-hot rows, tfjs's form) of the logits' shape [N, C]: the fused
 *   softmaxCrossEntropy per row (only `reduction` applies).
 *
 * Default reduction 'mean'. Class indices of any other dtype — float32 ones of shape [N, d1, …], as a
 * DataLoader yields them, included — are a DTypeError that says to cast them with
 * `labels.cast('int32')`; float32 labels of neither shape are a ShapeMismatchError naming both forms.
 */
export function crossEntropy(logits: Tensor, labels: Tensor, options: CrossEntropyLossOptions = {}): Tensor {
  if (labelKind('crossEntropy', logits, labels, true) === 'probabilities') {
    const { reduction = 'mean', ...rest } = options;
    const extra = Object.keys(rest).filter((k) => (rest as Record<string, unknown>)[k] !== undefined);
    if (extra.length)
      throw new InvalidArgumentError(`crossEntropy: ${extra.join(', ')} need int32 class labels, not probabilities`);
    if (!['none', 'sum', 'mean'].includes(reduction))
      throw new InvalidArgumentError(`crossEntropy: reduction must be 'none', 'sum' or 'mean', got '${reduction}'`);
    const rows = softmaxCrossEntropy(logits, labels);
    return reduction === 'none' ? rows : reduction === 'sum' ? sum(rows) : mean(rows);
  }
  const w = constants('crossEntropy', { weight: options.weight });
  return record(
    'crossEntropy',
    [logits, labels, ...w],
    (be, [z, l, wt]) => be.crossEntropy(z!, l!, halOptions(options, wt)),
    (be, g, [z, l, wt], _out, needs) => {
      if (!needs[0]) return [null, null, ...w.map(() => null)];
      const dz = withTemps(be, (t) => {
        const logp = t(be.logSoftmax(z!, 1));
        const G = t(classGrad(be, g, logp, l!, wt, classOptions(options)));
        return be.sub(G, t(be.mul(t(be.exp(logp)), t(be.sum(G, 1, true)))));
      });
      return [dz, null, ...w.map(() => null)];
    },
  );
}

/**
 * Binary cross-entropy of logits x and float32 targets y of x's shape (PyTorch
 * binary_cross_entropy_with_logits), stable for any finite x. Gradients to the logits and the targets.
 */
export function binaryCrossEntropyWithLogits(
  logits: Tensor,
  targets: Tensor,
  options: BceWithLogitsOptions = {},
): Tensor {
  const op = 'binaryCrossEntropyWithLogits';
  const consts = constants(op, { weight: options.weight, posWeight: options.posWeight });
  const hal = (xs: NDArray[]): BinaryCrossEntropyOptions => {
    const o: BinaryCrossEntropyOptions = { reduction: options.reduction };
    let k = 2;
    if (options.weight) o.weight = xs[k++];
    if (options.posWeight) o.posWeight = xs[k++];
    return o;
  };
  return record(
    op,
    [logits, targets, ...consts],
    (be, xs) => be.binaryCrossEntropyWithLogits(xs[0]!, xs[1]!, hal(xs)),
    (be, g, xs, _out, needs) => {
      const o = hal(xs);
      const [x, y] = [xs[0]!, xs[1]!];
      const grads = withTemps(be, (t) => {
        const reduction = options.reduction ?? 'mean';
        const s =
          reduction === 'mean'
            ? t(
                be.div(
                  g,
                  x.shape.reduce((p, d) => p * d, 1),
                ),
              )
            : g;
        const ws = o.weight ? t(be.mul(s, o.weight)) : s;
        const py = o.posWeight ? t(be.mul(o.posWeight, y)) : y;
        const dx = needs[0]
          ? withTemps(be, (u) => {
              // lw·σ(x) − posWeight·y, lw = 1 + (posWeight − 1)·y
              const lw = o.posWeight ? u(be.add(u(be.sub(py, y)), 1)) : null;
              const sig = u(be.sigmoid(x));
              return be.mul(u(be.sub(lw ? u(be.mul(lw, sig)) : sig, py)), ws);
            })
          : null;
        const dy = needs[1]
          ? withTemps(be, (u) => {
              const pos = u(be.softplus(u(be.neg(x))));
              const a = o.posWeight ? u(be.mul(o.posWeight, pos)) : pos;
              return be.mul(u(be.sub(a, u(be.softplus(x)))), ws);
            })
          : null;
        return [dx, dy];
      });
      return [...grads, ...consts.map(() => null)];
    },
  );
}
