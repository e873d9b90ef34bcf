/**
 * WGSL shared by the attention kernels (the forward, kernels/attention.ts, and the backward's,
 * kernels/attention-backward*.ts): the params and storage bindings, the strided element offset of an operand, d and
 * dv as constants, vec4 row loaders, the per-row kernels' entry and prelude, rows loaded into and stored from
 * registers, and the loop over staged blocks of key rows with the score of each.
 *
 * Params (ATTENTION_WORDS): 0 L · 1 S · 2 d · 3 dv · 4 scale (f32 bits) · 5 the second leading dim's size ·
 * 6 B (the leading dims' product) · 7 the rows of a staged block (Bc over key rows, Br over query rows) · then per
 * operand o (q, k, v, and the forward's out or the backward's dOut) at 8 + 5o: its offset, the strides of the two
 * leading dims, of a row and of a column.
 */
import { paramsPrelude } from '../layout.js';

/** Invocations per workgroup (rows per workgroup of the per-row kernels). */
export const ATTENTION_THREADS = 64;
/** The largest d and dv of the per-row kernels (their registers). */
export const ATTENTION_MAX_WIDTH = 64;
/** Parameter words: 8 fixed, then 5 per operand (four: q, k, v, dOut). */
export const ATTENTION_WORDS = 8 + 5 * 4;

/** WGSL: the element offset of operand o at leading index b, row r, column c. */
const ATTENTION_OPERANDS = `fn at(o: u32, b: u32, r: u32, c: u32) -> i32 {
  let w = 8u + 5u * o;
  let n1 = u32(p(5u));
  return p(w) + i32(b / n1) * p(w + 1u) + i32(b % n1) * p(w + 2u) + i32(r) * p(w + 3u) + i32(c) * p(w + 4u);
}`;

/** A float32 storage binding: its name in WGSL and its access. */
export type AttentionBinding = readonly [name: string, access: 'read' | 'read_write'];

/** The backward's inputs at bindings 1–4: q, k, v and dOut (`g`). */
export const BACKWARD_INPUTS: readonly AttentionBinding[] = [
  ['q', 'read'],
  ['k', 'read'],
  ['v', 'read'],
  ['g', 'read'],
];

/**
 * WGSL: d and dv as constants of the module, so that the loops over a row have fixed bounds and the compiler can
 * unroll them and keep the rows in registers (a pipeline per pair of widths); rows are held as vec4s, d4 and dv4
 * of them (the last padded with zeros).
 */
const widthsWgsl = (d: number, dv: number): string =>
  `const d = ${d}u;\nconst dv = ${dv}u;\nconst d4 = ${Math.ceil(d / 4)}u;\nconst dv4 = ${Math.ceil(dv / 4)}u;`;

/** Floats of one staged row of width w: w padded to vec4s. */
export const paddedWidth = (w: number): number => 4 * Math.ceil(w / 4);

/** The width (`d` or `dv`) of operand o's rows: q's and k's d, v's and dOut's dv. */
const widthOf = (o: number): string => (o < 2 ? 'd' : 'dv');

/**
 * WGSL: `name4(b, r, c)`, the vec4 of operand o's (binding `name`'s) row r at columns c … c + 3 of leading index b,
 * zeros past its width `w`.
 */
function rowVec4Wgsl(name: string, o: number, w: string): string {
  return `fn ${name}4(b: u32, r: u32, c: u32) -> vec4<f32> {
  var x = vec4<f32>(0.0);
  for (var e = 0u; e < 4u; e++) { if (c + e < ${w}) { x[e] = ${name}[at(${o}u, b, r, c + e)]; } }
  return x;
}`;
}

/**
 * WGSL: the head of an attention module: the params, `bindings` at 1, 2, … (operands q, k, v, out or dOut first),
 * the workgroup memory `shared` (a declaration) and at(); with `widths` [d, dv] also d and dv as constants
 * (widthsWgsl) and a row loader `name4` (see rowVec4Wgsl) for each of the four operands that is read.
 */
