/**
 * Philox4x32-10 uniforms in one dispatch (hal/src/core/philox.ts): invocation j computes block (b0, b1) + j
 * and writes its four words' uniforms (word q to out[4j + q − skip] where that lies in [0, n)). WGSL
 * has a 32-bit u32 multiply but no 64-bit product: the high word comes from 16-bit halves.
 * Params: n, key (k0, k1), block (b0, b1), skip — u32 bits in i32 words.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const PHILOX_WORDS = 6;

export function philoxWgsl(): string {
  return `${paramsPrelude(PHILOX_WORDS)}
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
fn pu(i: u32) -> u32 { return bitcast<u32>(p(i)); }
// (high, low) words of the 64-bit product a·b.
fn mulhilo(a: u32, b: u32) -> vec2u {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let lh = al * bh;
  let hl = ah * bl;
  let mid = ((al * bl) >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return vec2u(ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u), a * b);
}
fn put(pos: u32, skip: u32, n: u32, bits: u32) {
  if (pos >= skip && pos - skip < n) { out[pos - skip] = f32(bits >> 8u) * 5.9604644775390625e-8; }
}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let n = pu(0u);
  let skip = pu(5u);
  if (idx >= (n + skip + 3u) / 4u) { return; }
  var c0 = pu(3u) + idx;
  var c1 = pu(4u) + select(0u, 1u, c0 < pu(3u));
  var c2 = 0u;
  var c3 = 0u;
  var k0 = pu(1u);
  var k1 = pu(2u);
  for (var r = 0u; r < 10u; r++) {
    let a = mulhilo(0xd2511f53u, c0);
    let b = mulhilo(0xcd9e8d57u, c2);
    c0 = b.x ^ c1 ^ k0;
    c1 = b.y;
    c2 = a.x ^ c3 ^ k1;
    c3 = a.y;
    k0 += 0x9e3779b9u;
    k1 += 0xbb67ae85u;
  }
  let t = idx * 4u;
  put(t, skip, n, c0);
  put(t + 1u, skip, n, c1);
  put(t + 2u, skip, n, c2);
  put(t + 3u, skip, n, c3);
}`;
}
