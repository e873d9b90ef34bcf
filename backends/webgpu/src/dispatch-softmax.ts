/**
 * Softmax dispatch of the WebGPU backend: float32 softmax over the last axis of a row-major array (any offset) as one
 * kernel instead of the HAL's composite: rows of up to SOFTMAX_SHORT_MAX elements on kernels/softmax-short.ts
 * (several rows a workgroup, each row read once into registers), longer rows on kernels/softmax.ts (a workgroup a
 * row); other axes, dtypes and layouts return null, and the backend runs the composite.
 */
import { type DeviceBuffer, type NDArray, viewOf } from '@polyhal/hal';
import { checkAxis, softmaxRows } from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { SOFTMAX_WORDS, softmaxWgsl } from './kernels/softmax.js';
import {
  SOFTMAX_SHORT_MAX,
  SOFTMAX_SHORT_THREADS,
  softmaxShortShape,
  softmaxShortWgsl,
} from './kernels/softmax-short.js';
import { grid } from './layout.js';

/** What the dispatch uses of the backend: the composite's operand check, its allocator, its buffers. */
export interface SoftmaxContext {
  readonly batch: CommandBatch;
  check(x: NDArray, op: string, arg?: string): void;
  allocate(size: number, dtype: 'float32'): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
  gpu(buffer: DeviceBuffer): GPUBuffer;
}

/** softmax(x, axis) on the one-kernel form, or null where the composite should run. Errors as the composite's. */
export function softmaxOnGpu(ctx: SoftmaxContext, x: NDArray, axis: number): NDArray | null {
  ctx.check(x, 'softmax');
  checkAxis(axis, 'softmax', x);
  const layout = softmaxRows(x, axis);
  if (!layout) return null;
  const { rows, n } = layout;
  const size = rows * n;
  const out = ctx.allocate(size, 'float32');
  try {
    const params = [rows, n, x.offset, 0];
    const buffers = [ctx.gpu(x.buffer), ctx.gpu(out)];
    if (n <= SOFTMAX_SHORT_MAX) {
      const { group, per } = softmaxShortShape(n);
      const groups = grid(Math.ceil(rows / (SOFTMAX_SHORT_THREADS / group)));
      const key = `softmax/short/${group}x${per}`;
      ctx.batch.dispatch('softmax', key, () => softmaxShortWgsl(group, per), SOFTMAX_WORDS, params, buffers, [
        ...groups,
        1,
      ]);
    } else {
      ctx.batch.dispatch('softmax', 'softmax/rows', () => softmaxWgsl, SOFTMAX_WORDS, params, buffers, [
        ...grid(rows),
        1,
      ]);
    }
  } catch (e) {
    ctx.deallocate(out);
    throw e;
  }
  return viewOf(out, x.shape);
}
