/**
 * WGSL for elementwise unary and binary ops over strided, broadcast inputs (one invocation per output
 * element). NaN handling is explicit on bit patterns, because WGSL lets compilers assume finite math
 * in comparisons and min/max; the float32 comparisons (hal/src/ops/binary-logic.ts) are decided on the
 * bits altogether and write a bool (i32 0/1) output. bool operands (i32 0/1) take the int32 expressions.
 * Semantics: hal/src/ops/index.ts.
 *
 * Params (i32 words): 0 n · 2 offset a · 3 offset b · 4.. shape · then strides of a, then of b.
 */
import { type BinaryOp, type DType, type UnaryOp, UnsupportedOpError } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';
import { DIV_WGSL, MATH_WGSL } from './math-wgsl.js';
import { TRIG_WGSL } from './math-trig-wgsl.js';

/** Param words for R dimension slots. */
export const elementwiseWords = (R: number): number => 4 + 3 * R;

/** bool result of a float32 comparison `cmp` of the sortable keys (NaN: false; −0 = +0). */
const F32_CMP = (cmp: string): string => `select(0, 1, !is_nan(x) && !is_nan(y) && f_key(x) ${cmp} f_key(y))`;

const BINARY_F32: Partial<Record<BinaryOp, string>> = {
  add: 'x + y',
  sub: 'x - y',
  mul: 'x * y',
  div: 'x / y',
  maximum: 'select(select(select(y, x, x > y), y, is_nan(y)), x, is_nan(x))',
  mod: 'fmod_floored(x, y)',
  cmplt: 'select(0.0, 1.0, x < y)',
  minimum: 'select(select(select(y, x, x < y), y, is_nan(y)), x, is_nan(x))',
  pow: 'pow_f(x, y)',
  equal: F32_CMP('=='),
  notEqual: `select(1, 0, !is_nan(x) && !is_nan(y) && f_key(x) == f_key(y))`,
  less: F32_CMP('<'),
  lessEqual: F32_CMP('<='),
  greater: F32_CMP('>'),
  greaterEqual: F32_CMP('>='),
  fmod: 'fmod_trunc(x, y)',
  floorDiv: 'div_floor(x, y)',
  truncDiv: 'div_trunc(x, y)',
  geluGrad: 'gelu_grad_f(x, y)',
};

/** int32 ops, and the ops on bool (i32 0/1): the logical ops are the bitwise ones on 0/1. */
const BINARY_I32: Partial<Record<BinaryOp, string>> = {
  add: 'x + y',
  sub: 'x - y',
  mul: 'x * y',
  maximum: 'max(x, y)',
  mod: 'imod_floored(x, y)',
  cmplt: 'select(0, 1, x < y)',
  minimum: 'min(x, y)',
  pow: 'ipow(x, y)',
  equal: 'select(0, 1, x == y)',
  notEqual: 'select(0, 1, x != y)',
  less: 'select(0, 1, x < y)',
  lessEqual: 'select(0, 1, x <= y)',
  greater: 'select(0, 1, x > y)',
  greaterEqual: 'select(0, 1, x >= y)',
  fmod: 'ifmod(x, y)',
  logicalAnd: 'x & y',
  logicalOr: 'x | y',
  logicalXor: 'x ^ y',
  bitwiseAnd: 'x & y',
  bitwiseOr: 'x | y',
  bitwiseXor: 'x ^ y',
  floorDiv: 'idiv_floor(x, y)',
  truncDiv: 'idiv_trunc(x, y)',
  // Counts outside [0, 31] (negative ones as large u32s): 0 to the left, the sign to the right.
  bitShiftLeft: 'select(0, x << u32(y), u32(y) <= 31u)',
  bitShiftRight: 'x >> min(u32(y), 31u)',
};

