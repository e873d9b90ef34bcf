/**
 * Mixed precision's unscale and overflow check on WebGPU (nonFiniteCheckAndUnscale): the gradients of one call
 * are encoded as one dispatch per `slots` of them (kernels/unscale.ts), each multiplied in place, the flag
 * (foundInf) written by any invocation that meets an Inf or NaN. The op takes the whole list at once (PyTorch's
 * foreach form), so nothing is held across calls as Adam's steps are (dispatch-adam.ts).
 *
 * Inside a capture the kernel records as any other: invScale is a constant of the recording (its params are not
 * live), so a replay multiplies by the traced factor. GradScaler does not run inside `compile` (its step reads
 * the flag on the host, which a capture refuses).
 */
import type { DeviceBuffer } from '@polyhal/hal';
import type { CommandBatch } from './encoder.js';
import { unscaleWgsl, unscaleWords } from './kernels/unscale.js';
import { floatBits, grid } from './layout.js';

/** At most this many gradients per dispatch, whatever the adapter's binding limits allow. */
export const MAX_UNSCALE_SLOTS = 16;

/** What the dispatch needs of its backend. */
export interface UnscaleContext {
  readonly batch: CommandBatch;
  readonly gpu: (buffer: DeviceBuffer) => GPUBuffer;
}

/** Gradients per dispatch on a device with `maxStorageBuffers` storage bindings per stage (one is the flag). */
export function unscaleSlots(maxStorageBuffers: number): number {
  return Math.max(1, Math.min(MAX_UNSCALE_SLOTS, maxStorageBuffers - 1));
}

/** The unscale of validated operands (distinct live float32 buffers, foundInf of one element, invScale finite). */
export function dispatchUnscale(
  ctx: UnscaleContext,
  maxStorageBuffers: number,
  grads: readonly DeviceBuffer[],
  foundInf: DeviceBuffer,
  invScale: number,
): void {
  const live = grads.filter((g) => g.size > 0);
  // every buffer looked up before anything is encoded
  const flag = ctx.gpu(foundInf);
  const buffers = live.map((g) => ctx.gpu(g));
  const slots = unscaleSlots(maxStorageBuffers);
  for (let k = 0; k < live.length; k += slots) {
    const group = live.slice(k, k + slots);
    const n = group.length;
    const params = [floatBits(invScale), 0];
    let first = 0;
    for (const g of group) {
      params.push(g.size, first);
      first += Math.ceil(g.size / 256);
    }
    const [x, y] = grid(first);
    ctx.batch.dispatch(
      'nonFiniteCheckAndUnscale',
      `unscale/${n}`,
      () => unscaleWgsl(n),
      unscaleWords(n),
      params,
      [flag, ...buffers.slice(k, k + slots)],
      [x, y, 1],
    );
  }
}
