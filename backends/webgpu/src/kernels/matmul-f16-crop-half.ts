/**
 * The crop of a float16 tensor-core product (matmul-subgroup-matrix-f16.ts) straight into a float16 output: the
 * padded float32 C [items, Mp, Np] is cropped to [items, M, N] and each value rounded to binary16 with half.ts's
 * f16_bits (the conversion the float32 → float16 copies use: nearest, ties to even, the same bits), written two
 * halves to a u32 word. It replaces a crop into a float32 temporary and a narrowing copy: one pass over C, and
 * half the bytes written. One invocation per output word; a word the output region shares with elements outside
 * it (an odd first element or end) keeps those elements' halves.
 *
 * Params (CROP_HALF_WORDS i32): 0 M, 1 N, 2 Mp, 3 Np, 4 the output region's first element, 5 its elements
 * (items·M·N); item z of the region reads C from z·Mp·Np.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { f16Wgsl, type HalfConversions } from './half.js';

export const CROP_HALF_WORDS = 6;

/** WGSL of the crop into float16 with `conv`'s conversion. */
export function cropHalfProductToHalfWgsl(conv: HalfConversions): string {
  return `${paramsPrelude(CROP_HALF_WORDS)}${f16Wgsl(conv)}
@group(0) @binding(1) var<storage, read> c: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
/** binary16 bits of output element r of the region (r < its elements). */
fn cropped(r: u32) -> u32 {
  let N = u32(p(1u));
  let MN = u32(p(0u)) * N;
  let z = r / MN;
  let i = r % MN;
  return f16_bits(bitcast<u32>(c[z * u32(p(2u)) * u32(p(3u)) + (i / N) * u32(p(3u)) + i % N]));
}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let start = u32(p(4u));
  let end = start + u32(p(5u));
  let w = (start >> 1u) + idx;
  if (w * 2u >= end) { return; }
  let e = w * 2u;
  var word = 0u;
  if (e < start || e + 1u >= end) { word = out[w]; }
  if (e >= start) { word = (word & 0xffff0000u) | cropped(e - start); }
  if (e + 1u < end) { word = (word & 0xffffu) | (cropped(e + 1u - start) << 16u); }
  out[w] = word;
}`;
}
