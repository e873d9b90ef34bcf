/**
 * WGSL Adam/AdamW update, in place, for up to `slots` parameters in one dispatch (a multi-tensor step, as
 * PyTorch's `foreach` Adam and Apex's multi_tensor_apply): slot s binds param, grad, m and v at
 * bindings 4s+1..4s+4, and owns the workgroups from its first one to the next slot's, one invocation per
 * element. The arithmetic is the same for every slot and as in a one-parameter step.
 *
 * Params: 0 lr · 1 beta1 · 2 beta2 · 3 eps · 4 decay (1 − lr·wd) · 5 1/(1−β1^t) · 6 1/(1−β2^t) · 7 1 − β1 ·
 * 8 1 − β2 · 9 unused, then per slot s: 10+2s its element count · 11+2s its first workgroup (0 for slot 0).
 * 1 − β is computed on the host in float64: 1 − f32(0.999) in float32 is 1.3e-5 off, which moved a large
 * step (lr 0.5) by 3e-6.
 */
import { FLAT_ARGS, paramsPrelude } from '../layout.js';

/** Words before the per-slot ones. */
export const ADAM_FIXED_WORDS = 10;

/** Words of the uniform block of a `slots`-slot Adam kernel. */
export function adamWords(slots: number): number {
  return ADAM_FIXED_WORDS + 2 * slots;
}

export function adamWgsl(slots: number): string {
  const decl: string[] = [];
  const body: string[] = [];
  for (let s = 0; s < slots; s++) {
    decl.push(
      `@group(0) @binding(${4 * s + 1}) var<storage, read_write> param${s}: array<f32>;`,
      `@group(0) @binding(${4 * s + 2}) var<storage, read> grad${s}: array<f32>;`,
      `@group(0) @binding(${4 * s + 3}) var<storage, read_write> m${s}: array<f32>;`,
      `@group(0) @binding(${4 * s + 4}) var<storage, read_write> v${s}: array<f32>;`,
    );
  }
  // The last slot first: a workgroup belongs to the highest slot whose first workgroup it reaches.
  for (let s = slots - 1; s >= 0; s--) {
    const first = `u32(p(${ADAM_FIXED_WORDS + 1 + 2 * s}u))`;
    body.push(`  if (w >= ${first}) {
    let i = (w - ${first}) * 256u + lid.x;
    if (i < u32(p(${ADAM_FIXED_WORDS + 2 * s}u))) {
      let g = grad${s}[i];
      let mi = b1 * m${s}[i] + pf(7u) * g;
      let vi = b2 * v${s}[i] + pf(8u) * g * g;
      m${s}[i] = mi;
      v${s}[i] = vi;
      param${s}[i] = param${s}[i] * pf(4u) - (pf(0u) * (mi * pf(5u))) / (sqrt(vi * pf(6u)) + pf(3u));
    }
    return;
  }`);
  }
  return `${paramsPrelude(adamWords(slots))}
${decl.join('\n')}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  let w = wid.y * nwg.x + wid.x;
  let b1 = pf(1u); let b2 = pf(2u);
${body.join('\n')}
}`;
}
