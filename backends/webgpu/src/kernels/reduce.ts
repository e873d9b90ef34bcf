/**
 * WGSL reductions (sum, max, min, prod) over any axes. Kept and reduced dims arrive coalesced. Large reductions:
 * one 256-invocation workgroup per output, each invocation reduces a strided share, then a tree in workgroup
 * memory. Small reductions (≤ 64 elements), and every reduction on a software adapter (a workgroup runs on one
 * CPU thread, and a barrier switches between its invocations): one invocation per output. float32 sums are
 * pairwise (pairwise.ts: blocks of 8 and a binary counter of partial sums, ~log2(n)·u·Σ|x|), in both forms: a
 * Kahan-compensated sum is not kept, as Mesa's NIR folds its compensation (a + b) − a to b and leaves a naive
 * float32 sum (see pairwise.ts). WGSL lets compilers assume no NaN or infinity (LLVM-based
 * drivers then fold float class tests away), so float inputs are read as u32 bits and classified as
 * integers: sums add only finite terms and track NaN/±Inf in flags, combined at the end; NaN propagates
 * through max and min likewise. Products multiply the magnitudes of finite nonzero terms and track the
 * sign, zeros, ±Inf and NaN in flags, so 0 · Inf = NaN and the sign come out by the IEEE rules whatever
 * the compiler assumes.
 *
 * Params: 0 outputs · 1 reduced count · 2 offset · 3 the float identity's bits (−Inf for max, +Inf for
 * min, 1 for prod, 0 for sum: infinities are not WGSL constants) · 4.. kept shape, kept strides, reduced
 * shape, reduced strides.
 */
import type { DType, ReduceOp } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { PAIRWISE_MAX_LEVELS, pairwiseLevels, pairwiseLoop } from './pairwise.js';

/** Param words for R dimension slots (kept and reduced dims each get R). */
export const reduceWords = (R: number): number => 4 + 4 * R;

/** Adds to `target` the offset of flat `index` over `rank` coalesced dims (right-aligned in R slots). */
function unravel(target: string, index: string, shapeAt: number, stridesAt: number, R: number, rank: number): string {
  if (rank === 0) return '';
  if (rank === 1) return `${target} += i32(${index}) * p(${stridesAt + R - 1}u);`; // no division
  return `{
    var rem = i32(${index});
    for (var d = ${R - 1}u; ; d--) {
      let dim = p(${shapeAt}u + d);
      if (dim > 1) { ${target} += (rem % dim) * p(${stridesAt}u + d); rem = rem / dim; }
      if (d == 0u) { break; }
    }
  }`;
}

// Product flags: 1 an infinity, 4 a NaN, 16 a zero (merged by OR), 8 the sign (merged by XOR).
const PROD_FLAGS = `let special = (bits & 0x7f800000u) == 0x7f800000u;
      let isNan = (bits & 0x7fffffffu) > 0x7f800000u;
      let isZero = (bits & 0x7fffffffu) == 0u;
      flags = (flags ^ ((bits >> 28u) & 8u)) | select(0u, select(1u, 4u, isNan), special) | select(0u, 16u, isZero);
      acc = acc * bitcast<f32>(select(bits & 0x7fffffffu, 0x3f800000u, special || isZero));`;

/** Invocations of a workgroup that share one output of a large reduction. */
export const REDUCE_GROUP = 256;

/**
 * The counter levels of a float32 sum's kernel over `count` elements per output (pairwiseLevels: 0 for at most
 * one block per invocation), 0 for the other ops and dtypes: part of the pipeline's identity.
 */
export function reduceLevels(op: ReduceOp, dtype: DType, count: number, perThread: boolean): number {
  if (op !== 'sum' || dtype !== 'float32') return 0;
  return pairwiseLevels(perThread ? count : Math.ceil(count / REDUCE_GROUP));
}

/**
 * keptRank, reducedRank: the coalesced ranks of the kept and reduced dims (a rank of 0 or 1 is unravelled
 * without a division: a software adapter divides integers lane by lane). levels: reduceLevels of the
 * dispatch (a float32 sum's kernel serves counts up to its capacity).
 */
