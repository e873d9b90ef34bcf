/**
 * Copy kernels: materialize a strided view into another strided view (contiguous output; copyIntoKernel: pad,
 * concat, tile, trilu),
 * with dtype conversion when the arrays differ (float32 → int32 truncates toward zero and saturates;
 * NaN → 0), and the narrowing casts into int8, uint8 and float16 storage (`narrowCast`: saturate or wrap,
 * round to nearest even).
 */
import type { NarrowDType } from '@polyhal/hal';
import { narrowCast, type StorageArray } from '@polyhal/hal/internal';
import { planRows, rowMajor, type Strided } from './strided.js';

const I32_MAX = 2147483647;
const I32_MIN = -2147483648;

/** Copies `src` into `dst` (both viewing the same shape). */
export function stridedCopy(src: Strided, dst: Strided): void {
  const { n, rows, step, starts } = planRows(src.shape, [src.strides, dst.strides], [src.offset, dst.offset]);
  const s = src.data;
  const d = dst.data;
  const ss = step[0]!;
  const ds = step[1]!;
  const toInt = d instanceof Int32Array && s instanceof Float32Array;
  for (let r = 0; r < rows; r++) {
    let si = starts[0]![r]!;
    let di = starts[1]![r]!;
    if (toInt) {
      for (let i = 0; i < n; i++, si += ss, di += ds) {
        const v = s[si]!;
        d[di] = v !== v ? 0 : v >= I32_MAX ? I32_MAX : v <= I32_MIN ? I32_MIN : Math.trunc(v);
      }
    } else if (ss === 1 && ds === 1 && s.constructor === d.constructor) {
      d.set(s.subarray(si, si + n), di);
    } else {
      for (let i = 0; i < n; i++, si += ss, di += ds) d[di] = s[si]!;
    }
  }
}

/** Materializes `src` into the contiguous `out`, narrowed to `narrow` when given (out is its storage). */
export function copyKernel(src: Strided, out: StorageArray, narrow?: NarrowDType): void {
  if (!narrow) {
    stridedCopy(src, { data: out, shape: src.shape, strides: rowMajor(src.shape), offset: 0 });
    return;
  }
  const f = narrowCast(narrow, src.data instanceof Float32Array);
  const { n, rows, step, starts } = planRows(src.shape, [src.strides], [src.offset]);
  const s = src.data;
  const ss = step[0]!;
  let di = 0;
  for (let r = 0; r < rows; r++) {
    let si = starts[0]![r]!;
    for (let i = 0; i < n; i++, si += ss) out[di++] = f(s[si]!);
  }
}
