/**
 * WGSL sum of split-K partial products: partials [batch, S, M·N] → out [batch, M·N], float32, adding
 * the S slices in order s = 0..S−1 (deterministic), then, with `bias`, the bias element of each output (a matmul
 * with a bias whose product is split: the bias after the whole sum, as the unsplit kernels add it). vec4 when M·N
 * is a multiple of 4 (a vec4 may span rows: each lane's bias element is indexed on its own).
 * Params: 0 elements (or vec4s) of out · 1 M·N (or /4) · 2 S · 3 N; with `bias`, 4 the bias view's offset and
 * 5, 6 its strides along M and N (its batch strides are 0), bound at 3.
 * With an epilogue (a capture plan's fusion, plan-fusion.ts), each sum (plus bias) goes through its steps in the
 * store, lane by lane at its flat output index, as the single-kernel products' stores do
 * (kernels/matmul-epilogue.ts: params after the sum's, arrays and the kept result bound after the bias).
 */
import type { ElementwiseStep } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { epilogued, epilogueWgsl } from './matmul-epilogue.js';

/** Param words of the sum (with `bias`: its view's offset and strides). */
export const splitKSumWords = (bias: boolean): number => (bias ? 7 : 4);

/** The sum's WGSL; with `epi`, its steps in the store (`keep`: kernels/matmul-epilogue.ts). */
export function splitKSumWgsl(
  vec4: boolean,
  bias = false,
  epi: readonly ElementwiseStep[] | null = null,
  keep: number | null = null,
): string {
  const t = vec4 ? 'vec4<f32>' : 'f32';
  const e = epi?.length ? epilogueWgsl(epi, splitKSumWords(bias), bias ? 4 : 3, keep) : null;
  const biasAdd = !bias
    ? ''
    : vec4
      ? 'for (var e = 0u; e < 4u; e++) { acc[e] += biasAt((idx % mn) * 4u + e); }'
      : 'acc += biasAt(idx % mn);';
  const lanes = [0, 1, 2, 3].map((j) => epilogued(`acc[${j}]`, `idx * 4u + ${j}u`, e));
  const store = !e ? 'acc' : vec4 ? `vec4<f32>(${lanes.join(', ')})` : epilogued('acc', 'idx', e);
  return `${paramsPrelude(splitKSumWords(bias) + (e?.words ?? 0))}${e ? `${e.decl}\n` : ''}
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
  out[idx] = ${store};
}`;
}
