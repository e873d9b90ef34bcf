/**
 * WGSL fused training kernels: the SGD update in place (one invocation per parameter element) and
 * softmax cross-entropy (one invocation per row; Σ exp summed pairwise: pairwise.ts). The Adam update,
 * which groups parameters, is adam.ts.
 *
 * SGD params: 0 n · 1 lr · 2 momentum · 3 weight decay · 4 use momentum. Softmax CE: 0 rows · 1 classes · 2
 * with grad · 3 -Inf bits.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { pairwiseLoop } from './pairwise.js';

export function sgdWgsl(): string {
  return `${paramsPrelude(5)}
@group(0) @binding(1) var<storage, read_write> param: array<f32>;
@group(0) @binding(2) var<storage, read> grad: array<f32>;
@group(0) @binding(3) var<storage, read_write> vel: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  var d = grad[idx] + pf(3u) * param[idx];
  if (p(4u) != 0) {
    d = pf(2u) * vel[idx] + d;
    vel[idx] = d;
  }
  param[idx] = param[idx] - pf(1u) * d;
}`;
}

export function softmaxCrossEntropyWgsl(): string {
  return `${paramsPrelude(4)}
@group(0) @binding(1) var<storage, read> z: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> loss: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let n = idx;
  if (n >= u32(p(0u))) { return; }
  let C = u32(p(1u));
  let r = n * C;
  var mx = pf(3u); // -Inf, passed in: WGSL has no infinite constant
  for (var c = 0u; c < C; c++) { let v = z[r + c]; if (is_nan(v) || v > mx) { mx = v; } }
  var s = 0.0;
  // NaN carried explicitly through exp and log (a NaN or +Inf logit makes the row NaN, hal/src/ops/index.ts):
  // some adapters' exp(NaN) and log(NaN) are not NaN (SwiftShader: exp(NaN) = Inf).
  ${pairwiseLoop('c', 'C', 'let d = z[r + c] - mx;', [{ acc: 's', term: 'select(exp(d), d, is_nan(d))' }])}
  let lse = select(log(s), s, is_nan(s));
  var l = 0.0;
  for (var c = 0u; c < C; c++) {
    let logp = z[r + c] - mx - lse;
    let lab = y[r + c];
    if (lab != 0.0 || is_nan(logp)) { l -= lab * logp; }
    // xlogy: a label-0 term is 0 unless log p is NaN (hal/src/ops/index.ts)
    // NaN log p → NaN gradient, explicitly: some adapters' exp(NaN) is not NaN (SwiftShader gives Inf).
    if (p(2u) != 0) { grad[r + c] = select(exp(logp) - lab, logp, is_nan(logp)); }
  }
  loss[n] = l;
}`;
}
