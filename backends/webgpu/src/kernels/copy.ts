/**
 * WGSL strided copy from one view into another (materialize, cast, the interior of pad), and fill.
 * float32 → int32 truncates toward zero and saturates; NaN → 0. The narrowing casts into int8, uint8
 * (i32 storage) and float16 (f32 storage), on integer bits so that no adapter's float conversions or
 * flushing decide them: from float32 truncate and saturate (NaN → 0), from int32 wrap modulo 2^8;
 * float16 rounds to nearest even (F16_ROUND_WGSL). The source is never narrow (hal narrow.ts).
 *
 * Params: 0 n · 2 offset src · 3 offset dst · 4.. shape, src strides, dst strides. Fill: 0 n · 1 value bits.
 */
import { type DType, isNarrow, storageDType } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';

/** Param words for R dimension slots. */
export const copyWords = (R: number): number => 4 + 3 * R;

/**
 * The float32 bits `u` rounded to float16, as float32 bits: 10 fraction bits kept, the 13 dropped ones
 * rounded to nearest, ties to even; below 2^-14 a multiple of 2^-24 (subnormals); ±Inf from 65520; NaN kept.
 */
export const F16_ROUND_WGSL = `
fn f16_round_bits(u: u32) -> u32 {
  let s = u & 0x80000000u;
  let a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) { return u; }
  if (a >= 0x477ff000u) { return s | 0x7f800000u; }
  if (a >= 0x38800000u) {
    let rem = a & 0x1fffu;
    var r = a - rem;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 0x2000u) != 0u)) { r = r + 0x2000u; }
    return s | r;
  }
  let e = a >> 23u;
  if (e < 102u) { return s; }
  let m = (a & 0x7fffffu) | 0x800000u;
  let shift = 126u - e;
  let q = m >> shift;
  let rem = m & ((1u << shift) - 1u);
  let half = 1u << (shift - 1u);
  var r = q;
  if (rem > half || (rem == half && (q & 1u) != 0u)) { r = q + 1u; }
  if (r == 0u) { return s; }
  // r·2^-24 (r ≤ 1024): the exponent and fraction built from r's leading bit, no float arithmetic
  let lead = firstLeadingBit(r);
  let frac = (r << (23u - lead)) & 0x7fffffu;
  return s | ((lead + 103u) << 23u) | frac;
}`;

/** Bits of an f32 NaN test that no fast-math can fold away. */
const isNanBits = (v: string): string => `((bitcast<u32>(${v}) & 0x7fffffffu) > 0x7f800000u)`;

function narrowConvert(from: DType, to: DType): string {
  if (to === 'float16') {
    return from === 'float32'
      ? 'bitcast<f32>(f16_round_bits(v))'
      : 'bitcast<f32>(f16_round_bits(bitcast<u32>(f32(v))))';
  }
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
  return `${paramsPrelude(copyWords(R))}${to === 'float16' ? F16_ROUND_WGSL : ''}
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
