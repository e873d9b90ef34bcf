/**
 * WGSL scatter on the three-dim operands of hal/src/families/indexing/indexing.ts: the target and out
 * [O, D, I], indices [K], updates [O, K, I]. An index i reads i + D when negative; an update whose index lies outside
 * [0, D) is dropped. Deterministic without float atomics (which WGSL lacks), in three stages over the
 * indices, then one pass over the output:
 * 1. `init`: head[j] = −1 for each of the D positions.
 * 2. `link` (one invocation per index k): replace keeps the last update, head[j] = atomicMax(head[j], k);
 *    add and mul chain the updates of each position, next[k] = atomicExchange(head[j], k) (any order).
 * 3. `sort` (add and mul; one invocation per position): the chain re-linked in ascending k (an insertion
 *    sort, linear when the exchanges came in ascending order, as they mostly do).
 * 4. `apply` (one invocation per output element): the target's value, replaced by update head[j], or
 *    with the chain's updates added or multiplied in index order.
 * Work O(K + D + O·D·I + O·K·I), where one loop over K per output element was O(O·D·I·K).
 *
 * params: 0 n · 1 K · 2 I · 3 D · 4 target offset · 5..7 strides · 8 indices offset · 9 stride
 * · 10 updates offset · 11..13 strides.
 */
import type { DType, ScatterReduction } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const SCATTER_WORDS = 14;
export type ScatterStage = 'init' | 'link' | 'sort' | 'apply';

const POSITION = `fn position(i: i32, dim: i32) -> i32 {
  let j = select(i, i + dim, i < 0);
  return select(-1, j, j >= 0 && j < dim);
}`;

function initWgsl(): string {
  return `${paramsPrelude(SCATTER_WORDS)}
@group(0) @binding(1) var<storage, read_write> head: array<i32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx < u32(p(3u))) { head[idx] = -1; }
}`;
}

function linkWgsl(reduction: ScatterReduction): string {
  const link = reduction === 'none' ? 'atomicMax(&head[j], k);' : 'next[idx] = atomicExchange(&head[j], k);';
  return `${paramsPrelude(SCATTER_WORDS)}
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> head: array<atomic<i32>>;
${reduction === 'none' ? '' : '@group(0) @binding(3) var<storage, read_write> next: array<i32>;'}
${POSITION}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(1u))) { return; }
  let k = i32(idx);
  let j = position(indices[p(8u) + k * p(9u)], p(3u));
  if (j < 0) { return; }
  ${link}
}`;
}

function sortWgsl(): string {
  return `${paramsPrelude(SCATTER_WORDS)}
@group(0) @binding(1) var<storage, read_write> head: array<i32>;
@group(0) @binding(2) var<storage, read_write> next: array<i32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(3u))) { return; }
  var sorted = -1;
  var k = head[idx];
  while (k >= 0) {
    let after = next[k];
    if (sorted < 0 || k < sorted) {
      next[k] = sorted;
      sorted = k;
    } else {
      var at = sorted;
      while (next[at] >= 0 && next[at] < k) { at = next[at]; }
      next[k] = next[at];
      next[at] = k;
    }
    k = after;
  }
  head[idx] = sorted;
}`;
}

function applyWgsl(dtype: DType, reduction: ScatterReduction): string {
  const t = dtype === 'float32' ? 'f32' : 'i32';
  const combine =
    reduction === 'none'
      ? 'if (k >= 0) { acc = updates[u0 + k * p(12u)]; }'
      : `while (k >= 0) { acc ${reduction === 'add' ? '+=' : '*='} updates[u0 + k * p(12u)]; k = next[k]; }`;
  // replace reads head only; add and mul walk the chain in next
  const bindings =
    reduction === 'none'
      ? `@group(0) @binding(4) var<storage, read_write> out: array<${t}>;`
      : `@group(0) @binding(4) var<storage, read> next: array<i32>;
@group(0) @binding(5) var<storage, read_write> out: array<${t}>;`;
  return `${paramsPrelude(SCATTER_WORDS)}
@group(0) @binding(1) var<storage, read> tgt: array<${t}>;
@group(0) @binding(2) var<storage, read> updates: array<${t}>;
@group(0) @binding(3) var<storage, read> head: array<i32>;
${bindings}
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
  var k = head[j];
  ${combine}
  out[idx] = acc;
}`;
}

/** The WGSL of one scatter stage (sort and the chain are used by add and mul only). */
export function scatterWgsl(stage: ScatterStage, dtype: DType, reduction: ScatterReduction): string {
  if (stage === 'init') return initWgsl();
  if (stage === 'link') return linkWgsl(reduction);
  if (stage === 'sort') return sortWgsl();
  return applyWgsl(dtype, reduction);
}
