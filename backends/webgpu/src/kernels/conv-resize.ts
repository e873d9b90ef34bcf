/**
 * WGSL nearest-neighbour resize (hal/src/families/conv/resize.ts, mode 'nearest'): one invocation per element of
 * y [...sizes] (row-major) copies the x element its per-axis input indices pick. The indices are the composite's
 * own (axisTaps on the host, float64 coordinate transformations) and travel in the params: one table per axis,
 * entry −1 where the output lies outside the input (then y is the extrapolation value). Up to RESIZE_RANK axes,
 * right-aligned (padding: size 1, stride 0, a table of one 0).
 *
 * Params: 0 outputs · 1 x offset · 2 extrapolation value bits · 3–8 output shape · 9–14 x strides · 15–20 each
 * axis' table start · 21.. the tables.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const RESIZE_RANK = 6;
export const RESIZE_HEADER = 3 + 3 * RESIZE_RANK;

/** WGSL for params of RESIZE_HEADER + `tableWords` words (one pipeline per table capacity). */
export function resizeNearestWgsl(tableWords: number): string {
  return `${paramsPrelude(RESIZE_HEADER + tableWords)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  var rem = i32(idx);
  var at = p(1u);
  var outside = false;
  for (var d = ${RESIZE_RANK - 1}u; ; d--) {
    let dim = p(3u + d);
    let c = rem % dim; rem = rem / dim;
    let i = p(${RESIZE_HEADER}u + u32(p(${3 + 2 * RESIZE_RANK}u + d) + c));
    if (i < 0) { outside = true; } else { at += i * p(${3 + RESIZE_RANK}u + d); }
    if (d == 0u) { break; }
  }
  y[idx] = select(x[at], pf(2u), outside);
}`;
}
