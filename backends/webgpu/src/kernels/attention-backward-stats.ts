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

/** Floats per query row of the statistics scratch: m, l, D. */
export const ATTENTION_STATS = 3;

/** Pass 1 over rows of widths d, dv with `cap` floats of workgroup memory (≥ Bc·(d + dv) padded to vec4s). */
export function attentionBackwardStatsWgsl(cap: number, d: number, dv: number): string {
  return `${paramsPrelude(ATTENTION_WORDS)}
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> g: array<f32>;
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;
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
  if (live) {
    for (var c = 0u; c < d4; c++) { qr[c] = q4(b, i, 4u * c); }
    for (var c = 0u; c < dv4; c++) { gr[c] = g4(b, i, 4u * c); }
  }
  var m = 0.0;
  var l = 0.0;
  var D = 0.0;
  for (var j0 = 0u; j0 < S; j0 += Bc) {
    let n = min(Bc, S - j0);
    ${stageKeysWgsl(ATTENTION_THREADS)}
    let vAt = n * d4;
    for (var j = 0u; j < select(0u, n, live); j++) {
      var s = 0.0;
      for (var c = 0u; c < d4; c++) { s += dot(qr[c], kv[j * d4 + c]); }
      s = s * scale;
      var dp = 0.0;
      for (var c = 0u; c < dv4; c++) { dp += dot(gr[c], kv[vAt + j * dv4 + c]); }
      if (j0 + j == 0u) { m = s; }
      let mn = max(m, s);
      let grow = exp(m - mn);
      let e = exp(s - mn);
      l = l * grow + e;
      D = D * grow + e * dp;
      m = mn;
    }
  }
  if (!live) { return; }
  let r = (b * L + i) * ${ATTENTION_STATS}u;
  stats[r] = m;
  stats[r + 1u] = l;
  stats[r + 2u] = D / l;
}`;
}