const UNARY_F32: Record<UnaryOp, string> = {
  neg: '-x',
  exp: 'exp(x)',
  log: 'select(select(log(x), qnan(), x < 0.0), -qinf(), x == 0.0)',
  relu: 'select(select(0.0, x, x > 0.0), x, is_nan(x))',
  sigmoid: 'sigmoid(x)',
  tanh: 'tanh_stable(x)',
  sqrt: 'sqrt(x)',
  recip: '1.0 / x',
  exp2: 'exp2(x)',
  log2: 'select(select(log2(x), qnan(), x < 0.0), -qinf(), x == 0.0)',
  sin: 'sin(x)',
  cos: 'cos(x)',
  abs: 'bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu)',
  sign: 'select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0)',
  floor: 'floor(x)',
  ceil: 'ceil(x)',
  round: 'round(x)', // WGSL's round is half to even
  trunc: 'trunc(x)',
  erf: 'erf_f(x)',
  log1p: 'log1p_f(x)',
  expm1: 'expm1_f(x)',
  softplus: 'softplus_f(x)',
  gelu: 'gelu_f(x)',
  geluTanh: 'gelu_tanh_f(x)',
  silu: 'silu_f(x)',
  hardSwish: 'hardswish_f(x)',
  tan: 'tan_f(x)',
  asin: 'asin_f(x)',
  acos: 'acos_f(x)',
  atan: 'atan_f(x)',
  sinh: 'sinh_f(x)',
  cosh: 'cosh_f(x)',
  asinh: 'asinh_f(x)',
  acosh: 'acosh_f(x)',
  atanh: 'atanh_f(x)',
};

/** int32 unary ops: neg and abs wrap (−(−2^31) = |−2^31| = −2^31). */
const UNARY_I32: Partial<Record<UnaryOp, string>> = {
  neg: '-x',
  abs: 'select(x, -x, x < 0)',
  sign: 'select(select(0, -1, x < 0), 1, x > 0)',
};

/**
 * The float32 math helpers (math-wgsl.ts; math-trig-wgsl.ts, which builds on them) and the divisions
 * (DIV_WGSL) go only into the shaders whose expression calls one.
 */
