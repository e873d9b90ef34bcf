/**
 * Quantization ops of every backend (BaseBackend's), with ONNX's semantics: quantizeLinear,
 * dequantizeLinear, matmulInteger and convInteger (ONNX QuantizeLinear, DequantizeLinear, MatMulInteger,
 * ConvInteger), and matmulIntegerToFloat (ONNX Runtime's com.microsoft MatMulIntegerToFloat), composed of
 * the HAL's elementwise ops, casts, integer matmul and conv's im2col (conv.ts). Table entries:
 * ops/quant-ops.ts.
 */
import { type ConvHost, checkConvOperands } from '../conv/conv-check.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { type ConvOptions, convComposite, isDepthwise } from '../conv/conv.js';
import type { DType } from '../../core/dtype.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { type DeviceBuffer, expandView, type NDArray, viewOf } from '../../core/ndarray.js';
import type { BinaryOp, UnaryOp } from '../../ops/index.js';
import { withTemps } from '../../core/temps.js';
import { broadcastShapes, normalizeAxis, sizeOf } from '../../core/shape.js';
import { describeValue } from '../../contract/validate.js';

/** What the quantization methods use of a BaseBackend (its protected members included). */
interface QuantHost {
  readonly name: string;
  check(x: NDArray, op: string, arg?: string): void;
  free(x: NDArray): void;
  reshape(x: NDArray, shape: readonly number[]): NDArray;
  cast(x: NDArray, dtype: DType): NDArray;
  full(shape: readonly number[], value: number, dtype?: DType): NDArray;
  unary(op: UnaryOp, x: NDArray): NDArray;
  binary(op: BinaryOp, a: NDArray | number, b: NDArray | number): NDArray;
  integerMatmul(a: NDArray, b: NDArray): NDArray;
  allocate(size: number, dtype: DType): DeviceBuffer;
  guard(out: DeviceBuffer, fn: () => void): void;
  quantizeKernel?(x: NDArray, scale: NDArray, zeroPoint: NDArray | null, out: DeviceBuffer): void;
  integerMatmulToFloatKernel?(
    a: NDArray,
    b: NDArray,
    aScale: NDArray,
    bScale: NDArray,
    bias: NDArray | null,
    out: DeviceBuffer,
  ): void;
}

/** The quantization methods of every backend. Semantics: ops/quant-ops.ts. */
export interface QuantMethods {
  /**
   * x: float32, scale: float32 scalar ([] or [1]) or [C] along `axis` (default 1, negative from the end),
   * zeroPoint: int8 or uint8 of scale's shape (its dtype is the result's; absent: uint8 0) → x's shape:
   * saturate(round_half_even(x / scale) + zeroPoint) (ONNX QuantizeLinear). NaN → 0 (cast's rule).
   * DTypeError for other dtypes; ShapeMismatchError when scale's length is not x's axis length.
   */
  quantizeLinear(x: NDArray, scale: NDArray, zeroPoint?: NDArray, axis?: number): NDArray;
  /**
   * x: int8, uint8 or int32; scale float32 and zeroPoint (x's dtype) as in quantizeLinear → float32:
   * (x − zeroPoint) · scale, the difference taken in int32 (ONNX DequantizeLinear).
   */
  dequantizeLinear(x: NDArray, scale: NDArray, zeroPoint?: NDArray, axis?: number): NDArray;
  /**
   * a: [..., M, K] int8 or uint8, b: [..., K, N] int8 or uint8; aZeroPoint of a's dtype, a scalar or
   * per row ([M]); bZeroPoint of b's dtype, a scalar or per column ([N]) → int32 [..., M, N]:
   * Σ_k (a − aZeroPoint)(b − bZeroPoint), exact (ONNX MatMulInteger). int8 operands without zero points
   * take the packed integer kernels directly.
   */
  matmulInteger(a: NDArray, b: NDArray, aZeroPoint?: NDArray, bZeroPoint?: NDArray): NDArray;
  /**
   * x: [N, C, ...in] int8 or uint8 (1–3 spatial axes), w: [O, C/groups, ...k] int8 or uint8; xZeroPoint of
   * x's dtype, a scalar; wZeroPoint of w's dtype, a scalar or per output channel ([O]) → int32 [N, O, ...out]:
   * the convolution of (x − xZeroPoint) and (w − wZeroPoint), exact in int32 (ONNX ConvInteger); padding
   * adds x's zero point (0 once shifted). Options as conv's: stride, padding (incl. 'same'), dilation,
   * groups. DTypeError for other dtypes, ShapeMismatchError for shapes or zero points that disagree,
   * InvalidArgumentError for bad options. Composed as conv (im2col) with the integer matmul as its product.
   */
  convInteger(x: NDArray, w: NDArray, xZeroPoint?: NDArray, wZeroPoint?: NDArray, options?: ConvOptions): NDArray;
  /**
   * a: [..., M, K] int8 or uint8, b: [..., K, N] int8 or uint8, aScale: float32 scalar, bScale: float32 scalar
   * or [N]; zero points as matmulInteger's but aZeroPoint a scalar; bias: float32 [N] → float32 [..., M, N]:
   * float32(Σ_k (a − aZeroPoint)(b − bZeroPoint)) · (aScale · bScale) + bias (ONNX Runtime's com.microsoft
   * MatMulIntegerToFloat: a quantized Linear layer's product, rescale and bias in one op). DTypeError for
   * other dtypes, ShapeMismatchError as matmulInteger or for a scale or bias of another length. Backends
   * with the integerMatmulToFloatKernel hook (webgpu) run int8 operands without zero points as one product
   * whose stores rescale and add the bias; otherwise matmulInteger, cast, mul and add.
   */
  matmulIntegerToFloat(
    a: NDArray,
    b: NDArray,
    aScale: NDArray,
    bScale: NDArray,
    aZeroPoint?: NDArray,
    bZeroPoint?: NDArray,
    bias?: NDArray,
  ): NDArray;
}

