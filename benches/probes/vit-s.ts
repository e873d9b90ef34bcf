/**
 * The ViT-S-like training step the webgpu-vit-* probes time and profile: width 384, 6 heads, MLP ratio 4, patch 2
 * (197 tokens), `depth` blocks; synthetic digits (a batch of [batch, 784] pixels and one-hot labels), AdamW (lr 1e-4,
 * weight decay 0.05), in float32 or in mixed precision (autocast('float16') around the forward, a GradScaler around
 * backward and the step). The step's time is to the loss on the host.
 */
import { AdamW, autocast, crossEntropy, GradScaler, scope, Tensor } from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';
import { VisionTransformer } from '@polyhal/models';

/** A synthetic batch: x [batch, 784] pixels in [0, 1), y [batch, 10] one-hot labels. */
export function syntheticDigits(be: ComputeBackend, batch: number): { x: Tensor; y: Tensor } {
  const xs = Float32Array.from({ length: batch * 784 }, (_, i) => ((i * 7919) % 255) / 255);
  const ys = new Float32Array(batch * 10);
  for (let i = 0; i < batch; i++) ys[i * 10 + (i % 10)] = 1;
  return { x: Tensor.fromArray(be, xs, [batch, 784]), y: Tensor.fromArray(be, ys, [batch, 10]) };
}

/** A fresh model (seed 0) and optimizer, and its eager step on (x, y) in float32 or mixed precision. */
export function vitS(
  be: ComputeBackend,
  depth: number,
  mixed: boolean,
  x: Tensor,
  y: Tensor,
): { model: VisionTransformer; opt: AdamW; step: () => Promise<number> } {
  const model = new VisionTransformer({ backend: be, seed: 0, width: 384, heads: 6, depth, mlpRatio: 4, patch: 2 });
  const opt = new AdamW(model.parameters(), { lr: 1e-4, weightDecay: 0.05 });
  const scaler = new GradScaler({ enabled: mixed });
  const step = (): Promise<number> =>
    scope(async () => {
      const loss = autocast('float16', () => crossEntropy(model.forward(x), y), { enabled: mixed });
      opt.zeroGrad();
      scaler.scale(loss).backward();
      await scaler.step(opt);
      scaler.update();
      return (await loss.data())[0]!;
    });
  return { model, opt, step };
}
