/**
 * WGSL batched GEMM for many small products (batched attention: [N·heads] × 17×16 · 16×17): each
 * invocation computes a TM×TN block of one batch item's C in registers, reading A and B straight from
 * global memory through their strides (transposed views included). No workgroup memory and no
 * barriers: a tiled GEMM gives each tiny item a workgroup of its own that computes mostly padding and
 * synchronizes for little work. Invocations are numbered flat over (item, block row, block column), 64
 * to a workgroup. Rows and columns past the edge read the last row (column) and are not written.
 *
 * Measured on lavapipe (2 shared cores): 256 items of 17×16 · 16×17 take 0.6–1.3 ms this way against
 * ~10 ms on the 32×32 tile; 4×8 blocks were within noise of 8×4, 6×8 and 9×9 ones. On a software adapter
 * every product runs here, in 8×8 blocks (workgroup memory is the same memory there, and a barrier
 * switches between invocations): 1088×64 · 64×64 1.3 against 2.6 ms on the 64×64 tile, 256² 2.8 against
 * 13 ms, 1024² 190 against 680 ms; 8×16, 16×8 and 16×16 blocks were within noise of 8×8 at the ViT's
 * shapes and slower at 1024².
 *
 * Same params as the tiled GEMM (kernels/matmul.ts; the split-K count is ignored), and the same bias.
 */
import type { ElementwiseStep } from '@polyhal/hal';
import { batchOffsets, biasDecl, gemmEpilogue, gemmPrelude } from './matmul.js';
import { epilogued } from './matmul-epilogue.js';

export const BLOCK_THREADS = 64;

/** Invocations of the block kernel for a batch of [M, N] outputs and blocks tm×tn. */
export const blockInvocations = (M: number, N: number, batch: number, tm: number, tn: number): number =>
  batch * Math.ceil(M / tm) * Math.ceil(N / tn);

export function matmulBlocksWgsl(
  tm: number,
  tn: number,
  R: number,
  bias = false,
  epi: readonly ElementwiseStep[] | null = null,
  keep: number | null = null,
): string {
  const e = gemmEpilogue(R, bias, epi, keep);
  const rows = Array.from({ length: tm }, (_, i) => i);
  const cols = Array.from({ length: tn }, (_, j) => j);
  const fma = rows.flatMap((i) => cols.map((j) => `acc[${i * tn + j}] += a${i} * b${j};`));
  const plus = (i: number, j: number): string => (bias ? ` + biasAt(row0 + ${i}u, col0 + ${j}u)` : '');
  const store = (i: number, j: number): string => epilogued(`acc[${i * tn + j}]${plus(i, j)}`, `cr + ${j}u`, e);
  return `${gemmPrelude(R, bias, e)}
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
${bias ? biasDecl(R) : ''}
@compute @workgroup_size(${BLOCK_THREADS}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let idx = (wid.y * nwg.x + wid.x) * ${BLOCK_THREADS}u + lid.x;
  let M = u32(p(0u)); let N = u32(p(1u)); let K = u32(p(2u)); let batch = u32(p(3u));
  let sam = p(6u); let sak = p(7u); let sbk = p(8u); let sbn = p(9u);
  let GM = (M + ${tm - 1}u) / ${tm}u; let GN = (N + ${tn - 1}u) / ${tn}u;
  if (idx >= batch * GM * GN) { return; }
  let item = idx / (GM * GN);
  let blk = idx % (GM * GN);
  let row0 = (blk / GN) * ${tm}u; let col0 = (blk % GN) * ${tn}u;
  ${batchOffsets(R, 'item')}
  ${rows.map((i) => `let ra${i} = offA + i32(min(row0 + ${i}u, M - 1u)) * sam;`).join('\n  ')}
  ${cols.map((j) => `let cb${j} = offB + i32(min(col0 + ${j}u, N - 1u)) * sbn;`).join('\n  ')}
  var acc: array<f32, ${tm * tn}>;
  for (var k = 0; k < i32(K); k++) {
    let ka = k * sak; let kb = k * sbk;
    ${rows.map((i) => `let a${i} = a[ra${i} + ka];`).join(' ')}
    ${cols.map((j) => `let b${j} = b[cb${j} + kb];`).join(' ')}
    ${fma.join('\n    ')}
  }
  let cbase = item * M * N;
  ${rows
    .map(
      (i) => `if (row0 + ${i}u < M) {
    let cr = cbase + (row0 + ${i}u) * N + col0;
    ${cols.map((j) => `if (col0 + ${j}u < N) { c[cr + ${j}u] = ${store(i, j)}; }`).join('\n    ')}
  }`,
    )
    .join('\n  ')}
}`;
}
