/**
 * Integer matmul dispatch of the WebGPU backend (the integerMatmulKernel hook): int8 operands are packed
 * four to a word and multiplied with subgroup matrices where the device has them (a 128×128 or 64×128 tile,
 * kernels/matmul-subgroup-matrix.ts), else with
 * dot4I8Packed (where M < 16, batch-1 inference: one invocation per output, unpacked); other integer operands
 * (int32, uint8) run the generic int32 kernel. Batch items are
 * dispatched one by one (offsets computed on the host). With `rescale` (the integerMatmulToFloatKernel
 * hook; int8 operands only) the kernels that write C store f32(sum) · (aScale · bScale[n]) + bias[n] into
 * a float32 `out`. Kernels: kernels/matmul-int.ts.
 *
 * int8 operands in 1-byte storage (dispatch-int8.ts; the option int8Storage 'packed') reach the packed kernels
 * without widening: A row-major along K with K and its offset multiples of 4 is already four to a word and is
 * copied word for word into the padded layout (or, with K a multiple of 64, no padding rows and the item at the
 * buffer's first byte, read in place: no pass at all), any other A and Bᵀ are packed from their bytes
 * (kernels/pack-int8-bytes.ts: a quarter of the reads of int32 storage). The paths that read the operands as they
 * are (few rows, direct dot4, int32) take them widened (`packsOperands` tells WebGpuBackend which).
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import { batchOffsets } from '@polyhal/hal/internal';
import type { WebGpuOptions } from './device.js';
import type { CommandBatch } from './encoder.js';
import { flat } from './kernel-params.js';
import {
  cropWgsl,
  int8GemvWgsl,
  dot4MatmulWgsl,
  INT_MATMUL_WORDS,
  intMatmulWgsl,
  PACK_K,
  PACK_ROWS,
  packInt8Wgsl,
  RESCALE_WORDS,
} from './kernels/matmul-int.js';
import type { SubgroupMatrixBuiltins } from './kernels/subgroup-matrix-gemm.js';
import {
  SGM_LARGE,
  SGM_MEDIUM,
  type SubgroupMatrixTile,
  subgroupMatrixMatmulWgsl,
} from './kernels/matmul-subgroup-matrix.js';
import { DOT4_LARGE_TILE, dot4LargeWgsl } from './kernels/dot4-large.js';
import { type BytePackMode, packInt8FromBytesWgsl } from './kernels/pack-int8-bytes.js';
import type { BufferPool } from './pool.js';

/** What an integer matmul dispatch needs of the backend. */
export interface IntMatmulContext {
  readonly batch: CommandBatch;
  readonly pool: BufferPool;
  /** The device offers i8×i8→i32 subgroup matrices at 16×16×32 and has the feature enabled. */
  readonly subgroupMatrix: boolean;
  /**
   * Large products may take the 128×128 subgroup-matrix tile (Dawn's robustness off and 20 KiB of workgroup
   * memory); else every subgroup-matrix product takes the 64×128 one.
   */
  readonly subgroupMatrixLarge: boolean;
  /** The tile is forced (option `int8Tile`): the large one where allowed, whatever the product's size. */
  readonly subgroupMatrixForced: boolean;
  /**
   * The dot4 tile: 'auto' (the 128×128 register-blocked kernel from DOT4_LARGE_TILES output tiles on), or forced
   * by `int8Tile` ('128x128' → 128, '64x128' → the 64×64 kernel), whatever the product's size.
   */
  readonly dot4Tile: 'auto' | 64 | 128;
  /** Products of at most this many multiply-adds (per batch item) skip the packing passes; 0 = never. */
  readonly directMacs: number;
  /** The form of the subgroup-matrix kernels' builtins (option `subgroupMatrixBuiltins`). */
  readonly builtins: SubgroupMatrixBuiltins;
  gpu(buffer: DeviceBuffer): GPUBuffer;
  fill(out: DeviceBuffer, value: number): void;
  /** Whether a buffer holds int8 in 1-byte storage (dispatch-int8.ts), and its GPU buffer then. */
  isBytes?(buffer: DeviceBuffer): boolean;
  gpuBytes?(buffer: DeviceBuffer): GPUBuffer;
}

