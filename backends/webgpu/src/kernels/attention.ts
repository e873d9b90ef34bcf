/**
 * WGSL fused attention forward (the attentionKernel hook; semantics: hal/src/ops/attention-ops.ts), after
 * FlashAttention-2's forward: one workgroup of 64 invocations per (leading index b, block of 64 query rows). The
 * workgroup stages k and v of its b in workgroup memory one block of Bc key rows at a time (read through their
 * strides: the heads' permuted views need no copy; a short sequence is one block), and each invocation runs one
 * query row with an online softmax in float32 carried across the blocks (Milakov & Gimelshein 2018): the running
 * maximum m, the sum l of exp(s − m) and the accumulator Σ exp(s − m)·v rescaled by exp(m_old − m) whenever the
 * maximum grows, and writes acc / l into out [B, L, dv] at its strides. q's row (d ≤ 64) and the accumulator
 * (dv ≤ 64) live in registers as vec4s (d and dv constants of the pipeline; staged rows are vec4s too, padded with
 * zeros): wider heads are declined (dispatch-attention.ts).
 *
 * Params: kernels/attention-prelude.ts (operand 3 out, word 7 Bc).
 */
import { attentionModuleWgsl, keyBlocksWgsl, loadRowWgsl, perRowMainWgsl } from './attention-prelude.js';

export { ATTENTION_MAX_WIDTH, ATTENTION_THREADS, ATTENTION_WORDS, paddedWidth } from './attention-prelude.js';

/**
 * The forward over rows of widths d, dv with `cap` floats of workgroup memory (≥ Bc·(paddedWidth(d) +
 * paddedWidth(dv))).
 */
export function attentionWgsl(cap: number, d: number, dv: number): string {
  const bindings = [
    ['q', 'read'],
    ['k', 'read'],
    ['v', 'read'],
    ['out', 'read_write'],
  ] as const;
  return `${attentionModuleWgsl(bindings, `var<workgroup> kv: array<vec4<f32>, ${cap / 4}>;`, [d, dv])}
${perRowMainWgsl('Bc', 'i')}
  var qr: array<vec4<f32>, d4>;
  if (live) { ${loadRowWgsl('q', 'i')} }
  var acc: array<vec4<f32>, dv4>;
  var m = 0.0;
  var l = 0.0;
  ${keyBlocksWgsl(`if (j0 + j == 0u) { m = s; }
      let mn = max(m, s);
      let grow = exp(m - mn);
      let e = exp(s - mn);
      l = l * grow + e;
      for (var c = 0u; c < dv4; c++) { acc[c] = acc[c] * grow + e * kv[vAt + j * dv4 + c]; }
      m = mn;`)}
  if (!live) { return; }
  for (var c = 0u; c < dv; c++) { out[at(3u, b, i, c)] = acc[c / 4u][c % 4u] / l; }
}`;
}
