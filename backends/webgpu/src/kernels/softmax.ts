/**
 * WGSL softmax over the last axis of a row-major float32 array (the HAL's softmax, hal/src/ops/array-ops.ts: exp(x −
 * max) / Σ exp(x − max), a NaN in a row makes the row NaN) in one kernel instead of the composite's five (max, sub,
 * exp, sum, div, with four temporaries of x's size): a workgroup of 64 invocations per row reads the row for its
 * maximum, then for Σ exp(x − max) (each invocation's elements, 64 apart, summed pairwise: pairwise.ts; the 64 sums
 * then as a tree), then writes exp(x − max) / Σ. Loads of adjacent invocations are adjacent (coalesced).
 * The same expressions as the composite's kernels (WGSL exp and division), summed in another order: within the
 * op's wgsl tolerance. On an H200, [64, 6, 197, 197] (attention scores): the composite 0.73 ms.
 *
 * Params: 0 rows · 1 n (row length) · 2 x offset · 3 zero (a NaN the compiler cannot fold).
 */
import { paramsPrelude } from '../layout.js';
import { pairwiseLoop } from './pairwise.js';

export const SOFTMAX_WORDS = 4;
export const SOFTMAX_THREADS = 64;

export const softmaxWgsl = `${paramsPrelude(SOFTMAX_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
var<workgroup> part: array<f32, ${SOFTMAX_THREADS}>;
/** max that keeps a NaN (WGSL's max may drop it). */
fn max_nan(a: f32, b: f32) -> f32 { return select(select(max(a, b), b, is_nan(b)), a, is_nan(a)); }
@compute @workgroup_size(${SOFTMAX_THREADS}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row = wid.y * nwg.x + wid.x;
  let rows = u32(p(0u));
  if (row >= rows) { return; }
  let n = u32(p(1u));
  let base = u32(p(2u)) + row * n;
  let t = lid.x;
  var m = x[base + min(t, n - 1u)]; // an element of the row (a constant −∞ does not compile)
  for (var i = t; i < n; i += ${SOFTMAX_THREADS}u) { m = max_nan(m, x[base + i]); }
  part[t] = m;
  workgroupBarrier();
  for (var w = ${SOFTMAX_THREADS / 2}u; w > 0u; w >>= 1u) {
    if (t < w) { part[t] = max_nan(part[t], part[t + w]); }
    workgroupBarrier();
  }
  let mx = workgroupUniformLoad(&part[0]);
  workgroupBarrier();
  // a row holding NaN, or whose maximum is ±∞, is NaN throughout (x − max is NaN somewhere, as in the composite);
  // decided here on the bits, as a compiler that assumes finite math may fold exp(NaN) (SwiftShader gave 0)
  if ((bitcast<u32>(mx) & 0x7fffffffu) >= 0x7f800000u) {
    let nan = bitcast<f32>(0x7fc00000u ^ u32(p(3u)));
    for (var i = t; i < n; i += ${SOFTMAX_THREADS}u) { y[row * n + i] = nan; }
    return;
  }
  let count = select(0u, (n - t + ${SOFTMAX_THREADS - 1}u) / ${SOFTMAX_THREADS}u, t < n);
  var s = 0.0;
  ${pairwiseLoop('k', 'count', `let e = exp(x[base + t + k * ${SOFTMAX_THREADS}u] - mx);`, [{ acc: 's', term: 'e' }])}
  part[t] = s;
  workgroupBarrier();
  for (var w = ${SOFTMAX_THREADS / 2}u; w > 0u; w >>= 1u) {
    if (t < w) { part[t] = part[t] + part[t + w]; }
    workgroupBarrier();
  }
  let total = part[0];
  for (var i = t; i < n; i += ${SOFTMAX_THREADS}u) { y[row * n + i] = exp(x[base + i] - mx) / total; }
}`;
