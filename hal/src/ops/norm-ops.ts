/**
 * Table entries of layer normalization (hal/src/families/norm/norm.ts): layerNorm and its backward pass, with
 * PyTorch's semantics (torch.nn.functional.layer_norm, the biased variance). They join ARRAY_OP_DEFS
 * (array-ops.ts) as composites: every backend inherits them; a backend may run them as fused kernels
 * (the layerNormKernel and layerNormBackwardKernel hooks).
 */
import type { ArrayOpDef } from './types.js';

const F32 = ['float32'] as const;

const ERRORS =
  'DTypeError unless every operand is float32; ShapeMismatchError unless weight and bias (optional) have the ' +
  'normalized (trailing) shape, and g, mean and rstd the shapes below; InvalidArgumentError for dims outside ' +
  '[1, rank] or an eps that is negative or not finite';

export const NORM_OP_DEFS = {
  layerNorm: {
    kind: 'composite',
    signature:
      'layerNorm(x: [..., n1, …, nd], weight: [n1, …, nd] | null, bias | null, {eps = 1e−5, dims = 1}) → ' +
      '{y: x.shape, mean, rstd: [..., 1, …, 1]}',
    semantics:
      'Normalization over the trailing `dims` dims (PyTorch layer_norm): mean = Σx/D, var = Σ(x − mean)²/D ' +
      '(biased, from the centred values), rstd = 1/√(var + eps), y = (x − mean)·rstd·weight + bias (weight 1 and ' +
      'bias 0 when null); mean and rstd are kept (keepdims) for layerNormBackward. A row holding NaN or ±Inf ' +
      `gives NaN throughout. ${ERRORS}.`,
    dtypes: F32,
    accuracy: {
      float32: { abs: 2e-6, rel: 4e-6 },
      wgsl: { accuracy: { abs: 4e-6, rel: 1e-5 }, why: 'WGSL: sqrt and division (2.5 ulp)' },
    },
    grad: 'autograd norm.ts (layerNormBackward)',
    composition: 'mean, sub, mul, mean, add, sqrt, recip, mul (and mul by weight, add bias)',
  },
  layerNormBackward: {
    kind: 'composite',
    signature:
      'layerNormBackward(g: x.shape, x, mean, rstd, weight | null, {dims = 1, paramGrads = false}) → ' +
      '{dx: x.shape, dweight?, dbias?: [n1, …, nd]}',
    semantics:
      'The gradients of layerNorm for an upstream gradient g, from its saved mean and rstd: with x̂ = (x − ' +
      'mean)·rstd and ĝ = g·weight, dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)) over the normalized dims; with ' +
      'paramGrads, dweight = Σ g·x̂ and dbias = Σ g over the leading dims. ' +
      `${ERRORS}.`,
    dtypes: F32,
    accuracy: {
      float32: { abs: 2e-6, rel: 4e-6 },
      wgsl: { accuracy: { abs: 4e-6, rel: 1e-5 }, why: 'WGSL: float32 sums and division (2.5 ulp)' },
    },
    grad: null,
    composition: 'sub, mul, mean, mul, mean, sub, mul (dx); mul, sum over the leading dims (dweight, dbias)',
  },
} as const satisfies Record<string, ArrayOpDef>;
