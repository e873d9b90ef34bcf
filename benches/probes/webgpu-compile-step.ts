/**
 * The main job's training steps (MLP, CNN, ViT; batch 64, AdamW) on webgpu: eager against forward and backward
 * compiled (`compile`: recorded once, replayed; the optimizer steps outside, eagerly), in one process on the same
 * inputs. A step: zeroGrad, forward and backward (eager or replayed), optimizer step, loss read back. Rounds
 * alternate the two (each on its own copy of the model, built from the same seed); prints the median round of
 * each, the ratio, and the kernels and submissions per step; checks that the two models' losses agree bit for bit.
 *   node webgpu-compile-step.mjs [--rounds 5] [--steps 40] [--json f]
 */
import { writeFileSync } from 'node:fs';
import { AdamW, compile, crossEntropy, scope, Tensor } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { buildModel, type ModelKind, toModelInput } from '@polyhal/models';

const arg = (name: string, d: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const roundsN = arg('--rounds', 5);
const steps = arg('--steps', 40);
const be = await createWebGpuBackend();
const stats = () => (be as unknown as { kernelStats(): { dispatches: number; submissions: number } }).kernelStats();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: Record<string, unknown>[] = [];
const xs = Float32Array.from({ length: 64 * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(64 * 10);
for (let i = 0; i < 64; i++) ys[i * 10 + (i % 10)] = 1;
const x = Tensor.fromArray(be, xs, [64, 784]);
const y = Tensor.fromArray(be, ys, [64, 10]);

for (const kind of ['mlp', 'cnn', 'vit'] as ModelKind[]) {
  const models = [buildModel(kind, be, 0), buildModel(kind, be, 0)];
  const opts = models.map((m) => new AdamW(m.parameters(), { lr: 1e-3, weightDecay: 0.05 }));
  const forwardBackward =
    (i: number) =>
    (a: Tensor, b: Tensor): Tensor => {
      const loss = crossEntropy(models[i]!.forward(toModelInput(kind, a)), b);
      loss.backward();
      return loss;
    };
  const compiled = compile(forwardBackward(1));
  const variants = {
    eager: () => scope(() => forwardBackward(0)(x, y)),
    compiled: () => compiled(x, y),
  };
  const step = async (name: 'eager' | 'compiled'): Promise<number> => {
    const i = name === 'eager' ? 0 : 1;
    opts[i]!.zeroGrad();
    const loss = variants[name]();
    opts[i]!.step();
    const v = await loss.item();
    loss.dispose();
    return v;
  };
  let same = true;
  for (let i = 0; i < 5; i++) same = (await step('eager')) === (await step('compiled')) && same;
  const per: Record<string, { ms: number[]; kernels: number; submissions: number }> = {
    eager: { ms: [], kernels: 0, submissions: 0 },
    compiled: { ms: [], kernels: 0, submissions: 0 },
  };
  for (let r = 0; r < roundsN; r++) {
    const order = r % 2 ? (['compiled', 'eager'] as const) : (['eager', 'compiled'] as const);
    for (const name of order) {
      const k0 = stats();
      const t = performance.now();
      for (let i = 0; i < steps; i++) await step(name);
      per[name]!.ms.push((performance.now() - t) / steps);
      const k1 = stats();
      per[name]!.kernels = (k1.dispatches - k0.dispatches) / steps;
      per[name]!.submissions = (k1.submissions - k0.submissions) / steps;
    }
  }
  const e = median(per['eager']!.ms);
  const c = median(per['compiled']!.ms);
  const row = {
    model: kind,
    size: 64, // the batch
    eagerMs: +e.toFixed(3),
    compiledMs: +c.toFixed(3),
    speedup: +(e / c).toFixed(2),
    sameLosses: same,
    eagerKernels: per['eager']!.kernels,
    compiledKernels: per['compiled']!.kernels,
    compiledSubmissions: per['compiled']!.submissions,
    refused: compiled.stats.refused,
  };
  rows.push(row);
  console.log(JSON.stringify(row));
  compiled.release();
  for (const o of opts) o.dispose();
  for (const m of models) m.dispose();
}
console.log(`device: ${be.deviceName}`);
const j = process.argv.indexOf('--json');
if (j > 0) writeFileSync(process.argv[j + 1]!, JSON.stringify({ device: be.deviceName, rows }, null, 2));
x.dispose();
y.dispose();
be.dispose();
