/**
 * The elementwise ops on one element, in float64 (float32 ops) or int32 arithmetic, following the
 * semantics of hal/src/ops/index.ts. Written out here on purpose — not taken from the op table — so that
 * the conformance suite, whose oracle is built from that table, checks an independent implementation.
 * The caller rounds a float32 result once (Math.fround) when it stores it.
 */
import { type BinaryOp, type DType, type UnaryOp, UnsupportedOpError } from '@polyhal/hal';

const BACKEND = 'reference';

/** A float32 unary op on an (exactly representable) float32 value, computed in float64. */
export function unaryFloat(op: UnaryOp, x: number): number {
  switch (op) {
    case 'neg':
      return -x;
    case 'exp':
      return Math.exp(x);
    case 'log':
      return Math.log(x);
    case 'relu':
      return x > 0 || Number.isNaN(x) ? x : 0;
    // Never overflows: e^-x ≤ 1 for x ≥ 0, e^x ≤ 1 otherwise.
    case 'sigmoid':
      return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
    case 'tanh':
      return Math.tanh(x);
    case 'sqrt':
      return Math.sqrt(x);
    case 'recip':
      return 1 / x;
    case 'exp2':
      return 2 ** x;
    case 'log2':
      return Math.log2(x);
    case 'sin':
      return Math.sin(x);
    case 'cos':
      return Math.cos(x);
    case 'abs':
      return Math.abs(x);
    case 'sign':
      return x > 0 ? 1 : x < 0 ? -1 : x; // ±0 and NaN are their own sign
    case 'floor':
      return Math.floor(x);
    case 'ceil':
      return Math.ceil(x);
    case 'round': {
      // Ties to even; x − floor(x) is exact for a float32 x. A zero keeps x's sign.
      if (!Number.isFinite(x)) return x;
      const f = Math.floor(x);
      const d = x - f;
      const r = d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
      return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r;
    }
    case 'trunc':
      return Math.trunc(x);
    case 'erf':
      return erf(x);
    case 'log1p':
      return Math.log1p(x);
    case 'expm1':
      return Math.expm1(x);
    case 'softplus':
      return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
    case 'gelu':
      return x === -Infinity ? -0 : 0.5 * x * erfc(-x / Math.SQRT2);
    case 'geluTanh': {
      // 0.5·x·(1 + tanh(u)) = x/(1 + e^(−2u)), which does not cancel for negative u.
      if (x === -Infinity) return -0;
      const u = Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3);
      return x / (1 + Math.exp(-2 * u));
    }
    case 'hardSwish':
      return x === -Infinity ? -0 : x * (Math.min(Math.max(x + 3, 0), 6) / 6);
    case 'silu':
      return x === -Infinity ? -0 : x >= 0 ? x / (1 + Math.exp(-x)) : (x * Math.exp(x)) / (1 + Math.exp(x));
    case 'tan':
      return Math.tan(x);
    case 'asin':
      return Math.asin(x);
    case 'acos':
      return Math.acos(x);
    case 'atan':
      return Math.atan(x);
    case 'sinh':
      return Math.sinh(x);
    case 'cosh':
      return Math.cosh(x);
    case 'asinh':
      return Math.asinh(x);
    case 'acosh':
      return Math.acosh(x);
    case 'atanh':
      return Math.atanh(x);
    default:
      throw new UnsupportedOpError(String(op), 'float32', BACKEND);
  }
}

/**
 * erf by its Maclaurin series for |x| ≤ 2 (alternating; at most ~3 digits of float64 lost) and
 * 1 − erfc beyond; erfc by Laplace's continued fraction for x > 2 (modified Lentz), 1 − erf below.
 */
