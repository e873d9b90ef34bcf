/**
 * The fused ops of the WASM backend on their kernels: Adam/AdamW and SGD steps (one in-place pass
 * over a contiguous parameter and its state, SIMD-free scalar loops; memory-bound) and softmax
 * cross-entropy over [N, C] logits. Operands arrive validated and whole-buffer contiguous.
 */
import type { AdamStepParams, DeviceBuffer, NDArray, SgdStepParams } from '@polyhal/hal';
import { adamStepConstants } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';

/** adamF32: param, m and v updated in place from `grad` (a whole buffer of param's size). */
export function dispatchAdam(
  ctx: WasmContext,
  param: DeviceBuffer,
  grad: DeviceBuffer,
  m: DeviceBuffer,
  v: DeviceBuffer,
  p: AdamStepParams,
): void {
  const k = adamStepConstants(p);
  ctx.k.adamF32(
    param.size,
    ctx.ptr(param),
    ctx.ptr(grad),
    ctx.ptr(m),
    ctx.ptr(v),
    p.lr,
    p.beta1,
    p.beta2,
    p.eps,
    k.decay,
    k.c1,
    k.c2,
    k.oneMinusBeta1,
    k.oneMinusBeta2,
  );
}

/** sgdF32: param (and velocity, when given and momentum > 0) updated in place from `grad`. */
export function dispatchSgd(
  ctx: WasmContext,
  param: DeviceBuffer,
  grad: DeviceBuffer,
  velocity: DeviceBuffer | null,
  p: SgdStepParams,
): void {
  const vel = velocity && p.momentum > 0 ? ctx.ptr(velocity) : 0;
  ctx.k.sgdF32(param.size, ctx.ptr(param), ctx.ptr(grad), vel, p.lr, p.momentum, p.weightDecay);
}

/** softmaxCrossEntropyF32 over logits `z` and labels `y` ([N, C]); `grad` null skips the gradient. */
export function dispatchSoftmaxCrossEntropy(
  ctx: WasmContext,
  z: NDArray,
  y: NDArray,
  loss: DeviceBuffer,
  grad: DeviceBuffer | null,
): void {
  const [n, c] = z.shape as [number, number];
  ctx.k.softmaxCrossEntropyF32(n, c, ctx.ptr(z.buffer), ctx.ptr(y.buffer), ctx.ptr(loss), grad ? ctx.ptr(grad) : 0);
}