/**
 * The axis of per-axis parameters, normalized; InvalidArgumentError when out of range. Ignored (0) for a
 * per-tensor scale (one element), as ONNX ignores it.
 */
function axisOf(axis: number, op: string, x: NDArray, scale: NDArray): number {
  if (!x.shape.length || scale.shape.reduce((a, d) => a * d, 1) === 1) return 0;
  const r = x.shape.length;
  if (!Number.isInteger(axis) || axis < -r || axis >= r)
    throw new InvalidArgumentError(
      `${op}: axis ${describeValue(axis)} is out of range for rank ${r} (valid: ${-r}..${r - 1})`,
    );
  return normalizeAxis(axis, r);
}

/** `p` (a scalar or [C]) shaped to broadcast along `axis` of a rank-`rank` array of axis length `len`. */
function alongAxis(be: QuantHost, p: NDArray, op: string, arg: string, axis: number, rank: number, len: number) {
  const size = p.shape.reduce((a, d) => a * d, 1);
  if (size === 1) return be.reshape(p, []);
  if (p.shape.length !== 1 || size !== len)
    throw new ShapeMismatchError(`${op}: ${arg} must be a scalar or [${len}] (the axis length), got [${p.shape}]`);
  return be.reshape(
    p,
    Array.from({ length: rank }, (_, d) => (d === axis ? len : 1)),
  );
}

function checkDType(be: QuantHost, x: NDArray, op: string, arg: string, allowed: readonly DType[]): void {
  be.check(x, op, arg);
  if (!allowed.includes(x.dtype)) throw new DTypeError(`${op}: ${arg} must be ${allowed.join(' or ')}, got ${x.dtype}`);
}

function quantizeLinear(be: QuantHost, x: NDArray, scale: NDArray, zeroPoint?: NDArray, axis = 1): NDArray {
  const op = 'quantizeLinear';
  checkDType(be, x, op, 'x', ['float32']);
  checkDType(be, scale, op, 'scale', ['float32']);
  if (zeroPoint) checkDType(be, zeroPoint, op, 'zeroPoint', ['int8', 'uint8']);
  const dtype = (zeroPoint?.dtype ?? 'uint8') as 'int8' | 'uint8';
  const ax = axisOf(axis, op, x, scale);
  const len = x.shape[ax] ?? 1;
  // Views first (no allocation), so a bad shape throws before anything is computed.
  const s = alongAxis(be, scale, op, 'scale', ax, x.shape.length, len);
  const zv = zeroPoint && alongAxis(be, zeroPoint, op, 'zeroPoint', ax, x.shape.length, len);
  const n = sizeOf(x.shape);
  if (typeof be.quantizeKernel === 'function' && s.shape.length === 0 && (!zv || zv.shape.length === 0)) {
    // Per tensor: one fused kernel (hooks.ts), on x flattened (a view where its strides allow).
    const out = be.allocate(n, dtype);
    be.guard(out, () => {
      if (n === 0) return;
      const flat = be.reshape(x, [n]);
      try {
        be.quantizeKernel!(flat, s, zv ?? null, out);
      } finally {
        if (flat.buffer !== x.buffer) be.free(flat);
      }
    });
    return viewOf(out, x.shape);
  }
  return withTemps(be, (t) => {
    let q = t(be.unary('round', t(be.binary('div', x, s))));
    if (zv) q = t(be.binary('add', q, t(be.cast(zv, 'float32'))));
    // Saturation: float → int8/uint8 casts saturate (NaN → 0), so the cast alone clamps.
    return be.cast(q, dtype);
  });
}

