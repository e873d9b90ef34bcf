/**
 * Table entries of the quantization methods (hal/src/families/quant/quantize.ts): quantizeLinear, dequantizeLinear,
 * matmulInteger and convInteger, with ONNX's semantics, and matmulIntegerToFloat, with ONNX Runtime's
 * (com.microsoft). They join ARRAY_OP_DEFS (array-ops.ts).
 */
import type { ArrayOpDef } from './types.js';
import { EXACT, ULP4 } from './types.js';

const EXACT_ALL = { float32: EXACT, int32: EXACT };
/** The float32 key is the table's required baseline; these take no int32. */
const EXACT_F = { float32: EXACT };

export const QUANT_OP_DEFS = {
  quantizeLinear: {
    kind: 'composite',
    signature: 'quantizeLinear(x: float32, scale: float32 [] | [C], zeroPoint?: int8 | uint8, axis = 1) → x.shape',
    semantics:
      'saturate(round_half_even(x / scale) + zeroPoint) into zeroPoint’s dtype (uint8 when absent), scale and ' +
      'zeroPoint per tensor or per slice along axis (ONNX QuantizeLinear). x / scale is the float32 quotient ' +
      '(as ONNX’s reference computes it); NaN → 0 (cast’s rule), ±Inf saturate. DTypeError for other dtypes, ' +
      'ShapeMismatchError when scale is neither a scalar nor [axis length].',
    dtypes: ['float32'],
    accuracy: EXACT_F,
    grad: null,
    composition:
      'div, round (half to even), add the zero point, cast (saturating); per tensor, one quantizeKernel ' +
      'where the backend has it (webgpu)',
  },
  dequantizeLinear: {
    kind: 'composite',
    signature: 'dequantizeLinear(x: int8 | uint8 | int32, scale: float32 [] | [C], zeroPoint?, axis = 1) → float32',
    semantics:
      '(x − zeroPoint) · scale, the difference in int32 and one float32 multiply (ONNX DequantizeLinear); ' +
      'zeroPoint has x’s dtype, per tensor or along axis as scale. DTypeError for other dtypes.',
    dtypes: ['int8', 'uint8', 'int32'],
    accuracy: EXACT_ALL,
    grad: null,
    composition: 'cast to int32, sub, cast to float32, mul',
  },
  matmulInteger: {
    kind: 'composite',
    signature:
      'matmulInteger(a: [..., M, K] int8 | uint8, b: [..., K, N] int8 | uint8, aZeroPoint?, bZeroPoint?) → ' +
      'int32 [..., M, N]',
    semantics:
      'Σ_k (a − aZeroPoint)(b − bZeroPoint), exact in int32 (ONNX MatMulInteger); aZeroPoint a scalar or per ' +
      'row [M], bZeroPoint a scalar or per column [N], each of its operand’s dtype. int8 operands without zero ' +
      'points run the integer matmul kernel as they are (webgpu: packed, dot4I8Packed or subgroup matrices); ' +
      'otherwise the operands are cast to int32 and shifted first. DTypeError for other dtypes, ' +
      'ShapeMismatchError as matmul.',
    dtypes: ['int8', 'uint8'],
    accuracy: EXACT_ALL,
    grad: null,
    composition: 'integer matmul (integerMatmulKernel) of the int32 operands less their zero points',
  },
  matmulIntegerToFloat: {
    kind: 'composite',
    signature:
      'matmulIntegerToFloat(a: [..., M, K] int8 | uint8, b: [..., K, N] int8 | uint8, aScale: float32 [], ' +
      'bScale: float32 [] | [N], aZeroPoint?: [], bZeroPoint?: [] | [N], bias?: float32 [N]) → float32 [..., M, N]',
    semantics:
      'float32(Σ_k (a − aZeroPoint)(b − bZeroPoint)) · (aScale · bScale) + bias (ONNX Runtime’s com.microsoft ' +
      'MatMulIntegerToFloat): the sum exact in int32 as matmulInteger’s, then each product and the sum rounded ' +
      'to float32 (a backend may fuse the multiply-add, hence 4 ulp of |product| + |bias|). Zero points of ' +
      'their operand’s dtype. DTypeError for other dtypes, ShapeMismatchError as matmulInteger or for a scale ' +
      'or bias of another length.',
    dtypes: ['int8', 'uint8'],
    accuracy: { float32: ULP4, int32: ULP4 },
    grad: null,
    composition:
      'matmulInteger, cast to float32, mul by aScale · bScale, add bias; int8 operands without zero points ' +
      'in one integerMatmulToFloatKernel where the backend has it (webgpu: the rescale and bias in the ' +
      'product’s stores)',
  },
  convInteger: {
    kind: 'composite',
    signature:
      'convInteger(x: [N, C, ...in] int8 | uint8, w: [O, C/groups, ...k] int8 | uint8, xZeroPoint?, wZeroPoint?, ' +
      '{stride, padding, dilation, groups}) → int32 [N, O, ...out]',
    semantics:
      'The convolution (cross-correlation, as conv) of (x − xZeroPoint) and (w − wZeroPoint), exact in int32 ' +
      '(ONNX ConvInteger): xZeroPoint a scalar of x’s dtype, wZeroPoint a scalar or per output channel [O] of ' +
      'w’s dtype; padded positions hold x’s zero point (they add nothing). Options and output size as conv. ' +
      'DTypeError for other dtypes, ShapeMismatchError for disagreeing shapes or zero points, ' +
      'InvalidArgumentError for bad options.',
    dtypes: ['int8', 'uint8'],
    accuracy: EXACT_ALL,
    grad: null,
    composition:
      'cast to int32 and subtract the zero points, then conv’s composite (im2col view, copy, matmul) with the ' +
      'integer matmul (integerMatmulKernel) as its product; depthwise groups as int32 mul/add per tap',
  },
} as const satisfies Record<string, ArrayOpDef>;
