/**
 * Elementwise binary kernel (the binary table: arithmetic, comparisons into bool 0/1, fmod, logical and bitwise
 * ops on the int32 storage, floorDiv and truncDiv, the int32 shifts) over broadcast strided inputs.
 * One monomorphic loop per op and row; values are computed in float64 and rounded once on store.
 * Semantics: the op table (floored mod, NaN-propagating maximum and minimum, cmplt NaN → 0, IEEE pow).
 */
import { type BinaryOp, UnsupportedOpError } from '@polyhal/hal';
import type { StorageArray } from '@polyhal/hal/internal';
import { erfc } from './special.js';
import { planRows, rowMajor, type Strided } from './strided.js';

const ONE_OVER_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
/** g·(Φ(x) + x·φ(x)) in float64 (the op table's geluGrad), Φ(x) = erfc(−x/√2)/2. */
export function geluGrad(x: number, g: number): number {
  if (x === Infinity) return g;
  if (x === -Infinity) return g * 0;
  return g * (0.5 * erfc(-x / Math.SQRT2) + x * Math.exp(-0.5 * x * x) * ONE_OVER_SQRT_2PI);
}

export function binaryKernel(op: BinaryOp, a: Strided, b: Strided, out: StorageArray): void {
  const plan = planRows(a.shape, [a.strides, b.strides, rowMajor(a.shape)], [a.offset, b.offset, 0]);
  const { n, rows, step, starts } = plan;
  const sa = step[0]!;
  const sb = step[1]!;
  const isInt = out instanceof Int32Array;
  for (let r = 0; r < rows; r++) {
    binaryRow(op, isInt, n, a.data, starts[0]![r]!, sa, b.data, starts[1]![r]!, sb, out, starts[2]![r]!);
  }
}

/**
 * IEEE pow in float64 (exact where the float32 result is, as float64 pow is within an ulp of float64):
 * `**` except 1^NaN, 1^±Inf and (−1)^±Inf, which IEEE defines as 1 and JS as NaN.
 */
function powFloat(x: number, y: number): number {
  if (x === 1 || (x === -1 && (y === Infinity || y === -Infinity))) return 1;
  return x ** y;
}

/** int32 x^y modulo 2^32 by squaring; y < 0: 1 for x = 1, ±1 for x = −1, else 0. */
function powInt(x: number, y: number): number {
  if (y < 0) return x === 1 ? 1 : x === -1 ? 1 - 2 * (y & 1) : 0;
  let r = 1;
  for (let e = y; e !== 0; e >>>= 1) {
    if (e & 1) r = Math.imul(r, x);
    x = Math.imul(x, x);
  }
  return r;
}

/**
 * floor (floor = true) or trunc of the exact quotient of float32 x and y, in float64 (rounded once on
 * store): fmod is exact, so (x − fmod(x, y))/y is within two float64 roundings of the integer trunc(x/y)
 * and rounds to it while |x/y| < 2^50; past 2^49 the float32 rounding of the quotient itself is the
 * result's (hal/src/ops/binary-int.ts). Special operands as the op table says.
 */
function divRounded(x: number, y: number, floor: boolean): number {
  const q = x / y;
  if (y === 0 || q !== q) return q; // ±Inf or NaN
  if (x === Infinity || x === -Infinity) return floor ? NaN : q;
  if (y === Infinity || y === -Infinity) return floor && x !== 0 && x < 0 !== y < 0 ? -1 : q * 0;
  const a = Math.abs(q);
  if (a >= 562949953421312) return q; // 2^49
  // x/y is within a·2^-53 of the exact quotient: a fraction farther than a·2^-50 from 0 and 1 rounds
  // the same either way (a zero from trunc or floor keeps q's sign); only near integers is fmod needed.
  const k0 = floor ? Math.floor(q) : Math.trunc(q);
  const d = Math.abs(q - k0);
  const e = a * 8.881784197001252e-16;
  if (d > e && d < 1 - e) return k0;
  const r = x % y;
  let k = Math.round((x - r) / y);
  if (floor && r !== 0 && r < 0 !== y < 0) k -= 1;
  return k === 0 ? q * 0 : k; // a zero keeps x/y's sign
}

