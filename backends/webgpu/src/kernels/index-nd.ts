/**
 * WGSL kernels for oneHot and for the flat positions of gatherND/scatterND index tuples (the optional
 * hooks oneHotKernel and tuplePositionsKernel, hal/src/contract/hooks.ts). One invocation per output element.
 *
 * oneHot params: 0 n (N·depth) · 1 depth · 2 indices offset · 3 stride.
 * positions params: 0 L · 1 q · 2 indices offset · 3 row stride · 4 component stride · 5 rows per batch ·
 * 6 ΠQ · 7 total (batch·ΠQ) · 8..8+q dims Q · 8+q..8+2q row-major strides of Q.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const ONE_HOT_WORDS = 4;
export const positionsWords = (q: number): number => 8 + 2 * q;

/** out [N, depth] float32: 1.0 where column = index (+ depth when negative); out-of-range rows stay 0. */
export function oneHotWgsl(): string {
  return `${paramsPrelude(ONE_HOT_WORDS)}
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let depth = p(1u);
  let r = i32(idx) / depth;
  let i = indices[p(2u) + r * p(3u)];
  let j = select(i, i + depth, i < 0);
  out[idx] = select(0.0, 1.0, j == i32(idx) - r * depth);
}`;
}

/** out [L] int32: the batch's base plus Σ component·stride, or the total when a component is out of range. */
export function positionsWgsl(q: number): string {
  return `${paramsPrelude(positionsWords(q))}
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<i32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let l = i32(idx);
  var pos = (l / p(5u)) * p(6u);
  let at = p(2u) + l * p(3u);
  for (var m = 0u; m < ${q}u; m++) {
    let c = indices[at + i32(m) * p(4u)];
    let n = p(8u + m);
    if (c < -n || c >= n) { pos = p(7u); break; }
    pos += select(c, c + n, c < 0) * p(${8 + q}u + m);
  }
  out[idx] = pos;
}`;
}
