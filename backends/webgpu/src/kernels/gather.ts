/**
 * WGSL gather on the three-dim operands of hal/src/families/indexing/indexing.ts: x [O, D, I], indices [K],
 * out [O, K, I].
 * An index i reads i + D when negative; outside [0, D) it writes the fill bits (NaN float32, INT32_MIN
 * int32, 1 bool). Scatter: kernels/scatter.ts.
 *
 * params: 0 n · 1 K · 2 I · 3 D · 4 x offset · 5..7 x strides · 8 indices offset · 9 stride · 10 fill bits.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const GATHER_WORDS = 11;

const POSITION = `fn position(i: i32, dim: i32) -> i32 {
  let j = select(i, i + dim, i < 0);
  return select(-1, j, j >= 0 && j < dim);
}`;

export function gatherWgsl(): string {
  return `${paramsPrelude(GATHER_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> indices: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
${POSITION}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let n = p(2u);
  let t = i32(idx) / n;
  let c = i32(idx) % n;
  let k = t % p(1u);
  let a = t / p(1u);
  let j = position(indices[p(8u) + k * p(9u)], p(3u));
  if (j < 0) { out[idx] = bitcast<u32>(p(10u)); return; }
  out[idx] = x[p(4u) + a * p(5u) + j * p(6u) + c * p(7u)];
}`;
}
