/**
 * WGSL strided copy from one view into another (materialize, cast, the interior of pad), and fill.
 * float32 → int32 truncates toward zero and saturates; NaN → 0.
 *
 * Params: 0 n · 2 offset src · 3 offset dst · 4.. shape, src strides, dst strides. Fill: 0 n · 1 value bits.
 */
import type { DType } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';

/** Param words for R dimension slots. */
export const copyWords = (R: number): number => 4 + 3 * R;

function convert(from: DType, to: DType): string {
  if (from === to) return 'v';
  if (to === 'float32') return 'f32(v)';
  return (
    'select(select(select(i32(v), -2147483647 - 1, v <= -2147483648.0), 2147483647, v >= ' +
    '2147483648.0), 0, is_nan(v))'
  );
}

export function copyWgsl(from: DType, to: DType, R: number): string {
  const ts = from === 'float32' ? 'f32' : 'i32';
  const td = to === 'float32' ? 'f32' : 'i32';
  return `${paramsPrelude(copyWords(R))}
@group(0) @binding(1) var<storage, read> src: array<${ts}>;
@group(0) @binding(2) var<storage, read_write> dst: array<${td}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${stridedOffsets(['is', 'id'], 4, [4 + R, 4 + 2 * R], [2, 3], R)}
  let v = src[is];
  dst[id] = ${convert(from, to)};
}`;
}

export function fillWgsl(dtype: DType): string {
  const t = dtype === 'float32' ? 'f32' : 'i32';
  return `${paramsPrelude(4)}
@group(0) @binding(1) var<storage, read_write> out: array<${t}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  out[idx] = ${dtype === 'float32' ? 'pf(1u)' : 'p(1u)'};
}`;
}
