/**
 * copy-many.ts's one-dispatch concat and stack for int8 and uint8 in 1-byte storage (dispatch-int8.ts): the same
 * slots, workgroup ranges and index math (one invocation per element of each view), each element's byte read from
 * its source word and written into its destination word with an atomicAnd that clears its byte and an atomicOr that
 * sets it. The views write distinct bytes, but neighbouring views share the words at their ends (a view of 5 bytes
 * from byte 3): the two atomics change only the element's own byte, so invocations writing other bytes of the same
 * word, of the same view or another, never undo each other, and bytes of `out` outside every view keep their value.
 *
 * Params: copy-many.ts's (per slot: count · first workgroup · source offset · destination offset · shape, source
 * strides, destination strides), offsets and strides counted in elements, that is in bytes.
 */
import { FLAT_ARGS, paramsPrelude } from '../layout.js';
import { copyManySlotWords, copyManyWords, slotOffsets } from './copy-many.js';

export function copyManyBytesWgsl(slots: number, R: number): string {
  const decl = ['@group(0) @binding(1) var<storage, read_write> dst: array<atomic<u32>>;'];
  const body: string[] = [];
  for (let s = 0; s < slots; s++) decl.push(`@group(0) @binding(${s + 2}) var<storage, read> src${s}: array<u32>;`);
  // The last slot first: a workgroup belongs to the highest slot whose first workgroup it reaches.
  for (let s = slots - 1; s >= 0; s--) {
    const base = s * copyManySlotWords(R);
    body.push(`  if (w >= u32(p(${base + 1}u))) {
    let i = (w - u32(p(${base + 1}u))) * 256u + lid.x;
    if (i < u32(p(${base}u))) {
      let o = vec2<u32>(offsets(${base}u, i));
      put(o.y, (src${s}[o.x >> 2u] >> (8u * (o.x & 3u))) & 0xffu);
    }
    return;
  }`);
  }
  return `${paramsPrelude(copyManyWords(slots, R))}
${decl.join('\n')}
${slotOffsets(R)}
/** Byte e of dst set to v (< 256), the other bytes of its word untouched. */
fn put(e: u32, v: u32) {
  let shift = 8u * (e & 3u);
  atomicAnd(&dst[e >> 2u], ~(0xffu << shift));
  atomicOr(&dst[e >> 2u], v << shift);
}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  let w = wid.y * nwg.x + wid.x;
${body.join('\n')}
}`;
}
