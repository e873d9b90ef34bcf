/**
 * WGSL for per-tensor quantizeLinear (the optional hook quantizeKernel, hal/src/contract/hooks.ts): one invocation per
 * element computes saturate(round_half_even(x / scale) + zeroPoint) into int8 or uint8 (i32 storage), NaN → 0,
 * as the composite's div, round, add and cast kernels do one after the other (the same WGSL expressions:
 * the builtin quotient, WGSL's round, which is half to even, and the cast's NaN test on bits).
 *
 * Params: 0 n · 1 x offset · 2 x stride · 3 scale offset · 4 zero point offset (−1: none) · 5 lo · 6 hi.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const QUANTIZE_WORDS = 7;

export function quantizeWgsl(): string {
  return `${paramsPrelude(QUANTIZE_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> s: array<f32>;
@group(0) @binding(3) var<storage, read> z: array<i32>;
@group(0) @binding(4) var<storage, read_write> out: array<i32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let zo = p(4u);
  let zp = select(0.0, f32(z[max(zo, 0)]), zo >= 0);
  let v = round(x[p(1u) + i32(idx) * p(2u)] / s[p(3u)]) + zp;
  let nan = (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
  out[idx] = select(i32(clamp(v, f32(p(5u)), f32(p(6u)))), 0, nan);
}`;
}
