/**
 * Matmul planning and dispatch of the WebGPU backend: matrix-vector shapes run the gemv kernels,
 * small outputs over a short K (batched attention products) and every product on a software adapter
 * the register-block kernel (kernels/matmul-blocks.ts), the rest a tiled kernel (a tile chosen by shape or forced by
 * `matmulTile`, vec4 loads where aligned), split over K into partial products summed by a second
 * kernel where the output alone has too few workgroups (chooseSplitK; `matmulSplitK` forces a count).
 * A large product whose operand is read across its rows (a transposed view: the weight gradient xᵀ·g, the input
 * gradient g·Wᵀ of every linear layer's backward) runs on contiguous copies of its distinct elements (packOperands),
 * where that makes vec4 loads possible: on an H200, xᵀ·g of [384, 12608]·[12608, 384] took 0.45 ms with scalar
 * loads of the view and 0.26 ms copy included.
 */
import { type DeviceBuffer, type ElementwiseStep, type NDArray, ShapeMismatchError } from '@polyhal/hal';
import type { KernelDesc } from './capture.js';
import type { CommandBatch } from './encoder.js';
import { gemvWgsl } from './kernels/gemv.js';
import { BLOCK_THREADS, blockInvocations, matmulBlocksWgsl } from './kernels/matmul-blocks.js';
import { canLoadVec4, chooseSplitK, chooseTile, matmulWgsl, matmulWords, type Tile } from './kernels/matmul.js';
import { splitKSumWgsl, splitKSumWords } from './kernels/splitk.js';
import { flat, stridedParams } from './kernel-params.js';
import { epilogueKey } from './kernels/matmul-epilogue.js';
import { floatBits, grid } from './layout.js';
import type { BufferPool } from './pool.js';

/** What a matmul dispatch needs of the backend. */
export interface MatmulContext {
  readonly device: GPUDevice;
  readonly batch: CommandBatch;
  /** Storage buffers (the split-K partial products come from it). */
  readonly pool: BufferPool;
  readonly forcedTile: Tile | null;
  readonly forcedSplitK: number | null;
  /** A software adapter (lavapipe, SwiftShader): workgroup memory and barriers cost more than they save. */
  readonly software: boolean;
  /** The GPU buffer of a HAL buffer. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
  /** The backend's fill kernel (a product over K = 0 is zeros). */
  fill(out: DeviceBuffer, value: number): void;
  /**
   * A contiguous copy of x's distinct elements, viewed with x's shape (broadcast dims keep stride 0), and its
   * release: packOperands's copies.
   */
  packed?(x: NDArray): NDArray;
  release?(x: NDArray): void;
}

/** Whether tile t runs the scalar tiled kernel (a side not a multiple of 64), which takes an epilogue. */
const scalarTile = (t: Tile): boolean => t.bm % 64 !== 0 || t.bn % 64 !== 0;

/** Products from this many multiply-adds on copies of operands read across rows (packOperands). */
export const PACK_OPERANDS_FROM = 2 ** 25;

/**
 * Which operands to copy (packed) so that the tiled kernel reads them by vec4 loads, or null: for a large product
 * on the tiled kernel (a hardware adapter's, or a forced tile) whose tile takes vec4 loads, an operand read by
 * scalar loads only because of its layout (a transposed view: K not a's stride-1 dim, or N not b's; an offset or
 * stride that is not a whole vec4).
 */
function packOperands(
  ctx: MatmulContext,
  a: NDArray,
  b: NDArray,
  M: number,
  N: number,
  K: number,
  batch: number,
): [boolean, boolean] | null {
  // a software adapter runs the register blocks unless a tile is forced (as the tests force one)
  if (!ctx.packed || (ctx.software && !ctx.forcedTile)) return null;
  if (M * N * K * batch < PACK_OPERANDS_FROM || K % 4 !== 0 || N % 4 !== 0) return null;
  const r = a.shape.length;
  const t = ctx.forcedTile ?? chooseTile(M, N, batch, K);
  if (t.bm % 64 !== 0 || t.bn % 64 !== 0) return null;
  // vec4 loads along the rows: stride 1 there, and the offset and every other stride whole vec4s
  const rows = (x: NDArray): boolean =>
    x.strides[r - 1] === 1 && x.offset % 4 === 0 && x.strides.every((s, d) => d === r - 1 || s % 4 === 0);
  const copyA = !rows(a);
  const copyB = !rows(b);
  return copyA || copyB ? [copyA, copyB] : null;
}

