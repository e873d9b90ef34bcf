/**
 * Fused SGD on WebGPU (sgdStep): v ← momentum·v + (g + wd·p), p ← p − lr·v in one kernel (kernels/fused.ts). Inside
 * a live section of a capture (capture.ts) the kernel's learning rate is live: each replay writes the section's
 * current `lr` (LiveValues.optimizer) into its params, as a scheduled eager step would pass it.
 */
import type { DeviceBuffer, NDArray, SgdStepParams } from '@polyhal/hal';
import type { LiveContext } from './capture.js';
import type { CommandBatch } from './encoder.js';
import { flat } from './kernel-params.js';
import { sgdWgsl } from './kernels/fused.js';
import { floatBits } from './layout.js';

/** What the SGD dispatch needs of its backend. */
export interface SgdContext {
  readonly batch: CommandBatch;
  readonly gpu: (buffer: DeviceBuffer) => GPUBuffer;
  /** A placeholder storage buffer bound in place of the velocity without momentum. */
  readonly dummy: GPUBuffer;
  /** The running capture's live section and patch registration, null without a capture. */
  readonly live: () => LiveContext | null;
}

/** One SGD step on validated operands: param and velocity of `param.size` elements, `grad` whole float32. */
export function dispatchSgd(
  ctx: SgdContext,
  param: DeviceBuffer,
  grad: NDArray,
  velocity: DeviceBuffer | null,
  p: SgdStepParams,
): void {
  const momentum = velocity !== null && p.momentum > 0 ? 1 : 0;
  const words = (lr: number): number[] => [
    param.size,
    floatBits(lr),
    floatBits(p.momentum),
    floatBits(p.weightDecay),
    momentum,
  ];
  ctx.batch.dispatch(
    'sgdStep',
    'sgd',
    sgdWgsl,
    5,
    words(p.lr),
    [ctx.gpu(param), ctx.gpu(grad.buffer), momentum ? ctx.gpu(velocity!) : ctx.dummy],
    flat(param.size),
  );
  const capture = ctx.live();
  const optimizer = capture?.values?.optimizer;
  if (capture && optimizer) capture.patch(() => ({ params: words(optimizer().lr) }));
}