function dequantizeLinear(be: QuantHost, x: NDArray, scale: NDArray, zeroPoint?: NDArray, axis = 1): NDArray {
  const op = 'dequantizeLinear';
  checkDType(be, x, op, 'x', ['int8', 'uint8', 'int32']);
  checkDType(be, scale, op, 'scale', ['float32']);
  if (zeroPoint) {
    checkDType(be, zeroPoint, op, 'zeroPoint', [x.dtype]);
  }
  const ax = axisOf(axis, op, x, scale);
  const len = x.shape[ax] ?? 1;
  const s = alongAxis(be, scale, op, 'scale', ax, x.shape.length, len);
  const z = zeroPoint && alongAxis(be, zeroPoint, op, 'zeroPoint', ax, x.shape.length, len);
  return withTemps(be, (t) => {
    let d = x.dtype === 'int32' ? x : t(be.cast(x, 'int32'));
    if (z) d = t(be.binary('sub', d, z.dtype === 'int32' ? z : t(be.cast(z, 'int32'))));
    return be.binary('mul', t(be.cast(d, 'float32')), s);
  });
}

/**
 * The checks of matmulInteger's operands (and matmulIntegerToFloat's), under `op`: dtypes, ranks, K, and the
 * zero points (of their operand's dtype; a's a scalar or per row [M], or only a scalar with `aScalarZero`,
 * b's a scalar or per column [N]). Returns [M, K, N] and the zero points as broadcastable views.
 */
function integerOperands(
  be: QuantHost,
  op: string,
  a: NDArray,
  b: NDArray,
  aZeroPoint: NDArray | undefined,
  bZeroPoint: NDArray | undefined,
  aScalarZero = false,
): { M: number; K: number; N: number; za?: NDArray; zb?: NDArray } {
  checkDType(be, a, op, 'a', ['int8', 'uint8']);
  checkDType(be, b, op, 'b', ['int8', 'uint8']);
  if (a.shape.length < 2 || b.shape.length < 2)
    throw new ShapeMismatchError(`${op}: a and b must have at least 2 dims, got [${a.shape}] and [${b.shape}]`);
  if (aZeroPoint) checkDType(be, aZeroPoint, op, 'aZeroPoint', [a.dtype]);
  if (bZeroPoint) checkDType(be, bZeroPoint, op, 'bZeroPoint', [b.dtype]);
  const [M, K, N] = [a.shape[a.shape.length - 2]!, a.shape[a.shape.length - 1]!, b.shape[b.shape.length - 1]!];
  if (b.shape[b.shape.length - 2] !== K)
    throw new ShapeMismatchError(`${op}: a is [${a.shape}] and b is [${b.shape}]: K differs (matmul)`);
  // a's zero point per row ([M] → [M, 1]), b's per column ([N] broadcasts as the last dim): views first.
  const za = aZeroPoint && alongAxis(be, aZeroPoint, op, 'aZeroPoint', 0, 2, aScalarZero ? 1 : M);
  const zb = bZeroPoint && alongAxis(be, bZeroPoint, op, 'bZeroPoint', 1, 2, N);
  return { M, K, N, za, zb };
}

/** Σ (a − za)(b − zb) in int32 of checked operands (integerOperands). */
function integerProduct(be: QuantHost, a: NDArray, b: NDArray, za?: NDArray, zb?: NDArray): NDArray {
  if (!za && !zb && a.dtype === b.dtype) return be.integerMatmul(a, b);
  return withTemps(be, (t) => {
    const shifted = (x: NDArray, z: NDArray | undefined): NDArray => {
      const x32 = t(be.cast(x, 'int32'));
      return z ? t(be.binary('sub', x32, t(be.cast(z, 'int32')))) : x32;
    };
    return be.integerMatmul(shifted(a, za), shifted(b, zb));
  });
}

function matmulInteger(be: QuantHost, a: NDArray, b: NDArray, aZeroPoint?: NDArray, bZeroPoint?: NDArray): NDArray {
  const { za, zb } = integerOperands(be, 'matmulInteger', a, b, aZeroPoint, bZeroPoint);
  return integerProduct(be, a, b, za, zb);
}

