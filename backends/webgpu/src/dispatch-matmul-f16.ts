/**
 * float16 matmul on tensor cores (kernels/matmul-subgroup-matrix-f16.ts): where the device has subgroup matrices
 * with an f16×f16→f32 16×16×16 configuration and `shader-f16` (Dawn on NVIDIA: the toggles `allow_unsafe_apis`
 * and `vulkan_enable_f16_on_nvidia` in `dawnFlags`), products of float16 operands in 2-byte storage are packed
 * (row-major copies zero-padded to the tile and K to 32), multiplied with float32 accumulation into a padded
 * float32 C, and cropped into the float32 output (the HAL rounds it to float16 after). A batch whose items step by
 * constant strides runs as one dispatch of each kind over the grid's z: two packs (none for an operand laid out as
 * the kernel reads it — rows contiguous, sizes multiples of the tile and K of 32; one copy for a broadcast operand),
 * the product, and a crop unless the tile divides M and N; other batches run item by item. A single product of few
 * output tiles over a long K (a Linear's weight gradient) splits K into partial products summed after
 * (dispatch-matmul-f16-split.ts); a transposed operand is packed through 64×64 blocks (dispatch-matmul-f16-pack.ts).
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import { reshapeView, sizeOf } from '@polyhal/hal';
import { batchOffsets } from '@polyhal/hal/internal';
import type { WebGpuOptions } from './device.js';
import type { CommandBatch } from './encoder.js';
import { packOperand, readsDirect } from './dispatch-matmul-f16-pack.js';
import { dispatchSplitHalfMatmul, halfSplitK } from './dispatch-matmul-f16-split.js';
import { flat } from './kernel-params.js';
import {
  cropHalfProductWgsl,
  F16_MATMUL_WORDS,
  HALF_KT,
  HALF_SGM_LARGE,
  HALF_SGM_MEDIUM,
  HALF_SGM_SMALL,
  type HalfSubgroupMatrixTile,
  halfSubgroupMatrixWgsl,
} from './kernels/matmul-subgroup-matrix-f16.js';
import type { SubgroupMatrixBuiltins } from './kernels/subgroup-matrix-gemm.js';
import { CROP_HALF_WORDS, cropHalfProductToHalfWgsl } from './kernels/matmul-f16-crop-half.js';
import type { HalfConversions } from './kernels/half.js';
import type { BufferPool } from './pool.js';

/** What the float16 tensor-core product needs of the backend. */
export interface HalfMatmulContext {
  readonly batch: CommandBatch;
  readonly pool: BufferPool;
  /** Whether float16 products take the tensor cores, and from what size ('auto': HALF_SGM_MIN_MACS). */
  readonly mode: 'off' | 'auto' | 'always';
  /** The device's workgroup memory (bytes): the large tile needs HALF_SGM_LARGE.storage. */
  readonly workgroupStorage: number;
  /** The tile of every product (option `float16MatmulTile`), or null: chosen by shape. */
  readonly forcedTile?: HalfSubgroupMatrixTile | null;
  /** The form of the kernels' subgroup-matrix builtins (option `subgroupMatrixBuiltins`). */
  readonly builtins: SubgroupMatrixBuiltins;
  /** The split-K count of every product that may split (option `matmulSplitK`), or null: chosen by shape. */
  readonly forcedSplitK?: number | null;
  /** The GPU buffer of a HAL buffer, float16 storage included. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
}

/**
 * Products of fewer multiply-adds per batch item stay on the float32 kernels in 'auto' (the packs and the crop
 * cost more dispatches than the tensor cores save on a small product).
 */
export const HALF_SGM_MIN_MACS = 2 ** 21;
/** Products with at least this many 128×128 output tiles take the large tile (as the int8 kernels). */
const LARGE_TILES = 128;

const roundUp = (x: number, m: number): number => Math.ceil(x / m) * m;

/** The setup of a device from its options (`float16Matmul`) and features: the mode, and the path in words. */
export function halfMatmulSetup(
  options: WebGpuOptions,
  hasHalfSubgroupMatrix: boolean,
): { mode: HalfMatmulContext['mode']; description: string; tile: HalfSubgroupMatrixTile | null } {
  const wanted = options.float16Matmul ?? 'auto';
  const mode =
    !hasHalfSubgroupMatrix || wanted === 'float32' ? 'off' : wanted === 'subgroup-matrix' ? 'always' : 'auto';
  const tiles = { large: HALF_SGM_LARGE, medium: HALF_SGM_MEDIUM, small: HALF_SGM_SMALL };
  const forced = options.float16MatmulTile ?? 'auto';
  return {
    mode,
    description: mode === 'off' ? 'float32 kernels on widened copies' : 'subgroup matrices (tensor cores)',
    tile: forced === 'auto' ? null : tiles[forced],
  };
}

/** Whether an [M, K] · [K, N] product of float16 operands takes the tensor cores on this device. */
export function takesHalfSubgroupMatrix(ctx: HalfMatmulContext, M: number, N: number, K: number): boolean {
  if (ctx.mode === 'off' || M === 0 || N === 0 || K === 0) return false;
  return ctx.mode === 'always' || (M >= 64 && N >= 64 && M * N * K >= HALF_SGM_MIN_MACS);
}

/** Products over a K this short take the small tile where it divides M and N, or the least padded (chooseTile). */
const EXACT_TILE_MAX_K = 512;

/**
 * The tile of an [M, N] · over-K product: the large tile for many output tiles where it divides M and N, else the
 * medium one where it divides (the operands read and the result written where they are); else, over a short K
 * (≤ EXACT_TILE_MAX_K), where copying an operand and cropping the result cost about as much as the product, the
 * small one where it divides; else the large tile for many output tiles, the medium one for few.
 * ViT-S's 12,608 rows are 197 medium tiles and 98.5 large ones: on an H200, [12608, 384]·[384, 384] took 0.072 and
 * 0.116 ms on the medium tile and 0.112–0.114 ms on the large one with the copy and the crop
 * (benches/results/h200/webgpu-f16-tiles.json; figures from one process per tile varied up to 3× between runs).
 * Where none divides, the tile of the least padded output: ViT-S attention's [197, 197]·[197, 64] products (384 items)
 * took 0.16–0.18 ms on the 64×64 tile against 0.18–0.22 ms on the 64×128 one, in one process on an H200
 * (benches/probes/webgpu-f16-attention-products.ts).
 */
function chooseTile(ctx: HalfMatmulContext, M: number, N: number, K: number): HalfSubgroupMatrixTile {
  if (ctx.forcedTile && ctx.workgroupStorage >= ctx.forcedTile.storage) return ctx.forcedTile;
  const fits = ctx.workgroupStorage >= HALF_SGM_LARGE.storage;
  const tiles = Math.ceil(M / HALF_SGM_LARGE.rows) * Math.ceil(N / HALF_SGM_LARGE.cols);
  const large = fits && tiles >= LARGE_TILES;
  const divides = (t: HalfSubgroupMatrixTile): boolean => M % t.rows === 0 && N % t.cols === 0;
  // the large tile where it divides; else the medium one where it divides, whatever K: the large tile's pack of A
  // and crop of C cost more than it saves (ViT-S's fc2 forward [12608, 1536]·[1536, 384]: 0.156 ms on the medium
  // tile, 0.222 on the large one; fc1's dX likewise 0.151 against 0.221: benches/probes/webgpu-f16-vit-products.ts)
  if (large && divides(HALF_SGM_LARGE)) return HALF_SGM_LARGE;
  if (divides(HALF_SGM_MEDIUM)) return HALF_SGM_MEDIUM;
  if (K <= EXACT_TILE_MAX_K) {
    if (divides(HALF_SGM_SMALL)) return HALF_SGM_SMALL;
    // none divides: the least padded output (ties: the larger tile)
    const area = (t: HalfSubgroupMatrixTile): number => roundUp(M, t.rows) * roundUp(N, t.cols);
    const order = large ? [HALF_SGM_LARGE, HALF_SGM_MEDIUM, HALF_SGM_SMALL] : [HALF_SGM_MEDIUM, HALF_SGM_SMALL];
    return order.reduce((best, t) => (area(t) < area(best) ? t : best));
  }
  return large ? HALF_SGM_LARGE : HALF_SGM_MEDIUM;
}

/** A run of batch items in one dispatch: item i of it reads A from offA + (i / inner)·aOuter + (i % inner)·aInner. */
interface BatchRun {
  first: number;
  count: number;
  offA: number;
  offB: number;
  inner: number;
  aInner: number;
  bInner: number;
  aOuter: number;
  bOuter: number;
}

/**
 * The batch items as runs of one dispatch each. Items whose offsets step by constant strides over at most two
 * levels (the last batch dim and the ones before it: [batch, heads] of attention, contiguous or broadcast) are one
 * run over the grid's z; others one run per item.
 */
function batchRuns(items: readonly [number, number][], inner: number): BatchRun[] {
  if (items.length === 0) return []; // an empty batch: nothing to compute
  const [a0, b0] = items[0]!;
  const n = Math.max(1, inner);
  const at = (i: number): [number, number] => items[i] ?? [a0, b0];
  const [aInner, bInner] = [at(1)[0] - a0, at(1)[1] - b0];
  const [aOuter, bOuter] = [at(n)[0] - a0, at(n)[1] - b0];
  const run = { first: 0, count: items.length, offA: a0, offB: b0, inner: n, aInner, bInner, aOuter, bOuter };
  const fits = items.every(
    ([oa, ob], i) =>
      oa === a0 + Math.floor(i / n) * aOuter + (i % n) * aInner &&
      ob === b0 + Math.floor(i / n) * bOuter + (i % n) * bInner,
  );
  if (fits && items.length <= 65535) return [run];
  return items.map(([oa, ob], i) => ({ ...run, first: i, count: 1, offA: oa, offB: ob, inner: 1 }));
}

/**
 * [..., M, K] · [K, N] as one [B·M, K] · [K, N] product where b is the same matrix for every item (batch strides 0)
 * and a's items are one run of rows (reshapeView): a Linear over [batch, tokens, features] is one product of
 * 12,608 rows (ViT-S) — tiles that divide it, no pack or crop — not 64 products of 197 padded rows. Else null.
 */
export function foldRows(a: NDArray, b: NDArray): [NDArray, NDArray] | null {
  const [r, rb] = [a.shape.length, b.shape.length];
  if (r <= 2 || (rb !== 2 && (rb !== r || b.strides.slice(0, r - 2).some((s, i) => s !== 0 && b.shape[i] !== 1))))
    return null;
  const a2 = reshapeView(a, [sizeOf(a.shape.slice(0, r - 1)), a.shape[r - 1]!]);
  if (!a2) return null;
  return [a2, { ...b, shape: b.shape.slice(rb - 2), strides: b.strides.slice(rb - 2) }];
}

/**
 * Whether the product of float16 a and b ends in a crop of its padded result (the tile does not divide M and N):
 * then dispatchHalfMatmul can crop straight into a float16 output.
 */
export function halfMatmulCrops(ctx: HalfMatmulContext, a: NDArray, b: NDArray): boolean {
  [a, b] = foldRows(a, b) ?? [a, b];
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const t = chooseTile(ctx, M, N, K);
  return roundUp(M, t.rows) !== M || roundUp(N, t.cols) !== N;
}

/**
 * out (contiguous [..., M, N]) = a @ b for float16 a and b in 2-byte storage, views of out's batch: float32, or with
 * `outHalf` float16 in 2-byte storage, the crop rounding each value with that conversion (only where the product
 * crops: halfMatmulCrops).
 */
export function dispatchHalfMatmul(
  ctx: HalfMatmulContext,
  a: NDArray,
  b: NDArray,
  out: DeviceBuffer,
  outHalf?: HalfConversions,
): void {
  [a, b] = foldRows(a, b) ?? [a, b];
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const t = chooseTile(ctx, M, N, K);
  const [Kp, Mp, Np] = [roundUp(K, HALF_KT), roundUp(M, t.rows), roundUp(N, t.cols)];
  const direct = Mp === M && Np === N;
  if (direct && outHalf) throw new Error('webgpu: a float16 product that does not crop writes float32 only');
  const inner = r > 2 ? a.shape[r - 3]! : 1;
  const items = batchOffsets(a, b);
  const splits = direct && items.length === 1 ? halfSplitK(ctx, M, N, Kp, t) : 1;
  if (splits > 1) {
    dispatchSplitHalfMatmul(ctx, a, b, out, items[0]!, t, splits);
    return;
  }
  for (const run of batchRuns(items, inner)) {
    const { first, count, offA, offB } = run;
    const aDirect = readsDirect(a, M, K, Mp, Kp, [offA, run.aInner, run.aOuter]);
    const bDirect = readsDirect(b, K, N, Kp, Np, [offB, run.bInner, run.bOuter]);
    // packed copies: one per item of the run, or one for a broadcast operand (item strides 0)
    const broadcastA = run.aInner === 0 && run.aOuter === 0;
    const broadcastB = run.bInner === 0 && run.bOuter === 0;
    const [aCopies, bCopies] = [broadcastA ? 1 : count, broadcastB ? 1 : count];
    const [aBytes, bBytes, cBytes] = [aCopies * Mp * Kp * 2, bCopies * Kp * Np * 2, count * Mp * Np * 4];
    const packedA = aDirect ? null : ctx.pool.acquire(aBytes);
    const packedB = bDirect ? null : ctx.pool.acquire(bBytes);
    const padded = direct ? null : ctx.pool.acquire(cBytes);
    try {
      if (packedA) packOperand(ctx, a, [offA, run.aInner, run.inner, run.aOuter], aCopies, packedA, [M, K, Mp, Kp]);
      if (packedB) packOperand(ctx, b, [offB, run.bInner, run.inner, run.bOuter], bCopies, packedB, [K, N, Kp, Np]);
      // the product's item strides: a packed operand's copies are consecutive (one copy: a broadcast one)
      const [aIn, aOut] = packedA ? (broadcastA ? [0, 0] : [Mp * Kp, Mp * Kp * run.inner]) : [run.aInner, run.aOuter];
      const [bIn, bOut] = packedB ? (broadcastB ? [0, 0] : [Kp * Np, Kp * Np * run.inner]) : [run.bInner, run.bOuter];
      const params = [
        M,
        N,
        K,
        packedA ? 0 : offA,
        packedB ? 0 : offB,
        first * M * N,
        aIn,
        bIn,
        direct ? M * N : Mp * Np,
        Mp,
        Kp / 2,
        Np,
        run.inner,
        aOut,
        bOut,
      ];
      ctx.batch.dispatch(
        'matmul',
        `matmul/f16-subgroup-matrix/${t.name}${direct ? '/direct' : ''}${ctx.builtins === 'vector' ? '/vector' : ''}`,
        () => halfSubgroupMatrixWgsl(t, direct, ctx.builtins),
        F16_MATMUL_WORDS,
        params,
        [packedA ?? ctx.gpu(a.buffer), packedB ?? ctx.gpu(b.buffer), direct ? ctx.gpu(out) : padded!],
        [Np / t.cols, Mp / t.rows, count],
        2 * M * N * K * count,
      );
      if (!direct && outHalf) {
        const [start, total] = [first * M * N, count * M * N];
        ctx.batch.dispatch(
          'matmul',
          `matmul/f16-crop-half/${outHalf}`,
          () => cropHalfProductToHalfWgsl(outHalf),
          CROP_HALF_WORDS,
          [M, N, Mp, Np, start, total],
          [padded!, ctx.gpu(out)],
          flat(((start + total + 1) >> 1) - (start >> 1)),
        );
      } else if (!direct) {
        const [gx, gy] = flat(M * N);
        ctx.batch.dispatch(
          'matmul',
          'matmul/f16-crop',
          cropHalfProductWgsl,
          F16_MATMUL_WORDS,
          params,
          [padded!, ctx.gpu(out)],
          [gx, gy, count],
        );
      }
    } finally {
      // Later commands run after these in queue order, so the buffers may be handed out again at once.
      if (packedA) ctx.pool.release(packedA, aBytes);
      if (packedB) ctx.pool.release(packedB, bBytes);
      if (padded) ctx.pool.release(padded, cBytes);
    }
  }
}
