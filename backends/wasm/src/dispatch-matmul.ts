/**
 * Matmul dispatch of the WASM backend, the batch dims planned into rows (planMatmulBatch, broadcast batch dims
 * included). Where the pool splits each item (M·N·K of threadThreshold or more), one gemm call per item and part:
 * by rows, in whole micro-kernel panels, or, where N ≥ 4·M, by columns in whole 8-column panels (gemmCols; each
 * part then packs only its columns of B, where a row split would pack all of B once per part: a [40, 120] ·
 * [120, 6625] classifier head), each part packing into its own scratch block. Otherwise a batch of several items
 * (attention's [batch, heads] products) is ONE gemmBatched call over every item, or one per thread, whole items
 * split across the pool where all of them together reach threadThreshold: each item computed as gemm computes it
 * (the same bits), without a WebAssembly call and its JavaScript per item (the ViT step of @polyhal/models:
 * 7,293 WebAssembly calls → 921).
 */
import { type DeviceBuffer, InvalidArgumentError, type NDArray } from '@polyhal/hal';
import { planMatmulBatch, type RowPlan } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';
import type { KernelExports } from './module.js';

/** The matmulKernel hook: `out` = a @ b over the leading (batch) dims. */
export function dispatchMatmul(ctx: WasmContext, a: NDArray, b: NDArray, out: DeviceBuffer): void {
  const r = a.shape.length;
  const [M, K] = [a.shape[r - 2]!, a.shape[r - 1]!];
  const N = b.shape[r - 1]!;
  if (M === 0 || N === 0) return;
  // K ≥ 2^31 only arises from broadcast (stride-0) operands; the kernel counts K in an i32.
  if (K > 2 ** 31 - 1)
    throw new InvalidArgumentError(`matmul: inner dimension K = ${K} exceeds the wasm kernels' limit of 2^31 − 1`);
  const batch = planMatmulBatch(a, b);
  // Split across threads when the product is large enough: rows in whole micro-kernel panels, or columns
  // in whole 8-column panels where N ≥ 4·M (packing A costs 16 bytes an element, B 4).
  const mr = ctx.k.gemmRowBlock();
  const byCols = N >= 4 * M;
  const most = byCols ? Math.ceil(N / 64) : Math.ceil(M / (4 * mr));
  const parts = ctx.pool && M * N * K >= ctx.threadThreshold ? Math.min(ctx.pool.size, most) : 1;
  const cols = Math.ceil(N / parts / 8) * 8;
  // packBytesB(1) is one 8-column panel; computed here in doubles, so a huge N gives OutOfMemoryError.
  const scratchBytes =
    (ctx.k.packBytesA() >>> 0) + Math.ceil((parts > 1 && byCols ? cols : N) / 8) * (ctx.k.packBytesB(1) >>> 0) + 256;
  const items = batch.rows * batch.n;
  if (parts === 1 && items > 1) {
    batched(ctx, a, b, out, batch, scratchBytes);
    return;
  }
  const scratch = Array.from({ length: parts }, () => ctx.heap.alloc(scratchBytes));
  try {
    const [pa, pb, pc] = [ctx.ptr(a.buffer), ctx.ptr(b.buffer), ctx.ptr(out)];
    let t = 0;
    for (let row = 0; row < batch.rows; row++) {
      for (let i = 0; i < batch.n; i++, t++) {
        const ao = batch.starts[0]![row]! + i * batch.step[0]!;
        const bo = batch.starts[1]![row]! + i * batch.step[1]!;
        const job = (s: number, r0: number, r1: number): number[] => [
          M,
          N,
          K,
          pa + ao * 4,
          a.strides[r - 2]!,
          a.strides[r - 1]!,
          pb + bo * 4,
          b.strides[r - 2]!,
          b.strides[r - 1]!,
          pc + t * M * N * 4,
          s,
          r0,
          r1,
        ];
        if (parts === 1) {
          ctx.k.gemm(...(job(scratch[0]!, 0, M) as Parameters<KernelExports['gemm']>));
          continue;
        }
        if (byCols) {
          // [M, n1 − n0, K, a, sam, sak, b at column n0, sbk, sbn, c at column n0, ldc N, scratch]
          const [sbk, sbn] = [b.strides[r - 2]!, b.strides[r - 1]!];
          const colJobs = scratch
            .map((s, p) => [p * cols, Math.min(N, (p + 1) * cols), s] as const)
            .filter(([n0, n1]) => n0 < n1)
            .map(([n0, n1, s]) => {
              const [aPtr, sam, sak] = [pa + ao * 4, a.strides[r - 2]!, a.strides[r - 1]!];
              return [
                M,
                n1 - n0,
                K,
                aPtr,
                sam,
                sak,
                pb + (bo + n0 * sbn) * 4,
                sbk,
                sbn,
                pc + (t * M * N + n0) * 4,
                N,
                s,
              ];
            });
          ctx.pool!.run('gemmCols', colJobs, (j) => ctx.k.gemmCols(...(j as Parameters<KernelExports['gemmCols']>)));
          continue;
        }
        const rows = Math.ceil(M / parts / mr) * mr;
        const jobs = scratch
          .map((s, p) => job(s, Math.min(M, p * rows), Math.min(M, (p + 1) * rows)))
          .filter((j) => j[11]! < j[12]!);
        ctx.pool!.run('gemm', jobs, (j) => ctx.k.gemm(...(j as Parameters<KernelExports['gemm']>)));
      }
    }
  } finally {
    for (const s of scratch) ctx.heap.release(s, scratchBytes);
  }
}