/** The int8 kernel choice of a device: IntMatmulContext's fields, and the choice in words (deviceName). */
export type Int8Setup = Pick<
  IntMatmulContext,
  'subgroupMatrix' | 'subgroupMatrixLarge' | 'subgroupMatrixForced' | 'dot4Tile' | 'directMacs' | 'builtins'
> & { readonly description: string };

/**
 * The int8 kernels of a device from its options (`int8Kernel`, `int8Tile`, `int8Packing`, `dawnFlags`),
 * whether it has subgroup matrices enabled, and its workgroup memory (bytes). 'auto' takes subgroup
 * matrices where the device has them: measured on an H100 (benches/results/h100/webgpu-int8-*.json), with Dawn's
 * robustness on they ran at 147–241 TOPS (4096 / 8192) against the 128-tile dot4 kernel's 69–73; with it
 * off, 363–430. The 128×128 tile needs robustness off ('auto'; with its bounds checks the 64×128 tile is
 * faster) and 20 KiB of workgroup memory.
 */
export function int8Setup(
  options: WebGpuOptions,
  hasSubgroupMatrix: boolean,
  workgroupStorage: number,
  builtins: SubgroupMatrixBuiltins = 'legacy',
): Int8Setup {
  const subgroupMatrix = hasSubgroupMatrix && (options.int8Kernel ?? 'auto') !== 'dot4';
  const forced = options.int8Tile ?? 'auto';
  const robust = !(options.dawnFlags ?? []).some((f) => /\bdisable_robustness\b/.test(f));
  const large = workgroupStorage >= SGM_LARGE.storage && (forced === 'auto' ? !robust : forced === '128x128');
  const tiles = !large ? '64×128 tiles' : forced === 'auto' ? '128×128 and 64×128 tiles' : '128×128 tiles';
  const packing = options.int8Packing === 'always';
  return {
    subgroupMatrix,
    subgroupMatrixLarge: large,
    subgroupMatrixForced: forced !== 'auto',
    dot4Tile: forced === 'auto' ? 'auto' : forced === '128x128' ? 128 : 64,
    directMacs: packing ? 0 : INT8_DIRECT_MACS,
    builtins,
    description:
      (subgroupMatrix ? `subgroup matrices (tensor cores, ${tiles})` : 'dot4I8Packed') +
      (packing ? '' : ', unpacked dot4 up to 2^26 multiply-adds'),
  };
}

/** The kernel an integer matmul of these operand dtypes takes on this device (named in reports). */
export function intMatmulPath(ctx: IntMatmulContext, a: NDArray, b: NDArray): 'subgroup-matrix' | 'dot4' | 'int32' {
  if (a.dtype !== 'int8' || b.dtype !== 'int8') return 'int32';
  return ctx.subgroupMatrix ? 'subgroup-matrix' : 'dot4';
}

/**
 * Products of at most this many multiply-adds per batch item skip the packing passes (dot4 on the operands
 * as they are: one dispatch, not three or four). On lavapipe the two are even up to 256×784×256 and packing
 * is 10–15% faster from 512³ (2^27); on a real GPU these products take microseconds and dispatches count.
 * The option `int8Packing: 'always'` (device.ts) turns this off.
 */
export const INT8_DIRECT_MACS = 2 ** 26;

