/**
 * WGSL sum of split-K partial products: partials [batch, S, M·N] → out [batch, M·N], float32, adding
 * the S slices in order s = 0..S−1 (deterministic), then, with `bias`, the bias element of each output (a matmul
 * with a bias whose product is split: the bias after the whole sum, as the unsplit kernels add it). vec4 when M·N
 * is a multiple of 4 (a vec4 may span rows: each lane's bias element is indexed on its own).
 * Params: 0 elements (or vec4s) of out · 1 M·N (or /4) · 2 S · 3 N; with `bias`, 4 the bias view's offset and
 * 5, 6 its strides along M and N (its batch strides are 0), bound at 3.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

/** Param words of the sum (with `bias`: its view's offset and strides). */
export const splitKSumWords = (bias: boolean): number => (bias ? 7 : 4);

export function splitKSumWgsl(vec4: boolean, bias = false): string {
  const t = vec4 ? 'vec4<f32>' : 'f32';
  const biasAdd = !bias
    ? ''
    : vec4
      ? 'for (var e = 0u; e < 4u; e++) { acc[e] += biasAt((idx % mn) * 4u + e); }'
      : 'acc += biasAt(idx % mn);';
  return `${paramsPrelude(splitKSumWords(bias))}
@group(0) @binding(1) var<storage, read> part: array<${t}>;
@group(0) @binding(2) var<storage, read_write> out: array<${t}>;
${
  bias
    ? `@group(0) @binding(3) var<storage, read> bias: array<f32>;
/** The bias element of output element j (row j / N, column j % N) of a batch item. */
fn biasAt(j: u32) -> f32 {
  let N = u32(p(3u));
  return bias[u32(p(4u) + i32(j / N) * p(5u) + i32(j % N) * p(6u))];
}`
    : ''
}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let mn = u32(p(1u)); let S = u32(p(2u));
  let base = (idx / mn) * S * mn + idx % mn;
  var acc = part[base];
  for (var s = 1u; s < S; s++) { acc += part[base + s * mn]; }
  ${biasAdd}
  out[idx] = acc;
}`;
}
