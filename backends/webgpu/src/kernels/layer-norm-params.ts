/**
 * WGSL layerNormBackward's dweight and dbias (the layerNormBackwardKernel hook with parameter
 * gradients): one invocation per column d of [rows, D] sums g·x̂ and g down the rows (pairwise: pairwise.ts).
 * Same params and bindings 1–5 as layer-norm-backward.ts.
 */
import { NORM_ARGS, NORM_INDEX, NORM_THREADS } from './layer-norm.js';
import { NORM_BACKWARD_PRELUDE } from './layer-norm-backward.js';
import { pairwiseLoop } from './pairwise.js';

export const layerNormParamsWgsl = `${NORM_BACKWARD_PRELUDE}
@group(0) @binding(6) var<storage, read_write> dw: array<f32>;
@group(0) @binding(7) var<storage, read_write> db: array<f32>;
@compute @workgroup_size(${NORM_THREADS}) fn main(${NORM_ARGS}) {
  ${NORM_INDEX}
  let rows = u32(p(0u)); let D = u32(p(1u));
  if (idx >= D) { return; }
  var sw = 0.0; var sb = 0.0;
  ${pairwiseLoop('r', 'rows', 'let gv = gAt(r, idx);', [
    { acc: 'sw', term: 'gv * ((xAt(r, idx) - meanAt(r)) * rstdAt(r))' },
    { acc: 'sb', term: 'gv' },
  ])}
  dw[idx] = sw;
  db[idx] = sb;
}`;
