/**
 * WGSL layerNormBackward's dweight and dbias (the layerNormBackwardKernel hook with parameter gradients): the sums
 * of g·x̂ and g down the rows of [rows, D], per column d (pairwise: pairwise.ts), in the dispatch that computes dx
 * (layerNormBackwardFusedWgsl: dx's workgroups first, then the sums'; one kernel fewer per backward).
 *
 * - whole columns (paramsColumn): one invocation per column sums every row. Right for few rows; for many it leaves
 *   the GPU idle (D = 384 columns are 6 workgroups) while each invocation walks all rows: 3.2 ms at [12608, 384]
 *   on an H200.
 * - chunks (paramsPartial, then `layerNormParamsSumWgsl`): the rows are cut into chunks of `p(3)` rows; a
 *   workgroup of 64 adjacent columns (coalesced reads) sums one chunk, writing partial sums [2, chunks, D]
 *   (dweight's, then dbias's); a second pass sums each column's partials pairwise. A sum of pairwise chunk sums
 *   stays within the pairwise bound.
 * Same params and bindings 1–5 as layer-norm-backward.ts (word 3: rows per chunk).
 */
import { paramsPrelude } from '../layout.js';
import { NORM_ARGS, NORM_INDEX, NORM_THREADS } from './layer-norm.js';
import { DX_ROW_FN, LAYER_NORM_BACKWARD_WORDS, NORM_BACKWARD_PRELUDE } from './layer-norm-backward.js';
import { pairwiseLoop } from './pairwise.js';

const TERMS = (row: string, col: string) => [
  { acc: 'sw', term: `gv * ((xAt(${row}, ${col}) - meanAt(${row})) * rstdAt(${row}))` },
  { acc: 'sb', term: 'gv' },
];

/** `fn paramsColumn(idx: u32)`: dweight and dbias of column idx over every row. */
const PARAMS_COLUMN_FN = `fn paramsColumn(idx: u32) {
  let rows = u32(p(0u)); let D = u32(p(1u));
  if (idx >= D) { return; }
  var sw = 0.0; var sb = 0.0;
  ${pairwiseLoop('r', 'rows', 'let gv = gAt(r, idx);', TERMS('r', 'idx'))}
  dw[idx] = sw;
  db[idx] = sb;
}`;

/** `fn paramsPartial(d: u32, c: u32, chunks: u32)`: column d's sums over chunk c into part [2, chunks, D]. */
const PARAMS_PARTIAL_FN = `fn paramsPartial(d: u32, c: u32, chunks: u32) {
  let rows = u32(p(0u)); let D = u32(p(1u)); let chunk = u32(p(3u));
  if (d >= D) { return; }
  let r0 = c * chunk;
  let n = min(rows, r0 + chunk) - r0;
  var sw = 0.0; var sb = 0.0;
  ${pairwiseLoop('i', 'n', 'let r = r0 + i; let gv = gAt(r, d);', TERMS('r', 'd'))}
  part[c * D + d] = sw;
  part[(chunks + c) * D + d] = sb;
}`;

/** The dx part of a fused kernel: WGSL declarations, and the statement that dx's workgroup `lin` runs. */
export interface FusedDx {
  code: string;
  call: string;
}

/** dx of 64 rows per workgroup, an invocation per row (layer-norm-backward.ts). */
const DX_PER_INVOCATION: FusedDx = { code: DX_ROW_FN, call: `dxRow(lin * ${NORM_THREADS}u + lid.x);` };

/**
 * dx and the parameters' sums in one dispatch (what a backward with parameter gradients runs): the first
 * `p(16)` workgroups (flat over the grid) compute dx — of 64 rows each (dxRow) unless `dxPart` says otherwise
 * (a row each: layer-norm-backward-rows.ts) — the rest the parameters' sums — chunked (`partial`: `p(17)` groups
 * of 64 columns per chunk, paramsPartial) or whole columns (paramsColumn) — with the separate kernels' code, so
 * their bits.
 */
export function layerNormBackwardFusedWgsl(
  partial: boolean,
  dxPart: FusedDx = DX_PER_INVOCATION,
  args = NORM_ARGS,
): string {
  const outs = partial
    ? '@group(0) @binding(7) var<storage, read_write> part: array<f32>;'
    : `@group(0) @binding(7) var<storage, read_write> dw: array<f32>;
@group(0) @binding(8) var<storage, read_write> db: array<f32>;`;
  const params = partial
    ? `let cg = u32(p(17u));
  let rows = u32(p(0u)); let chunk = u32(p(3u));
  paramsPartial((j % cg) * ${NORM_THREADS}u + lid.x, j / cg, (rows + chunk - 1u) / chunk);`
    : `paramsColumn(j * ${NORM_THREADS}u + lid.x);`;
  const prelude = NORM_BACKWARD_PRELUDE.replace(
    paramsPrelude(LAYER_NORM_BACKWARD_WORDS),
    paramsPrelude(LAYER_NORM_FUSED_WORDS),
  );
  return `${prelude}
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;
${outs}
${dxPart.code}
${partial ? PARAMS_PARTIAL_FN : PARAMS_COLUMN_FN}
@compute @workgroup_size(${NORM_THREADS}) fn main(${args}) {
  let lin = wid.y * nwg.x + wid.x;
  let dxGroups = u32(p(16u));
  if (lin < dxGroups) {
    ${dxPart.call}
    return;
  }
  let j = lin - dxGroups;
  ${params}
}`;
}

/** Params words of the fused dispatch: the backward's, then dx's workgroups and the column groups. */
export const LAYER_NORM_FUSED_WORDS = LAYER_NORM_BACKWARD_WORDS + 2;

/** Params words of the second pass: 0 D · 1 chunks. */
export const LAYER_NORM_PARAMS_SUM_WORDS = 2;

/** Pass 2 of the chunked form: one invocation per column sums its chunks' partials pairwise. */
export const layerNormParamsSumWgsl = `${paramsPrelude(LAYER_NORM_PARAMS_SUM_WORDS)}
@group(0) @binding(1) var<storage, read> part: array<f32>;
@group(0) @binding(2) var<storage, read_write> dw: array<f32>;
@group(0) @binding(3) var<storage, read_write> db: array<f32>;
@compute @workgroup_size(${NORM_THREADS}) fn main(${NORM_ARGS}) {
  ${NORM_INDEX}
  let D = u32(p(0u)); let chunks = u32(p(1u));
  if (idx >= D) { return; }
  var sw = 0.0; var sb = 0.0;
  ${pairwiseLoop('c', 'chunks', '', [
    { acc: 'sw', term: 'part[c * D + idx]' },
    { acc: 'sb', term: 'part[(chunks + c) * D + idx]' },
  ])}
  dw[idx] = sw;
  db[idx] = sb;
}`;

/**
 * Rows per chunk for [rows, D] (0: whole columns, paramsColumn): chunks of at least 32 rows, as many as give
 * about 1024 workgroups of 64 columns, where that makes two chunks or more.
 */
export function layerNormParamsChunk(rows: number, D: number): number {
  const columnGroups = Math.ceil(D / NORM_THREADS);
  const chunks = Math.min(Math.floor(rows / 32), Math.ceil(1024 / columnGroups), 65535);
  return chunks >= 2 ? Math.ceil(rows / chunks) : 0;
}
