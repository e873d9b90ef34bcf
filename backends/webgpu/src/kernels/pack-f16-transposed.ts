/**
 * Packs a float16 operand [R, C] whose rows are its stride-1 dim (a transposed view: element (r, c) at
 * offset + r + c·s1, binary16 in 2-byte storage) into a row-major [Rp, Cp] copy, zero outside the operand, two
 * halves to a word — the pack of matmul-subgroup-matrix-f16.ts (packHalfWgsl) for the layout it reads worst: there
 * one invocation per word reads two halves s1 apart and neighbouring invocations 2·s1 apart (a sector per half);
 * here a workgroup moves a 64×64 block through workgroup memory, reading along r (neighbouring invocations
 * neighbouring halves) and writing along c (neighbouring words). A matmul's weight gradient over many rows reads
 * such an operand (gᵀ or xᵀ of [12608, 1536] in ViT-S).
 * Params: PACK_HALF_WORDS of packHalfWgsl, with param 4 (the column stride s1) and param 3 unused (1); the grid
 * [Cp / 64, Rp / 64, items] (rounded up), batch item z from offset + (z / p8)·p9 + (z % p8)·p7, its copy Rp·Cp
 * halves further.
 */
import { paramsPrelude } from '../layout.js';
import { PACK_HALF_WORDS } from './matmul-subgroup-matrix-f16.js';

/** Rows and columns of the block a workgroup moves. */
export const PACK_BLOCK = 64;

export function packHalfTransposedWgsl(): string {
  return `${paramsPrelude(PACK_HALF_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
// the block as halves, [c][r] (65 per row: neighbouring c in distinct banks on the way out)
var<workgroup> tile: array<u32, ${PACK_BLOCK * (PACK_BLOCK + 1)}>;
fn half_at(e: i32) -> u32 { return (x[u32(e) >> 1u] >> ((u32(e) & 1u) * 16u)) & 0xffffu; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) t: u32) {
  let R = p(0u); let C = p(1u); let s1 = p(4u);
  let cp = u32(p(5u)); let rp = u32(p(6u));
  let z = i32(wid.z);
  let off = p(2u) + z / p(8u) * p(9u) + z % p(8u) * p(7u);
  let r0 = wid.y * ${PACK_BLOCK}u; let c0 = wid.x * ${PACK_BLOCK}u;
  let lr = t % ${PACK_BLOCK}u;
  for (var i = 0u; i < ${PACK_BLOCK / 4}u; i++) {
    let lc = t / ${PACK_BLOCK}u + 4u * i;
    let r = i32(r0 + lr); let c = i32(c0 + lc);
    var h = 0u;
    if (r < R && c < C) { h = half_at(off + r + c * s1); }
    tile[lc * ${PACK_BLOCK + 1}u + lr] = h;
  }
  workgroupBarrier();
  let wc = t % ${PACK_BLOCK / 2}u;
  let words = cp / 2u;
  for (var i = 0u; i < ${(PACK_BLOCK * PACK_BLOCK) / 2 / 256}u; i++) {
    let lr2 = t / ${PACK_BLOCK / 2}u + ${256 / (PACK_BLOCK / 2)}u * i;
    let r = r0 + lr2; let c = c0 + 2u * wc;
    if (r < rp && c < cp) {
      let lo = tile[(2u * wc) * ${PACK_BLOCK + 1}u + lr2];
      let hi = tile[(2u * wc + 1u) * ${PACK_BLOCK + 1}u + lr2];
      packed[wid.z * words * rp + r * words + c / 2u] = lo | (hi << 16u);
    }
  }
}`;
}
