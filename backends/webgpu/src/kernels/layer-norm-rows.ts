/**
 * WGSL layerNorm forward for hardware GPUs (the layerNormKernel hook; semantics: hal/src/ops/norm-ops.ts): one
 * workgroup of NORM_ROW_THREADS invocations per row of x [rows, D] (any strides). Invocation t sums the columns
 * t, t + T, t + 2T, … of its row (pairwise: pairwise.ts), the T partial sums are added across the workgroup,
 * then the same for the centred squares; each invocation writes y = (x − mean)·rstd·weight +
 * bias for its columns, so neighbouring invocations read and write neighbouring elements. On a large GPU a row
 * per invocation (kernels/layer-norm.ts) walks its row three times alone: the main job's ViT ([1088, 64]: 17
 * workgroups) took ~27 µs a call on an H100. Software adapters keep that kernel: there a barrier costs more than a
 * row. The T partial sums are added by workgroup-sum.ts: a tree, or through subgroups where the device has them.
 * Error: the pairwise bound of each invocation's ⌈D/T⌉ terms plus workgroup-sum.ts's.
 *
 * Params: those of kernels/layer-norm.ts.
 */
import { paramsPrelude } from '../layout.js';
import { LAYER_NORM_WORDS } from './layer-norm.js';
import { pairwiseLoop } from './pairwise.js';
import { SUBGROUP_INVOCATION_ARG, SUBGROUPS_ENABLE, workgroupSumWgsl } from './workgroup-sum.js';

/** The centred squares' term of the variance's pairwise sum. */
const SQUARES = [{ acc: 'v', term: 'c * c' }];

/** Invocations per row (a power of two). */
export const NORM_ROW_THREADS = 64;

/** The kernel; `subgroups`: its row sums through subgroup operations (workgroup-sum.ts), else a tree. */
export function layerNormRowsWgsl(subgroups = false): string {
  const T = NORM_ROW_THREADS;
  const sg = subgroups ? 'sgi' : '0u';
  return `${subgroups ? SUBGROUPS_ENABLE : ''}${paramsPrelude(LAYER_NORM_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read_write> meanOut: array<f32>;
@group(0) @binding(6) var<storage, read_write> rstdOut: array<f32>;
${workgroupSumWgsl('rowSum', 'f32', T, subgroups)}
@compute @workgroup_size(${T}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
    @builtin(local_invocation_id) lid: vec3u${subgroups ? `, ${SUBGROUP_INVOCATION_ARG}` : ''}) {
  let row = wid.y * nwg.x + wid.x;
  let rows = u32(p(0u)); let D = u32(p(1u));
  let t = lid.x;
  let live = row < rows;
  let flags = p(3u);
  let xo = p(4u) + i32(min(row, rows - 1u)) * p(5u); let xs = p(6u);
  // columns t, t + T, ...: n of them
  let n = select(0u, (D - t + ${T - 1}u) / ${T}u, t < D);
  var s = 0.0;
  ${pairwiseLoop('k', 'n', `let d = t + k * ${T}u;`, [{ acc: 's', term: 'x[xo + i32(d) * xs]' }], { tag: 'ps' })}
  let mean = rowSum(s, t, ${sg}) / f32(D);
  var v = 0.0;
  ${pairwiseLoop('k', 'n', `let d = t + k * ${T}u; let c = x[xo + i32(d) * xs] - mean;`, SQUARES, { tag: 'pv' })}
  let rstd = 1.0 / sqrt(rowSum(v, t, ${sg}) / f32(D) + pf(2u));
  if (!live) { return; }
  let yo = row * D;
  for (var k = 0u; k < n; k++) {
    let d = t + k * ${T}u;
    var o = (x[xo + i32(d) * xs] - mean) * rstd;
    if ((flags & 1) != 0) { o = o * w[p(7u) + i32(d) * p(8u)]; }
    if ((flags & 2) != 0) { o = o + b[p(9u) + i32(d) * p(10u)]; }
    y[yo + d] = o;
  }
  if (t == 0u) {
    meanOut[row] = mean;
    rstdOut[row] = rstd;
  }
}`;
}
