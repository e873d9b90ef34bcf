/**
 * WGSL tiled attention backward, pass 3 of 3 (FlashAttention-2's backward for long sequences; the passes:
 * dispatch-attention.ts): dq. One workgroup of 64 invocations per (leading index b, block of 64 query rows), k and
 * v staged in workgroup memory one block of Bc key rows at a time as in the forward (kernels/attention.ts); each
 * invocation, one query row i with q_i, dOut_i (d, dv ≤ 64) and its statistics m_i, l_i, D_i (pass 1,
 * kernels/attention-backward-stats.ts) in registers, recomputes P_ij = exp(s_ij − m_i) / l_i and
 * dS_ij = P_ij·(dOut_i·v_j − D_i)·scale for every key row j and sums dq_i = Σ_j dS_ij·k_j in order of j, written
 * contiguous: dq [B, L, d].
 *
 * Params: kernels/attention-prelude.ts (operand 3 dOut, word 7 Bc).
 */
import {
  attentionModuleWgsl,
  BACKWARD_INPUTS,
  keyBlocksWgsl,
  loadRowWgsl,
  perRowMainWgsl,
  storeRowWgsl,
} from './attention-prelude.js';
import { ATTENTION_STATS } from './attention-backward-stats.js';

/** Pass 3 over rows of widths d, dv with `cap` floats of workgroup memory (≥ Bc·(d + dv) padded to vec4s). */
export function attentionBackwardQWgsl(cap: number, d: number, dv: number): string {
  const bindings = [...BACKWARD_INPUTS, ['stats', 'read'], ['dq', 'read_write']] as const;
  return `${attentionModuleWgsl(bindings, `var<workgroup> kv: array<vec4<f32>, ${cap / 4}>;`, [d, dv])}
${perRowMainWgsl('Bc', 'i')}
  var qr: array<vec4<f32>, d4>;
  var gr: array<vec4<f32>, dv4>;
  var dqr: array<vec4<f32>, d4>;
  var m = 0.0;
  var l = 1.0;
  var D = 0.0;
  if (live) {
    ${loadRowWgsl('q', 'i')}
    ${loadRowWgsl('g', 'i')}
    let r = (b * L + i) * ${ATTENTION_STATS}u;
    m = stats[r];
    l = stats[r + 1u];
    D = stats[r + 2u];
  }
  ${keyBlocksWgsl(`let pij = exp(s - m) / l;
      var dp = 0.0;
      for (var c = 0u; c < dv4; c++) { dp += dot(gr[c], kv[vAt + j * dv4 + c]); }
      let ds = pij * (dp - D) * scale;
      for (var c = 0u; c < d4; c++) { dqr[c] += ds * kv[j * d4 + c]; }`)}
  if (!live) { return; }
  ${storeRowWgsl('dq', 'dqr', 'd', 'L', 'i')}
}`;
}