/** Tells a running capture what the product just encoded computes (capture.ts KernelDesc), where all is float32. */
function describe(
  ctx: MatmulContext,
  a: NDArray,
  b: NDArray,
  bias: NDArray | null,
  epi: readonly ElementwiseStep[] | null,
  out: DeviceBuffer,
  shape: readonly number[],
  split: SplitSum | null = null,
): void {
  const rec = ctx.batch.recorder;
  if (!rec?.describe) return;
  const arrays = [a, b, ...(bias ? [bias] : []), ...(epi ?? []).flatMap((s) => ('array' in s ? [s.array] : []))];
  if (out.dtype !== 'float32' || arrays.some((x) => x.dtype !== 'float32')) return;
  if (shape.reduce((p, d) => p * d, 1) !== out.size) return;
  const gpus = new Map(arrays.map((x) => [x.buffer.id, ctx.gpu(x.buffer)]));
  gpus.set(out.id, ctx.gpu(out));
  const desc: KernelDesc = { kind: 'matmul', a, b, bias, steps: epi ?? [], out, shape, gpus };
  if (split) splitSums.set(desc, split);
  rec.describe(desc);
}

/** A split product's sum kernel (the last of its two): the partial products it reads and their split count. */
export interface SplitSum {
  readonly partial: GPUBuffer;
  readonly splitK: number;
}

/** The descs of split products (a sum kernel's, as describe gave it) and their partials (plan-fusion.ts). */
export const splitSums = new WeakMap<KernelDesc, SplitSum>();

/**
 * Encodes the matmulKernel hook: `out` = a @ b over the leading (batch) dims; with `bias` (a view of out's
 * shape, matmulBiasKernel) `out` = a @ b + bias, added in the store of the register-block, unsplit tiled
 * and gemv kernels, or in the sum of a split product's partials (kernels/splitk.ts), where the bias is the same
 * for every batch item. Returns false, having encoded nothing, for a bias it cannot add that way (K = 0, a bias
 * varying over the batch): the caller adds it.
 * With `epilogue` (a capture plan's fusion, plan-fusion.ts): `out` = the steps applied to each element of the
 * product (plus bias) in the store (kernels/matmul-epilogue.ts; array operands contiguous of out's shape), on the
 * register blocks, gemv and the unsplit scalar tiled kernel (tiles with a side under 64: the main job's ViT on an
 * H100); false, with nothing encoded, for the vec4 tiled kernels (on an H200, the ViT-S-like step with its
 * products' residual adds and GELU derivatives folded into their vec4 tiled kernels' stores took 200 ms compiled
 * against 121 ms unfused; why is not known), split-K (a plan folds the steps into a split product's sum instead:
 * dispatchSplitKSum) and K = 0. With `keep` too, the value after its first `at`
 * steps is also written to `keep.out`, whole (a second output: kernels/matmul-epilogue.ts).
 */
