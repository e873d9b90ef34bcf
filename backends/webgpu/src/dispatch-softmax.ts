/**
 * Softmax dispatch of the WebGPU backend: float32 softmax over the last axis of a row-major array (any offset) as one
 * kernel (kernels/softmax.ts) instead of the HAL's composite; other axes, dtypes and layouts return null, and the
 * backend runs the composite.
 */
import { contiguousStrides, type DeviceBuffer, type NDArray, viewOf } from '@polyhal/hal';
import { checkAxis } from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { SOFTMAX_WORDS, softmaxWgsl } from './kernels/softmax.js';
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
  const r = x.shape.length;
  if (x.dtype !== 'float32' || r === 0 || (axis < 0 ? axis + r : axis) !== r - 1) return null;
  const strides = contiguousStrides(x.shape);
  if (!x.shape.every((d, i) => d === 1 || x.strides[i] === strides[i])) return null;
  const n = x.shape[r - 1]!;
  const size = x.shape.reduce((p, d) => p * d, 1);
  if (size === 0) return null;
  const rows = size / n;
  const out = ctx.allocate(size, 'float32');
  try {
    ctx.batch.dispatch(
      'softmax',
      'softmax/rows',
      () => softmaxWgsl,
      SOFTMAX_WORDS,
      [rows, n, x.offset, 0],
      [ctx.gpu(x.buffer), ctx.gpu(out)],
      [...grid(rows), 1],
    );
  } catch (e) {
    ctx.deallocate(out);
    throw e;
  }
  return viewOf(out, x.shape);
}
