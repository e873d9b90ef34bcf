/**
 * The elementwise ops on one element, in float64 (float32 ops) or int32 arithmetic, following the
 * semantics of hal/src/ops.ts. Written out here on purpose — not taken from the op table — so that
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
    default:
      throw new UnsupportedOpError(String(op), 'float32', BACKEND);
  }
}

/** An int32 unary op (wrapping modulo 2^32). */
export function unaryInt(op: UnaryOp, x: number): number {
  if (op === 'neg') return -x | 0; // −(−2^31) wraps to −2^31
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
    default:
      throw new UnsupportedOpError(String(op), 'float32', BACKEND);
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
    default:
      throw new UnsupportedOpError(String(op), 'int32', BACKEND);
  }
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
