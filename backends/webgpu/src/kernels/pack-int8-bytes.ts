/**
 * The packing of int8 matmul operands that are stored in bytes (dispatch-int8.ts: four to a u32 word,
 * little-endian), the 1-byte counterpart of matmul-int.ts's `packInt8Wgsl`: the same output (A [Mp, Kp] row-major,
 * or B [K, N] as Bᵀ [Np, Kp], four int8 to a word along K, zero outside the operand) read from a quarter of the
 * bytes. Three forms:
 * - `'words'`: A row-major and contiguous along K with K and its offset multiples of 4 is already four to a word
 *   along K: each output word is one word of A (no repacking: a copy into the padded layout);
 * - `'bytes'` without transpose: A of any strides, each element's byte taken from its word;
 * - `'bytes'` with transpose: Bᵀ through workgroup memory as `packInt8Wgsl(true)` does it (64×64 blocks, reads
 *   along B's rows and writes along Bᵀ's rows coalesced), each element's byte taken from its word.
 *
 * Params: matmul-int.ts's (INT_MATMUL_WORDS): 0 M · 1 N · 2 K · 3 offset a · 4 offset b · 6, 7 a's strides ·
 * 8, 9 b's strides · 10 Kp/4 · 11 padded rows.
 */
import { paramsPrelude } from '../layout.js';
import { INT_MATMUL_WORDS } from './matmul-int.js';

/** How the source is read: whole words of a K-contiguous A, or single bytes of any view. */
export type BytePackMode = 'words' | 'bytes';

/** WGSL: the byte of element `e` of the byte buffer x (its low 8 bits; the sign does not matter to packing). */
const BYTE_AT = `fn byte_at(e: i32) -> u32 { let u = u32(e); return (x[u >> 2u] >> (8u * (u & 3u))) & 0xffu; }`;

/** WGSL of the pack of A (`transpose` false) or Bᵀ (true) from byte storage; `mode` 'words' for A only. */
export function packInt8FromBytesWgsl(transpose: boolean, mode: BytePackMode): string {
  if (transpose) return packTransposedWgsl();
  const word =
    mode === 'words'
      ? // element r·sr + k of A is byte k of row r's words: word w of the row is x[(off + r·sr) / 4 + w]
        `select(0u, x[u32(p(3u) + r * p(6u)) / 4u + u32(k0 / 4)], r < p(0u) && k0 < p(2u))`
      : 'packed_at(r, k0)';
  return `${paramsPrelude(INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
${BYTE_AT}
fn packed_at(r: i32, k0: i32) -> u32 {
  var word = 0u;
  for (var j = 0; j < 4; j++) {
    let k = k0 + j;
    if (r < p(0u) && k < p(2u)) { word |= byte_at(p(3u) + r * p(6u) + k * p(7u)) << (8u * u32(j)); }
  }
  return word;
}
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

/** Bᵀ from bytes: matmul-int.ts's packTransposedInt8Wgsl with byte loads. */
function packTransposedWgsl(): string {
  return `${paramsPrelude(INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
var<workgroup> tile: array<u32, ${16 * 65}>;
${BYTE_AT}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = p(1u); let K = p(2u);
  let kw = u32(p(10u));
  let blocks = u32(p(11u)) / 64u;
  let id = wg.y * nwg.x + wg.x;
  if (id >= blocks * (kw / 16u)) { return; }
  let n0 = id % blocks * 64u; let w0 = id / blocks * 16u;
  let n = i32(n0 + t % 64u);
  for (var e = 0u; e < 4u; e++) {
    let w = t / 64u + 4u * e;
    var word = 0u;
    for (var j = 0u; j < 4u; j++) {
      let k = i32((w0 + w) * 4u + j);
      if (n < N && k < K) { word |= byte_at(p(4u) + k * p(8u) + n * p(9u)) << (8u * j); }
    }
    tile[w * 65u + t % 64u] = word;
  }
  workgroupBarrier();
  for (var e = 0u; e < 4u; e++) {
    let r = t / 16u + 16u * e;
    packed[(n0 + r) * kw + w0 + t % 16u] = tile[(t % 16u) * 65u + r];
  }
}`;
}
