/**
 * concat and stack in one dispatch on WebGPU (the copyIntoManyKernel hook): the views of one call are encoded as
 * one dispatch per `slots` of them (kernels/copy-many.ts: one storage binding per view, plus the destination), so
 * a stack of the three gradients of a packed QKV projection is one kernel, not three. A leftover single view is
 * the ordinary copy (dispatch-elementwise.ts). int8 and uint8 in 1-byte storage (`bytes`: every view and `out`
 * there) take kernels/copy-many-bytes.ts, leftover single views included. float16 in 2-byte storage declines
 * (its views address half words: kernels/half.ts copies them), and so does a device with fewer than three
 * storage bindings per stage.
 *
 * Each view keeps its own coalesced dims (its shape, its strides and the destination's), so permuted, reversed
 * and broadcast views copy as copyIntoKernel copies them. Inside a capture the kernel records as any other
 * (batch.dispatch), and plan-merge.ts may merge it with its neighbours like the single copy.
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import { dispatchCopy, type ElementwiseContext } from './dispatch-elementwise.js';
import { packDims } from './kernel-params.js';
import { copyManyWgsl, copyManyWords } from './kernels/copy-many.js';
import { copyManyBytesWgsl } from './kernels/copy-many-bytes.js';
import { coalesce, grid, rankSlots } from './layout.js';

/** At most this many views per dispatch, whatever the adapter's binding limits allow. */
export const MAX_COPY_MANY_SLOTS = 16;

/** Views per dispatch on a device with `maxStorageBuffers` storage bindings per stage (one is the destination). */
export function copyManySlots(maxStorageBuffers: number): number {
  return Math.max(1, Math.min(MAX_COPY_MANY_SLOTS, maxStorageBuffers - 1));
}

const sizeOf = (x: NDArray): number => x.shape.reduce((p, d) => p * d, 1);

/**
 * Every non-empty view `xs[k]` written into `out` at `strides` from `offsets[k]` (validated by the HAL: one
 * 32-bit storage dtype, distinct positions inside `out`); false declines, having encoded nothing.
 */
export function dispatchCopyMany(
  ctx: ElementwiseContext,
  maxStorageBuffers: number,
  xs: readonly NDArray[],
  out: DeviceBuffer,
  strides: readonly number[],
  offsets: readonly number[],
  bytes?: { gpu(buffer: DeviceBuffer): GPUBuffer },
): boolean {
  const slots = copyManySlots(maxStorageBuffers);
  if (slots < 2 || ctx.half.half.has(out.id) || xs.some((x) => ctx.half.half.has(x.buffer.id))) return false;
  // every buffer looked up before anything is encoded
  const gpu = bytes ? bytes.gpu : ctx.gpu;
  const dst = gpu(out);
  const srcs = xs.map((x) => gpu(x.buffer));
  for (let k = 0; k < xs.length; k += slots) {
    const group = xs.slice(k, k + slots);
    if (group.length === 1 && !bytes) {
      dispatchCopy(ctx, group[0]!, out, strides, offsets[k]!);
      continue;
    }
    const dims = group.map((x) => coalesce(x.shape, [x.strides, strides]));
    const R = rankSlots(Math.max(...dims.map((c) => c.shape.length)));
    const params: number[] = [];
    let first = 0;
    group.forEach((x, j) => {
      const n = sizeOf(x);
      params.push(n, first, x.offset, offsets[k + j]!, ...packDims(dims[j]!, R));
      first += Math.ceil(n / 256);
    });
    const [gx, gy] = grid(first);
    ctx.batch.dispatch(
      'concat',
      `copyMany${bytes ? 'Bytes' : ''}/${group.length}/${R}`,
      () => (bytes ? copyManyBytesWgsl : copyManyWgsl)(group.length, R),
      copyManyWords(group.length, R),
      params,
      [dst, ...srcs.slice(k, k + slots)],
      [gx, gy, 1],
    );
  }
  return true;
}
