/**
 * The main job's ViT training step (4 blocks × width 64, batch 64, AdamW) on webgpu, split into what the
 * CPU spends (autograd and encoding: forward, backward and the optimizer up to the loss read) and the
 * whole step (to the loss on the host). On a fast GPU the step is CPU-bound, so this is the figure that
 * per-op overheads move. 10 warm-up steps, then 5 rounds of 40 steps; prints the median round and the
 * kernels dispatched and command buffers submitted per step.
 *   node webgpu-vit-step.mjs [label] [--json f]
 */
import { writeFileSync } from 'node:fs';
import { AdamW, crossEntropy, scope, Tensor } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { VisionTransformer } from '@polyhal/models';

const label = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 'ViT step';
const be = await createWebGpuBackend();
const model = new VisionTransformer({ backend: be, seed: 0 });
const opt = new AdamW(model.parameters(), { lr: 1e-3, weightDecay: 0.05 });
// Fixed inputs: the step's cost does not depend on the pixel values.
const xs = Float32Array.from({ length: 64 * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(64 * 10);
for (let i = 0; i < 64; i++) ys[i * 10 + (i % 10)] = 1;
const x = Tensor.fromArray(be, xs, [64, 784]);
const y = Tensor.fromArray(be, ys, [64, 10]);
let cpu = 0;
const step = (): Promise<number> =>
  scope(async () => {
    const t0 = performance.now();
    const loss = crossEntropy(model.forward(x), y);
    opt.zeroGrad();
    loss.backward();
    opt.step();
    cpu += performance.now() - t0;
    return loss.item();
  });
for (let i = 0; i < 10; i++) await step();
const rounds: { stepMs: number; cpuMs: number }[] = [];
const k0 = be.kernelStats();
for (let r = 0; r < 5; r++) {
  cpu = 0;
  const t = performance.now();
  for (let i = 0; i < 40; i++) await step();
  rounds.push({ stepMs: (performance.now() - t) / 40, cpuMs: cpu / 40 });
}
const k1 = be.kernelStats();
const perStep = {
  dispatches: (k1.dispatches - k0.dispatches) / 200,
  submissions: (k1.submissions - k0.submissions) / 200,
};
rounds.sort((a, b) => a.stepMs - b.stepMs);
const mid = rounds[2]!;
console.log(
  `${label} on ${be.deviceName}: step median ${mid.stepMs.toFixed(2)} ms ` +
    `(rounds ${rounds.map((r) => r.stepMs.toFixed(2)).join(' ')}); ` +
    `CPU up to the loss read ${mid.cpuMs.toFixed(2)} ms; ` +
    `${perStep.dispatches} kernels and ${perStep.submissions} submissions per step`,
);
const j = process.argv.indexOf('--json');
if (j > 0)
  writeFileSync(process.argv[j + 1]!, JSON.stringify({ label, device: be.deviceName, rounds, perStep }, null, 2));
opt.dispose();
model.dispose();
x.dispose();
y.dispose();
be.dispose();