export function dispatchMatmul(
  ctx: MatmulContext,
  a: NDArray,
  b: NDArray,
  out: DeviceBuffer,
  bias: NDArray | null = null,
  epilogue: readonly ElementwiseStep[] | null = null,
  keep: { readonly at: number; readonly out: DeviceBuffer } | null = null,
): boolean {
  const epi = epilogue?.length ? epilogue : null;
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const batchShape = a.shape.slice(0, -2);
  const batch = batchShape.reduce((p, d) => p * d, 1);
  if (M === 0 || N === 0 || batch === 0) return true;
  if (bias && (K === 0 || bias.strides.slice(0, -2).some((s, i) => s !== 0 && bias.shape[i]! > 1))) return false;
  if (epi && K === 0) return false;
  if (K === 0) {
    ctx.fill(out, 0);
    return true;
  }
  if (batch > 65535) throw new ShapeMismatchError(`webgpu matmul: at most 65535 batch items, got ${batch}`);
  const { R, words } = stridedParams(batchShape, [
    { strides: a.strides.slice(0, -2) },
    { strides: b.strides.slice(0, -2) },
  ]);
  const params = [
    M,
    N,
    K,
    batch,
    a.offset,
    b.offset,
    a.strides[r - 2]!,
    a.strides[r - 1]!,
    b.strides[r - 2]!,
    b.strides[r - 1]!,
    ...words,
  ];
  const flops = 2 * M * N * K * batch;
  // Matrix-vector shapes (N ≤ 4 or M ≤ 4 against ≥ 64) run without tiles (see kernels/gemv.ts).
  const gemv = ctx.forcedTile ? null : N <= 4 && M >= 64 ? 'rows' : M <= 4 && N >= 64 ? 'cols' : null;
  // With a bias: its offset and strides along M and N after the params (kernels/matmul.ts biasDecl).
  const epiArrays = epi ? epi.flatMap((s) => ('array' in s ? [s.array] : [])) : [];
  const epiWords = epi
    ? [0, ...epiArrays.map((x) => x.offset), ...epi.flatMap((s) => ('scalar' in s ? [floatBits(s.scalar)] : []))]
    : [];
  const withBias = [
    ...params,
    1,
    ...(bias ? [bias.offset, bias.strides[r - 2]!, bias.strides[r - 1]!] : []),
    ...epiWords,
  ];
  const biasBuffer = [...(bias ? [ctx.gpu(bias.buffer)] : []), ...epiArrays.map((x) => ctx.gpu(x.buffer))];
  const at = epi && keep ? keep.at : null;
  if (epi && keep) biasBuffer.push(ctx.gpu(keep.out));
  const biasKey = (bias ? '/bias' : '') + epilogueKey(epi, at);
  const maxBinding = ctx.device.limits.maxStorageBufferBindingSize;
  // At most 65535 workgroups along z, and partial products [batch, S, M, N] within one storage binding (a forced
  // count is lowered: 16 partial 2048² slices are 256 MiB, twice lavapipe's 128 MiB maxStorageBufferBindingSize).
  const fitSplitK = (s: number): number =>
    Math.max(1, Math.min(s, Math.floor(65535 / batch), Math.floor(maxBinding / (batch * M * N * 4))));
  if (gemv) {
    const [width, count] = gemv === 'rows' ? [N, M] : [M, N];
    const [x, y] = flat(count);
    const splitK = epi ? 1 : fitSplitK(ctx.forcedSplitK ?? (ctx.software ? 1 : gemvSplitK(count * batch, K)));
    if (splitK > 1) {
      splitKInto(ctx, a, b, out, M, N, splitK, flops, bias, (partial) =>
        ctx.batch.dispatch(
          'matmul',
          `matmul/gemv/${gemv}${width}/${R}/split`,
          () => gemvWgsl(gemv, width, R, false, null, null, true),
          withBias.length,
          [...params, splitK],
          [ctx.gpu(a.buffer), ctx.gpu(b.buffer), partial],
          [x, y, batch * splitK],
        ),
      );
      return true;
    }
    ctx.batch.dispatch(
      'matmul',
      `matmul/gemv/${gemv}${width}/${R}${biasKey}`,
      () => gemvWgsl(gemv, width, R, bias !== null, epi, at),
      withBias.length,
      withBias,
      [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out), ...biasBuffer],
      [x, y, batch],
      flops,
    );
    describe(ctx, a, b, bias, epi, out, [...batchShape, M, N]);
    return true;
  }
  // Small outputs over a short K (batched attention products), and every product on a software
  // adapter: register blocks without tiles (kernels/matmul-blocks.ts); a forced tile or split-K count
  // keeps the tiled kernel.
  const small = M <= 32 && N <= 32 && K <= 256;
  if (!ctx.forcedTile && !ctx.forcedSplitK && (small || ctx.software)) {
    const [tm, tn] = small ? (N <= 4 ? [8, 4] : [4, 8]) : [8, 8];
    const [x, y] = grid(Math.ceil(blockInvocations(M, N, batch, tm, tn) / BLOCK_THREADS));
    ctx.batch.dispatch(
      'matmul',
      `matmul/blocks${tm}x${tn}/${R}${biasKey}`,
      () => matmulBlocksWgsl(tm, tn, R, bias !== null, epi, at),
      withBias.length,
      withBias,
      [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out), ...biasBuffer],
      [x, y, 1],
      flops,
    );
    describe(ctx, a, b, bias, epi, out, [...batchShape, M, N]);
    return true;
  }
  // the vec4 tiled kernels take no epilogue (see above), the others do (unsplit)
  if (epi && !scalarTile(ctx.forcedTile ?? chooseTile(M, N, batch, K))) return false;
  const pack = packOperands(ctx, a, b, M, N, K, batch);
  if (pack) {
    const pa = pack[0] ? ctx.packed!(a) : a;
    const pb = pack[1] ? ctx.packed!(b) : b;
    try {
      return dispatchMatmul({ ...ctx, packed: undefined }, pa, pb, out, bias);
    } finally {
      // later commands run after these in queue order: the copies may be handed out again at once
      if (pa !== a) ctx.release!(pa);
      if (pb !== b) ctx.release!(pb);
    }
  }
  const t = ctx.forcedTile ?? chooseTile(M, N, batch, K);
  const vec =
    t.bm % 64 === 0 &&
    t.bn % 64 === 0 &&
    canLoadVec4(K, N, a.offset, b.offset, a.strides[r - 2]!, a.strides[r - 1]!, b.strides[r - 2]!, b.strides[r - 1]!) &&
    (batch === 1 || [...a.strides.slice(0, -2), ...b.strides.slice(0, -2)].every((x) => x % 4 === 0));
  const splitK = fitSplitK(ctx.forcedSplitK ?? chooseSplitK(M, N, K, batch, t));
  const key = `matmul/${t.bm}x${t.bn}x${t.bk}/${t.tm}x${t.tn}/${vec ? 'vec4' : 'scalar'}/${R}`;
  const ab = [ctx.gpu(a.buffer), ctx.gpu(b.buffer)];
  const groups: [number, number, number] = [Math.ceil(N / t.bn), Math.ceil(M / t.bm), batch * splitK];
  if (groups[0] > 65535 || groups[1] > 65535)
    throw new ShapeMismatchError(
      `webgpu matmul: [${M}, ${N}] outputs need more than 65535 workgroups along one dimension of tile ${t.bm}×${t.bn}`,
      [a.shape, b.shape],
    );
  if (epi && splitK > 1) return false;
  if (splitK === 1) {
    ctx.batch.dispatch(
      'matmul',
      key + biasKey,
      () => matmulWgsl(t, vec, R, bias !== null, epi, at),
      withBias.length,
      withBias,
      [...ab, ctx.gpu(out), ...biasBuffer],
      groups,
      flops,
    );
    describe(ctx, a, b, bias, epi, out, [...batchShape, M, N]);
    return true;
  }
  splitKInto(ctx, a, b, out, M, N, splitK, flops, bias, (partial) =>
    ctx.batch.dispatch(
      'matmul',
      key,
      () => matmulWgsl(t, vec, R),
      matmulWords(R),
      [...params, splitK],
      [...ab, partial],
      groups,
    ),
  );
  return true;
}

