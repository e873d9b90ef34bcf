/**
 * WGSL layerNormBackward's dx for hardware GPUs (the layerNormBackwardKernel hook; semantics:
 * hal/src/ops/norm-ops.ts): one workgroup of NORM_THREADS (T = 64) invocations per row of [rows, D] (any strides
 * of g and x), the backward's twin of kernels/layer-norm-rows.ts. Invocation t sums ĝ = g·weight and ĝ·x̂
 * (x̂ = (x − mean)·rstd) over the columns t, t + T, t + 2T, … of its row (pairwise: pairwise.ts), the T pairs of
 * partial sums are added across the workgroup (workgroup-sum.ts: a tree, or through subgroups), then each invocation
 * writes dx = rstd·(ĝ − mean(ĝ)
 * − x̂·mean(ĝ·x̂)) for its columns, so neighbouring invocations read and write neighbouring elements. A row per
 * invocation (kernels/layer-norm-backward.ts) has the 32 invocations of a warp read 32 rows D apart and walk their
 * rows twice alone: 0.3–0.77 ms a call at [12608, 384] on an H100, ~30× its memory traffic. Error: the pairwise
 * bound of each invocation's ⌈D/T⌉ terms plus workgroup-sum.ts's.
 *
 * - `layerNormBackwardRowsWgsl`: dx alone (a workgroup per row, flat over the grid).
 * - `layerNormBackwardRowsFusedWgsl`: dx and the parameters' sums in one dispatch, the layout of
 *   kernels/layer-norm-params.ts (dx's workgroups first, here one per row, then the sums' with that file's code).
 *
 * Params: those of kernels/layer-norm-backward.ts (the fused form: kernels/layer-norm-params.ts).
 */
import { NORM_ARGS, NORM_THREADS } from './layer-norm.js';
import { NORM_BACKWARD_PRELUDE } from './layer-norm-backward.js';
import { layerNormBackwardFusedWgsl } from './layer-norm-params.js';
import { pairwiseLoop } from './pairwise.js';
import { SUBGROUP_INVOCATION_ARG, SUBGROUPS_ENABLE, workgroupSumWgsl } from './workgroup-sum.js';

const T = NORM_THREADS;

/**
 * `fn dxRowGroup(row: u32, t: u32, sgi: u32)`: dx of row `row` by the invocation t of its workgroup (sgi: its
 * subgroup invocation id, 0u without subgroups). Every invocation of the workgroup calls it with the same row, also
 * a row past the end (which reads and writes nothing), since it holds barriers.
 */
const dxRowGroupFn = (subgroups: boolean): string => `${workgroupSumWgsl('rowSums', 'vec2f', T, subgroups)}
fn dxRowGroup(row: u32, t: u32, sgi: u32) {
  let rows = u32(p(0u)); let D = u32(p(1u));
  let live = row < rows;
  var mean = 0.0; var rstd = 0.0;
  if (live) { mean = meanAt(row); rstd = rstdAt(row); }
  // columns t, t + T, ...: n of them (none past the last row)
  let n = select(0u, (D - t + ${T - 1}u) / ${T}u, live && t < D);
  var s1 = 0.0; var s2 = 0.0;
  ${pairwiseLoop(
    'k',
    'n',
    `let d = t + k * ${T}u; let gw = gAt(row, d) * wAt(d); let xh = (xAt(row, d) - mean) * rstd;`,
    [
      { acc: 's1', term: 'gw' },
      { acc: 's2', term: 'gw * xh' },
    ],
  )}
  let m = rowSums(vec2f(s1, s2), t, sgi) / f32(D);
  let o = row * D;
  for (var k = 0u; k < n; k++) {
    let d = t + k * ${T}u;
    let xh = (xAt(row, d) - mean) * rstd;
    dx[o + d] = rstd * (gAt(row, d) * wAt(d) - m.x - xh * m.y);
  }
}`;

/** dx alone: workgroup `wid.y · nwg.x + wid.x` computes that row; `subgroups`: workgroup-sum.ts's subgroup form. */
export function layerNormBackwardRowsWgsl(subgroups = false): string {
  return `${subgroups ? SUBGROUPS_ENABLE : ''}${NORM_BACKWARD_PRELUDE}
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;
${dxRowGroupFn(subgroups)}
@compute @workgroup_size(${T}) fn main(${NORM_ARGS}${subgroups ? `, ${SUBGROUP_INVOCATION_ARG}` : ''}) {
  dxRowGroup(wid.y * nwg.x + wid.x, lid.x, ${subgroups ? 'sgi' : '0u'});
}`;
}

/**
 * dx and the parameters' sums in one dispatch (layerNormBackwardFusedWgsl's layout and sums): the first `p(16)`
 * (= rows) workgroups compute a row of dx each, the rest dweight's and dbias's sums (`partial`: chunked).
 */
export function layerNormBackwardRowsFusedWgsl(partial: boolean, subgroups = false): string {
  const code = dxRowGroupFn(subgroups);
  const call = `dxRowGroup(lin, lid.x, ${subgroups ? 'sgi' : '0u'});`;
  if (!subgroups) return layerNormBackwardFusedWgsl(partial, { code, call });
  const args = `${NORM_ARGS}, ${SUBGROUP_INVOCATION_ARG}`;
  return `${SUBGROUPS_ENABLE}${layerNormBackwardFusedWgsl(partial, { code, call }, args)}`;
}