function erf(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  if (Math.abs(x) > 2) return Math.sign(x) * (1 - erfcFraction(Math.abs(x)));
  let term = x; // x^(2n+1)·(−1)^n / n!
  let sum = x;
  for (let n = 1; n < 100; n++) {
    term *= (-x * x) / n;
    const t = term / (2 * n + 1);
    sum += t;
    if (Math.abs(t) < 1e-17 * Math.abs(sum)) break;
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

function erfc(x: number): number {
  if (x > 2) return erfcFraction(x);
  if (x < -2) return 2 - erfcFraction(-x);
  return 1 - erf(x);
}

/** erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ···)))) for x > 2, front to back (Lentz). */
function erfcFraction(x: number): number {
  if (x === Infinity) return 0;
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let k = 1; k < 500; k++) {
    const a = k / 2;
    d = x + a * d;
    d = d === 0 ? 1 / tiny : 1 / d;
    c = x + a / c;
    if (c === 0) c = tiny;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

/** An int32 unary op (wrapping modulo 2^32). */
export function unaryInt(op: UnaryOp, x: number): number {
  if (op === 'neg') return -x | 0; // −(−2^31) wraps to −2^31
  if (op === 'abs') return Math.abs(x) | 0; // |−2^31| wraps to −2^31
  if (op === 'sign') return x > 0 ? 1 : x < 0 ? -1 : 0;
  throw new UnsupportedOpError(String(op), 'int32', BACKEND);
}

/**
 * NumPy's floored remainder: the result takes the divisor's sign. x mod 0, ±Inf mod y and NaN give
 * NaN; x mod ±Inf is x when x is ±0 or has the divisor's sign, else the divisor. `%` is exact.
 */
function flooredMod(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y) || !Number.isFinite(x) || y === 0) return NaN;
  if (!Number.isFinite(y)) return x === 0 || x > 0 === y > 0 ? x : y;
  const r = x % y;
  return r !== 0 && r < 0 !== y < 0 ? r + y : r;
}

/**
 * floor (or trunc) of x/y for finite float32 x and y ≠ 0, in exact integer arithmetic, rounded to float32
 * (to nearest, ties to even): x·2^149 and y·2^149 are integers, whose BigInt quotient is trunc(x/y).
 */
function exactQuotient(x: number, y: number, floor: boolean): number {
  const X = BigInt(x * 2 ** 149);
  const Y = BigInt(y * 2 ** 149);
  let n = X / Y;
  if (floor && X % Y !== 0n && X < 0n !== Y < 0n) n -= 1n;
  if (n === 0n) return (x / y) * 0; // the sign of x/y
  const neg = n < 0n;
  let m = neg ? -n : n;
  const bits = m.toString(2).length;
  let scale = 1;
  if (bits > 24) {
    const shift = BigInt(bits - 24);
    const rest = m & ((1n << shift) - 1n);
    const half = 1n << (shift - 1n);
    m >>= shift;
    if (rest > half || (rest === half && (m & 1n) === 1n)) m += 1n;
    scale = 2 ** (bits - 24);
  }
  const v = Number(m) * scale; // m ≤ 2^24: exact, and beyond float32's range it rounds to Inf on store
  return neg ? -v : v;
}

/** A float32 binary op on float32 values, computed in float64. */
export function binaryFloat(op: BinaryOp, x: number, y: number): number {
  switch (op) {
    case 'add':
      return x + y;
    case 'sub':
      return x - y;
    case 'mul':
      return x * y;
    case 'div':
      return x / y;
    case 'maximum':
      return Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.max(x, y);
    case 'mod':
      return flooredMod(x, y);
    case 'cmplt':
      return x < y ? 1 : 0;
    case 'minimum':
      return Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.min(x, y);
    case 'pow':
      return powFloat(x, y);
    case 'fmod':
      return x % y; // C's fmod: JS % truncates, exactly
    case 'floorDiv':
      if (y === 0 || Number.isNaN(x) || Number.isNaN(y)) return x / y;
      if (!Number.isFinite(x)) return NaN; // NumPy: fmod(±Inf, y) is NaN, and so is the quotient
      if (!Number.isFinite(y)) return x !== 0 && x < 0 !== y < 0 ? -1 : (x / y) * 0;
      return exactQuotient(x, y, true);
    case 'truncDiv':
      if (y === 0 || !Number.isFinite(x) || !Number.isFinite(y)) return Math.trunc(x / y);
      return exactQuotient(x, y, false);
    case 'geluGrad':
      if (x === Infinity) return y;
      if (x === -Infinity) return y * 0;
      return y * (0.5 * erfc(-x / Math.SQRT2) + (x * Math.exp(-0.5 * x * x)) / Math.sqrt(2 * Math.PI));
    default:
      return compare(op, x, y, 'float32');
  }
}

/** An int32 binary op: add, sub and mul wrap modulo 2^32; mod is floored with x mod 0 = 0. */
export function binaryInt(op: BinaryOp, x: number, y: number): number {
  switch (op) {
    case 'add':
      return (x + y) | 0;
    case 'sub':
      return (x - y) | 0;
    case 'mul':
      return Math.imul(x, y);
    case 'maximum':
      return Math.max(x, y);
    case 'mod': {
      if (y === 0) return 0;
      const r = x % y;
      return (r !== 0 && r < 0 !== y < 0 ? r + y : r) | 0;
    }
    case 'cmplt':
      return x < y ? 1 : 0;
    case 'minimum':
      return Math.min(x, y);
    case 'pow': {
      // Wrapping product per factor (y ≥ 0); y < 0 truncates 1/x^|y|: 1, ±1 or 0 (also for x = 0).
      if (y < 0) return x === 1 || (x === -1 && y % 2 === 0) ? 1 : x === -1 ? -1 : 0;
      // Square and multiply on the bits of y, each product modulo 2^32.
      let r = 1;
      for (let b = x, e = y; e > 0; e = Math.floor(e / 2), b = Math.imul(b, b)) if (e % 2 === 1) r = Math.imul(r, b);
      return r;
    }
    case 'fmod':
      return y === 0 ? 0 : (x % y) | 0; // truncated; x fmod 0 = 0
    case 'floorDiv': {
      // Floored: one less than the truncated quotient when the remainder and y differ in sign; x // 0 = 0.
      if (y === 0) return 0;
      const t = Math.trunc(x / y);
      return (x % y !== 0 && x % y < 0 !== y < 0 ? t - 1 : t) | 0;
    }
    case 'truncDiv':
      return y === 0 ? 0 : Math.trunc(x / y) | 0; // −2^31 / −1 = 2^31 wraps to −2^31
    case 'bitShiftLeft':
      return y < 0 || y > 31 ? 0 : x << y; // JS masks the count to 5 bits: the range is checked first
    case 'bitShiftRight':
      return y < 0 || y > 31 ? (x < 0 ? -1 : 0) : x >> y;
    // bool is stored as 0/1: the logical ops are the bitwise ones on it
    case 'logicalAnd':
    case 'bitwiseAnd':
      return x & y;
    case 'logicalOr':
    case 'bitwiseOr':
      return x | y;
    case 'logicalXor':
    case 'bitwiseXor':
      return x ^ y;
    default:
      return compare(op, x, y, 'int32');
  }
}

/** The comparisons (IEEE: NaN compares false except with ≠), 1 or 0 for the bool result. */
function compare(op: BinaryOp, x: number, y: number, dtype: DType): number {
  switch (op) {
    case 'equal':
      return x === y ? 1 : 0;
    case 'notEqual':
      return x !== y ? 1 : 0;
    case 'less':
      return x < y ? 1 : 0;
    case 'lessEqual':
      return x <= y ? 1 : 0;
    case 'greater':
      return x > y ? 1 : 0;
    case 'greaterEqual':
      return x >= y ? 1 : 0;
    default:
      throw new UnsupportedOpError(String(op), dtype, BACKEND);
  }
}

/**
 * IEEE 754 pow: the special values are decided here, one rule each (C99 F.9.4.4), and the rest is JS
 * `**` (which gives NaN for 1^NaN, 1^±Inf and (−1)^±Inf, where IEEE gives 1).
 */
function powFloat(x: number, y: number): number {
  if (y === 0) return 1;
  if (x === 1) return 1;
  if (x === -1 && Math.abs(y) === Infinity) return 1;
  return x ** y;
}

/**
 * A number as stored in a buffer of `dtype`: float32 rounds to the nearest float32 (the one rounding
 * of an op); int32 converts as JavaScript's ToInt32 (truncates, wraps modulo 2^32, NaN → 0).
 */
export function store(dtype: DType, v: number): number {
  return dtype === 'float32' ? Math.fround(v) : v | 0;
}

/** float32 → int32 as `cast` defines it: truncate toward zero, saturate at the int32 range, NaN → 0. */
export function castToInt32(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v >= 2147483647) return 2147483647;
  if (v <= -2147483648) return -2147483648;
  return Math.trunc(v) | 0;
}