const roundUp = (x: number, m: number): number => Math.ceil(x / m) * m;
/** The pipeline-key suffix of the builtins' form (the two forms are different kernels). */
const vectorKey = (b: SubgroupMatrixBuiltins): string => (b === 'vector' ? '/vector' : '');
/** Below this many rows the int8 product runs one invocation per output on unpacked operands (int8GemvWgsl). */
const GEMV_ROWS = 16;
/**
 * Packed dot4 products with at least this many 128×128 output tiles take the register-blocked 128-tile
 * kernel (kernels/dot4-large.ts); smaller ones the 64-tile kernel, which gives 4× the workgroups.
 */
const DOT4_LARGE_TILES = 256;
/**
 * Subgroup-matrix products with at least this many 128×128 output tiles take the 128×128 kernel where
 * `subgroupMatrixLarge` allows it. On an H100 with robustness off the 128×128 kernel ran at 258–266 TOPS at 2048
 * (256 tiles) against the 64×128 kernel's 200–204, and at 72 against 99 at 1024 (64 tiles).
 */
const SGM_LARGE_TILES = 256;

/** The dot4 tile of an M×N product: products of DOT4_LARGE_TILES or more 128×128 tiles take the 128 one. */
export function dot4Tile(ctx: Pick<IntMatmulContext, 'dot4Tile'>, m: number, n: number): 64 | 128 {
  if (ctx.dot4Tile !== 'auto') return ctx.dot4Tile;
  return Math.ceil(m / DOT4_LARGE_TILE) * Math.ceil(n / DOT4_LARGE_TILE) >= DOT4_LARGE_TILES ? 128 : 64;
}

/** The paths of an int8 product of M rows and M·N·K multiply-adds: few rows, direct dot4, or packed operands. */
function int8Route(ctx: IntMatmulContext, M: number, N: number, K: number): 'gemv' | 'direct' | 'packs' {
  if (M < GEMV_ROWS) return 'gemv';
  return M * N * K <= ctx.directMacs ? 'direct' : 'packs';
}

/**
 * Whether the product of `a` [..., M, K] and `b` [..., K, N] packs its operands first (int8 operands, 16 rows or
 * more, past the direct products): only then are operands in 1-byte storage read as they are.
 */
export function packsOperands(ctx: IntMatmulContext, a: NDArray, b: NDArray): boolean {
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  return intMatmulPath(ctx, a, b) !== 'int32' && K > 0 && int8Route(ctx, M, N, K) === 'packs';
}

/**
 * How A at element offset `off` is packed from 1-byte storage: 'words' where it already is four to a word along K
 * (unit K stride, K, its row stride and offset multiples of 4), else 'bytes'.
 */
function bytePackMode(a: NDArray, off: number, transpose: boolean): BytePackMode {
  const r = a.shape.length;
  const [M, K] = [a.shape[r - 2]!, a.shape[r - 1]!];
  const rows = M === 1 || a.strides[r - 2]! % 4 === 0;
  return !transpose && a.strides[r - 1] === 1 && K % 4 === 0 && off % 4 === 0 && rows ? 'words' : 'bytes';
}

/** The subgroup-matrix tile of an M×N product. */
function sgmTile(ctx: IntMatmulContext, M: number, N: number): SubgroupMatrixTile {
  const tiles = Math.ceil(M / SGM_LARGE.rows) * Math.ceil(N / SGM_LARGE.cols);
  return ctx.subgroupMatrixLarge && (ctx.subgroupMatrixForced || tiles >= SGM_LARGE_TILES) ? SGM_LARGE : SGM_MEDIUM;
}

/** The rescaling store of an int8 product: aScale [], bScale [] or [N], bias [N] or null (float32 views). */
export interface IntMatmulRescale {
  aScale: NDArray;
  bScale: NDArray;
  bias: NDArray | null;
}

/**
 * Encodes out [...B, M, N] (int32) = a [...B, M, K] · b [...B, K, N], exact modulo 2^32; with `rescale`
 * (int8 operands, K ≥ 1), out float32 = f32(a · b) · (aScale · bScale[n]) + bias[n].
 */
