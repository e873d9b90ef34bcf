/**
 * Split-K for the float16 tensor-core product (dispatch-matmul-f16.ts): a single product of few output tiles over a
 * long K — the weight gradient of a Linear over many rows — as partial products over the grid's z, summed after.
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import type { HalfMatmulContext } from './dispatch-matmul-f16.js';
import { packOperand, readsDirect } from './dispatch-matmul-f16-pack.js';
import { flat } from './kernel-params.js';
import {
  F16_MATMUL_WORDS,
  HALF_KT,
  type HalfSubgroupMatrixTile,
  halfSubgroupMatrixWgsl,
} from './kernels/matmul-subgroup-matrix-f16.js';
import { splitKSumWgsl, splitKSumWords } from './kernels/splitk.js';

const roundUp = (x: number, m: number): number => Math.ceil(x / m) * m;

/** Splits stop doubling once the workgroups of a split product reach this many (a few per SM of a large GPU). */
const SPLIT_GROUPS = 512;
/** Nor below this depth of K per split (halves). */
const SPLIT_MIN_DEPTH = 512;

/**
 * The split-K count of a single [M, N] · over-Kp product on tile t (a multiple of it in M and N): 1 for an output of
 * many tiles; else the power of two (≤ 32) that brings the workgroups toward SPLIT_GROUPS, each split at least
 * SPLIT_MIN_DEPTH deep. The weight gradients of a Linear over many rows are such products: ViT-S's fc1,
 * [1536, 12608]ᵀ-shaped · [12608, 384], is 36 or 72 tiles over K = 12,608.
 */
export function halfSplitK(
  ctx: HalfMatmulContext,
  M: number,
  N: number,
  Kp: number,
  t: HalfSubgroupMatrixTile,
): number {
  const most = Kp / HALF_KT; // every split at least one slab deep
  if (ctx.forcedSplitK != null) return Math.max(1, Math.min(ctx.forcedSplitK, most));
  const groups = (M / t.rows) * (N / t.cols);
  let s = 1;
  while (s < 32 && groups * s < SPLIT_GROUPS && Kp / (s * 2) >= SPLIT_MIN_DEPTH) s *= 2;
  return s;
}

/**
 * out = a @ b for one [M, K] · [K, N] product (no batch) on tile t, which divides M and N, split over K into
 * `splits` parts of D = Kp / splits (rounded up to the slab depth; the last part shorter): each part a batch item
 * of the tensor-core kernel over the grid's z (A stepped D columns, B D rows), writing its float32 partial product
 * [M, N] into a pool buffer; then the partials summed in split order (kernels/splitk.ts) into out. Packs as the
 * unsplit product's.
 */
export function dispatchSplitHalfMatmul(
  ctx: HalfMatmulContext,
  a: NDArray,
  b: NDArray,
  out: DeviceBuffer,
  [offA, offB]: [number, number],
  t: HalfSubgroupMatrixTile,
  splits: number,
): void {
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const Kp = roundUp(K, HALF_KT);
  const D = roundUp(Math.ceil(Kp / splits), HALF_KT);
  const S = Math.ceil(Kp / D);
  const aDirect = readsDirect(a, M, K, M, Kp, [offA]);
  const bDirect = readsDirect(b, K, N, Kp, N, [offB]);
  const [aBytes, bBytes, cBytes] = [M * Kp * 2, Kp * N * 2, S * M * N * 4];
  const packedA = aDirect ? null : ctx.pool.acquire(aBytes);
  const packedB = bDirect ? null : ctx.pool.acquire(bBytes);
  const partial = ctx.pool.acquire(cBytes);
  try {
    if (packedA) packOperand(ctx, a, [offA, 0, 1, 0], 1, packedA, [M, K, M, Kp]);
    if (packedB) packOperand(ctx, b, [offB, 0, 1, 0], 1, packedB, [K, N, Kp, N]);
    // item ii of the grid's z: A from ii·D columns on, B from ii·D rows on, its partial at ii·M·N
    const params = [M, N, K, packedA ? 0 : offA, packedB ? 0 : offB, 0, D, D * N, M * N, M, Kp / 2, N, S, 0, 0, D];
    ctx.batch.dispatch(
      'matmul',
      `matmul/f16-subgroup-matrix/${t.name}/direct/split${ctx.builtins === 'vector' ? '/vector' : ''}`,
      () => halfSubgroupMatrixWgsl(t, true, ctx.builtins, true),
      F16_MATMUL_WORDS + 1,
      params,
      [packedA ?? ctx.gpu(a.buffer), packedB ?? ctx.gpu(b.buffer), partial],
      [N / t.cols, M / t.rows, S],
      2 * M * N * K,
    );
    // M and N are multiples of the tile: M·N of vec4s
    const total = (M * N) / 4;
    ctx.batch.dispatch(
      'matmul',
      'matmul/splitk-sum/vec4',
      () => splitKSumWgsl(true),
      splitKSumWords(false),
      [total, total, S, N],
      [partial, ctx.gpu(out)],
      flat(total),
    );
  } finally {
    // Later commands run after these in queue order, so the buffers may be handed out again at once.
    if (packedA) ctx.pool.release(packedA, aBytes);
    if (packedB) ctx.pool.release(packedB, bBytes);
    ctx.pool.release(partial, cBytes);
  }
}
