/**
 * Softmax dispatch of the WASM backend: float32 softmax over the last axis of a row-major array (any offset) as
 * one fused kernel (assembly/softmax.ts: three passes per row) instead of the HAL's composite (max, subtract,
 * exp, sum and divide: five kernels and four temporaries); rows split across the pool when large. Other axes,
 * dtypes and layouts return null, and the backend runs the composite.
 */
import { type DeviceBuffer, type NDArray, viewOf } from '@polyhal/hal';
import { checkAxis, softmaxRows } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';

/** What the dispatch uses of the backend: the composite's operand check and its allocator. */
export interface SoftmaxBackend {
  check(x: NDArray, op: string, arg?: string): void;
  allocate(size: number, dtype: 'float32'): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
}

/** softmax(x, axis) on the fused kernel, or null where the composite should run. Errors as the composite's. */
export function softmaxOnWasm(be: SoftmaxBackend, ctx: WasmContext, x: NDArray, axis: number): NDArray | null {
  be.check(x, 'softmax');
  checkAxis(axis, 'softmax', x);
  const layout = softmaxRows(x, axis);
  if (!layout) return null;
  const { rows, n } = layout;
  const size = rows * n;
  const out = be.allocate(size, 'float32');
  try {
    const [px, py] = [ctx.ptr(x.buffer) + x.offset * 4, ctx.ptr(out)];
    // an exp per element: split from a quarter of the elementwise ops' threshold
    const parts = ctx.pool && size * 4 >= ctx.elementwiseThreadThreshold ? Math.min(ctx.pool.size, rows) : 1;
    if (parts === 1) ctx.k.softmaxF32(n, px, py, 0, rows);
    else {
      const each = Math.ceil(rows / parts);
      const jobs = Array.from({ length: parts }, (_, p) => [n, px, py, p * each, Math.min(rows, (p + 1) * each)]);
      ctx.pool!.run(
        'softmaxF32',
        jobs.filter((j) => j[3]! < j[4]!),
        (j) => ctx.k.softmaxF32(j[0]!, j[1]!, j[2]!, j[3]!, j[4]!),
      );
    }
  } catch (e) {
    be.deallocate(out);
    throw e;
  }
  return viewOf(out, x.shape);
}
