/**
 * ONNX MatMul and Gemm on the HAL's batched matmul: NumPy matmul semantics (1-D operands promoted
 * to a matrix and the added dimension removed; batch dimensions broadcast), and Gemm's
 * Y = alpha·A'·B' + beta·C with transposes as views, in the order of ONNX's reference.
 */
import { transposeView } from '@polyhal/hal';
import { NotExpressible, type OpMapping } from './table.js';

const matmul: OpMapping = {
  plan: (ctx) => {
    const [sa, sb] = [ctx.inputShapes[0]!, ctx.inputShapes[1]!];
    if (sa.length === 0 || sb.length === 0) throw new NotExpressible('input', 'MatMul of a scalar');
    return (be, [a, b]) => {
      const a2 = sa.length === 1 ? be.reshape(a!, [1, sa[0]!]) : a!;
      const b2 = sb.length === 1 ? be.reshape(b!, [sb[0]!, 1]) : b!;
      const y = be.matmul(a2, b2);
      if (sa.length > 1 && sb.length > 1) return [y];
      const shape = [...y.shape];
      if (sb.length === 1) shape.pop();
      if (sa.length === 1) shape.splice(shape.length - (sb.length === 1 ? 1 : 2), 1);
      return [be.reshape(y, shape)];
    };
  },
};

/** Gemm: A [M, K] (or [K, M] with transA), B [K, N] (or [N, K] with transB), C broadcast to [M, N]. */
const gemm: OpMapping = {
  plan: (ctx) => {
    const alpha = ctx.attrs.float('alpha', 1);
    const beta = ctx.attrs.float('beta', 1);
    const transA = ctx.attrs.int('transA', 0) !== 0;
    const transB = ctx.attrs.int('transB', 0) !== 0;
    if (ctx.opset < 7 && ctx.attrs.int('broadcast', 0) === 0 && ctx.node.inputs.length > 2) {
      throw new NotExpressible('attribute', 'Gemm broadcast=0 (opset < 7)');
    }
    if (ctx.inputShapes[0]!.length !== 2 || ctx.inputShapes[1]!.length !== 2)
      throw new NotExpressible('input', 'Gemm of operands that are not matrices');
    const hasC = ctx.node.inputs.length > 2 && ctx.node.inputs[2] !== '';
    return (be, [a, b, c]) => {
      let y = be.matmul(transA ? transposeView(a!) : a!, transB ? transposeView(b!) : b!);
      if (alpha !== 1) y = be.mul(y, alpha);
      if (hasC) y = be.add(y, beta === 1 ? c! : be.mul(c!, beta));
      return [y];
    };
  },
};

export const LINALG_OPS: Record<string, OpMapping> = { MatMul: matmul, Gemm: gemm };

/** ONNX's quantization ops on the HAL's (quantize.ts); absent zero points are absent inputs. */
const present = (ctx: { node: { inputs: readonly string[] } }, i: number): boolean =>
  ctx.node.inputs.length > i && ctx.node.inputs[i] !== '';

/** QuantizeLinear (opset ≤ 19 semantics; opset 21's block size is not expressible). */
const quantizeLinear: OpMapping = {
  dtypes: ['float32', 'int8', 'uint8'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    if (ctx.attrs.int('block_size', 0) !== 0) throw new NotExpressible('attribute', 'QuantizeLinear block_size');
    const axis = ctx.attrs.int('axis', 1);
    const zp = present(ctx, 2);
    return (be, [x, s, z]) => [be.quantizeLinear(x!, s!, zp ? z : undefined, axis)];
  },
};

const dequantizeLinear: OpMapping = {
  dtypes: ['float32', 'int8', 'uint8', 'int32'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    if (ctx.attrs.int('block_size', 0) !== 0) throw new NotExpressible('attribute', 'DequantizeLinear block_size');
    const axis = ctx.attrs.int('axis', 1);
    const zp = present(ctx, 2);
    return (be, [x, s, z]) => [be.dequantizeLinear(x!, s!, zp ? z : undefined, axis)];
  },
};

const matmulInteger: OpMapping = {
  dtypes: ['int8', 'uint8', 'int32'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const [za, zb] = [present(ctx, 2), present(ctx, 3)];
    return (be, [a, b, az, bz]) => [be.matmulInteger(a!, b!, za ? az : undefined, zb ? bz : undefined)];
  },
};

/**
 * DynamicQuantizeLinear: uint8 y, its float32 scale and uint8 zero point from x's range widened to 0
 * (ONNX's formula in float32: scale = (max − min) / 255, 1 when max = min; zero point = round(clip(0 −
 * min / scale, 0, 255)); y = quantizeLinear(x, scale, zero point)).
 */
const dynamicQuantizeLinear: OpMapping = {
  dtypes: ['float32', 'uint8'],
  contract: { kind: 'exact' },
  plan:
    () =>
    (be, [x]) => {
      const mx = be.maximum(be.max(x!), 0);
      const mn = be.minimum(be.min(x!), 0);
      const range = be.where(be.equal(mx, mn), 1, be.sub(mx, mn));
      const scale = be.div(range, 255);
      const zp = be.unary('round', be.minimum(be.maximum(be.sub(0, be.div(mn, scale)), 0), 255));
      const zp8 = be.cast(zp, 'uint8');
      return [be.quantizeLinear(x!, scale, zp8), scale, zp8];
    },
};

/**
 * QLinearMatMul: matmulInteger of the zero-point-shifted operands, times a_scale·b_scale / y_scale, rounded
 * half to even, plus y's zero point, into its dtype (saturating). ONNX's reference multiplies the int32
 * sums in float64; here the sums and the multiplier are float32 (exact sums below 2^24; a product within
 * float32 rounding of a .5 tie could round the other way).
 */
const qlinearMatMul: OpMapping = {
  dtypes: ['float32', 'int8', 'uint8'],
  contract: { kind: 'exact' },
  plan:
    () =>
    (be, [a, as, az, b, bs, bz, ys, yz]) => {
      const c = be.cast(be.matmulInteger(a!, b!, az, bz), 'float32');
      const m = be.div(be.mul(as!, bs!), ys!);
      const y = be.add(be.unary('round', be.mul(c, be.reshape(m, []))), be.cast(be.reshape(yz!, []), 'float32'));
      return [be.cast(y, yz!.dtype)];
    },
};

export const QUANT_OPS: Record<string, OpMapping> = {
  QuantizeLinear: quantizeLinear,
  DequantizeLinear: dequantizeLinear,
  MatMulInteger: matmulInteger,
  DynamicQuantizeLinear: dynamicQuantizeLinear,
  QLinearMatMul: qlinearMatMul,
};
