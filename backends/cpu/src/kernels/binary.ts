/**
 * Elementwise binary kernel (the binary table: arithmetic, comparisons into bool 0/1, fmod, logical and bitwise
 * ops on the int32 storage) over broadcast strided inputs.
 * One monomorphic loop per op and row; values are computed in float64 and rounded once on store.
 * Semantics: the op table (floored mod, NaN-propagating maximum and minimum, cmplt NaN → 0, IEEE pow).
 */
import { type BinaryOp, type StorageArray, UnsupportedOpError } from '@polyhal/hal';
import { planRows, rowMajor, type Strided } from './strided.js';

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
    default:
      throw new UnsupportedOpError(String(op), isInt ? 'int32' : 'float32', 'cpu');
  }
}
