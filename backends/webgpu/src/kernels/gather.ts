/**
 * WGSL index kernels on the three-dim operands of hal/src/indexing.ts: x and the target [O, D, I],
 * indices [K], updates and gather's output [O, K, I]. An index i reads i + D when negative; outside
 * [0, D) gather writes the fill bits (NaN float32, INT32_MIN int32, 1 bool) and scatter skips the update.
 * scatter runs one invocation per output element, which combines its updates in index order (k = 0,
 * 1, ...: adds or multiplies them; replace takes the last, scanning from k = K − 1 down to the first
 * match): deterministic without float atomics, which WGSL lacks.
 *
 * gather params: 0 n · 1 K · 2 I · 3 D · 4 x offset · 5..7 x strides · 8 indices offset · 9 stride
 * · 10 fill bits.
 * scatter params: 0 n · 1 K · 2 I · 3 D · 4 target offset · 5..7 strides · 8 indices offset · 9 stride
 * · 10 updates offset · 11..13 strides.
 */
import type { DType, ScatterReduction } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const GATHER_WORDS = 11;
export const SCATTER_WORDS = 14;

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

/** The loop over k of one output element: replace (the last match wins), add or multiply in index order. */
function scatterLoop(reduction: ScatterReduction): string {
  const hit = 'position(indices[p(8u) + k * p(9u)], dim) == j';
  if (reduction === 'none')
    return `for (var k = p(1u) - 1; k >= 0; k--) {
    if (${hit}) { acc = updates[u0 + k * p(12u)]; break; }
  }`;
  const op = reduction === 'add' ? '+=' : '*=';
  return `for (var k = 0; k < p(1u); k++) {
    if (${hit}) { acc ${op} updates[u0 + k * p(12u)]; }
  }`;
}

export function scatterWgsl(dtype: DType, reduction: ScatterReduction): string {
  const t = dtype === 'float32' ? 'f32' : 'i32';
  return `${paramsPrelude(SCATTER_WORDS)}
@group(0) @binding(1) var<storage, read> tgt: array<${t}>;
@group(0) @binding(2) var<storage, read> indices: array<i32>;
@group(0) @binding(3) var<storage, read> updates: array<${t}>;
@group(0) @binding(4) var<storage, read_write> out: array<${t}>;
${POSITION}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let n = p(2u);
  let dim = p(3u);
  let t = i32(idx) / n;
  let c = i32(idx) % n;
  let j = t % dim;
  let a = t / dim;
  var acc = tgt[p(4u) + a * p(5u) + j * p(6u) + c * p(7u)];
  let u0 = p(10u) + a * p(11u) + c * p(13u);
  ${scatterLoop(reduction)}
  out[idx] = acc;
}`;
}
