/**
 * Matmul dispatch of the WASM backend: one gemm call per batch item (the batch dims planned into
 * rows, broadcast batch dims included), split by rows across the worker pool, in whole micro-kernel
 * panels, when M·N·K reaches threadThreshold; each part packs into its own scratch block.
 */
import { type DeviceBuffer, InvalidArgumentError, type NDArray } from '@polyhal/hal';
import { planMatmulBatch } from '@polyhal/hal/internal';
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
  // Split rows across threads when the product is large enough (in whole micro-kernel panels).
  const mr = ctx.k.gemmRowBlock();
  const parts = ctx.pool && M * N * K >= ctx.threadThreshold ? Math.min(ctx.pool.size, Math.ceil(M / (4 * mr))) : 1;
  // packBytesB(1) is one 8-column panel; computed here in doubles, so a huge N gives OutOfMemoryError.
  const scratchBytes = (ctx.k.packBytesA() >>> 0) + Math.ceil(N / 8) * (ctx.k.packBytesB(1) >>> 0) + 256;
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
