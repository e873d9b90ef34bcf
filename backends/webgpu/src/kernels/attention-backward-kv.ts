/**
 * WGSL tiled attention backward, pass 2 of 3 (FlashAttention-2's backward for long sequences; the passes:
 * dispatch-attention.ts): dk and dv. One workgroup of 64 invocations per (leading index b, block of 64 key rows);
 * the workgroup stages q, dOut and the statistics (m, l, D of pass 1, kernels/attention-backward-stats.ts) of Br
 * query rows at a time in workgroup memory, and each invocation, one key row j with k_j, v_j (d, dv ≤ 64) in
 * registers, recomputes for every query row i P_ij = exp(s_ij − m_i) / l_i with s_ij = q_i·k_j·scale and
 * dS_ij = P_ij·(dOut_i·v_j − D_i)·scale, and sums dv_j = Σ_i P_ij·dOut_i and dk_j = Σ_i dS_ij·q_i in order of i,
 * written contiguous: dk [B, S, d], dv [B, S, dv].
 *
 * Params: kernels/attention-prelude.ts (operand 3 dOut, word 7 Br).
 */
import {
  ATTENTION_THREADS,
  attentionModuleWgsl,
  BACKWARD_INPUTS,
  loadRowWgsl,
  paddedWidth,
  perRowMainWgsl,
  storeRowWgsl,
} from './attention-prelude.js';
import { ATTENTION_STATS } from './attention-backward-stats.js';

/** Floats of workgroup memory per staged query row of pass 2: q's and dOut's rows padded to vec4s, and a vec4 of
 * statistics. */
export const attentionBackwardKvRowFloats = (d: number, dv: number): number => paddedWidth(d) + paddedWidth(dv) + 4;

/** Pass 2 over rows of widths d, dv with `cap` floats of workgroup memory (≥ Br·attentionBackwardKvRowFloats). */
export function attentionBackwardKvWgsl(cap: number, d: number, dv: number): string {
  const T = ATTENTION_THREADS;
  const R = ATTENTION_STATS;
  const bindings = [...BACKWARD_INPUTS, ['stats', 'read'], ['dk', 'read_write'], ['dvOut', 'read_write']] as const;
  return `${attentionModuleWgsl(bindings, `var<workgroup> sh: array<vec4<f32>, ${cap / 4}>;`, [d, dv])}
${perRowMainWgsl('Br', 'j')}
  var kr: array<vec4<f32>, d4>;
  var vr: array<vec4<f32>, dv4>;
  var dkr: array<vec4<f32>, d4>;
  var dvr: array<vec4<f32>, dv4>;
  if (live) {
    ${loadRowWgsl('k', 'j')}
    ${loadRowWgsl('v', 'j')}
  }
  for (var i0 = 0u; i0 < L; i0 += Br) {
    let n = min(Br, L - i0);
    // workgroup memory (vec4s): Q [n, d4] · G (dOut) [n, dv4] · (m, l, D, 0) [n]
    let oG = n * d4; let oM = oG + n * dv4;
    workgroupBarrier();
    for (var t = lid.x; t < n * d4; t += ${T}u) { sh[t] = q4(b, i0 + t / d4, 4u * (t % d4)); }
    for (var t = lid.x; t < n * dv4; t += ${T}u) { sh[oG + t] = g4(b, i0 + t / dv4, 4u * (t % dv4)); }
    for (var t = lid.x; t < n; t += ${T}u) {
      let r = (b * L + i0 + t) * ${R}u;
      sh[oM + t] = vec4<f32>(stats[r], stats[r + 1u], stats[r + 2u], 0.0);
    }
    workgroupBarrier();
    for (var i = 0u; i < select(0u, n, live); i++) {
      var s = 0.0;
      for (var c = 0u; c < d4; c++) { s += dot(sh[i * d4 + c], kr[c]); }
      s = s * scale;
      let st = sh[oM + i];
      let pij = exp(s - st.x) / st.y;
      var dp = 0.0;
      for (var c = 0u; c < dv4; c++) { dp += dot(sh[oG + i * dv4 + c], vr[c]); }
      let ds = pij * (dp - st.z) * scale;
      for (var c = 0u; c < dv4; c++) { dvr[c] += pij * sh[oG + i * dv4 + c]; }
      for (var c = 0u; c < d4; c++) { dkr[c] += ds * sh[i * d4 + c]; }
    }
  }
  if (!live) { return; }
  ${storeRowWgsl('dk', 'dkr', 'd', 'S', 'j')}
  ${storeRowWgsl('dvOut', 'dvr', 'dv', 'S', 'j')}
}`;
}
