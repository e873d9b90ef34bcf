/**
 * where kernel: out[i] = cond[i] ? x[i] : y[i] over broadcast strided operands (cond is bool, stored as
 * int32 0/1), one row at a time; values are copied as stored (float32 NaN payloads and −0 survive, as
 * a Float32Array element assignment keeps them).
 */
import type { StorageArray } from '@polyhal/hal/internal';
import { planRows, rowMajor, type Strided } from './strided.js';

export function whereKernel(cond: Strided, x: Strided, y: Strided, out: StorageArray): void {
  const plan = planRows(
    cond.shape,
    [cond.strides, x.strides, y.strides, rowMajor(cond.shape)],
    [cond.offset, x.offset, y.offset, 0],
  );
  const { n, rows, step, starts } = plan;
  const [sc, sx, sy] = step as [number, number, number];
  const c = cond.data;
  const xd = x.data;
  const yd = y.data;
  for (let r = 0; r < rows; r++) {
    let ci = starts[0]![r]!;
    let xi = starts[1]![r]!;
    let yi = starts[2]![r]!;
    let oi = starts[3]![r]!;
    const end = oi + n;
    for (; oi < end; oi++, ci += sc, xi += sx, yi += sy) out[oi] = c[ci] !== 0 ? xd[xi]! : yd[yi]!;
  }
}
