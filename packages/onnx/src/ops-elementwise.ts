/**
 * ONNX elementwise ops on the HAL: unary ops, binary ops with multidirectional (NumPy) broadcasting —
 * which is the HAL's own broadcasting —, variadic Sum/Mean/Max/Min, and activations that ONNX's
 * reference implementations define as a formula of ops the HAL has, computed in the same order.
 */
import type { ComputeBackend, NDArray, UnaryOp } from '@polyhal/hal';
import { isIntType, NotExpressible, NUMERIC_TYPES, type NodeContext, type OpMapping } from './table.js';

const FI = ['float32', 'int32'] as const;
/** float32, float16, int32, int8, uint8: ops that take every numeric dtype of the HAL. */
const NUM = NUMERIC_TYPES;

const unary = (op: UnaryOp, dtypes?: readonly string[]): OpMapping => ({
  dtypes,
  contract: { kind: 'hal', op },
  plan:
    () =>
    (be, [x]) => [be.unary(op, x!)],
});

/** |x| (int32: −2^31 stays −2^31, as ONNX's two's complement Abs). */
const abs = (be: ComputeBackend, x: NDArray): NDArray => be.abs(x);
const minimum = (be: ComputeBackend, a: NDArray, b: NDArray): NDArray => be.minimum(a, b);
/** min(x, 0) = −relu(−x), as ONNX's references write np.clip(x, −inf, 0). */
const negPart = (be: ComputeBackend, x: NDArray): NDArray => be.neg(be.relu(be.neg(x)));
/** np.clip(x, lo, hi) = min(max(x, lo), hi). */
const clip = (be: ComputeBackend, x: NDArray, lo: number | undefined, hi: number | undefined): NDArray => {
  let y = lo === undefined ? x : be.maximum(x, lo);
  if (hi !== undefined) y = be.minimum(y, hi);
  return y;
};

const binary = (
  fn: (be: ComputeBackend, a: NDArray, b: NDArray) => NDArray,
  dtypes: readonly string[] | undefined,
  halOp: string,
): OpMapping => ({
  dtypes,
  contract: (ctx) => (isIntType(ctx.inputTypes[0]) ? { kind: 'exact' } : { kind: 'hal', op: halOp }),
  plan:
    () =>
    (be, [a, b]) => [fn(be, a!, b!)],
});

/** Max/Min/Sum/Mean over 1..n inputs, folded left as ONNX's references do. */
const variadic = (
  fn: (be: ComputeBackend, a: NDArray, b: NDArray) => NDArray,
  dtypes: readonly string[],
  contract: 'exact' | 'onnx',
  mean = false,
): OpMapping => ({
  dtypes,
  contract: { kind: contract },
  plan: (ctx) => {
    if (ctx.node.inputs.some((n) => n === ''))
      throw new NotExpressible('input', `${ctx.node.opType}: an omitted input`);
    if (mean && ctx.inputTypes[0] !== 'float32') throw new NotExpressible('dtype', `Mean of ${ctx.inputTypes[0]}`);
    return (be, xs) => {
      let y = xs.length === 1 ? be.contiguous(xs[0]!) : fn(be, xs[0]!, xs[1]!);
      for (let i = 2; i < xs.length; i++) y = fn(be, y, xs[i]!);
      return [mean ? be.div(y, xs.length) : y];
    };
  },
});

/** An activation computed from scalar attributes, with ONNX's defaults. */
const activation = (
  attrs: Record<string, number>,
  fn: (be: ComputeBackend, x: NDArray, a: Record<string, number>) => NDArray,
): OpMapping => ({
  plan: (ctx) => {
    const a = Object.fromEntries(Object.entries(attrs).map(([k, d]) => [k, ctx.attrs.float(k, d)]));
    return (be, [x]) => [fn(be, x!, a)];
  },
});

