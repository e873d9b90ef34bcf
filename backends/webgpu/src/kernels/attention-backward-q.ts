/**
 * WGSL tiled attention backward, pass 3 of 3 (FlashAttention-2's backward for long sequences; the passes:
 * dispatch-attention.ts): dq. One workgroup of 64 invocations per (leading index b, block of 64 query rows), k and
 * v staged in workgroup memory one block of Bc key rows at a time as in the forward (kernels/attention.ts); each
 * invocation, one query row i with q_i, dOut_i (d, dv ≤ 64) and its statistics m_i, l_i, D_i (pass 1,
 * kernels/attention-backward-stats.ts) in registers, recomputes P_ij = exp(s_ij − m_i) / l_i and
 * dS_ij = P_ij·(dOut_i·v_j − D_i)·scale for every key row j and sums dq_i = Σ_j dS_ij·k_j in order of j, written
 * contiguous: dq [B, L, d].
 *
 * Params: as the forward's (kernels/attention.ts), operand 3 dOut, word 7 Bc.
 */
import { paramsPrelude } from '../layout.js';
import {
  ATTENTION_OPERANDS,
  ATTENTION_THREADS,
  ATTENTION_WORDS,
  rowVec4Wgsl,
  stageKeysWgsl,
  widthsWgsl,
} from './attention.js';
import { ATTENTION_STATS } from './attention-backward-stats.js';

/** Pass 3 over rows of widths d, dv with `cap` floats of workgroup memory (≥ Bc·(d + dv) padded to vec4s). */
export function attentionBackwardQWgsl(cap: number, d: number, dv: number): string {
  const R = ATTENTION_STATS;
  return `${paramsPrelude(ATTENTION_WORDS)}
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> g: array<f32>;
@group(0) @binding(5) var<storage, read> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> dq: array<f32>;
${widthsWgsl(d, dv)}
var<workgroup> kv: array<vec4<f32>, ${cap / 4}>;
${ATTENTION_OPERANDS}
${['q', 'k', 'v', 'g'].map((x, o) => rowVec4Wgsl(x, o, o === 0 || o === 1 ? 'd' : 'dv')).join('\n')}
@compute @workgroup_size(${ATTENTION_THREADS}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(local_invocation_id) lid: vec3u) {
  let L = u32(p(0u)); let S = u32(p(1u));
  let scale = pf(4u);
  let Bc = u32(p(7u));
  let b = wid.y;
  let i = wid.x * ${ATTENTION_THREADS}u + lid.x;
  let live = i < L;
  var qr: array<vec4<f32>, d4>;
  var gr: array<vec4<f32>, dv4>;
  var dqr: array<vec4<f32>, d4>;
  var m = 0.0;
  var l = 1.0;
  var D = 0.0;
  if (live) {
    for (var c = 0u; c < d4; c++) { qr[c] = q4(b, i, 4u * c); }
    for (var c = 0u; c < dv4; c++) { gr[c] = g4(b, i, 4u * c); }
    let r = (b * L + i) * ${R}u;
    m = stats[r];
    l = stats[r + 1u];
    D = stats[r + 2u];
  }
  for (var j0 = 0u; j0 < S; j0 += Bc) {
    let n = min(Bc, S - j0);
    ${stageKeysWgsl(ATTENTION_THREADS)}
    let vAt = n * d4;
    for (var j = 0u; j < select(0u, n, live); j++) {
      var s = 0.0;
      for (var c = 0u; c < d4; c++) { s += dot(qr[c], kv[j * d4 + c]); }
      s = s * scale;
      let pij = exp(s - m) / l;
      var dp = 0.0;
      for (var c = 0u; c < dv4; c++) { dp += dot(gr[c], kv[vAt + j * dv4 + c]); }
      let ds = pij * (dp - D) * scale;
      for (var c = 0u; c < d4; c++) { dqr[c] += ds * kv[j * d4 + c]; }
    }
  }
  if (!live) { return; }
  for (var c = 0u; c < d; c++) { dq[(b * L + i) * d + c] = dqr[c / 4u][c % 4u]; }
}`;
}