/**
 * Split-K count of a matrix-vector product (kernels/gemv.ts) of `threads` invocations (its rows or columns times
 * the batch) over K: powers of two up to 64 while the invocations number under 16384 and each split walks at
 * least 128 of K (one invocation per row walking K alone leaves a large GPU idle, see gemvWgsl).
 */
export function gemvSplitK(threads: number, k: number): number {
  let s = 1;
  while (s < 64 && threads * s < 16384 && k / (s * 2) >= 128) s *= 2;
  return s;
}

/**
 * Encodes `product` into partial products [batch, S, M, N] (a pool buffer, workgroup z = item · S + split) and
 * their sum, in split order, plus `bias` where given (its view broadcast over [M, N], batch strides 0), into out
 * (kernels/splitk.ts), and describes the product by its sum kernel (splitSums: a plan may fold an epilogue into
 * that sum, dispatchSplitKSum).
 */
function splitKInto(
  ctx: MatmulContext,
  a: NDArray,
  b: NDArray,
  out: DeviceBuffer,
  M: number,
  N: number,
  splitK: number,
  flops: number,
  bias: NDArray | null,
  product: (partial: GPUBuffer) => void,
): void {
  const batchShape = a.shape.slice(0, -2);
  const batch = batchShape.reduce((p, d) => p * d, 1);
  const partialBytes = batch * splitK * M * N * 4;
  const partial = ctx.pool.acquire(partialBytes);
  const scratch = ctx.batch.scratchKey();
  ctx.batch.keys.set(partial, scratch);
  try {
    product(partial);
    dispatchSplitKSum(ctx, { partial, splitK }, out, batch, M, N, bias, null, null, flops);
    describe(ctx, a, b, bias, null, out, [...batchShape, M, N], { partial, splitK });
  } finally {
    // Later commands run after these in queue order, so the buffer may be handed out again at once.
    ctx.batch.keys.delete(partial);
    ctx.batch.tracker.forget(scratch);
    ctx.pool.release(partial, partialBytes);
  }
}