/** Clip: bounds from inputs 1 and 2 (opset ≥ 11, host scalars) or the attributes min/max (opset < 11). */
const clipMapping: OpMapping = {
  host: [1, 2],
  dtypes: NUM,
  contract: { kind: 'exact' },
  plan: (ctx: NodeContext) => {
    let lo: number | undefined;
    let hi: number | undefined;
    if (ctx.opset >= 11) {
      const scalar = (i: number): number | undefined => {
        const v = ctx.numbers(i);
        if (v !== undefined && v.length !== 1)
          throw new NotExpressible('input', `Clip: bound ${i} has ${v.length} values, not 1`);
        return v?.[0];
      };
      lo = scalar(1);
      hi = scalar(2);
    } else {
      lo = ctx.attrs.has('min') ? ctx.attrs.float('min', 0) : undefined;
      hi = ctx.attrs.has('max') ? ctx.attrs.float('max', 0) : undefined;
    }
    return (be, [x]) => [clip(be, x!, lo, hi)];
  },
};

/**
 * Pow: the exponent (ONNX's T1, which may differ from the base's type) is read on the host, as Clip's
 * bounds are, and uploaded in the base's dtype when that keeps every value: a float32 base takes any
 * exponent that float32 holds exactly (float32, or integers up to 2^24 of an integer type); an int32
 * base takes integer exponents ≥ 0 of an integer type (NumPy's integer power, which ONNX's reference
 * is, wraps like the HAL's int32 pow and rejects negative exponents). An int32 base with a float
 * exponent is computed by ONNX in float64 and truncated: not expressible.
 */
const powMapping: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: (ctx) => (ctx.inputTypes[0] === 'int32' ? { kind: 'exact' } : { kind: 'hal', op: 'pow' }),
  plan: (ctx) => {
    const base = ctx.inputTypes[0]!;
    const expType = ctx.inputTypes[1]!;
    const y = ctx.numbers(1)!;
    const shape = ctx.inputShapes[1]!;
    if (y.some((v) => typeof v !== 'number')) throw new NotExpressible('dtype', `Pow exponent of dtype ${expType}`);
    const integerType = /^u?int(8|16|32|64)$/.test(expType);
    if (base === 'float32') {
      if (!y.every((v) => Number.isNaN(v) || Math.fround(v) === v))
        throw new NotExpressible('input', `Pow: a ${expType} exponent float32 does not hold`);
    } else if (!integerType) {
      throw new NotExpressible('dtype', `Pow of int32 by ${expType} (computed in float64 and truncated)`);
    } else if (!y.every((v) => v >= 0 && v <= 2147483647)) {
      throw new NotExpressible('input', 'Pow: an int32 base to a negative exponent (undefined in NumPy)');
    }
    return (be, [x]) => [be.pow(x!, be.fromArray(y, shape, base as 'float32' | 'int32'))];
  },
};

/** Gelu (opset 20): approximate 'none' is the HAL's gelu, 'tanh' its geluTanh. */
const geluOp = (ctx: NodeContext): UnaryOp => {
  const approximate = ctx.attrs.string('approximate', 'none');
  if (approximate !== 'none' && approximate !== 'tanh')
    throw new NotExpressible('attribute', `Gelu approximate '${approximate}'`);
  return approximate === 'tanh' ? 'geluTanh' : 'gelu';
};

