/**
 * WGSL strided copy of up to `slots` views into one buffer in one dispatch (the copyIntoManyKernel hook: concat
 * and stack), a multi-tensor kernel as kernels/unscale.ts: slot s binds its source at binding s + 2 (the
 * destination is binding 1) and owns the workgroups from its first one to the next slot's, one invocation per
 * element of its view, each element read and written through the slot's own coalesced shape, source strides and
 * destination strides (the index math of kernels/copy.ts). Values are moved as u32 bits, so one kernel serves
 * every 32-bit storage dtype (float32, int32, bool, and int8/uint8 in int32 storage) and no adapter flushes or
 * quiets a float on the way.
 *
 * The grid is the sum over slots of ceil(n_s / 256) workgroups, each slot starting on a workgroup of its own:
 * every workgroup serves one view (the branch is uniform) and the work is the elements copied plus less than one
 * workgroup per slot, where a grid of the largest view times the count would idle on unequal views.
 *
 * Params, per slot s from word s·(4 + 3R): its element count · its first workgroup · source offset · destination
 * offset · shape (R) · source strides (R) · destination strides (R), right-aligned as kernel-params.ts packs them.
 */
import { FLAT_ARGS, paramsPrelude } from '../layout.js';

/** Words of one slot with R dimension slots. */
export const copyManySlotWords = (R: number): number => 4 + 3 * R;

/** Words of the uniform block of a `slots`-slot kernel with R dimension slots. */
export function copyManyWords(slots: number, R: number): number {
  return slots * copyManySlotWords(R);
}

/** The offsets of source and destination for element `i` of the slot whose words start at `base` (a u32). */
export function slotOffsets(R: number): string {
  return `fn offsets(base: u32, i: u32) -> vec2<i32> {
  var is = p(base + 2u);
  var id = p(base + 3u);
  var rem = i32(i);
  for (var d = ${R - 1}u; ; d--) {
    let dim = p(base + 4u + d);
    if (dim > 1) {
      let c = rem % dim;
      rem = rem / dim;
      is += c * p(base + ${4 + R}u + d);
      id += c * p(base + ${4 + 2 * R}u + d);
    }
    if (d == 0u) { break; }
  }
  return vec2<i32>(is, id);
}`;
}

/**
 * The one-dispatch kernel over `slots` views of rank `R`: `dst` declared as `dstType`, `helpers` WGSL placed before
 * main, and `store(s)` the statement that writes element `o.y` of dst from element `o.x` of source `s`
 * (`o`: the offsets of the invocation's element, vec2<i32>).
 */
export function copyManyKernel(
  slots: number,
  R: number,
  dstType: string,
  store: (s: number) => string,
  helpers = '',
): string {
  const decl = [`@group(0) @binding(1) var<storage, read_write> dst: ${dstType};`];
  const body: string[] = [];
  for (let s = 0; s < slots; s++) decl.push(`@group(0) @binding(${s + 2}) var<storage, read> src${s}: array<u32>;`);
  // The last slot first: a workgroup belongs to the highest slot whose first workgroup it reaches.
  for (let s = slots - 1; s >= 0; s--) {
    const base = s * copyManySlotWords(R);
    body.push(`  if (w >= u32(p(${base + 1}u))) {
    let i = (w - u32(p(${base + 1}u))) * 256u + lid.x;
    if (i < u32(p(${base}u))) {
      let o = offsets(${base}u, i);
      ${store(s)}
    }
    return;
  }`);
  }
  return `${paramsPrelude(copyManyWords(slots, R))}
${decl.join('\n')}
${slotOffsets(R)}
${helpers}@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  let w = wid.y * nwg.x + wid.x;
${body.join('\n')}
}`;
}

export function copyManyWgsl(slots: number, R: number): string {
  return copyManyKernel(slots, R, 'array<u32>', (s) => `dst[o.y] = src${s}[o.x];`);
}
