/**
 * WGSL fused attention backward (the attentionBackwardKernel hook; semantics: hal/src/ops/attention-ops.ts),
 * FlashAttention-2's backward for short sequences in ONE dispatch: one workgroup of 64 invocations per leading
 * index b holds q [L, d], k [S, d], v [S, dv] and dOut [L, dv] of its b in workgroup memory (read through their
 * strides), then
 * 1. each invocation takes query rows i: the scores s_ij = q_i·k_j·scale, their maximum, P_ij = exp(s_ij − max)
 *    / Σ_j exp(s_ij − max), dP_ij = dOut_i·v_j, D_i = Σ_j P_ij·dP_ij, and dS_ij = P_ij·(dP_ij − D_i)·scale, P and
 *    dS [L, S] kept in workgroup memory;
 * 2. after a barrier, the invocations share the outputs: dq = dS·k, dk = dSᵀ·q, dv = Pᵀ·dOut, each element one
 *    sum in order, written contiguous — or, `packed` (attentionBackwardPacked: L = S, d = dv, two leading dims
 *    [N, H]), into one output [N, L, 3, H, d] at (n, i, 0, h, c), (n, j, 1, h, c) and (n, j, 2, h, c): a packed
 *    QKV projection's gradient, no stack after.
 * Memory: L·d + S·d + S·dv + L·dv + 2·L·S floats (the dispatch checks them against the adapter's limit).
 *
 * Params: kernels/attention-prelude.ts (operand 3 dOut).
 */
import { type AttentionBinding, ATTENTION_THREADS, attentionModuleWgsl, BACKWARD_INPUTS } from './attention-prelude.js';

/** Floats of workgroup memory the backward needs. */
export function attentionBackwardFloats(L: number, S: number, d: number, dv: number): number {
  return (L + S) * d + (S + L) * dv + 2 * L * S;
}

/**
 * The backward with `cap` floats of workgroup memory (≥ attentionBackwardFloats); `packed`: one output binding
 * in qkv's layout (see above).
 */
export function attentionBackwardWgsl(cap: number, packed = false): string {
  const T = ATTENTION_THREADS;
  // where element (row r, column c) of dq, dk or dv goes
  const [toQ, toK, toV] = packed
    ? ['dqkv[ob + i * rs + c]', 'dqkv[ob + n1 * d + j * rs + c]', 'dqkv[ob + 2u * n1 * d + j * rs + c]']
    : ['dq[b * nq + t]', 'dk[b * nk + u]', 'dvOut[b * nv + u]'];
  // packed: b = n·H + h, the row stride 3·H·d, slice i at i·H·d
  const packedBase = packed
    ? 'let n1 = u32(p(5u)); let rs = 3u * n1 * d; let ob = (b / n1) * L * rs + (b % n1) * d;'
    : '';
  const outputs = (packed ? ['dqkv'] : ['dq', 'dk', 'dvOut']).map((x): AttentionBinding => [x, 'read_write']);
  return `${attentionModuleWgsl([...BACKWARD_INPUTS, ...outputs], `var<workgroup> sh: array<f32, ${cap}>;`)}
@compute @workgroup_size(${T}) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
    @builtin(local_invocation_id) lid: vec3u) {
  let L = u32(p(0u)); let S = u32(p(1u)); let d = u32(p(2u)); let dv = u32(p(3u));
  let scale = pf(4u);
  let b = wid.y * nwg.x + wid.x;
  if (b >= u32(p(6u))) { return; }
  // workgroup memory: Q [L, d] · K [S, d] · V [S, dv] · G (dOut) [L, dv] · P [L, S] · dS [L, S]
  let oK = L * d; let oV = oK + S * d; let oG = oV + S * dv; let oP = oG + L * dv; let oS = oP + L * S;
  for (var t = lid.x; t < L * d; t += ${T}u) { sh[t] = q[at(0u, b, t / d, t % d)]; }
  for (var t = lid.x; t < S * d; t += ${T}u) { sh[oK + t] = k[at(1u, b, t / d, t % d)]; }
  for (var t = lid.x; t < S * dv; t += ${T}u) { sh[oV + t] = v[at(2u, b, t / dv, t % dv)]; }
  for (var t = lid.x; t < L * dv; t += ${T}u) { sh[oG + t] = g[at(3u, b, t / dv, t % dv)]; }
  workgroupBarrier();
  for (var i = lid.x; i < L; i += ${T}u) {
    var m = 0.0;
    for (var j = 0u; j < S; j++) {
      var s = 0.0;
      for (var c = 0u; c < d; c++) { s += sh[i * d + c] * sh[oK + j * d + c]; }
      s = s * scale;
      if (j == 0u) { m = s; }
      m = max(m, s);
      sh[oP + i * S + j] = s;
    }
    var l = 0.0;
    for (var j = 0u; j < S; j++) {
      let e = exp(sh[oP + i * S + j] - m);
      sh[oP + i * S + j] = e;
      l += e;
    }
    var D = 0.0;
    for (var j = 0u; j < S; j++) {
      let pij = sh[oP + i * S + j] / l;
      sh[oP + i * S + j] = pij;
      var dp = 0.0;
      for (var c = 0u; c < dv; c++) { dp += sh[oG + i * dv + c] * sh[oV + j * dv + c]; }
      sh[oS + i * S + j] = dp;
      D += pij * dp;
    }
    for (var j = 0u; j < S; j++) {
      sh[oS + i * S + j] = sh[oP + i * S + j] * (sh[oS + i * S + j] - D) * scale;
    }
  }
  workgroupBarrier();
  let nq = L * d; let nk = S * d; let nv = S * dv;
  ${packedBase}
  for (var t = lid.x; t < nq + nk + nv; t += ${T}u) {
    if (t < nq) {
      let i = t / d; let c = t % d;
      var s = 0.0;
      for (var j = 0u; j < S; j++) { s += sh[oS + i * S + j] * sh[oK + j * d + c]; }
      ${toQ} = s;
    } else if (t < nq + nk) {
      let u = t - nq; let j = u / d; let c = u % d;
      var s = 0.0;
      for (var i = 0u; i < L; i++) { s += sh[oS + i * S + j] * sh[i * d + c]; }
      ${toK} = s;
    } else {
      let u = t - nq - nk; let j = u / dv; let c = u % dv;
      var s = 0.0;
      for (var i = 0u; i < L; i++) { s += sh[oP + i * S + j] * sh[oG + i * dv + c]; }
      ${toV} = s;
    }
  }
}`;
}
