/**
 * Elementwise binary kernel (add, sub, mul, div, maximum, mod, cmplt) over broadcast strided inputs.
 * One monomorphic loop per op and row; values are computed in float64 and rounded once on store.
 * Semantics: hal/src/ops.ts (floored mod, NaN-propagating maximum, cmplt NaN → 0).
 */
import { type BinaryOp, type HostArray, UnsupportedOpError } from '@polyhal/hal';
import { planRows, rowMajor, type Strided } from './strided.js';

export function binaryKernel(op: BinaryOp, a: Strided, b: Strided, out: HostArray): void {
  const plan = planRows(a.shape, [a.strides, b.strides, rowMajor(a.shape)], [a.offset, b.offset, 0]);
  const { n, rows, step, starts } = plan;
  const sa = step[0]!;
  const sb = step[1]!;
  const isInt = out instanceof Int32Array;
  for (let r = 0; r < rows; r++) {
    binaryRow(op, isInt, n, a.data, starts[0]![r]!, sa, b.data, starts[1]![r]!, sb, out, starts[2]![r]!);
  }
}

function binaryRow(
  op: BinaryOp,
  isInt: boolean,
  n: number,
  a: HostArray,
  ai: number,
  sa: number,
  b: HostArray,
  bi: number,
  sb: number,
  o: HostArray,
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
    default:
      throw new UnsupportedOpError(String(op), isInt ? 'int32' : 'float32', 'cpu');
  }
}