/**
 * A stored value cast into a narrow dtype (copyKernel's `out` of int8, uint8 or float16; `fromFloat`: x
 * is float32): float → int8/uint8 truncates toward zero and saturates (NaN → 0); int32 → int8/uint8
 * wraps modulo 2^8; → float16 rounds to nearest even (f16Round).
 */
export function castNarrow(dtype: 'int8' | 'uint8' | 'float16', fromFloat: boolean, v: number): number {
  if (dtype === 'float16') return f16Round(v);
  const [lo, hi] = dtype === 'int8' ? [-128, 127] : [0, 255];
  if (fromFloat) return Number.isNaN(v) ? 0 : Math.min(hi, Math.max(lo, Math.trunc(v)));
  const m = ((v % 256) + 256) % 256; // v mod 2^8 in [0, 256)
  return dtype === 'uint8' ? m : m >= 128 ? m - 256 : m;
}

const f16Words = new Uint32Array(1);
const f16Float = new Float32Array(f16Words.buffer);

/**
 * A float32 value (or an int32 rounded to float32 first: exact below 2^24, and every larger one is past
 * float16's range either way) rounded to float16 on its float32 bits: keep 10 fraction bits, round the
 * 13 dropped ones to nearest, ties to even; 2^-24 units below 2^-14 (subnormals); ±Inf from 65520.
 */
export function f16Round(v: number): number {
  f16Float[0] = v;
  const u = f16Words[0]!;
  const sign = u & 0x80000000;
  const a = u & 0x7fffffff;
  if (a >= 0x7f800000) return f16Float[0]; // NaN, ±Inf
  if (a >= 0x477ff000) return sign ? -Infinity : Infinity; // ≥ 65520
  let r: number;
  if (a >= 0x38800000) {
    // ≥ 2^-14: a float16 normal
    const rem = a & 0x1fff;
    r = a - rem;
    if (rem > 0x1000 || (rem === 0x1000 && (r & 0x2000) !== 0)) r += 0x2000;
    f16Words[0] = (sign | r) >>> 0;
    return f16Float[0];
  }
  // below 2^-14: a multiple of 2^-24 — the significand (with its hidden bit) shifted right by 126 − e
  const e = a >>> 23;
  if (e < 102) return sign ? -0 : 0; // below 2^-25: rounds to 0
  const m = (a & 0x7fffff) | 0x800000;
  const shift = 126 - e;
  const q = m >>> shift;
  const rem = m - q * 2 ** shift;
  const half = 2 ** (shift - 1);
  r = rem > half || (rem === half && (q & 1) === 1) ? q + 1 : q;
  const out = r * 2 ** -24;
  return sign ? -out : out;
}
