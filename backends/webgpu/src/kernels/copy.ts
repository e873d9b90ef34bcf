/**
 * WGSL strided copy from one view into another (materialize, cast, the interior of pad), and fill.
 * float32 → int32 truncates toward zero and saturates; NaN → 0. The narrowing casts into int8 and uint8
 * (i32 storage), on integer bits so that no adapter's float conversions or flushing decide them: from
 * float32 truncate and saturate (NaN → 0), from int32 wrap modulo 2^8. The source is never narrow (hal
 * narrow.ts). float16 (2-byte storage) is copied and cast by kernels/half.ts.
 *
 * Params: 0 n · 2 offset src · 3 offset dst · 4.. shape, src strides, dst strides. Fill: 0 n · 1 value bits.
 */
import { type DType, isNarrow } from '@polyhal/hal';
import { storageDType } from '@polyhal/hal/internal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';

/** Param words for R dimension slots. */
export const copyWords = (R: number): number => 4 + 3 * R;

/** Bits of an f32 NaN test that no fast-math can fold away. */
const isNanBits = (v: string): string => `((bitcast<u32>(${v}) & 0x7fffffffu) > 0x7f800000u)`;

function narrowConvert(from: DType, to: DType): string {
  const [lo, hi] = to === 'int8' ? [-128, 127] : [0, 255];
  if (from === 'float32') {
    const x = 'bitcast<f32>(v)';
    return `select(i32(clamp(trunc(${x}), ${lo}.0, ${hi}.0)), 0, ${isNanBits(x)})`;
  }
  return to === 'int8' ? '((v << 24u) >> 24u)' : '(v & 255)';
}

/** WGSL converting `v` (u32 bits for a narrowing cast from float32, else of the source's type) into `to`. */
export function convert(from: DType, to: DType): string {
  if (isNarrow(to)) return narrowConvert(from, to);
  if (from === to) return 'v';
  if (to === 'float32') return 'f32(v)';
  return (
    'select(select(select(i32(v), -2147483647 - 1, v <= -2147483648.0), 2147483647, v >= ' +
    '2147483648.0), 0, is_nan(v))'
  );
}

export function copyWgsl(from: DType, to: DType, R: number): string {
  // a narrowing cast from float32 reads the source's bits (u32), so that no adapter flushes or rounds them
  const ts = from === 'float32' ? (isNarrow(to) ? 'u32' : 'f32') : 'i32';
  const td = storageDType(to) === 'float32' ? 'f32' : 'i32';
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
