/**
 * WGSL tiled attention backward, pass 1 of 3 (FlashAttention-2's backward for long sequences; the passes:
 * dispatch-attention.ts): the softmax statistics of each query row. One workgroup of 64 invocations per (leading
 * index b, block of 64 query rows), k and v staged in workgroup memory one block of Bc key rows at a time as in the
 * forward (kernels/attention.ts); each invocation takes one query row i over all keys j with an online softmax in
 * float32: the maximum m_i of s_ij = q_i·k_j·scale, l_i = Σ_j exp(s_ij − m_i) and
 * D_i = Σ_j P_ij·(dOut_i·v_j) (= dOut_i·out_i), the sums rescaled by exp(m_old − m) whenever the maximum grows,
 * written to the float32 scratch stats [B, L, 3] as (m_i, l_i, D_i). q's and dOut's rows (d, dv ≤ 64) live in
 * registers.
 *
 * Params: kernels/attention-prelude.ts (operand 3 dOut, word 7 Bc).
 */
import {
  attentionModuleWgsl,
  BACKWARD_INPUTS,
  keyBlocksWgsl,
  loadRowWgsl,
  perRowMainWgsl,
} from './attention-prelude.js';

/** Floats per query row of the statistics scratch: m, l, D. */
export const ATTENTION_STATS = 3;

/** Pass 1 over rows of widths d, dv with `cap` floats of workgroup memory (≥ Bc·(d + dv) padded to vec4s). */
export function attentionBackwardStatsWgsl(cap: number, d: number, dv: number): string {
  const bindings = [...BACKWARD_INPUTS, ['stats', 'read_write']] as const;
  return `${attentionModuleWgsl(bindings, `var<workgroup> kv: array<vec4<f32>, ${cap / 4}>;`, [d, dv])}
${perRowMainWgsl('Bc', 'i')}
  var qr: array<vec4<f32>, d4>;
  var gr: array<vec4<f32>, dv4>;
  if (live) {
    ${loadRowWgsl('q', 'i')}
    ${loadRowWgsl('g', 'i')}
  }
  var m = 0.0;
  var l = 0.0;
  var D = 0.0;
  ${keyBlocksWgsl(`var dp = 0.0;
      for (var c = 0u; c < dv4; c++) { dp += dot(gr[c], kv[vAt + j * dv4 + c]); }
      if (j0 + j == 0u) { m = s; }
      let mn = max(m, s);
      let grow = exp(m - mn);
      let e = exp(s - mn);
      l = l * grow + e;
      D = D * grow + e * dp;
      m = mn;`)}
  if (!live) { return; }
  let r = (b * L + i) * ${ATTENTION_STATS}u;
  stats[r] = m;
  stats[r + 1u] = l;
  stats[r + 2u] = D / l;
}`;
}
