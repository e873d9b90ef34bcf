/**
 * The WebGPU backend's fused hooks: multi-tensor Adam, SGD, the gradient unscale, attention and its backward,
 * layerNorm and its backward, each a call of its dispatch-*.ts file with its context (WebGpuBackendBase's). The
 * other kernel hooks are WebGpuBackend's (webgpu-backend.ts).
 */
import type { AdamStepParams, DeviceBuffer, NDArray, SgdStepParams } from '@polyhal/hal';
import { dispatchAttention, dispatchAttentionBackward, dispatchAttentionBackwardPacked } from './dispatch-attention.js';
import { dispatchLayerNorm, dispatchLayerNormBackward } from './dispatch-norm.js';
import { dispatchSgd } from './dispatch-sgd.js';
import { dispatchUnscale } from './dispatch-unscale.js';
import { WebGpuBackendBase } from './webgpu-backend-base.js';

export abstract class WebGpuFusedHooks extends WebGpuBackendBase {
  /**
   * Fused Adam/AdamW in place, multi-tensor: consecutive steps with the same hyper-parameters share one
   * dispatch of up to MAX_ADAM_SLOTS parameters (dispatch-adam.ts). Operands validated by adamStep.
   */
  protected override adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    if (param.size === 0) return;
    const g = this.whole(grad);
    this.contexts.adam.add(param, g.view, m, v, p, g.temp);
  }

  /** Fused SGD in place, one kernel (dispatch-sgd.ts). Operands validated by sgdStep. */
  protected override sgdStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    velocity: DeviceBuffer | null,
    p: SgdStepParams,
  ): void {
    if (param.size === 0) return;
    const g = this.whole(grad);
    try {
      dispatchSgd(this.contexts.live, param, g.view, velocity, p);
    } finally {
      if (g.temp) this.free(g.view);
    }
  }

  /** Unscale and overflow check in place, several gradients per kernel (dispatch-unscale.ts). Operands validated. */
  protected override nonFiniteCheckAndUnscaleKernel(
    grads: readonly DeviceBuffer[],
    foundInf: DeviceBuffer,
    invScale: number,
  ): void {
    dispatchUnscale(this.contexts.live, this.device.limits.maxStorageBuffersPerShaderStage, grads, foundInf, invScale);
  }

  /** attention in one dispatch where k and v fit in workgroup memory (dispatch-attention.ts); false declines. */
  protected override attentionKernel(
    q: NDArray,
    k: NDArray,
    v: NDArray,
    scale: number,
    out: DeviceBuffer,
    outStrides: readonly number[],
  ): boolean {
    const limit = this.device.limits.maxComputeWorkgroupStorageSize;
    return dispatchAttention(this.contexts.attention, limit, q, k, v, scale, out, outStrides);
  }

  /** attentionBackward in one dispatch per leading index's workgroup (dispatch-attention.ts); false declines. */
  protected override attentionBackwardKernel(
    q: NDArray,
    k: NDArray,
    v: NDArray,
    dOut: NDArray,
    scale: number,
    dq: DeviceBuffer,
    dk: DeviceBuffer,
    dv: DeviceBuffer,
  ): boolean {
    const limit = this.device.limits.maxComputeWorkgroupStorageSize;
    return dispatchAttentionBackward(this.contexts.attention, limit, q, k, v, dOut, scale, dq, dk, dv);
  }

  /** attentionBackwardPacked in the same dispatch, written in qkv's layout (dispatch-attention.ts); false declines. */
  protected override attentionBackwardPackedKernel(
    q: NDArray,
    k: NDArray,
    v: NDArray,
    dOut: NDArray,
    scale: number,
    out: DeviceBuffer,
  ): boolean {
    const limit = this.device.limits.maxComputeWorkgroupStorageSize;
    return dispatchAttentionBackwardPacked(this.contexts.attention, limit, q, k, v, dOut, scale, out);
  }

  /** layerNorm on [rows, D] views: a workgroup or an invocation per row (dispatch-norm.ts). */
  protected override layerNormKernel(
    x: NDArray,
    weight: NDArray | null,
    bias: NDArray | null,
    eps: number,
    y: DeviceBuffer,
    mean: DeviceBuffer,
    rstd: DeviceBuffer,
  ): void {
    dispatchLayerNorm(this.contexts.norm, x, weight, bias, eps, y, mean, rstd);
  }

  /** layerNormBackward on [rows, D] views: dx per row, dweight and dbias per column (dispatch-norm.ts). */
  protected override layerNormBackwardKernel(
    g: NDArray,
    x: NDArray,
    mean: NDArray,
    rstd: NDArray,
    weight: NDArray | null,
    dx: DeviceBuffer,
    dweight: DeviceBuffer | null,
    dbias: DeviceBuffer | null,
  ): void {
    dispatchLayerNormBackward(this.contexts.norm, g, x, mean, rstd, weight, dx, dweight, dbias);
  }
}