export function attentionModuleWgsl(
  bindings: readonly AttentionBinding[],
  shared: string,
  widths?: readonly [number, number],
): string {
  const declared = bindings.map(
    ([x, access], i) => `@group(0) @binding(${i + 1}) var<storage, ${access}> ${x}: array<f32>;`,
  );
  const head = `${paramsPrelude(ATTENTION_WORDS)}\n${declared.join('\n')}\n`;
  if (!widths) return `${head}${shared}\n${ATTENTION_OPERANDS}`;
  const loaders = bindings
    .slice(0, 4)
    .flatMap(([x, access], o) => (access === 'read' ? [rowVec4Wgsl(x, o, widthOf(o))] : []));
  return `${head}${widthsWgsl(...widths)}\n${shared}\n${ATTENTION_OPERANDS}\n${loaders.join('\n')}`;
}

/**
 * WGSL: the entry of a per-row kernel (a workgroup per leading index b, `wid.y`, and block of ATTENTION_THREADS
 * rows) and its prelude: L, S, scale, the block rows `block` (word 7), this invocation's `row` (of L query rows
 * for `i`, of S key rows for `j`) and `live`, whether it is one. The body follows; the caller closes main.
 */
export function perRowMainWgsl(block: 'Bc' | 'Br', row: 'i' | 'j'): string {
  return `@compute @workgroup_size(${ATTENTION_THREADS}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(local_invocation_id) lid: vec3u) {
  let L = u32(p(0u)); let S = u32(p(1u));
  let scale = pf(4u);
  let ${block} = u32(p(7u));
  let b = wid.y;
  let ${row} = wid.x * ${ATTENTION_THREADS}u + lid.x;
  let live = ${row} < ${row === 'i' ? 'L' : 'S'};`;
}

/** WGSL: operand `name`'s (q, k: width d; v, g: dv) row `row` of b into the registers `${name}r`, as vec4s. */
export function loadRowWgsl(name: 'q' | 'k' | 'v' | 'g', row: string): string {
  const w4 = name === 'q' || name === 'k' ? 'd4' : 'dv4';
  return `for (var c = 0u; c < ${w4}; c++) { ${name}r[c] = ${name}4(b, ${row}, 4u * c); }`;
}

/** WGSL: the registers `reg` (vec4s) into row `row` of b of the contiguous `out` [B, rows, w]. */
export function storeRowWgsl(out: string, reg: string, w: 'd' | 'dv', rows: 'L' | 'S', row: string): string {
  return `for (var c = 0u; c < ${w}; c++) { ${out}[(b * ${rows} + ${row}) * ${w} + c] = ${reg}[c / 4u][c % 4u]; }`;
}

/**
 * WGSL: the workgroup stages key rows j0 … j0 + n of k (at `kv[0]`, [n, d4] vec4s) and v (at `kv[n·d4]`,
 * [n, dv4]) of its b; `T` invocations; between two barriers (the previous block's readers done, this one's
 * writes seen). Needs k4 and v4.
 */
function stageKeysWgsl(T: number): string {
  return `workgroupBarrier();
    for (var t = lid.x; t < n * d4; t += ${T}u) { kv[t] = k4(b, j0 + t / d4, 4u * (t % d4)); }
    for (var t = lid.x; t < n * dv4; t += ${T}u) { kv[n * d4 + t] = v4(b, j0 + t / dv4, 4u * (t % dv4)); }
    workgroupBarrier();`;
}

/**
 * WGSL: a query row's loop over all key rows j of its b, in blocks of Bc staged in workgroup memory `kv` (k's rows
 * at 0, v's at vAt; every invocation of the workgroup takes part in the staging, `live` or not): for each key row of
 * a live invocation the score s = q_i·k_j·scale (q_i in the registers qr), then `body`.
 */
export function keyBlocksWgsl(body: string): string {
  return `for (var j0 = 0u; j0 < S; j0 += Bc) {
    let n = min(Bc, S - j0);
    ${stageKeysWgsl(ATTENTION_THREADS)}
    let vAt = n * d4;
    for (var j = 0u; j < select(0u, n, live); j++) {
      var s = 0.0;
      for (var c = 0u; c < d4; c++) { s += dot(qr[c], kv[j * d4 + c]); }
      s = s * scale;
      ${body}
    }
  }`;
}