// assembly/matmul-batched.ts's parameter block: 15 i32 words, then A's and B's row starts (batch.rows each).
const BATCHED_WORDS = 15;

/**
 * Every item of a batched product whose items each fall below threadThreshold: one gemmBatched call, or, where
 * the items together reach threadThreshold, one per thread of the pool, each over a run of whole items with its
 * own scratch.
 */
function batched(
  ctx: WasmContext,
  a: NDArray,
  b: NDArray,
  out: DeviceBuffer,
  batch: RowPlan,
  scratchBytes: number,
): void {
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const items = batch.rows * batch.n;
  const parts = ctx.pool && M * N * K * items >= ctx.threadThreshold ? Math.min(ctx.pool.size, items) : 1;
  const blockBytes = (BATCHED_WORDS + 2 * batch.rows) * 4;
  const block = ctx.heap.alloc(blockBytes);
  const scratch: number[] = [];
  try {
    for (let p = 0; p < parts; p++) scratch.push(ctx.heap.alloc(scratchBytes));
    const starts = block + BATCHED_WORDS * 4;
    const words = [
      M,
      N,
      K,
      ctx.ptr(a.buffer),
      a.strides[r - 2]!,
      a.strides[r - 1]!,
      ctx.ptr(b.buffer),
      b.strides[r - 2]!,
      b.strides[r - 1]!,
      ctx.ptr(out),
      batch.n,
      starts,
      starts + batch.rows * 4,
      batch.step[0]!,
      batch.step[1]!,
    ];
    const heap = ctx.heap.i32(); // pointers ≥ 2^31 keep their bits (ToInt32)
    heap.set(words, block >>> 2);
    heap.set(batch.starts[0]!, (starts >>> 2) + 0);
    heap.set(batch.starts[1]!, (starts >>> 2) + batch.rows);
    if (parts === 1) {
      ctx.k.gemmBatched(block, scratch[0]!, 0, items);
      return;
    }
    const per = Math.ceil(items / parts);
    const jobs = scratch
      .map((s, p) => [block, s, Math.min(items, p * per), Math.min(items, (p + 1) * per)])
      .filter((j) => j[2]! < j[3]!);
    ctx.pool!.run('gemmBatched', jobs, (j) => ctx.k.gemmBatched(j[0]!, j[1]!, j[2]!, j[3]!));
  } finally {
    for (const s of scratch) ctx.heap.release(s, scratchBytes);
    ctx.heap.release(block, blockBytes);
  }
}
