/**
 * WGSL selection kernels on x [O, n, I] (any strides): argmax/argmin and topk along axis 1, one
 * invocation per row scanning it in order (the host kernels' rule, hal/src/host/host-scan.ts). Rows too few
 * to fill the device are cut into C chunks: a first pass writes each chunk's candidates (their positions,
 * and for topk their values) to [O, C·k, I], a second pass scans those candidates in chunk order. Chunks
 * and candidates come in position order, so "the first among equals" carries through both passes.
 *
 * Floats are compared after a NaN test on their bits (WGSL lets compilers assume no NaN): a NaN is the
 * extreme of argmax and argmin (NumPy) and ranks above every number in topk (largest or not).
 *
 * argreduce params: 0 invocations · 1 chunk length · 2 I · 3 x offset · 4..6 x strides · 7 C · 8 n.
 * topk params: the same, then 9 k.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const SELECT_WORDS = 10;

const NAN = 'fn nan_bits(b: u32) -> bool { return (b & 0x7fffffffu) > 0x7f800000u; }';

/** The direct pass's row: chunk c of row (o, i), positions [start, end). */
const DIRECT_ROW = `let I = p(2u); let C = p(7u);
  let i = i32(idx) % I; let t = i32(idx) / I; let c = t % C; let o = t / C;
  let start = c * p(1u); let end = min(start + p(1u), p(8u));
  let base = p(3u) + o * p(4u) + i * p(6u);`;

/**
 * argmax or argmin of each row (direct: of chunk c, written at [o, c, i]) or of the candidates `cand`
 * [O, C, I] of the first pass (indirect).
 */
export function argReduceWgsl(op: 'argmax' | 'argmin', float: boolean, lastIndex: boolean, indirect: boolean): string {
  const cmp = op === 'argmax' ? '>' : '<';
  const last = lastIndex ? 'true' : 'false';
  const consider = float
    ? `let vn = nan_bits(b);
    if (bn) { if (${last} && vn) { at = j; } continue; }
    let v = bitcast<f32>(b); let best = bitcast<f32>(bb);
    if (vn || v ${cmp} best || (${last} && v == best)) { bb = b; at = j; bn = vn; }`
    : `let v = bitcast<i32>(b); let best = bitcast<i32>(bb);
    if (v ${cmp} best || (${last} && v == best)) { bb = b; at = j; }`;
  const scan = indirect
    ? `let I = p(2u); let C = p(7u);
  let i = i32(idx) % I; let o = i32(idx) / I;
  let base = p(3u) + o * p(4u) + i * p(6u);
  var at = cand[o * C * I + i];
  var bb = x[base + at * p(5u)];
  var bn = nan_bits(bb);
  for (var c = 1; c < C; c++) {
    let j = cand[(o * C + c) * I + i];
    let b = x[base + j * p(5u)];
    ${consider}
  }`
    : `${DIRECT_ROW}
  var at = start;
  var bb = x[base + start * p(5u)];
  var bn = nan_bits(bb);
  for (var j = start + 1; j < end; j++) {
    let b = x[base + j * p(5u)];
    ${consider}
  }`;
  return `${paramsPrelude(SELECT_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
${indirect ? '@group(0) @binding(2) var<storage, read> cand: array<i32>;' : ''}
@group(0) @binding(${indirect ? 3 : 2}) var<storage, read_write> out: array<i32>;
${NAN}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  ${scan}
  out[idx] = at;
}`;
}

/**
 * The k best of each row (direct: of chunk c, into slots [o, c·k .. c·k + k), unfilled slots −1) or of the
 * first pass's candidates `cv`/`ci` [O, C·k, I] (indirect; −1 skipped): a sorted buffer of k in the
 * output slots, each element compared with the worst kept first.
 */
export function topkWgsl(float: boolean, largest: boolean, indirect: boolean): string {
  // gt(a, b): a ranks above b (NaN above every number); better(a, b) puts a first.
  const gt = float
    ? `fn gt(a: u32, b: u32) -> bool {
  if (nan_bits(a)) { return !nan_bits(b); }
  if (nan_bits(b)) { return false; }
  return bitcast<f32>(a) > bitcast<f32>(b);
}`
    : 'fn gt(a: u32, b: u32) -> bool { return bitcast<i32>(a) > bitcast<i32>(b); }';
  const better = largest
    ? 'fn better(a: u32, b: u32) -> bool { return gt(a, b); }'
    : 'fn better(a: u32, b: u32) -> bool { return gt(b, a); }';
  const insert = `if (count == k && !better(b, vals[slot(k - 1)])) { continue; }
    var q = k - 1;
    if (count < k) { q = count; count++; }
    for (; q > 0 && better(b, vals[slot(q - 1)]); q--) {
      vals[slot(q)] = vals[slot(q - 1)];
      idxs[slot(q)] = idxs[slot(q - 1)];
    }
    vals[slot(q)] = b;
    idxs[slot(q)] = j;`;
  const scan = indirect
    ? `let I = p(2u); let C = p(7u); let k = p(9u);
  let i = i32(idx) % I; let o = i32(idx) / I;
  slot_base = o * k * I + i; // output slots [o, 0..k, i]
  slot_step = I;
  var count = 0;
  for (var m = 0; m < C * k; m++) {
    let cm = (o * C * k + m) * I + i;
    let j = ci[cm];
    if (j < 0) { continue; }
    let b = cv[cm];
    ${insert}
  }`
    : `${DIRECT_ROW}
  let k = p(9u);
  slot_base = (o * C + c) * k * I + i; // output slots [o, c·k .. c·k + k, i]
  slot_step = I;
  var count = 0;
  for (var j = start; j < end; j++) {
    let b = x[base + j * p(5u)];
    ${insert}
  }
  for (var s = count; s < k; s++) { idxs[slot(s)] = -1; }`;
  const inputs = indirect
    ? `@group(0) @binding(1) var<storage, read> cv: array<u32>;
@group(0) @binding(2) var<storage, read> ci: array<i32>;`
    : '@group(0) @binding(1) var<storage, read> x: array<u32>;';
  const o = indirect ? 3 : 2;
  return `${paramsPrelude(SELECT_WORDS)}
${inputs}
@group(0) @binding(${o}) var<storage, read_write> vals: array<u32>;
@group(0) @binding(${o + 1}) var<storage, read_write> idxs: array<i32>;
${NAN}
${gt}
${better}
var<private> slot_base: i32;
var<private> slot_step: i32;
fn slot(s: i32) -> i32 { return slot_base + s * slot_step; }
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  ${scan}
}`;
}
