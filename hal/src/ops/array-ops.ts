/**
 * The ops beyond the elementwise and reduction tables: movement (views and copies), matmul, the
 * composites and the optimizer steps — one entry each, with the same fields where they apply: kind,
 * signature (shapes), dtypes, the rule for special values and errors, accuracy, where the gradient
 * rule lives, and for composites the default composition from primitives
 * (hal/src/families/composite/composites.ts, which every backend inherits and may replace with a fused
 * kernel). The conformance tolerances and docs/OPS.md derive from these entries; the conformance
 * runner keeps one typed runner per entry, so an entry without one does not compile.
 */
import { AMP_OP_DEFS } from './amp-ops.js';
import { ATTENTION_OP_DEFS } from './attention-ops.js';
import { CONV_OP_DEFS } from './conv-ops.js';
import { INDEX_OP_DEFS } from './index-ops.js';
import { LAYOUT_OP_DEFS } from './layout-ops.js';
import { LOGIC_OP_DEFS } from './logic-ops.js';
import { QUANT_OP_DEFS } from './quant-ops.js';
import { LOSS_OP_DEFS } from './loss-ops.js';
import { NORM_OP_DEFS } from './norm-ops.js';
import { type ArrayOpDef, EXACT } from './types.js';
import { RANDOM_OP_DEFS } from './random-ops.js';
import { SCAN_OP_DEFS } from './scan-ops.js';

const ALL_DTYPES = ['float32', 'int32', 'bool', 'int8', 'uint8', 'float16', 'float64'] as const;
const F32 = ['float32'] as const;
const EXACT_BOTH = { float32: EXACT, int32: EXACT };
const MOVEMENT_GRAD = 'autograd movement.ts (the inverse movement of g)';

/**
 * The op table beyond elementwise ops and reductions: op name → ArrayOpDef (kind, signature, dtypes,
 * semantics, accuracy, where the gradient lives), joined from the family tables.
 */