/**
 * int32 floored division: x // 0 = 0; −2^31 // −1 wraps (the store's ToInt32). The float64 quotient
 * floors exactly: a non-integer x/y lies at least 1/|y| from every integer, farther than its rounding
 * error |x/y|·2^-53 (|x| < 2^31), and an integer quotient is itself a float64.
 */
function floorDivInt(x: number, y: number): number {
  return y === 0 ? 0 : Math.floor(x / y);
}

function binaryRow(
  op: BinaryOp,
  isInt: boolean,
  n: number,
  a: StorageArray,
  ai: number,
  sa: number,
  b: StorageArray,
  bi: number,
  sb: number,
  o: StorageArray,
  oi: number,
): void {
  const end = oi + n;
  switch (op) {
    case 'add':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! + b[bi]!;
      return;
    case 'sub':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! - b[bi]!;
      return;
    case 'mul':
      if (isInt) for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = Math.imul(a[ai]!, b[bi]!);
      else for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! * b[bi]!;
      return;
    case 'div':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! / b[bi]!;
      return;
    case 'maximum':
      for (; oi < end; oi++, ai += sa, bi += sb) {
        const x = a[ai]!;
        const y = b[bi]!;
        o[oi] = x > y || x !== x ? x : y;
      }
      return;
    case 'mod':
      for (; oi < end; oi++, ai += sa, bi += sb) {
        const y = b[bi]!;
        let r = a[ai]! % y;
        if (r !== 0 && r < 0 !== y < 0) r += y;
        o[oi] = r;
      }
      return;
    case 'cmplt':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! < b[bi]! ? 1 : 0;
      return;
    case 'minimum':
      for (; oi < end; oi++, ai += sa, bi += sb) {
        const x = a[ai]!;
        const y = b[bi]!;
        o[oi] = x < y || x !== x ? x : y;
      }
      return;
    case 'pow':
      if (isInt) for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = powInt(a[ai]!, b[bi]!);
      else for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = powFloat(a[ai]!, b[bi]!);
      return;
    case 'equal':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! === b[bi]! ? 1 : 0;
      return;
    case 'notEqual':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! !== b[bi]! ? 1 : 0;
      return;
    case 'less':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! < b[bi]! ? 1 : 0;
      return;
    case 'lessEqual':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! <= b[bi]! ? 1 : 0;
      return;
    case 'greater':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! > b[bi]! ? 1 : 0;
      return;
    case 'greaterEqual':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! >= b[bi]! ? 1 : 0;
      return;
    case 'fmod':
      // JS % is C's fmod, exact on the doubles that hold float32 values; an int32 store turns x % 0 (NaN) into 0.
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! % b[bi]!;
      return;
    case 'logicalAnd':
    case 'bitwiseAnd':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! & b[bi]!;
      return;
    case 'logicalOr':
    case 'bitwiseOr':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! | b[bi]!;
      return;
    case 'logicalXor':
    case 'bitwiseXor':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! ^ b[bi]!;
      return;
    case 'floorDiv':
      if (isInt) for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = floorDivInt(a[ai]!, b[bi]!);
      else for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = divRounded(a[ai]!, b[bi]!, true);
      return;
    case 'truncDiv':
      // int32: x / 0 is ±Inf or NaN and the store makes it 0; 2^31 wraps to −2^31.
      if (isInt) for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = a[ai]! / b[bi]!;
      else for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = divRounded(a[ai]!, b[bi]!, false);
      return;
    case 'bitShiftLeft':
      for (; oi < end; oi++, ai += sa, bi += sb) {
        const s = b[bi]!;
        o[oi] = s >= 0 && s <= 31 ? a[ai]! << s : 0;
      }
      return;
    case 'bitShiftRight':
      for (; oi < end; oi++, ai += sa, bi += sb) {
        const s = b[bi]!;
        o[oi] = a[ai]! >> (s >= 0 && s <= 31 ? s : 31);
      }
      return;
    case 'geluGrad':
      for (; oi < end; oi++, ai += sa, bi += sb) o[oi] = geluGrad(a[ai]!, b[bi]!);
      return;
    default:
      throw new UnsupportedOpError(String(op), isInt ? 'int32' : 'float32', 'cpu');
  }
}
