/**
 * WGSL sum of split-K partial products: partials [batch, S, M·N] → out [batch, M·N], float32, adding
 * the S slices in order s = 0..S−1 (deterministic). vec4 when M·N is a multiple of 4.
 * Params: 0 elements (or vec4s) of out · 1 M·N (or /4) · 2 S.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export function splitKSumWgsl(vec4: boolean): string {
  const t = vec4 ? 'vec4<f32>' : 'f32';
  return `${paramsPrelude(4)}
@group(0) @binding(1) var<storage, read> part: array<${t}>;
@group(0) @binding(2) var<storage, read_write> out: array<${t}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let mn = u32(p(1u)); let S = u32(p(2u));
  let base = (idx / mn) * S * mn + idx % mn;
  var acc = part[base];
  for (var s = 1u; s < S; s++) { acc += part[base + s * mn]; }
  out[idx] = acc;
}`;
}
