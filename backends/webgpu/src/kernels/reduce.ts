/**
 * WGSL reductions (sum, max) over any axes. Kept and reduced dims arrive coalesced. Large reductions:
 * one 256-invocation workgroup per output, each invocation sums a strided share with Kahan
 * compensation, then a tree in workgroup memory. Small reductions (≤ 64 elements): one invocation
 * per output. NaN propagates through max explicitly (bit test).
 *
 * Params: 0 outputs · 1 reduced count · 2 offset · 3 -Inf bits · 4.. kept shape, kept strides, reduced shape, reduced strides.
 */
import type { DType, ReduceOp } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, MAX_RANK, paramsPrelude } from '../layout.js';

const R = MAX_RANK;
export const REDUCE_WORDS = 4 + 4 * R;

function unravel(target: string, index: string, shapeAt: number, stridesAt: number): string {
  return `{
    var rem = i32(${index});
    for (var d = ${R - 1}u; ; d--) {
      let dim = p(${shapeAt}u + d);
      if (dim > 1) { ${target} += (rem % dim) * p(${stridesAt}u + d); rem = rem / dim; }
      if (d == 0u) { break; }
    }
  }`;
}

export function reduceWgsl(op: ReduceOp, dtype: DType, perThread: boolean): string {
  const t = dtype === 'float32' ? 'f32' : 'i32';
  const isMax = op === 'max';
  // max starts at -Inf (from its bits: WGSL has no infinite literal) or INT32_MIN.
  const initExpr = isMax ? (dtype === 'float32' ? 'pf(3u)' : '-2147483647 - 1') : `${t}(0)`; // word 3 holds -Inf (not a WGSL constant)
  const combine = isMax
    ? dtype === 'float32'
      ? 'if (is_nan(v) || v > acc) { acc = v; }'
      : 'acc = max(acc, v);'
    : dtype === 'float32'
      ? 'let yk = v - comp; let tk = acc + yk; comp = (tk - acc) - yk; acc = tk;'
      : 'acc = acc + v;';
  const base = `var base = p(2u);\n  ${unravel('base', 'o', 4, 4 + R)}`;
  const body = `for (var r = START; r < u32(p(1u)); r += STEP) {
      var off = base;
      ${unravel('off', 'r', 4 + 2 * R, 4 + 3 * R)}
      let v = x[off];
      ${combine}
    }`;
  const prelude = `${paramsPrelude(REDUCE_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<${t}>;
@group(0) @binding(2) var<storage, read_write> out: array<${t}>;
`;
  if (perThread) {
    return `${prelude}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let o = idx;
  if (o >= u32(p(0u))) { return; }
  ${base}
  var acc: ${t} = ${initExpr};
  var comp: ${t} = ${t}(0);
  ${body.replace('START', '0u').replace('STEP', '1u')}
  out[o] = acc;
}`;
  }
  const merge = isMax
    ? dtype === 'float32'
      ? 'let w = s[lid.x + stride]; if (is_nan(w) || w > s[lid.x]) { s[lid.x] = w; }'
      : 's[lid.x] = max(s[lid.x], s[lid.x + stride]);'
    : 's[lid.x] = s[lid.x] + s[lid.x + stride];';
  return `${prelude}
var<workgroup> s: array<${t}, 256>;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let o = wid.y * nwg.x + wid.x;
  let live = o < u32(p(0u));
  var acc: ${t} = ${initExpr};
  var comp: ${t} = ${t}(0);
  if (live) {
    ${base}
    ${body.replace('START', 'lid.x').replace('STEP', '256u')}
  }
  s[lid.x] = acc;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
    if (lid.x < stride) { ${merge} }
    workgroupBarrier();
  }
  if (live && lid.x == 0u) { out[o] = s[0]; }
}`;
}