export const ARRAY_OP_DEFS = {
  reshape: {
    kind: 'movement',
    signature: 'reshape(x, shape) → shape (one −1 inferred)',
    semantics:
      'Same elements in row-major order. A view when the strides allow, else a contiguous copy. ' +
      'ShapeMismatchError when the sizes differ.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  permute: {
    kind: 'movement',
    signature: 'permute(x, perm) → x.shape[perm[i]]',
    semantics: 'A view (no copy): dimension i of the result is dimension perm[i] of x.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  expand: {
    kind: 'movement',
    signature: 'expand(x, shape) → shape',
    semantics: 'A broadcast view (stride 0) of size-1 dims, with new leading dims (NumPy broadcast_to).',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  shrink: {
    kind: 'movement',
    signature: 'shrink(x, bounds: [start, end) per dim) → end − start per dim',
    semantics: 'A view of the sub-box; InvalidArgumentError unless 0 ≤ start ≤ end ≤ dim.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  stride: {
    kind: 'movement',
    signature: 'stride(x, steps) → ceil(dim / |step|) per dim',
    semantics: 'A view taking every step-th element; a negative step walks the dim backwards (x[::-2]).',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  pad: {
    kind: 'movement',
    signature: "pad(x, pads: [before, after] per dim, value = 0, mode = 'constant') → dim + before + after",
    semantics:
      "A new array: x placed at `before` of each dim; elsewhere `value` (mode 'constant') or, as " +
      "NumPy's np.pad and ONNX Pad, the nearest edge element ('edge'), the mirror image without the " +
      "edge repeated as often as needed ('reflect'; a dim of 1 repeats it) or the periodic " +
      "continuation ('wrap'). The modes other than constant need a non-empty dim where they pad " +
      '(InvalidArgumentError).',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  contiguous: {
    kind: 'movement',
    signature: 'contiguous(x) → x.shape',
    semantics: 'Materializes any view into a new row-major array.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: MOVEMENT_GRAD,
  },
  cast: {
    kind: 'movement',
    signature: 'cast(x, dtype) → x.shape',
    semantics:
      'float (float32, float16) → integer (int32, int8, uint8) truncates toward zero and saturates at the ' +
      "dtype's range (int32: −2^31 and 2^31 − 1; int8: −128, 127; uint8: 0, 255); NaN → 0. Integer → " +
      "int8/uint8 wraps modulo 2^8 (two's complement, as NumPy astype); to a wider integer: the same value. " +
      'To float32: exact from float16, int8, uint8; int32 rounds to nearest even. To float16: round to ' +
      'nearest, ties to even; |x| ≥ 65520 → ±Inf; NaN stays NaN; ±0 and underflows keep their sign; ' +
      'subnormals (multiples of 2^-24) exact. To bool: x ≠ 0 (NaN is true, as NumPy); from bool: 1 or 0.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: "autograd logic.ts (between float32 and float16: g cast back to x's dtype; none for integers and bool)",
  },
  matmul: {
    kind: 'contraction',
    signature: 'matmul(a: [..., M, K], b: [..., K, N], bias?) → [..., M, N], batch dims broadcast',
    semantics:
      'Σ_k a[m,k]·b[k,n] (a zero K gives 0). Transposed operands are views, not copied. With bias (the ' +
      "product's dtype, broadcast to [..., M, N] without widening it; tfjs fused.matMul's bias, ONNX Gemm's " +
      'C): the product rounded, plus bias rounded once more (webgpu adds it in the GEMM’s store). ' +
      'float16 (as NumPy and PyTorch: the operands’ dtype): the products (exact in float32) summed in ' +
      'float32 and each element rounded once to float16, overflowing to ±Inf past 65504; with a float16 ' +
      'bias, the float32 product plus bias in float32, rounded once to float16 (fused or not). Error: one ' +
      'float16 ulp of the result plus the float32 sum’s bound K·2^-24·Σ|a·b|. ' +
      'int32, int8, uint8 (as NumPy and PyTorch): the int32 sum exact modulo 2^32, int8 and uint8 results ' +
      'then wrapped to the dtype; int8 operands take packed kernels on webgpu (subgroup matrices where the ' +
      'device has them, else dot4I8Packed). ShapeMismatchError if K differs or the batch dims do not ' +
      'broadcast or bias does not fit; DTypeError for float32 with float16 operands or a bias of another ' +
      'dtype; UnsupportedOpError unless both operands have one of the dtypes.',
    dtypes: ['float32', 'float16', 'int32', 'int8', 'uint8'],
    accuracy: { float32: { abs: 1e-6, rel: 4e-6 }, int32: EXACT },
    grad: 'autograd ops.ts (g·bᵀ, aᵀ·g; bias: g summed to its shape)',
  },
  mean: {
    kind: 'composite',
    signature: 'mean(x, axes?, keepdims?) → the kept dims',
    semantics: 'Σ / n over the axes; NaN over an empty axis.',
    dtypes: ['float32', 'float64'],
    accuracy: {
      float32: { abs: 1e-7, rel: 2e-6 },
      wgsl: { accuracy: { abs: 1e-7, rel: 4e-6 }, why: 'WGSL: x/y within 2.5 ulp' },
    },
    grad: 'autograd ops.ts (g / n spread back)',
    composition: 'sum(x, axes) × (1/n)',
  },
  softmax: {
    kind: 'composite',
    signature: 'softmax(x, axis = −1) → x.shape',
    semantics: 'exp(x − max) / Σ exp(x − max) along the axis; a NaN in a row makes the row NaN.',
    dtypes: F32,
    accuracy: {
      float32: { abs: 1e-7, rel: 2e-6 },
      wgsl: { accuracy: { abs: 1e-6, rel: 1e-5 }, why: 'WGSL: built on exp (3 + 2·|x| ulp) and division (2.5 ulp)' },
    },
    grad: 'autograd ops.ts (s ⊙ (g − Σ g⊙s))',
    composition: 'max, sub, exp, sum, div',
  },
  logSoftmax: {
    kind: 'composite',
    signature: 'logSoftmax(x, axis = −1) → x.shape',
    semantics: '(x − max) − log Σ exp(x − max) along the axis.',
    dtypes: F32,
    accuracy: {
      float32: { abs: 1e-7, rel: 2e-6 },
      wgsl: { accuracy: { abs: 1e-6, rel: 1e-5 }, why: 'WGSL: built on exp and log (3 ulp, 2^-21 absolute near 1)' },
    },
    grad: 'autograd ops.ts (g − softmax · Σ g)',
    composition: 'max, sub, exp, sum, log, sub',
  },
  logsumexp: {
    kind: 'composite',
    signature: 'logsumexp(x, axes?, keepdims = false) → the kept dims',
    semantics:
      'log Σ exp(x) over the axes (every axis when absent), computed as m + log Σ exp(x − m) with m the ' +
      'maximum (0 where the maximum is ±Inf or NaN), so no finite input overflows: a row of −Inf gives ' +
      '−Inf, one holding +Inf gives +Inf, one holding NaN gives NaN (scipy, PyTorch); −Inf over an empty axis.',
    dtypes: ['float32', 'float64'],
    accuracy: {
      float32: { abs: 1e-6, rel: 2e-6 },
      wgsl: { accuracy: { abs: 2e-6, rel: 1e-5 }, why: 'WGSL: built on exp and log (3 ulp, 2^-21 absolute near 1)' },
    },
    grad: 'autograd ops.ts (g · exp(x − logsumexp), the softmax)',
    composition: 'max, isfinite, where, sub, exp, sum, log, add',
  },
  fusedElementwise: {
    kind: 'composite',
    signature: 'fusedElementwise(x, steps) → x.shape',
    semantics:
      'The chain of steps — unary ops, binary ops with a number (op(value, scalar), or op(scalar, value) ' +
      'with scalarFirst) and binary ops with an array (op(value, array), or op(array, value) with arrayFirst; ' +
      "the array of x's dtype, broadcast to x's shape) — applied to each element of x, each step rounded to the " +
      'dtype as the separate op rounds it, so the chain means its separate ops; the shape and dtype are kept (a ' +
      'step that changes the dtype, a comparison, is an InvalidArgumentError; an array of another dtype a ' +
      "DTypeError; one that does not broadcast to x's shape a ShapeMismatchError). One kernel per chain where " +
      'the backend fuses it (webgpu, wasm).',
    dtypes: ['float32', 'int32'],
    accuracy: {
      // a chain of a few well-conditioned steps, each within its own op's bound (ULP1 for the arithmetic)
      float32: { abs: 1e-6, rel: 1e-6 },
      int32: EXACT,
      wgsl: {
        accuracy: { abs: 2e-6, rel: 4e-6 },
        why: "WGSL: the steps' own bounds (division 2.5 ulp, exp 3 + 2·|x| ulp) and a multiply-add may be contracted",
      },
    },
    grad: null,
    composition: 'the steps as separate unary and binary ops (hal/src/families/elementwise/fused.ts)',
  },
  softmaxCrossEntropy: {
    kind: 'composite',
    signature: 'softmaxCrossEntropy(logits: [N, C], labels: [N, C], withGrad?) → loss [N] (and grad [N, C])',
    semantics:
      'loss_i = −Σ_c xlogy(y_ic, softmax(logits_i)_c): a label-0 term contributes 0 unless its ' +
      'log-probability is NaN (the rule in hal/src/ops/index.ts); grad = softmax − labels.',
    dtypes: F32,
    accuracy: {
      float32: { abs: 1e-6, rel: 4e-6 },
      wgsl: { accuracy: { abs: 1e-6, rel: 1e-5 }, why: 'WGSL: built on exp and log' },
    },
    grad: 'its own grad output (fused)',
    composition: 'logSoftmax, then −Σ labels · max(logp, floor) with floor −FLT_MAX where the label is 0',
  },
  adamStep: {
    kind: 'optimizer',
    signature: 'adamStep(param, grad, m, v, {lr, beta1, beta2, eps, weightDecay, step}) → in place',
    semantics:
      'One Adam/AdamW update (Loshchilov & Hutter decoupled weight decay). InvalidArgumentError, ' +
      'before anything is written, for hyper-parameters outside PyTorch’s domains.',
    dtypes: F32,
    accuracy: {
      float32: { abs: 1e-7, rel: 1e-6 },
      wgsl: { accuracy: { abs: 1e-7, rel: 2e-6 }, why: 'WGSL: sqrt and division' },
    },
    grad: null,
    composition: 'mul, add, div, sqrt into the buffers (assign)',
  },
  sgdStep: {
    kind: 'optimizer',
    signature: 'sgdStep(param, grad, velocity | null, {lr, momentum, weightDecay}) → in place',
    semantics:
      'One SGD update with momentum and weight decay (PyTorch’s form). InvalidArgumentError for ' +
      'negative or non-finite hyper-parameters.',
    dtypes: F32,
    accuracy: { float32: { abs: 0, rel: 4e-7 } },
    grad: null,
    composition: 'mul, add into the buffers (assign)',
  },
  ...RANDOM_OP_DEFS,
  ...LAYOUT_OP_DEFS,
  ...INDEX_OP_DEFS,
  ...CONV_OP_DEFS,
  ...LOSS_OP_DEFS,
  ...LOGIC_OP_DEFS,
  ...QUANT_OP_DEFS,
  ...SCAN_OP_DEFS,
  ...NORM_OP_DEFS,
  ...AMP_OP_DEFS,
  ...ATTENTION_OP_DEFS,
} as const satisfies Record<string, ArrayOpDef>;

/** The name of an ARRAY_OP_DEFS entry (`matmul`, `reshape`, `softmax`, ...). */
export type ArrayOp = keyof typeof ARRAY_OP_DEFS;
/** The ArrayOps of kind 'movement': the views and copies (reshape, permute, expand, pad, ...). */
export type MovementOp = { [K in ArrayOp]: (typeof ARRAY_OP_DEFS)[K]['kind'] extends 'movement' ? K : never }[ArrayOp];