export function reduceWgsl(
  op: ReduceOp,
  dtype: DType,
  perThread: boolean,
  R: number,
  keptRank = R,
  reducedRank = R,
  levels = PAIRWISE_MAX_LEVELS,
): string {
  const t = dtype === 'float32' ? 'f32' : 'i32';
  const float = dtype === 'float32';
  const extreme = op === 'max' || op === 'min';
  const cmp = op === 'min' ? '<' : '>';
  // The float identity comes from its bits in word 3 (WGSL has no infinite literal); int32's are constants.
  const intInit = { sum: '0', max: '-2147483647 - 1', min: '2147483647', prod: '1' }[op];
  const initExpr = float ? 'pf(3u)' : intInit;
  const pairwise = float && op === 'sum';
  const combine = extreme
    ? float
      ? `if ((bits & 0x7fffffffu) > 0x7f800000u || v ${cmp} acc) { acc = v; }`
      : `acc = ${op}(acc, v);`
    : op === 'prod'
      ? float
        ? PROD_FLAGS
        : 'acc = acc * v;'
      : pairwise
        ? // the finite terms are summed pairwise; a non-finite term adds 0 (an exact integer select) and sets flags
          `let special = (bits & 0x7f800000u) == 0x7f800000u;
      flags |= select(0u, select(select(1u, 2u, (bits & 0x80000000u) != 0u), 4u, (bits & 0x7fffffu) != 0u), special);
      let vf = bitcast<f32>(select(bits, 0u, special));`
        : 'acc = acc + v;';
  // Sums: NaN if any NaN or both infinities were seen, else ±Inf if one was, else the finite sum.
  // Products: NaN if a NaN, or an infinity and a zero, were seen; else ±Inf, ±0 or ±|product|.
  // Decided on u32 bits: some adapters (SwiftShader) blend the operands of float selects and masked
  // float writes, so a non-finite value on the path not taken would still poison the result.
  const finish = (value: string, flags: string): string =>
    extreme || !float
      ? `out[o] = ${value};`
      : op === 'prod'
        ? `let fl = ${flags};
    var res = bitcast<u32>(${value});
    res = select(res, 0x7f800000u, (fl & 1u) != 0u);
    res = select(res, 0u, (fl & 16u) != 0u);
    res = res | ((fl & 8u) << 28u);
    res = select(res, 0x7fc00000u, (fl & 4u) != 0u || (fl & 17u) == 17u);
    out[o] = bitcast<f32>(res);`
        : `let fl = ${flags};
    var res = bitcast<u32>(${value});
    res = select(res, 0xff800000u, (fl & 2u) != 0u);
    res = select(res, 0x7f800000u, (fl & 1u) != 0u);
    res = select(res, 0x7fc00000u, (fl & 4u) != 0u || (fl & 3u) == 3u);
    out[o] = bitcast<f32>(res);`;
  const base = `var base = p(2u);\n  ${unravel('base', 'o', 4, 4 + R, R, keptRank)}`;
  const element = (r: string): string => `var off = base;
      ${unravel('off', r, 4 + 2 * R, 4 + 3 * R, R, reducedRank)}
      ${float ? 'let bits = x[off]; let v = bitcast<f32>(bits);' : 'let v = x[off];'}
      ${combine}`;
  // One invocation reduces elements start, start + step, … below the count (param 1).
  const body = (start: string, step: number): string => {
    if (!pairwise) return `for (var r = ${start}; r < u32(p(1u)); r += ${step}u) {\n      ${element('r')}\n    }`;
    const terms = [{ acc: 'acc', term: 'vf' }];
    if (step === 1) return pairwiseLoop('r', 'u32(p(1u))', element('r'), terms, { levels });
    const count = `select(0u, (u32(p(1u)) - ${start} + ${step - 1}u) / ${step}u, ${start} < u32(p(1u)))`;
    return pairwiseLoop('j', count, `let r = ${start} + j * ${step}u; ${element('r')}`, terms, { levels });
  };
  const prelude = `${paramsPrelude(reduceWords(R))}
@group(0) @binding(1) var<storage, read> x: array<${dtype === 'float32' ? 'u32' : 'i32'}>;
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
  var flags = 0u;
  ${body('0u', 1)}
  ${finish('acc', 'flags')}
}`;
  }
  const merge = extreme
    ? float
      ? `let w = s[lid.x + stride]; if (is_nan(w) || w ${cmp} s[lid.x]) { s[lid.x] = w; }`
      : `s[lid.x] = ${op}(s[lid.x], s[lid.x + stride]);`
    : `s[lid.x] = s[lid.x] ${op === 'prod' ? '*' : '+'} s[lid.x + stride];`;
  return `${prelude}
var<workgroup> s: array<${t}, ${REDUCE_GROUP}>;
var<workgroup> sf: array<u32, ${REDUCE_GROUP}>;
@compute @workgroup_size(${REDUCE_GROUP}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let o = wid.y * nwg.x + wid.x;
  let live = o < u32(p(0u));
  var acc: ${t} = ${initExpr};
  var flags = 0u;
  if (live) {
    ${base}
    ${body('lid.x', REDUCE_GROUP)}
  }
  s[lid.x] = acc;
  sf[lid.x] = flags;
  workgroupBarrier();
  for (var stride = ${REDUCE_GROUP / 2}u; stride > 0u; stride = stride >> 1u) {
    if (lid.x < stride) { ${merge} let f0 = sf[lid.x]; let f1 = sf[lid.x + stride];
      sf[lid.x] = ((f0 | f1) & ~8u) | ((f0 ^ f1) & 8u); }
    workgroupBarrier();
  }
  if (live && lid.x == 0u) {
    ${finish('s[0]', 'sf[0]')}
  }
}`;
}