/**
 * Encodes the sum of a split product's partials (kernels/splitk.ts) into out [batch, M, N], plus `bias`, and with
 * `epilogue` its steps in the store (a capture plan's fusion, plan-fusion.ts: arrays contiguous of out's shape;
 * with `keep`, the value after its first `at` steps also written whole to `keep.out`).
 */
export function dispatchSplitKSum(
  ctx: MatmulContext,
  split: SplitSum,
  out: DeviceBuffer,
  batch: number,
  M: number,
  N: number,
  bias: NDArray | null,
  epilogue: readonly ElementwiseStep[] | null = null,
  keep: { readonly at: number; readonly out: DeviceBuffer } | null = null,
  flops = 0,
): void {
  const epi = epilogue?.length ? epilogue : null;
  const at = epi && keep ? keep.at : null;
  const v4 = (M * N) % 4 === 0;
  const total = (batch * M * N) / (v4 ? 4 : 1);
  const r = bias?.shape.length ?? 0;
  const biasWords = bias ? [bias.offset, bias.strides[r - 2] ?? 0, bias.strides[r - 1] ?? 0] : [];
  const arrays = (epi ?? []).flatMap((s) => ('array' in s ? [s.array] : []));
  const numbers = (epi ?? []).flatMap((s) => ('scalar' in s ? [floatBits(s.scalar)] : []));
  const epiWords = epi ? [0, ...arrays.map((x) => x.offset), ...numbers] : [];
  const epiBuffers = [...arrays.map((x) => ctx.gpu(x.buffer)), ...(at !== null ? [ctx.gpu(keep!.out)] : [])];
  ctx.batch.dispatch(
    'matmul',
    `matmul/splitk-sum/${v4 ? 'vec4' : 'scalar'}${bias ? '/bias' : ''}${epilogueKey(epi, at)}`,
    () => splitKSumWgsl(v4, bias !== null, epi, at),
    splitKSumWords(bias !== null) + epiWords.length,
    [total, (M * N) / (v4 ? 4 : 1), split.splitK, N, ...biasWords, ...epiWords],
    [split.partial, ctx.gpu(out), ...(bias ? [ctx.gpu(bias.buffer)] : []), ...epiBuffers],
    flat(total),
    flops,
  );
}
