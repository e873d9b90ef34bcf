/**
 * WGSL layerNorm forward (the layerNormKernel hook; semantics: hal/src/ops/norm-ops.ts): one invocation
 * per row of x [rows, D] (any strides) reads the row three times — the mean, the biased variance of
 * the centred values (both summed pairwise: pairwise.ts), then y = (x − mean)·rstd·weight + bias — and writes y
 * [rows, D] and the row's mean and rstd. No workgroup memory: rows are independent, and on a software
 * adapter a barrier costs more than a row of 64.
 *
 * Params: 0 rows · 1 D · 2 eps bits · 3 flags (1 weight, 2 bias) · 4 x offset · 5 x row stride · 6 x
 * column stride · 7 weight offset · 8 weight stride · 9 bias offset · 10 bias stride.
 */
import { paramsPrelude } from '../layout.js';
import { pairwiseLoop } from './pairwise.js';

export const LAYER_NORM_WORDS = 11;
export const NORM_THREADS = 64;

/** WGSL: the flat invocation index over a 2-D grid of NORM_THREADS-wide workgroups. */
export const NORM_INDEX = `let idx = (wid.y * nwg.x + wid.x) * ${NORM_THREADS}u + lid.x;`;
export const NORM_ARGS =
  '@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u';

export const layerNormWgsl = `${paramsPrelude(LAYER_NORM_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read_write> meanOut: array<f32>;
@group(0) @binding(6) var<storage, read_write> rstdOut: array<f32>;
@compute @workgroup_size(${NORM_THREADS}) fn main(${NORM_ARGS}) {
  ${NORM_INDEX}
  let rows = u32(p(0u)); let D = u32(p(1u));
  if (idx >= rows) { return; }
  let flags = p(3u);
  let xo = p(4u) + i32(idx) * p(5u); let xs = p(6u);
  var s = 0.0;
  ${pairwiseLoop('d', 'D', '', [{ acc: 's', term: 'x[xo + i32(d) * xs]' }], { tag: 'ps' })}
  let mean = s / f32(D);
  var v = 0.0;
  ${pairwiseLoop('d', 'D', 'let c = x[xo + i32(d) * xs] - mean;', [{ acc: 'v', term: 'c * c' }], { tag: 'pv' })}
  let rstd = 1.0 / sqrt(v / f32(D) + pf(2u));
  let yo = idx * D;
  for (var d = 0u; d < D; d++) {
    var o = (x[xo + i32(d) * xs] - mean) * rstd;
    if ((flags & 1) != 0) { o = o * w[p(7u) + i32(d) * p(8u)]; }
    if ((flags & 2) != 0) { o = o + b[p(9u) + i32(d) * p(10u)]; }
    y[yo + d] = o;
  }
  meanOut[idx] = mean;
  rstdOut[idx] = rstd;
}`;
