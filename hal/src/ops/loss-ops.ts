/**
 * Table entries of the loss functions (hal/src/families/loss/losses.ts): nllLoss, crossEntropy with class indices and
 * binaryCrossEntropyWithLogits, with PyTorch's semantics (torch.nn.functional.nll_loss, cross_entropy,
 * binary_cross_entropy_with_logits) and ONNX's NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 * They join ARRAY_OP_DEFS (array-ops.ts) as composites: every backend inherits them.
 */
import type { ArrayOpDef } from './types.js';

const F32 = ['float32'] as const;

const REDUCTION =
  "reduction 'none' keeps one loss per target ([N, d1, …]); 'sum' adds them; 'mean' (the default) divides the " +
  'sum by the sum of the weights of the targets not ignored (by their count without weights): NaN when that is 0';

const LABEL_RULE =
  'A label equal to ignoreIndex (default −100, PyTorch’s) contributes exactly 0 — whatever its row holds — and ' +
  'no weight. A label outside [0, C) that is not ignoreIndex is an error in PyTorch and ONNX; a kernel cannot ' +
  'throw on device data, so it gives NaN (the gather fill rule of ops/index-ops.ts), which the sum and mean ' +
  'carry. Negative labels do not count from the end';

const LOSS_ERRORS =
  'DTypeError unless the scores and weights are float32 and the labels int32; ShapeMismatchError unless the ' +
  'scores have rank ≥ 2 and the labels shape [N, d1, …] (the scores’ without dim 1) and a weight [C]; ' +
  'InvalidArgumentError for a reduction outside none/sum/mean, a non-integer ignoreIndex';

export const LOSS_OP_DEFS = {
  nllLoss: {
    kind: 'composite',
    signature:
      'nllLoss(logProbs: [N, C, d1, …], labels: int32 [N, d1, …], {weight?: [C], ignoreIndex = −100, ' +
      "reduction = 'mean'}) → [N, d1, …] or []",
    semantics:
      `loss = −weight[label]·logProbs[n, label, d1, …] per target (PyTorch nll_loss, ONNX ` +
      `NegativeLogLikelihoodLoss); ${REDUCTION}. ${LABEL_RULE}. ${LOSS_ERRORS}, or more than 2^31 − 1 ` +
      'score elements (the flat int32 index).',
    dtypes: F32,
    accuracy: {
      float32: { abs: 0, rel: 2e-6 },
      wgsl: { accuracy: { abs: 0, rel: 4e-6 }, why: 'WGSL: float32 sums and division (2.5 ulp)' },
    },
    grad: 'autograd losses.ts (−weight[label]·g at each picked score, ÷ Σ weights kept for mean; none to labels)',
    composition:
      'int32 flat indices n·C·D + label·D + d (out of range → past the end), gather of the flattened scores ' +
      'and of the weights, mul, neg; ignored targets selected to 0 by a gather from the losses padded with ' +
      'one 0; sum, div',
  },
  crossEntropy: {
    kind: 'composite',
    signature:
      'crossEntropy(logits: [N, C, d1, …], labels: int32 [N, d1, …], {weight?, ignoreIndex = −100, ' +
      "reduction = 'mean', labelSmoothing = 0}) → [N, d1, …] or []",
    semantics:
      'nllLoss(logSoftmax(logits, 1), labels, …) (PyTorch cross_entropy with class indices, ONNX ' +
      'SoftmaxCrossEntropyLoss); with labelSmoothing ε ∈ [0, 1] each loss is (1 − ε)·nll + ε/C·' +
      '(−Σ_c weight[c]·logp[n, c, …]), ignored targets 0, reduced as nllLoss (PyTorch’s rule). ' +
      `${LABEL_RULE}. ${LOSS_ERRORS} or a labelSmoothing outside [0, 1].`,
    dtypes: F32,
    accuracy: {
      float32: { abs: 1e-6, rel: 4e-6 },
      wgsl: { accuracy: { abs: 1e-6, rel: 1e-5 }, why: 'WGSL: built on exp and log' },
    },
    grad: 'autograd losses.ts (softmax·Σ(coefficients) − coefficients, the nll and smoothing terms)',
    composition: 'logSoftmax, then nllLoss’s composition (smoothing: mul by weight, sum over C)',
  },
  binaryCrossEntropyWithLogits: {
    kind: 'composite',
    signature:
      'binaryCrossEntropyWithLogits(logits: x.shape, targets: x.shape, {weight?, posWeight?, ' +
      "reduction = 'mean'}) → x.shape or []",
    semantics:
      'loss = −weight·[posWeight·y·log σ(x) + (1 − y)·log(1 − σ(x))] (PyTorch ' +
      'binary_cross_entropy_with_logits), computed as max(x, 0) − x·y + lw·log1p(exp(−|x|)) + ' +
      '(posWeight − 1)·y·max(−x, 0) with lw = 1 + (posWeight − 1)·y: no overflow for any finite x and ' +
      'exact cancellation at hard 0/1 targets. weight and posWeight broadcast to x’s shape (NumPy rules; ' +
      "posWeight [C] along the last dim); 'mean' is over every element (weights do not normalize). ±Inf " +
      'logits give NaN (Inf − Inf in the composition). DTypeError unless all are float32; ShapeMismatchError ' +
      'unless targets have x’s shape and the weights broadcast to it; InvalidArgumentError for a bad reduction.',
    dtypes: F32,
    accuracy: {
      float32: { abs: 1e-7, rel: 4e-6 },
      wgsl: { accuracy: { abs: 1e-6, rel: 1e-5 }, why: 'WGSL: built on softplus (exp, log1p)' },
    },
    grad: 'autograd losses.ts (w·(lw·σ(x) − posWeight·y)·g; targets w·(posWeight·softplus(−x) − softplus(x))·g)',
    composition:
      'relu, mul, sub, abs, neg, softplus (= log1p(exp(−|x|)) there), add (posWeight: 2 mul, 2 add), sum or mean',
  },
} as const satisfies Record<string, ArrayOpDef>;