export function dispatchIntMatmul(
  ctx: IntMatmulContext,
  a: NDArray,
  b: NDArray,
  out: DeviceBuffer,
  rescale?: IntMatmulRescale,
): void {
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const batchShape = a.shape.slice(0, -2);
  const items = batchShape.reduce((p, d) => p * d, 1);
  if (M === 0 || N === 0 || items === 0) return;
  if (K === 0) {
    ctx.fill(out, 0);
    return;
  }
  const path = intMatmulPath(ctx, a, b);
  if (rescale && path === 'int32') throw new Error('webgpu: a rescaled integer matmul needs int8 operands');
  // The rescaling store's words and buffers (kernels/matmul-int.ts): offsets and strides of the scales and bias.
  const tail = rescale
    ? [
        rescale.aScale.offset,
        rescale.bScale.offset,
        rescale.bScale.shape.length ? rescale.bScale.strides[0]! : 0,
        rescale.bias?.offset ?? 0,
        rescale.bias?.strides[0] ?? 0,
        rescale.bias ? 1 : 0,
      ]
    : [];
  const extra = rescale
    ? [rescale.aScale, rescale.bScale, rescale.bias ?? rescale.bScale].map((x) => ctx.gpu(x.buffer))
    : [];
  const [suffix, words] = rescale ? ['/rescale', RESCALE_WORDS] : ['', INT_MATMUL_WORDS];
  const strides = [a.strides[r - 2]!, a.strides[r - 1]!, b.strides[r - 2]!, b.strides[r - 1]!];
  // Few rows read the operands as they are, as does dot4 on small products (no packing passes: fewer
  // dispatches where they cost more than the 4 loads a word); larger products read packed copies.
  const route = path === 'int32' ? null : int8Route(ctx, M, N, K);
  const [gemv, direct, packs] = [route === 'gemv', route === 'direct', route === 'packs'];
  // Rows of the packed operands: padded to the subgroup-matrix tile, else to PACK_ROWS.
  const tile = packs && path === 'subgroup-matrix' ? sgmTile(ctx, M, N) : null;
  const [Kp, Mp, Np] = [roundUp(K, PACK_K), roundUp(M, tile?.rows ?? PACK_ROWS), roundUp(N, tile?.cols ?? PACK_ROWS)];
  // A in 1-byte storage laid out as the packed A already (rows of K = Kp bytes, no padding rows) is read in
  // place where a batch item starts at its first byte: no pass over it at all.
  const inPlaceA =
    packs &&
    (ctx.isBytes?.(a.buffer) ?? false) &&
    K % PACK_K === 0 &&
    Mp === M &&
    a.strides[r - 1] === 1 &&
    (M === 1 || a.strides[r - 2] === K);
  let packedA: GPUBuffer | null = null;
  const packedB = packs ? ctx.pool.acquire(Np * Kp) : null;
  // Subgroup-matrix stores cannot be masked: C goes to a padded buffer and is cropped, unless the tile
  // divides M and N and nothing is rescaled (then the kernel writes the output itself).
  const sgmDirect = !!tile && !rescale && Mp === M && Np === N;
  const padded = tile && !sgmDirect ? ctx.pool.acquire(Mp * Np * 4) : null;
  const packedAt = [-1, -1];
  for (const [item, [offA, offB]] of batchOffsets(a, b).entries()) {
    // The kernels' words; those that store C take the rescaling words after them (`tail`).
    const params = (rows: number): number[] => [M, N, K, offA, offB, item * M * N, ...strides, Kp / 4, rows];
    const storing = (rows: number): number[] => [...params(rows), ...tail];
    const flops = 2 * M * N * K;
    if (path === 'int32') {
      ctx.batch.dispatch(
        'matmul',
        'matmul/int32',
        intMatmulWgsl,
        INT_MATMUL_WORDS,
        params(0),
        [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out)],
        [Math.ceil(N / 64), Math.ceil(M / 64), 1],
        flops,
      );
      continue;
    }
    // Bᵀ's pack transposes 64×64 blocks (64 rows of Bᵀ, 16 words each per workgroup); 1-byte storage is packed
    // from its bytes, or copied word for word (A already four to a word along K).
    const pack = (transpose: boolean, src: NDArray, dst: GPUBuffer, rows: number): void => {
      const bytes = ctx.isBytes?.(src.buffer) ?? false;
      const mode = bytes ? bytePackMode(src, transpose ? offB : offA, transpose) : null;
      ctx.batch.dispatch(
        'matmul',
        mode ? `matmul/pack-int8-bytes/${transpose}/${mode}` : `matmul/pack-int8/${transpose}`,
        mode ? () => packInt8FromBytesWgsl(transpose, mode) : () => packInt8Wgsl(transpose),
        INT_MATMUL_WORDS,
        params(rows),
        [mode ? ctx.gpuBytes!(src.buffer) : ctx.gpu(src.buffer), dst],
        flat(transpose ? (rows / 64) * (Kp / 64) * 256 : (rows * Kp) / 4),
      );
    };
    if (gemv) {
      ctx.batch.dispatch(
        'matmul',
        `matmul/int8-gemv${suffix}`,
        () => int8GemvWgsl(!!rescale),
        words,
        storing(Np),
        [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out), ...extra],
        flat(M * N),
        flops,
      );
      continue;
    }
    if (direct) {
      ctx.batch.dispatch(
        'matmul',
        `matmul/int8-dot4-direct${suffix}`,
        () => dot4MatmulWgsl(!!rescale, true),
        words,
        storing(Mp),
        [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out), ...extra],
        [Np / 64, Mp / 64, 1],
        flops,
      );
      continue;
    }
    // A broadcast operand (the same offset as the previous item's) stays packed.
    const wordsA = inPlaceA && offA === 0 ? ctx.gpuBytes!(a.buffer) : (packedA ??= ctx.pool.acquire(Mp * Kp));
    if (wordsA === packedA && offA !== packedAt[0]) pack(false, a, packedA, Mp);
    if (offB !== packedAt[1]) pack(true, b, packedB!, Np);
    [packedAt[0], packedAt[1]] = [wordsA === packedA ? offA : packedAt[0]!, offB];
    if (path === 'dot4') {
      const tile = dot4Tile(ctx, Mp, Np);
      ctx.batch.dispatch(
        'matmul',
        `matmul/int8-dot4${tile === 128 ? '-large' : ''}${suffix}`,
        () => (tile === 128 ? dot4LargeWgsl(!!rescale) : dot4MatmulWgsl(!!rescale, false)),
        words,
        storing(Np),
        [wordsA, packedB!, ctx.gpu(out), ...extra],
        [Math.ceil(Np / tile), Math.ceil(Mp / tile), 1],
        flops,
      );
      continue;
    }
    ctx.batch.dispatch(
      'matmul',
      `matmul/int8-subgroup-matrix/${tile!.name}${sgmDirect ? '/direct' : ''}${vectorKey(ctx.builtins)}`,
      () => subgroupMatrixMatmulWgsl(tile!, sgmDirect, ctx.builtins),
      INT_MATMUL_WORDS,
      params(Np),
      [wordsA, packedB!, sgmDirect ? ctx.gpu(out) : padded!],
      [Np / tile!.cols, Mp / tile!.rows, 1],
      flops,
    );
    if (sgmDirect) continue;
    ctx.batch.dispatch(
      'matmul',
      `matmul/int8-crop${suffix}`,
      () => cropWgsl(!!rescale),
      words,
      storing(Np),
      [padded!, ctx.gpu(out), ...extra],
      flat(M * N),
    );
  }
  if (packedA) ctx.pool.release(packedA, Mp * Kp);
  if (packedB) ctx.pool.release(packedB, Np * Kp);
  if (padded) ctx.pool.release(padded, Mp * Np * 4);
}
