/**
 * Strided copy dispatch of the WASM backend (materialize, cast, the interior of pad): a view whose
 * coalesced dims are rank ≥ 2 runs copyNd, which walks the dims itself (no row list; large copies are
 * split across the worker pool along the outermost dim); rank 0 or 1 runs copyRows over a row plan.
 */
import { type DeviceBuffer, type DType, isNarrow, type NDArray } from '@polyhal/hal';
import { coalesce, planRows } from '@polyhal/hal/internal';
import { type WasmContext, withPlan } from './context.js';
import type { KernelExports } from './module.js';

/**
 * copyNd/copyRows modes (assembly/copy.ts): same dtype, float32 → int32, int32 → float32, and the
 * narrowing casts into int8, uint8 and float16 storage from float32 or int32 (x is never narrow here:
 * the HAL hands kernels storage views; narrow.ts).
 */
const COPY = 0;
const F32_TO_I32 = 1;
const I32_TO_F32 = 2;
const NARROW_MODES = {
  int8: { float32: 3, int32: 5 },
  uint8: { float32: 4, int32: 6 },
  float16: { float32: 7, int32: 8 },
} as const;

function copyMode(from: DType, to: DType): number {
  if (isNarrow(to)) return NARROW_MODES[to][from === 'float32' ? 'float32' : 'int32'];
  return from === to ? COPY : from === 'float32' ? F32_TO_I32 : I32_TO_F32;
}

/** Strided copy from view x into (ptr, shape, strides, offset) of `out`. */
export function copyInto(
  ctx: WasmContext,
  x: NDArray,
  out: DeviceBuffer,
  strides: readonly number[],
  offset: number,
): void {
  const mode = copyMode(x.dtype, out.dtype);
  const c = coalesce(x.shape, [x.strides, strides]);
  if (c.shape.includes(0)) return;
  if (c.shape.length >= 2) {
    // Many short rows (im2col windows): let the kernel walk the dims instead of listing every row;
    // large copies are split across the threads along the outermost dim (one meta/idx block each).
    const rank = c.shape.length;
    const [sx, so] = [c.strides[0]!, c.strides[1]!];
    const size = c.shape.reduce((p, d) => p * d, 1);
    const parts = ctx.pool && size >= ctx.elementwiseThreadThreshold ? Math.min(ctx.pool.size, c.shape[0]!) : 1;
    const per = Math.ceil(c.shape[0]! / parts);
    const blocks: number[] = [];
    try {
      const jobs: number[][] = [];
      for (let d0 = 0; d0 < c.shape[0]!; d0 += per) {
        const meta = ctx.heap.alloc(rank * 16); // shape, strides ×2, then rank i32 of odometer scratch
        blocks.push(meta);
        ctx.heap.i32().set([Math.min(per, c.shape[0]! - d0), ...c.shape.slice(1), ...sx, ...so], meta >>> 2);
        jobs.push([
          mode,
          rank,
          meta,
          meta + rank * 12,
          ctx.ptr(x.buffer),
          x.offset + d0 * sx[0]!,
          ctx.ptr(out),
          offset + d0 * so[0]!,
        ]);
      }
      const call = (j: number[]): void => ctx.k.copyNd(...(j as Parameters<KernelExports['copyNd']>));
      if (jobs.length === 1) call(jobs[0]!);
      else ctx.pool!.run('copyNd', jobs, call);
    } finally {
      for (const b of blocks) ctx.heap.release(b, rank * 16);
    }
    return;
  }
  const plan = planRows(x.shape, [x.strides, strides], [x.offset, offset]);
  if (plan.rows === 0) return;
  withPlan(ctx.heap, plan, 2, ([xs, os]) =>
    ctx.k.copyRows(mode, plan.n, plan.rows, ctx.ptr(x.buffer), xs!, plan.step[0]!, ctx.ptr(out), os!, plan.step[1]!),
  );
}
