/**
 * WGSL tiled attention backward, pass 2 of 3 (FlashAttention-2's backward for long sequences; the passes:
 * dispatch-attention.ts): dk and dv. One workgroup of 64 invocations per (leading index b, block of 64 key rows);
 * the workgroup stages q, dOut and the statistics (m, l, D of pass 1, kernels/attention-backward-stats.ts) of Br
 * query rows at a time in workgroup memory, and each invocation, one key row j with k_j, v_j (d, dv ≤ 64) in
 * registers, recomputes for every query row i P_ij = exp(s_ij − m_i) / l_i with s_ij = q_i·k_j·scale and
 * dS_ij = P_ij·(dOut_i·v_j − D_i)·scale, and sums dv_j = Σ_i P_ij·dOut_i and dk_j = Σ_i dS_ij·q_i in order of i,
 * written contiguous: dk [B, S, d], dv [B, S, dv].
 *
 * Params: as the forward's (kernels/attention.ts), operand 3 dOut, word 7 Br.
 */
import { paramsPrelude } from '../layout.js';
import {
  ATTENTION_MAX_WIDTH,
  ATTENTION_OPERANDS,
  ATTENTION_THREADS,
  ATTENTION_WORDS,
  widthsWgsl,
} from './attention.js';
import { ATTENTION_STATS } from './attention-backward-stats.js';

/** Floats of workgroup memory per staged query row of pass 2. */
export const attentionBackwardKvRowFloats = (d: number, dv: number): number => d + dv + ATTENTION_STATS;

/** Pass 2 over rows of widths d, dv with `cap` floats of workgroup memory (≥ Br·(d + dv + 3)). */
export function attentionBackwardKvWgsl(cap: number, d: number, dv: number): string {
  const W = ATTENTION_MAX_WIDTH;
  const T = ATTENTION_THREADS;
  const R = ATTENTION_STATS;
  return `${paramsPrelude(ATTENTION_WORDS)}
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> g: array<f32>;
@group(0) @binding(5) var<storage, read> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> dk: array<f32>;
@group(0) @binding(7) var<storage, read_write> dvOut: array<f32>;
${widthsWgsl(d, dv)}
var<workgroup> sh: array<f32, ${cap}>;
${ATTENTION_OPERANDS}
@compute @workgroup_size(${T}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(local_invocation_id) lid: vec3u) {
  let L = u32(p(0u)); let S = u32(p(1u));
  let scale = pf(4u);
  let Br = u32(p(7u));
  let b = wid.y;
  let j = wid.x * ${T}u + lid.x;
  let live = j < S;
  var kr: array<f32, ${W}>;
  var vr: array<f32, ${W}>;
  var dkr: array<f32, ${W}>;
  var dvr: array<f32, ${W}>;
  if (live) {
    for (var c = 0u; c < d; c++) { kr[c] = k[at(1u, b, j, c)]; }
    for (var c = 0u; c < dv; c++) { vr[c] = v[at(2u, b, j, c)]; }
  }
  for (var i0 = 0u; i0 < L; i0 += Br) {
    let n = min(Br, L - i0);
    // workgroup memory: Q [n, d] · G (dOut) [n, dv] · stats [n, ${R}]
    let oG = n * d; let oM = oG + n * dv;
    workgroupBarrier();
    for (var t = lid.x; t < n * d; t += ${T}u) { sh[t] = q[at(0u, b, i0 + t / d, t % d)]; }
    for (var t = lid.x; t < n * dv; t += ${T}u) { sh[oG + t] = g[at(3u, b, i0 + t / dv, t % dv)]; }
    for (var t = lid.x; t < n * ${R}u; t += ${T}u) { sh[oM + t] = stats[(b * L + i0) * ${R}u + t]; }
    workgroupBarrier();
    for (var i = 0u; i < select(0u, n, live); i++) {
      var s = 0.0;
      for (var c = 0u; c < d; c++) { s += sh[i * d + c] * kr[c]; }
      s = s * scale;
      let pij = exp(s - sh[oM + i * ${R}u]) / sh[oM + i * ${R}u + 1u];
      var dp = 0.0;
      for (var c = 0u; c < dv; c++) { dp += sh[oG + i * dv + c] * vr[c]; }
      let ds = pij * (dp - sh[oM + i * ${R}u + 2u]) * scale;
      for (var c = 0u; c < dv; c++) { dvr[c] += pij * sh[oG + i * dv + c]; }
      for (var c = 0u; c < d; c++) { dkr[c] += ds * sh[i * d + c]; }
    }
  }
  if (!live) { return; }
  for (var c = 0u; c < d; c++) { dk[(b * S + j) * d + c] = dkr[c]; }
  for (var c = 0u; c < dv; c++) { dvOut[(b * S + j) * dv + c] = dvr[c]; }
}`;
}
