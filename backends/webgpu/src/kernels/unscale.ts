/**
 * WGSL unscale and overflow check (nonFiniteCheckAndUnscale, after PyTorch's
 * `_amp_foreach_non_finite_check_and_unscale_`), in place, for up to `slots` gradients in one dispatch (a
 * multi-tensor kernel, as kernels/adam.ts): binding 1 is the flag (foundInf, one float32 word, written as an
 * atomic u32), slot s binds its gradient at binding s + 2 and owns the workgroups from its first one to the next
 * slot's, one invocation per element: g ← g·invScale, and the flag ← 1.0 (atomicStore of its bits) where g or the
 * product is Inf or NaN. The test reads the exponent bits, not a comparison a compiler may assume away.
 *
 * Params: 0 invScale (f32 bits) · 1 unused, then per slot s: 2+2s its element count · 3+2s its first workgroup.
 */
import { FLAT_ARGS, paramsPrelude } from '../layout.js';

/** Words before the per-slot ones. */
export const UNSCALE_FIXED_WORDS = 2;

/** Words of the uniform block of a `slots`-slot kernel. */
export function unscaleWords(slots: number): number {
  return UNSCALE_FIXED_WORDS + 2 * slots;
}

export function unscaleWgsl(slots: number): string {
  const decl = ['@group(0) @binding(1) var<storage, read_write> found: array<atomic<u32>>;'];
  const body: string[] = [];
  for (let s = 0; s < slots; s++) decl.push(`@group(0) @binding(${s + 2}) var<storage, read_write> g${s}: array<f32>;`);
  // The last slot first: a workgroup belongs to the highest slot whose first workgroup it reaches.
  for (let s = slots - 1; s >= 0; s--) {
    const first = `u32(p(${UNSCALE_FIXED_WORDS + 1 + 2 * s}u))`;
    body.push(`  if (w >= ${first}) {
    let i = (w - ${first}) * 256u + lid.x;
    if (i < u32(p(${UNSCALE_FIXED_WORDS + 2 * s}u))) {
      let x = g${s}[i];
      let y = x * inv;
      g${s}[i] = y;
      if (non_finite(x) || non_finite(y)) { atomicStore(&found[0], 0x3f800000u); }
    }
    return;
  }`);
  }
  return `${paramsPrelude(unscaleWords(slots))}
${decl.join('\n')}
fn non_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u; }
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  let w = wid.y * nwg.x + wid.x;
  let inv = pf(0u);
${body.join('\n')}
}`;
}
