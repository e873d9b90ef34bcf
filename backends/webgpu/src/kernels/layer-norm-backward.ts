/**
 * WGSL layerNormBackward's dx (the layerNormBackwardKernel hook; semantics: hal/src/ops/norm-ops.ts):
 * one invocation per row of [rows, D] (any strides) sums ĝ = g·weight and ĝ·x̂ over the row (x̂ = (x −
 * mean)·rstd; both summed pairwise: pairwise.ts), then writes dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)).
 * dweight and dbias are layer-norm-params.ts.
 *
 * Params: 0 rows · 1 D · 2 has weight · 3 unused · 4 g offset · 5 g row stride · 6 g column stride ·
 * 7 x offset · 8 x row stride · 9 x column stride · 10 mean offset · 11 mean stride · 12 rstd offset ·
 * 13 rstd stride · 14 weight offset · 15 weight stride.
 */
import { paramsPrelude } from '../layout.js';
import { NORM_ARGS, NORM_INDEX, NORM_THREADS } from './layer-norm.js';
import { pairwiseLoop } from './pairwise.js';

export const LAYER_NORM_BACKWARD_WORDS = 16;

/** WGSL reading g, x̂ and ĝ at row `r`, column `d` (shared with the parameter kernel). */
export const NORM_BACKWARD_PRELUDE = `${paramsPrelude(LAYER_NORM_BACKWARD_WORDS)}
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> meanIn: array<f32>;
@group(0) @binding(4) var<storage, read> rstdIn: array<f32>;
@group(0) @binding(5) var<storage, read> w: array<f32>;
fn gAt(r: u32, d: u32) -> f32 { return g[p(4u) + i32(r) * p(5u) + i32(d) * p(6u)]; }
fn xAt(r: u32, d: u32) -> f32 { return x[p(7u) + i32(r) * p(8u) + i32(d) * p(9u)]; }
fn meanAt(r: u32) -> f32 { return meanIn[p(10u) + i32(r) * p(11u)]; }
fn rstdAt(r: u32) -> f32 { return rstdIn[p(12u) + i32(r) * p(13u)]; }
fn wAt(d: u32) -> f32 { return select(1.0, w[p(14u) + i32(d) * p(15u)], p(2u) != 0); }
`;

/** `fn dxRow(idx: u32)`: dx of row idx (nothing past the last row). */
export const DX_ROW_FN = `fn dxRow(idx: u32) {
  let rows = u32(p(0u)); let D = u32(p(1u));
  if (idx >= rows) { return; }
  let mean = meanAt(idx); let rstd = rstdAt(idx);
  var s1 = 0.0; var s2 = 0.0;
  ${pairwiseLoop('d', 'D', 'let gw = gAt(idx, d) * wAt(d); let xh = (xAt(idx, d) - mean) * rstd;', [
    { acc: 's1', term: 'gw' },
    { acc: 's2', term: 'gw * xh' },
  ])}
  let m1 = s1 / f32(D); let m2 = s2 / f32(D);
  let o = idx * D;
  for (var d = 0u; d < D; d++) {
    let xh = (xAt(idx, d) - mean) * rstd;
    dx[o + d] = rstd * (gAt(idx, d) * wAt(d) - m1 - xh * m2);
  }
}`;

export const layerNormBackwardWgsl = `${NORM_BACKWARD_PRELUDE}
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;
${DX_ROW_FN}
@compute @workgroup_size(${NORM_THREADS}) fn main(${NORM_ARGS}) {
  ${NORM_INDEX}
  dxRow(idx);
}`;