function matmulIntegerToFloat(
  be: QuantHost,
  a: NDArray,
  b: NDArray,
  aScale: NDArray,
  bScale: NDArray,
  aZeroPoint?: NDArray,
  bZeroPoint?: NDArray,
  bias?: NDArray,
): NDArray {
  const op = 'matmulIntegerToFloat';
  const { M, K, N, za, zb } = integerOperands(be, op, a, b, aZeroPoint, bZeroPoint, true);
  checkDType(be, aScale, op, 'aScale', ['float32']);
  checkDType(be, bScale, op, 'bScale', ['float32']);
  if (bias) checkDType(be, bias, op, 'bias', ['float32']);
  const batch = broadcastShapes(a.shape.slice(0, -2), b.shape.slice(0, -2));
  // Views first (no allocation), so every bad shape throws before anything is computed.
  const sa = alongAxis(be, aScale, op, 'aScale', 0, 0, 1);
  const sb = alongAxis(be, bScale, op, 'bScale', 0, 1, N);
  if (bias && (bias.shape.length !== 1 || bias.shape[0] !== N))
    throw new ShapeMismatchError(`${op}: bias must be [${N}] (b's columns), got [${bias.shape}]`);
  const fused = a.dtype === 'int8' && b.dtype === 'int8' && !za && !zb && K > 0;
  if (be.integerMatmulToFloatKernel && fused && sizeOf(batch) * M * N > 0) {
    const outShape = [...batch, M, N];
    const out = be.allocate(sizeOf(outShape), 'float32');
    be.guard(out, () =>
      be.integerMatmulToFloatKernel!(
        expandView(a, [...batch, M, K]),
        expandView(b, [...batch, K, N]),
        sa,
        sb,
        bias ?? null,
        out,
      ),
    );
    return viewOf(out, outShape);
  }
  return withTemps(be, (t) => {
    const acc = t(integerProduct(be, a, b, za, zb));
    const y = be.binary('mul', t(be.cast(acc, 'float32')), t(be.binary('mul', sa, sb)));
    return bias ? be.binary('add', t(y), bias) : y;
  });
}

function convInteger(
  be: QuantHost,
  x: NDArray,
  w: NDArray,
  xZeroPoint?: NDArray,
  wZeroPoint?: NDArray,
  o: ConvOptions = {},
): NDArray {
  const op = 'convInteger';
  const host = be as unknown as ConvHost;
  const { r, O } = checkConvOperands(host, x, w, o.groups, op, false, ['int8', 'uint8']);
  if (xZeroPoint) checkDType(be, xZeroPoint, op, 'xZeroPoint', [x.dtype]);
  if (wZeroPoint) checkDType(be, wZeroPoint, op, 'wZeroPoint', [w.dtype]);
  // x's zero point per tensor; w's per tensor or per output channel ([O] → [O, 1, ...]): views first.
  const zx = xZeroPoint && alongAxis(be, xZeroPoint, op, 'xZeroPoint', 0, 0, 1);
  const zw = wZeroPoint && alongAxis(be, wZeroPoint, op, 'wZeroPoint', 0, r + 2, O);
  const product = (a: NDArray, b: NDArray) => be.integerMatmul(a, b);
  // Operands of one dtype without zero points go as they are (webgpu's int8 kernels take int8, not int32);
  // depthwise convolutions multiply elementwise, so in int32.
  if (!zx && !zw && x.dtype === w.dtype && !isDepthwise(o.groups ?? 1, x.shape[1]!, O))
    return convComposite(host, x, w, o, product);
  return withTemps(be, (t) => {
    const shifted = (v: NDArray, z: NDArray | undefined): NDArray => {
      const v32 = t(be.cast(v, 'int32'));
      return z ? t(be.binary('sub', v32, t(be.cast(z, 'int32')))) : v32;
    };
    return convComposite(host, shifted(x, zx), shifted(w, zw), o, product);
  });
}

/** The quantization methods (QuantMethods) as BaseBackend has them (FAMILIES, base.ts). */
export const QUANT_METHODS: FamilyTable<QuantMethods> = {
  quantizeLinear(x: NDArray, scale: NDArray, zeroPoint?: NDArray, axis?: number) {
    return quantizeLinear(this, x, scale, zeroPoint, axis);
  },
  dequantizeLinear(x: NDArray, scale: NDArray, zeroPoint?: NDArray, axis?: number) {
    return dequantizeLinear(this, x, scale, zeroPoint, axis);
  },
  matmulInteger(a: NDArray, b: NDArray, aZeroPoint?: NDArray, bZeroPoint?: NDArray) {
    return matmulInteger(this, a, b, aZeroPoint, bZeroPoint);
  },
  convInteger(x: NDArray, w: NDArray, xZeroPoint?: NDArray, wZeroPoint?: NDArray, o?: ConvOptions) {
    return convInteger(this, x, w, xZeroPoint, wZeroPoint, o);
  },
  matmulIntegerToFloat(
    a: NDArray,
    b: NDArray,
    aScale: NDArray,
    bScale: NDArray,
    aZeroPoint?: NDArray,
    bZeroPoint?: NDArray,
    bias?: NDArray,
  ) {
    return matmulIntegerToFloat(this, a, b, aScale, bScale, aZeroPoint, bZeroPoint, bias);
  },
} satisfies FamilyTable<QuantMethods, QuantHost>;