export const ELEMENTWISE_OPS: Record<string, OpMapping> = {
  Relu: unary('relu'),
  Sigmoid: unary('sigmoid'),
  Tanh: unary('tanh'),
  Exp: unary('exp'),
  Log: unary('log'),
  Neg: unary('neg', NUM),
  Sqrt: unary('sqrt'),
  Reciprocal: unary('recip'),
  Sin: unary('sin'),
  Cos: unary('cos'),
  Abs: unary('abs', NUM),
  Sign: unary('sign', NUM),
  Floor: unary('floor'),
  Ceil: unary('ceil'),
  Round: unary('round'), // half to even, as the HAL's
  Erf: unary('erf'),
  Softplus: unary('softplus'), // log(1 + e^x) without the reference's overflow past x ≈ 88.7
  Tan: unary('tan'),
  Asin: unary('asin'),
  Acos: unary('acos'),
  Atan: unary('atan'),
  Sinh: unary('sinh'),
  Cosh: unary('cosh'),
  Asinh: unary('asinh'),
  Acosh: unary('acosh'),
  Atanh: unary('atanh'),
  Pow: powMapping,
  Gelu: {
    contract: (ctx) => ({ kind: 'hal', op: geluOp(ctx) }),
    plan: (ctx) => {
      const op = geluOp(ctx);
      return (be, [x]) => [be.unary(op, x!)];
    },
  },
  Identity: {
    dtypes: FI,
    contract: { kind: 'exact' },
    plan:
      () =>
      (_be, [x]) => [x!],
  },
  Add: binary((be, a, b) => be.add(a, b), NUM, 'add'),
  Sub: binary((be, a, b) => be.sub(a, b), NUM, 'sub'),
  Mul: binary((be, a, b) => be.mul(a, b), NUM, 'mul'),
  // integers: the quotient truncated toward zero (ONNX's reference: NumPy's true division, cast back)
  Div: binary((be, a, b) => (isIntType(a.dtype) ? be.truncDiv(a, b) : be.div(a, b)), NUM, 'div'),
  Mod: {
    dtypes: NUM,
    contract: (ctx) =>
      isIntType(ctx.inputTypes[0])
        ? { kind: 'exact' }
        : { kind: 'hal', op: ctx.attrs.int('fmod', 0) !== 0 ? 'fmod' : 'mod' },
    plan: (ctx) => {
      // fmod = 1 is C's truncated remainder (the HAL's fmod); fmod = 0 NumPy's floored one (its mod).
      // ONNX requires fmod = 1 for floating-point inputs.
      if (ctx.attrs.int('fmod', 0) !== 0) return (be, [a, b]) => [be.fmod(a!, b!)];
      if (!isIntType(ctx.inputTypes[0]))
        throw new NotExpressible(
          'attribute',
          `Mod fmod=0 on ${ctx.inputTypes[0]} (ONNX requires fmod=1 for floating point)`,
        );
      return (be, [a, b]) => [be.mod(a!, b!)];
    },
  },
  Max: variadic((be, a, b) => be.maximum(a, b), NUM, 'exact'),
  Min: variadic(minimum, NUM, 'exact'),
  Sum: variadic((be, a, b) => be.add(a, b), NUM, 'onnx'),
  Mean: variadic((be, a, b) => be.add(a, b), ['float32'], 'onnx', true),
  Clip: clipMapping,
  // ONNX reference: np.clip(x, 0, inf) + np.clip(x, -inf, 0) * slope.
  PRelu: {
    plan:
      () =>
      (be, [x, slope]) => [be.add(be.relu(x!), be.mul(negPart(be, x!), slope!))],
  },
  LeakyRelu: activation({ alpha: 0.01 }, (be, x, { alpha }) => be.add(be.relu(x), be.mul(negPart(be, x), alpha!))),
  // np.clip(x, 0, inf) + (np.exp(np.clip(x, -inf, 0)) - 1) * alpha
  Elu: activation({ alpha: 1 }, (be, x, { alpha }) =>
    be.add(be.relu(x), be.mul(be.sub(be.exp(negPart(be, x)), 1), alpha!)),
  ),
  // np.clip(x, 0, inf) * gamma + (np.exp(np.clip(x, -inf, 0)) * alpha - alpha) * gamma
  Selu: activation({ alpha: Math.fround(1.6732632), gamma: Math.fround(1.050701) }, (be, x, { alpha, gamma }) =>
    be.add(be.mul(be.relu(x), gamma!), be.mul(be.sub(be.mul(be.exp(negPart(be, x)), alpha!), alpha!), gamma!)),
  ),
  // np.clip(x * alpha + beta, 0, 1)
  HardSigmoid: activation({ alpha: 0.2, beta: 0.5 }, (be, x, { alpha, beta }) =>
    clip(be, be.add(be.mul(x, alpha!), beta!), 0, 1),
  ),
  // x * np.maximum(0, np.minimum(1, alpha * x + beta)), alpha = 1/6, beta = 0.5: the HAL's hardSwish,
  // x·(relu6(x + 3)/6), which rounds differently (by an ulp or two where the result is not tiny)
  HardSwish: unary('hardSwish'),
  // x / (1 + np.abs(x))
  Softsign: {
    plan:
      () =>
      (be, [x]) => [be.div(x!, be.add(abs(be, x!), 1))],
  },
};
