/**
 * The packing of int8 matmul operands that are stored in bytes (dispatch-int8.ts: four to a u32 word,
 * little-endian), the 1-byte counterpart of matmul-int.ts's `packInt8Wgsl`: the same output (A [Mp, Kp] row-major,
 * or B [K, N] as Bᵀ [Np, Kp], four int8 to a word along K, zero outside the operand) read from a quarter of the
 * bytes. Two forms:
 * - `'words'`: A row-major and contiguous along K with K and its offset multiples of 4 is already four to a word
 *   along K: each output word is one word of A (no repacking: a copy into the padded layout);
 * - `'bytes'`: A of any strides, or Bᵀ through workgroup memory: matmul-int.ts's `packInt8Wgsl` reading its
 *   source as bytes (each element's byte taken from its word).
 *
 * Params: matmul-int.ts's (INT_MATMUL_WORDS): 0 M · 1 N · 2 K · 3 offset a · 4 offset b · 6, 7 a's strides ·
 * 8, 9 b's strides · 10 Kp/4 · 11 padded rows.
 */
import { paramsPrelude } from '../layout.js';
import { INT_MATMUL_WORDS, packInt8Wgsl } from './matmul-int.js';

/** How the source is read: whole words of a K-contiguous A, or single bytes of any view. */
export type BytePackMode = 'words' | 'bytes';

/** WGSL of the pack of A (`transpose` false) or Bᵀ (true) from byte storage; `mode` 'words' for A only. */
export function packInt8FromBytesWgsl(transpose: boolean, mode: BytePackMode): string {
  if (transpose || mode === 'bytes') return packInt8Wgsl(transpose, 'bytes');
  // element r·sr + k of A is byte k of row r's words: word w of the row is x[(off + r·sr) / 4 + w]
  const word = `select(0u, x[u32(p(3u) + r * p(6u)) / 4u + u32(k0 / 4)], r < p(0u) && k0 < p(2u))`;
  return `${paramsPrelude(INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let w = (wid.y * nwg.x + wid.x) * 256u + lid.x;
  let kw = u32(p(10u));
  if (w >= kw * u32(p(11u))) { return; }
  let r = i32(w / kw); let k0 = i32(w % kw) * 4;
  packed[w] = ${word};
}`;
}
