/**
 * WGSL layerNormBackward's dweight and dbias (the layerNormBackwardKernel hook with parameter gradients): the sums
 * of g·x̂ and g down the rows of [rows, D], per column d (pairwise: pairwise.ts).
 *
 * - `layerNormParamsWgsl`: one invocation per column sums every row. Right for few rows; for many it leaves the
 *   GPU idle (D = 384 columns are 6 workgroups) while each invocation walks all rows: 3.2 ms at [12608, 384] on
 *   an H200.
 * - `layerNormParamsPartialWgsl` + `layerNormParamsSumWgsl`: the rows are cut into chunks of `p(3)` rows; a
 *   workgroup of 64 adjacent columns (coalesced reads) sums one chunk, writing partial sums [2, chunks, D]
 *   (dweight's, then dbias's); a second pass sums each column's partials pairwise. A sum of pairwise chunk sums
 *   stays within the pairwise bound.
 * Same params and bindings 1–5 as layer-norm-backward.ts (word 3: rows per chunk).
 */
import { paramsPrelude } from '../layout.js';
import { NORM_ARGS, NORM_INDEX, NORM_THREADS } from './layer-norm.js';
import { NORM_BACKWARD_PRELUDE } from './layer-norm-backward.js';
import { pairwiseLoop } from './pairwise.js';

const TERMS = (row: string, col: string) => [
  { acc: 'sw', term: `gv * ((xAt(${row}, ${col}) - meanAt(${row})) * rstdAt(${row}))` },
  { acc: 'sb', term: 'gv' },
];

export const layerNormParamsWgsl = `${NORM_BACKWARD_PRELUDE}
@group(0) @binding(6) var<storage, read_write> dw: array<f32>;
@group(0) @binding(7) var<storage, read_write> db: array<f32>;
@compute @workgroup_size(${NORM_THREADS}) fn main(${NORM_ARGS}) {
  ${NORM_INDEX}
  let rows = u32(p(0u)); let D = u32(p(1u));
  if (idx >= D) { return; }
  var sw = 0.0; var sb = 0.0;
  ${pairwiseLoop('r', 'rows', 'let gv = gAt(r, idx);', TERMS('r', 'idx'))}
  dw[idx] = sw;
  db[idx] = sb;
}`;

/** Pass 1 of the chunked form: workgroup (x: 64 columns, y: chunk) → partial sums [2, chunks, D]. */
export const layerNormParamsPartialWgsl = `${NORM_BACKWARD_PRELUDE}
@group(0) @binding(6) var<storage, read_write> part: array<f32>;
@compute @workgroup_size(${NORM_THREADS}) fn main(${NORM_ARGS}) {
  let rows = u32(p(0u)); let D = u32(p(1u)); let chunk = u32(p(3u));
  let d = wid.x * ${NORM_THREADS}u + lid.x;
  if (d >= D) { return; }
  let r0 = wid.y * chunk;
  let n = min(rows, r0 + chunk) - r0;
  var sw = 0.0; var sb = 0.0;
  ${pairwiseLoop('i', 'n', 'let r = r0 + i; let gv = gAt(r, d);', TERMS('r', 'd'))}
  part[wid.y * D + d] = sw;
  part[(nwg.y + wid.y) * D + d] = sb;
}`;

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
 * Rows per chunk for [rows, D] (0: one pass, layerNormParamsWgsl): chunks of at least 32 rows, as many as give
 * about 1024 workgroups of 64 columns, where that makes two chunks or more.
 */
export function layerNormParamsChunk(rows: number, D: number): number {
  const columnGroups = Math.ceil(D / NORM_THREADS);
  const chunks = Math.min(Math.floor(rows / 32), Math.ceil(1024 / columnGroups), 65535);
  return chunks >= 2 ? Math.ceil(rows / chunks) : 0;
}
