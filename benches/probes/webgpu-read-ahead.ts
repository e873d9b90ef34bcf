/**
 * Does a compiled step's read of its loss gain from being copied toward the host with the replay's own work
 * (webgpu option readAheadInReplay: one submission a step, not two)? One process, two backends on the same GPU
 * (the option on and off), the main job's models (batch 64), each a compiled whole training step (AdamW inside)
 * whose loss is read every step; rounds of `steps` steps alternate between the two backends, so both see the
 * same machine state. Prints per model the ms per step of every round and their medians, and the submissions
 * per step.
 *   node webgpu-read-ahead.mjs [--models mlp,cnn,vit] [--rounds 10] [--steps 40] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { AdamW, compile, crossEntropy, Tensor } from '@polyhal/autograd';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { buildModel, type ModelKind, toModelInput } from '@polyhal/models';

const arg = (name: string, d: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : d;
};
const kinds = arg('--models', 'mlp,cnn,vit').split(',') as ModelKind[];
const rounds = Number(arg('--rounds', '10'));
const steps = Number(arg('--steps', '40'));
const VARIANTS = ['readAhead', 'plain'] as const;
const bes: WebGpuBackend[] = [
  await createWebGpuBackend({ readAheadInReplay: true }),
  await createWebGpuBackend({ readAheadInReplay: false }),
];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const xs = Float32Array.from({ length: 64 * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(64 * 10);
for (let i = 0; i < 64; i++) ys[i * 10 + (i % 10)] = 1;
const rows: Record<string, unknown>[] = [];

for (const kind of kinds) {
  const steppers = bes.map((be) => {
    const model = buildModel(kind, be, 0);
    const opt = new AdamW(model.parameters(), { lr: 1e-3, weightDecay: 0.05 });
    const [x, y] = [Tensor.fromArray(be, xs, [64, 784]), Tensor.fromArray(be, ys, [64, 10])];
    const step = compile((a: Tensor, b: Tensor): Tensor => {
      opt.zeroGrad();
      const loss = crossEntropy(model.forward(toModelInput(kind, a)), b);
      loss.backward();
      opt.step();
      return loss;
    });
    return async (): Promise<number> => {
      const loss = step(x, y);
      const v = await loss.item();
      loss.dispose();
      return v;
    };
  });
  const losses = [[], []] as number[][];
  for (let i = 0; i < 5; i++) for (const [k, s] of steppers.entries()) losses[k]!.push(await s());
  const ms: number[][] = [[], []];
  const submissions = [0, 0];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [1, 0] : [0, 1];
    for (const k of order) {
      const s0 = bes[k]!.kernelStats().submissions;
      const t = performance.now();
      for (let i = 0; i < steps; i++) await steppers[k]!();
      ms[k]!.push(+((performance.now() - t) / steps).toFixed(4));
      submissions[k] = (bes[k]!.kernelStats().submissions - s0) / steps;
    }
  }
  const row = {
    model: kind,
    sameLosses: losses[0]!.every((v, i) => v === losses[1]![i]),
    ...Object.fromEntries(
      VARIANTS.flatMap((v, k) => [
        [`${v}Ms`, +median(ms[k]!).toFixed(4)],
        [`${v}Rounds`, ms[k]],
        [`${v}Submissions`, submissions[k]],
      ]),
    ),
    plainOverReadAhead: +(median(ms[1]!) / median(ms[0]!)).toFixed(3),
  };
  rows.push(row);
  console.log(JSON.stringify(row));
}
console.log(`device: ${bes[0]!.deviceName}`);
for (const be of bes) be.dispose();
const json = arg('--json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