export const elementwiseHelpers = (expr: string): string => {
  const base = /\bi?div_(?:floor|trunc)\(/.test(expr) ? `${HELPERS}${DIV_WGSL}` : HELPERS;
  if (!/\b\w+_f\(/.test(expr)) return base;
  const trig = /\b(?:tan|asin|acos|atan|sinh|cosh|asinh|acosh|atanh)_f\(/.test(expr);
  return `${base}${MATH_WGSL}${trig ? TRIG_WGSL : ''}`;
};

const HELPERS = `
fn qnan() -> f32 { return bitcast<f32>(0x7fc00000u ^ u32(p(1u))); } // word 1 is 0: a NaN the compiler cannot fold
fn qinf() -> f32 { return bitcast<f32>(0x7f800000u ^ u32(p(1u))); }
// The exact truncated remainder (IEEE fmod) of finite x by finite nonzero y, in integer arithmetic
// on the bits, so it holds whether or not the adapter fuses fma() or divides exactly (WGSL requires
// neither): |x| = mx·2^(ex−150), |y| = my·2^(ey−150) with 24-bit integer mantissas, and
// (mx·2^(ex−ey)) mod my is taken 8 bits of the exponent difference at a time with integer %. The
// remainder r·2^(ey−150) (r < my) is exactly representable; it keeps x's sign (fmod(−0, y) = −0).
fn fmod_exact(x: f32, y: f32) -> f32 {
  let bx = bitcast<u32>(x);
  let ax = bx & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  if (ax < ay) { return x; }
  var ex = i32(ax >> 23u); var ey = i32(ay >> 23u);
  var mx = ax & 0x7fffffu; var my = ay & 0x7fffffu;
  if (ex == 0) { ex = 1; } else { mx |= 0x800000u; } // subnormals: no implicit bit, exponent 1
  if (ey == 0) { ey = 1; } else { my |= 0x800000u; }
  var r = mx % my;
  var d = ex - ey;
  loop {
    if (d <= 0 || r == 0u) { break; }
    let s = u32(min(d, 8));
    r = (r << s) % my; // r < my < 2^24, so r·2^8 < 2^32
    d -= i32(s);
  }
  let sign = bx & 0x80000000u;
  if (r == 0u) { return bitcast<f32>(sign); }
  let k = 31 - i32(countLeadingZeros(r)); // r's top bit
  let e = k + ey - 23; // biased exponent of r·2^(ey−150)
  var mag = r << u32(ey - 1); // subnormal result
  if (e >= 1) { mag = (u32(e) << 23u) | ((r << u32(23 - k)) & 0x7fffffu); }
  return bitcast<f32>(mag | sign);
}
// NumPy's floored remainder (hal/src/ops/index.ts): the exact fmod, plus y when the signs differ (one
// rounding); a zero result keeps x's sign. Special operands are decided on bits (WGSL may assume
// finite math): x ±Inf or NaN, y NaN or ±0 → NaN; x mod ±Inf = x when x is ±0 or has y's sign, else y.
fn fmod_floored(x: f32, y: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let differ = ((bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u) != 0u;
  if (ax >= 0x7f800000u || ay > 0x7f800000u || ay == 0u) { return bitcast<f32>(0x7fc00000u ^ u32(p(1u))); }
  if (ay == 0x7f800000u) { return select(y, x, ax == 0u || !differ); }
  let r = fmod_exact(x, y);
  if ((bitcast<u32>(r) & 0x7fffffffu) != 0u && differ) { return r + y; }
  return r;
}
// C's fmod (truncated; hal/src/ops/binary-logic.ts): the exact fmod, whose result keeps x's sign. Special
// operands on bits: x ±Inf or NaN, y NaN or ±0 → NaN; x fmod ±Inf = x.
fn fmod_trunc(x: f32, y: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  if (ax >= 0x7f800000u || ay > 0x7f800000u || ay == 0u) { return qnan(); }
  if (ay == 0x7f800000u) { return x; }
  return fmod_exact(x, y);
}
// A float32's bits as an i32 that orders like its value (sign-magnitude to two's complement; −0 and +0
// both 0): the comparisons are integer ones, exact whether or not the adapter flushes subnormals.
fn f_key(x: f32) -> i32 {
  let b = bitcast<i32>(x);
  return select(b, -(b & 0x7fffffff), b < 0);
}
// Truncated int32 remainder: x fmod 0 = 0, and x fmod −1 = 0 (INT_MIN % −1 is left to no adapter).
fn ifmod(x: i32, y: i32) -> i32 {
  if (y == 0 || y == -1) { return 0; }
  return x % y;
}
// x^y modulo 2^32 by squaring (WGSL's i32 products wrap); y < 0: 1 for x = 1, ±1 for x = −1, else 0.
fn ipow(x: i32, y: i32) -> i32 {
  if (y < 0) { return select(select(0, 1 - 2 * (y & 1), x == -1), 1, x == 1); }
  var r = 1;
  var b = x;
  var e = u32(y);
  loop {
    if (e == 0u) { break; }
    if ((e & 1u) != 0u) { r = r * b; }
    b = b * b;
    e = e >> 1u;
  }
  return r;
}
fn imod_floored(x: i32, y: i32) -> i32 {
  if (y == 0) { return 0; }
  var r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) { r += y; }
  return r;
}
fn sigmoid(x: f32) -> f32 {
  if (x >= 0.0) { return 1.0 / (1.0 + exp(-x)); }
  let e = exp(x);
  return e / (1.0 + e);
}
fn tanh_stable(x: f32) -> f32 {
  let t = exp(-2.0 * abs(x));
  let r = (1.0 - t) / (1.0 + t);
  return select(select(r, -r, x < 0.0), x, is_nan(x) || abs(x) < 1e-4);
}
`;

const T = (d: DType): string => (d === 'float32' ? 'f32' : 'i32');

/** The WGSL expression of a binary op; UnsupportedOpError for an op this kernel does not have (never a fallback). */
export function binaryExpr(op: BinaryOp, dtype: DType): string {
  const table: Partial<Record<string, string>> = dtype === 'float32' ? BINARY_F32 : BINARY_I32;
  const expr = Object.hasOwn(table, op) ? table[op] : undefined;
  if (typeof expr !== 'string') throw new UnsupportedOpError(String(op), dtype, 'webgpu');
  return expr;
}

/** The WGSL expression of a unary op (int32: neg, abs, sign); UnsupportedOpError otherwise. */
export function unaryExpr(op: UnaryOp, dtype: DType): string {
  const table: Partial<Record<string, string>> = dtype === 'float32' ? UNARY_F32 : UNARY_I32;
  const expr = Object.hasOwn(table, op) ? table[op] : undefined;
  if (typeof expr !== 'string') throw new UnsupportedOpError(String(op), dtype, 'webgpu');
  return expr;
}

/**
 * contig: every operand is contiguous from its offset (the unravel loop is skipped); R: dimension slots.
 * `outDtype` is the result's: bool (i32) for the comparisons and logical ops, else the operands' dtype.
 */
export function binaryWgsl(op: BinaryOp, dtype: DType, outDtype: DType, contig: boolean, R: number): string {
  const expr = binaryExpr(op, dtype);
  const t = T(dtype);
  const index = contig
    ? 'let ia = p(2u) + i32(i); let ib = p(3u) + i32(i);'
    : stridedOffsets(['ia', 'ib'], 4, [4 + R, 4 + 2 * R], [2, 3], R);
  return `${paramsPrelude(elementwiseWords(R))}${elementwiseHelpers(expr)}
@group(0) @binding(1) var<storage, read> a: array<${t}>;
@group(0) @binding(2) var<storage, read> b: array<${t}>;
@group(0) @binding(3) var<storage, read_write> out: array<${T(outDtype)}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${index}
  let x = a[ia];
  let y = b[ib];
  out[idx] = ${expr};
}`;
}

/**
 * binaryScalarKernel's WGSL: `op(x, value)` (`op(value, x)` where `scalarFirst`), the number's bits in param 3
 * (the unary kernels' parameter layout, x bound as `a`; word 1 stays 0 for qnan()).
 */
export function binaryScalarWgsl(
  op: BinaryOp,
  dtype: DType,
  outDtype: DType,
  contig: boolean,
  R: number,
  scalarFirst: boolean,
): string {
  const expr = binaryExpr(op, dtype);
  const t = T(dtype);
  const index = contig ? 'let ia = p(2u) + i32(i);' : stridedOffsets(['ia'], 4, [4 + R], [2], R);
  const s = `bitcast<${t}>(p(3u))`;
  return `${paramsPrelude(elementwiseWords(R))}${elementwiseHelpers(expr)}
@group(0) @binding(1) var<storage, read> a: array<${t}>;
@group(0) @binding(2) var<storage, read_write> out: array<${T(outDtype)}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${index}
  ${scalarFirst ? `let x = ${s}; let y = a[ia];` : `let x = a[ia]; let y = ${s};`}
  out[idx] = ${expr};
}`;
}

export function unaryWgsl(op: UnaryOp, dtype: DType, contig: boolean, R: number): string {
  // NaN in → NaN out, explicitly: some adapters' transcendentals do not propagate NaN (SwiftShader's
  // exp(NaN) is +Inf), which WGSL allows; the HAL's contract does not.
  const f = unaryExpr(op, dtype);
  const expr = dtype === 'float32' ? `select(${f}, x, is_nan(x))` : f;
  const t = T(dtype);
  const index = contig ? 'let ia = p(2u) + i32(i);' : stridedOffsets(['ia'], 4, [4 + R], [2], R);
  return `${paramsPrelude(elementwiseWords(R))}${elementwiseHelpers(f)}
@group(0) @binding(1) var<storage, read> a: array<${t}>;
@group(0) @binding(2) var<storage, read_write> out: array<${t}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${index}
  let x = a[ia];
  out[idx] = ${expr};
}`;
}
