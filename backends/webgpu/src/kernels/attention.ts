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
 * Params (ATTENTION_WORDS): 0 L · 1 S · 2 d · 3 dv · 4 scale (f32 bits) · 5 the second leading dim's size ·
 * 6 B (the leading dims' product) · 7 the rows of a staged block (the forward's Bc) · then per operand o (q, k, v,
 * and the forward's out or the backward's dOut) at 8 + 5o: its offset, the strides of the two leading dims, of a
 * row and of a column.
 */
import { paramsPrelude } from '../layout.js';

/** Invocations per workgroup (query rows per workgroup of the forward). */
export const ATTENTION_THREADS = 64;
/** The largest d and dv of the forward (its registers). */
export const ATTENTION_MAX_WIDTH = 64;
/** Parameter words: 8 fixed, then 5 per operand (four: q, k, v, dOut). */
export const ATTENTION_WORDS = 8 + 5 * 4;

/** WGSL shared by both kernels: the element offset of operand o at leading index b, row r, column c. */
export const ATTENTION_OPERANDS = `fn at(o: u32, b: u32, r: u32, c: u32) -> i32 {
  let w = 8u + 5u * o;
  let n1 = u32(p(5u));
  return p(w) + i32(b / n1) * p(w + 1u) + i32(b % n1) * p(w + 2u) + i32(r) * p(w + 3u) + i32(c) * p(w + 4u);
}`;

/**
 * WGSL: d and dv as constants of the module, so that the loops over a row have fixed bounds and the compiler can
 * unroll them and keep the rows in registers (a pipeline per pair of widths); rows are held as vec4s, d4 and dv4
 * of them (the last padded with zeros).
 */
export const widthsWgsl = (d: number, dv: number): string =>
  `const d = ${d}u;\nconst dv = ${dv}u;\nconst d4 = ${Math.ceil(d / 4)}u;\nconst dv4 = ${Math.ceil(dv / 4)}u;`;

/** Floats of one staged row of width w: w padded to vec4s. */
export const paddedWidth = (w: number): number => 4 * Math.ceil(w / 4);

/**
 * WGSL: `name4(b, r, c)`, the vec4 of operand o's (binding `name`'s) row r at columns c … c + 3 of leading index b,
 * zeros past its width `w`.
 */
export function rowVec4Wgsl(name: string, o: number, w: string): string {
  return `fn ${name}4(b: u32, r: u32, c: u32) -> vec4<f32> {
  var x = vec4<f32>(0.0);
  for (var e = 0u; e < 4u; e++) { if (c + e < ${w}) { x[e] = ${name}[at(${o}u, b, r, c + e)]; } }
  return x;
}`;
}

/**
 * WGSL: the workgroup stages key rows j0 … j0 + n of k (at `kv[0]`, [n, d4] vec4s) and v (at `kv[n·d4]`,
 * [n, dv4]) of its b; `T` invocations; between two barriers (the previous block's readers done, this one's
 * writes seen). Needs k4 and v4 (rowVec4Wgsl).
 */
export function stageKeysWgsl(T: number): string {
  return `workgroupBarrier();
    for (var t = lid.x; t < n * d4; t += ${T}u) { kv[t] = k4(b, j0 + t / d4, 4u * (t % d4)); }
    for (var t = lid.x; t < n * dv4; t += ${T}u) { kv[n * d4 + t] = v4(b, j0 + t / dv4, 4u * (t % dv4)); }
    workgroupBarrier();`;
}

/**
 * The forward over rows of widths d, dv with `cap` floats of workgroup memory (≥ Bc·(paddedWidth(d) +
 * paddedWidth(dv))).
 */
export function attentionWgsl(cap: number, d: number, dv: number): string {
  return `${paramsPrelude(ATTENTION_WORDS)}
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
${widthsWgsl(d, dv)}
var<workgroup> kv: array<vec4<f32>, ${cap / 4}>;
${ATTENTION_OPERANDS}
${rowVec4Wgsl('q', 0, 'd')}
${rowVec4Wgsl('k', 1, 'd')}
${rowVec4Wgsl('v', 2, 'dv')}
@compute @workgroup_size(${ATTENTION_THREADS}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(local_invocation_id) lid: vec3u) {
  let L = u32(p(0u)); let S = u32(p(1u));
  let scale = pf(4u);
  let Bc = u32(p(7u));
  let b = wid.y;
  let i = wid.x * ${ATTENTION_THREADS}u + lid.x;
  let live = i < L;
  var qr: array<vec4<f32>, d4>;
  if (live) { for (var c = 0u; c < d4; c++) { qr[c] = q4(b, i, 4u * c); } }
  var acc: array<vec4<f32>, dv4>;
  var m = 0.0;
  var l = 0.0;
  for (var j0 = 0u; j0 < S; j0 += Bc) {
    let n = min(Bc, S - j0);
    ${stageKeysWgsl(ATTENTION_THREADS)}
    let vAt = n * d4;
    for (var j = 0u; j < select(0u, n, live); j++) {
      var s = 0.0;
      for (var c = 0u; c < d4; c++) { s += dot(qr[c], kv[j * d4 + c]); }
      s = s * scale;
      if (j0 + j == 0u) { m = s; }
      let mn = max(m, s);
      let grow = exp(m - mn);
      let e = exp(s - mn);
      l = l * grow + e;
      for (var c = 0u; c < dv4; c++) { acc[c] = acc[c] * grow + e * kv[vAt + j * dv4 + c]; }
      m = mn;
    }
  }
  if (!live) { return; }
  for (var c = 0u; c < dv; c++) { out[at(3u, b, i, c)] = acc[c / 4u][c % 4u] / l; }
}`;
}
