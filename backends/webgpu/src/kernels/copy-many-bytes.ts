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
import { copyManyKernel } from './copy-many.js';

export function copyManyBytesWgsl(slots: number, R: number): string {
  const put = `/** Byte e of dst set to v (< 256), the other bytes of its word untouched. */
fn put(e: u32, v: u32) {
  let shift = 8u * (e & 3u);
  atomicAnd(&dst[e >> 2u], ~(0xffu << shift));
  atomicOr(&dst[e >> 2u], v << shift);
}
`;
  return copyManyKernel(
    slots,
    R,
    'array<atomic<u32>>',
    (s) => `let b = vec2<u32>(o); put(b.y, (src${s}[b.x >> 2u] >> (8u * (b.x & 3u))) & 0xffu);`,
    put,
  );
}
