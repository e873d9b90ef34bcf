/**
 * Table entries of the convolution and pooling composites (hal/src/families/conv/conv.ts, pool.ts). They
 * join ARRAY_OP_DEFS (array-ops.ts) as kind 'composite'. Geometry (padding modes, ceil mode): conv-geometry.ts.
 */
import type { ArrayOpDef } from './types.js';
import { EXACT } from './types.js';

const F32 = ['float32'] as const;
const GEOMETRY =
  'Output size per spatial axis ⌊(n + before + after − d·(k − 1) − 1)/s⌋ + 1; padding: integers, ' +
  "[before, after] pairs, 'valid', 'same' (o = ⌈n/s⌉, the odd pixel at the end: ONNX SAME_UPPER) or " +
  "'same-lower'. ShapeMismatchError when a window does not fit the padded input or shapes disagree, " +
  'InvalidArgumentError for options outside their domains, DTypeError for int32.';
const DOT = {
  float32: { abs: 0, rel: 2.4e-7 },
  wgsl: { accuracy: { abs: 0, rel: 1.2e-6 }, why: 'WGSL: fused multiply-add contraction and reassociation' },
};

export const CONV_OP_DEFS = {
  conv: {
    kind: 'composite',
    signature: 'conv(x: [N, C, ...in], w: [O, C/groups, ...k], {stride, padding, dilation, groups}) → [N, O, ...out]',
    semantics:
      'Cross-correlation over 1–3 spatial axes (PyTorch conv1d/2d/3d, ONNX Conv without bias): y[n, o, p] = ' +
      `Σ_{c in o's group, t} x[n, c, s·p + d·t − before] · w[o, c, t], zero outside the input. ${GEOMETRY}`,
    dtypes: F32,
    accuracy: DOT,
    grad: 'autograd conv.ts (dx = convTranspose(dy, w), dW = convWeightGrad(x, dy))',
    composition:
      'pad, im2col channels first as one strided view + copy (x itself for a 1×1 window of stride 1), ' +
      'matmul w · columns (batched over N and groups)',
  },
  convTranspose: {
    kind: 'composite',
    signature:
      'convTranspose(x: [N, C, ...in], w: [C, O/groups, ...k], {stride, padding, outputPadding, dilation, groups}) ' +
      '→ [N, O, (in − 1)·s − before − after + d·(k − 1) + outputPadding + 1]',
    semantics:
      'The adjoint of conv in x (PyTorch conv_transpose1d/2d/3d, ONNX ConvTranspose without bias): every input ' +
      'element scatters x·w[c, o, t] to output s·p + d·t − before; padding crops the full output, outputPadding ' +
      'appends zeros at the end. Sums are taken in a fixed order (tap by tap), the same on every backend. ' +
      'InvalidArgumentError when the padding crops more than the full output.',
    dtypes: F32,
    accuracy: DOT,
    grad: 'autograd conv.ts (dx = conv(dy, w), dW = convWeightGrad(dy, x))',
    composition:
      'matmul wᵀ · x (batched over N and groups), col2im (one permutation where stride = kernel; else pad and ' +
      'add per tap, one axis at a time)',
  },
  maxPool: {
    kind: 'composite',
    signature:
      'maxPool(x: [N, C, ...in], {kernelSize, stride = kernelSize, padding, dilation, ceilMode}) → [N, C, ...out]',
    semantics:
      'Maximum of each window (PyTorch max_pool1d/2d/3d, ONNX MaxPool); padding is −Inf, a NaN in a window ' +
      'gives NaN. ceilMode rounds the output size up but drops a last window that would start in the end ' +
      `padding. ${GEOMETRY}`,
    dtypes: F32,
    accuracy: { float32: EXACT },
    grad: 'autograd conv.ts (maxPoolGrad: dy to the first maximal element of each window)',
    composition: 'pad −Inf, then per spatial axis a window view [outer, out, k, inner] reduced with max',
  },
  avgPool: {
    kind: 'composite',
    signature:
      'avgPool(x: [N, C, ...in], {kernelSize, stride = kernelSize, padding, dilation, ceilMode, ' +
      'countIncludePad = true}) ' +
      '→ [N, C, ...out]',
    semantics:
      'Mean of each window (PyTorch avg_pool1d/2d/3d, ONNX AveragePool): its sum over the kernel size counting ' +
      'zero padding (countIncludePad) or over the input elements it covers (countIncludePad false, ONNX’s ' +
      `default); the extension ceil mode adds is never counted. ${GEOMETRY}`,
    dtypes: F32,
    accuracy: {
      float32: { abs: 0, rel: 4.8e-7 },
      wgsl: { accuracy: { abs: 0, rel: 2e-6 }, why: 'WGSL: division within 2.5 ulp' },
    },
    grad: 'autograd conv.ts (avgPoolGrad: dy/count spread over each window)',
    composition: 'pad 0, per spatial axis a window view reduced with sum, div by a host-computed count array',
  },
  resize: {
    kind: 'composite',
    signature: 'resize(x: [...], {sizes | scales, mode, coordinateTransformationMode, nearestMode, ...}) → [...sizes]',
    semantics:
      'Interpolation per axis with ONNX Resize’s rules (opset 13; PyTorch interpolate, TensorFlow resize): nearest ' +
      '(round_prefer_floor, round_prefer_ceil, floor, ceil), linear, cubic (a = cubicCoeffA, excludeOutside); ' +
      'coordinate transformations half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, ' +
      'tf_crop_and_resize (roi, extrapolationValue); input positions edge-clamped. Nearest is a gather (exact). ' +
      'InvalidArgumentError for options outside their domains, DTypeError for int32.',
    dtypes: F32,
    accuracy: {
      float32: { abs: 0, rel: 1.2e-6 },
      wgsl: { accuracy: { abs: 0, rel: 2e-6 }, why: 'WGSL: fused multiply-add contraction' },
    },
    grad: "autograd resize.ts (the transposed interpolation: each tap's weighted gradient scatter-added)",
    composition: 'per resized axis (last first): gather of each tap’s input positions, mul by host weights, add',
  },
} as const satisfies Record<string, ArrayOpDef>;
