/**
 * WGSL where: out = cond ? x : y over strided, broadcast operands of out's shape (one invocation per
 * output element). cond is bool (i32 0/1); x, y and out are moved as u32 words, so float32 NaN payloads
 * and −0 survive and one shader serves float32, int32 and bool. Semantics: hal/src/families/logic/logic.ts.
 *
 * Params (i32 words): 0 n · 1 offset cond · 2 offset x · 3 offset y · 4.. shape · then strides of cond,
 * of x, of y.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';

/** Param words for R dimension slots. */
export const whereWords = (R: number): number => 4 + 4 * R;

/** contig: every operand is contiguous from its offset (the unravel loop is skipped); R: dimension slots. */
export function whereWgsl(contig: boolean, R: number): string {
  const index = contig
    ? 'let ic = p(1u) + i32(i); let ix = p(2u) + i32(i); let iy = p(3u) + i32(i);'
    : stridedOffsets(['ic', 'ix', 'iy'], 4, [4 + R, 4 + 2 * R, 4 + 3 * R], [1, 2, 3], R);
  return `${paramsPrelude(whereWords(R))}
@group(0) @binding(1) var<storage, read> cond: array<i32>;
@group(0) @binding(2) var<storage, read> x: array<u32>;
@group(0) @binding(3) var<storage, read> y: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${index}
  out[idx] = select(y[iy], x[ix], cond[ic] != 0);
}`;
}
