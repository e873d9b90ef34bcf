/**
 * Contiguous casts between float32 and float16 in 2-byte storage (kernels/half.ts), 8 elements per invocation:
 * float32 → float16 reads the source's bits as two vec4<u32> and writes one vec4<u32> of packed halves (element
 * 2k in the low half of word k); float16 → float32 reads one vec4<u32> of halves and writes two vec4<f32>. The
 * conversions are half.ts's f16_bits and f16_value for the same HalfConversions, element by element, so the
 * results are those of copyHalfWgsl's 'words' and 'wide' copies bit for bit (NaN payloads, ±Inf from 65520,
 * subnormals, ties to even) — on every adapter, shader-f16 or not.
 *
 * Preconditions (dispatch-half.ts checks them): a contiguous source and a row-major destination region, the
 * element count and both element offsets multiples of 8, so that every vec4 lies inside its buffer and no
 * destination word is shared with elements outside the region.
 *
 * Params (4 i32): [n, 0, source offset, destination offset] in elements; one invocation per 8 elements.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { f16Wgsl, type HalfConversions } from './half.js';

/** Which way the cast goes: 'narrow' float32 → float16, 'widen' float16 → float32. */
export type HalfCastDirection = 'narrow' | 'widen';

/** The number of params the kernel reads. */
export const HALF_CAST_VEC_WORDS = 4;

/** Elements per invocation. */
export const HALF_CAST_VEC_WIDTH = 8;

/** WGSL of the 8-wide contiguous cast in `direction`, converting with `conv`'s f16_bits / f16_value. */
export function halfCastVecWgsl(direction: HalfCastDirection, conv: HalfConversions): string {
  const head = `${paramsPrelude(HALF_CAST_VEC_WORDS)}${f16Wgsl(conv)}`;
  const guard = `${FLAT_INDEX}
  if (idx * 8u >= u32(p(0u))) { return; }`;
  if (direction === 'narrow') {
    return `${head}
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${guard}
  let s = (u32(p(2u)) >> 2u) + 2u * idx;
  let lo = src[s];
  let hi = src[s + 1u];
  dst[(u32(p(3u)) >> 3u) + idx] = vec4<u32>(
    f16_bits(lo.x) | (f16_bits(lo.y) << 16u),
    f16_bits(lo.z) | (f16_bits(lo.w) << 16u),
    f16_bits(hi.x) | (f16_bits(hi.y) << 16u),
    f16_bits(hi.z) | (f16_bits(hi.w) << 16u));
}`;
  }
  return `${head}
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${guard}
  let w = src[(u32(p(2u)) >> 3u) + idx];
  let d = (u32(p(3u)) >> 2u) + 2u * idx;
  dst[d] = vec4<f32>(
    f16_value(w.x & 0xffffu), f16_value(w.x >> 16u), f16_value(w.y & 0xffffu), f16_value(w.y >> 16u));
  dst[d + 1u] = vec4<f32>(
    f16_value(w.z & 0xffffu), f16_value(w.z >> 16u), f16_value(w.w & 0xffffu), f16_value(w.w >> 16u));
}`;
}
