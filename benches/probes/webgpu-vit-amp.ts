/**
 * A ViT-S-like training step (width 384, 6 heads, 12 blocks, MLP ratio 4, patch 2: 197 tokens; batch 64, synthetic
 * data, AdamW) on webgpu in float32 and in mixed precision (autocast('float16') around the forward, a GradScaler
 * around backward and the step), alternating in one process on one device. Mixed precision's products run on the
 * tensor cores where the device offers f16 subgroup matrices (Dawn on NVIDIA: `--dawn-flags
 * enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia[,disable_robustness]`). The step time is to
 * the loss on the host; the median of `--rounds` rounds of `--steps` steps after 3 warm-up steps of each.
 * A third model, float32 with the whole step compiled (`compile`: zeroGrad, forward, backward and the AdamW step
 * recorded once and replayed), tells the GPU's share of the eager step from the per-op JavaScript's.
 * Each mode's row also counts the GPU buffers created per timed step (a pool too small for a step's arrays makes
 * every step create and clear them anew: `--pool-bytes`, the backend's maxPooledBytes, default the backend's).
 * `--f16-tile` forces the tensor cores' tile of every float16 product (the backend's float16MatmulTile), `--builtins`
 * the form of their subgroup-matrix builtins (subgroupMatrixBuiltins: auto, legacy, vector), `--split-k` the split-K
 * count of every product (matmulSplitK: auto, or a number; 1 never splits), `--layer-norm-kernel` the backend's
 * layerNormKernel.
 * `--kernel-times` times instead each kernel of one replay on the GPU (the backend's kernelTimestamps): of the
 * float32 forward and backward compiled, of the same under autocast('float16') (no GradScaler: its step reads the
 * inf check), and of the float32 whole step; one row each, with the GPU time per kernel family (kernel-times.ts).
 *   node webgpu-vit-amp.mjs [--dawn-flags F] [--depth 12] [--batch 64] [--steps 5] [--rounds 5] [--pool-bytes N]
 *     [--f16-tile auto|large|medium|small] [--builtins auto|legacy|vector] [--split-k auto|N]
 *     [--layer-norm-kernel auto|subgroup|workgroup|invocation] [--kernel-times]
 *     [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { autocast, compile, crossEntropy, scope, type Tensor } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { summarizeKernelTimes } from './kernel-times.js';
import { syntheticDigits, vitS } from './vit-s.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const flags = arg('dawn-flags', '');
const [depth, batch, steps, rounds] = ['depth', 'batch', 'steps', 'rounds'].map((k, i) =>
  Number(arg(k, ['12', '64', '5', '5'][i]!)),
) as [number, number, number, number];
const f16Tile = arg('f16-tile', 'auto') as 'auto' | 'large' | 'medium' | 'small';
const kernelTimes = process.argv.includes('--kernel-times');
const be = await createWebGpuBackend({
  dawnFlags: flags ? flags.split(' ') : [], // several flags: separated by spaces
  kernelTimestamps: kernelTimes,
  float16MatmulTile: f16Tile,
  subgroupMatrixBuiltins: arg('builtins', 'auto') as 'auto' | 'legacy' | 'vector',
  matmulSplitK: arg('split-k', 'auto') === 'auto' ? 'auto' : Number(arg('split-k', '')),
  layerNormKernel: arg('layer-norm-kernel', 'auto') as 'auto' | 'subgroup' | 'workgroup' | 'invocation',
  ...(arg('pool-bytes', '') ? { maxPooledBytes: Number(arg('pool-bytes', '')) } : {}),
  memoryLimit: 2 ** 35, // the activations of 12 blocks at batch 64 pass the 2 GiB default
});
console.log(`device: ${be.deviceName}`);
const { x, y } = syntheticDigits(be, batch);
if (kernelTimes) {
  const rows: Record<string, unknown>[] = [];
  for (const form of ['forward and backward', 'forward and backward, autocast float16', 'whole step'] as const) {
    const { model, opt } = vitS(be, depth, false, x, y);
    const fn = compile((a: Tensor, b: Tensor): Tensor => {
      opt.zeroGrad();
      const loss = autocast('float16', () => crossEntropy(model.forward(a), b), { enabled: form.includes('autocast') });
      loss.backward();
      if (form === 'whole step') opt.step();
      return loss;
    });
    for (let i = 0; i < 3; i++) await scope(async () => (await fn(x, y).data())[0]!);
    const row = {
      device: be.deviceName,
      depth,
      batch,
      form,
      ...summarizeKernelTimes((await be.replayKernelTimes()) ?? [], 20, 60),
    };
    console.log(JSON.stringify(row));
    rows.push(row);
    for (const p of model.parameters()) p.dispose();
  }
  const json = arg('json', '');
  if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
  be.dispose();
  process.exit(0);
}
const runs = (['float32', 'mixed', 'compiled'] as const).map((mode) => {
  const { model, opt, step: eager } = vitS(be, depth, mode === 'mixed', x, y);
  const whole = compile((a: Tensor, b: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(a), b);
    loss.backward();
    opt.step();
    return loss;
  });
  const step = (): Promise<number> =>
    mode === 'compiled' ? scope(async () => (await whole(x, y).data())[0]!) : eager();
  return { mode, step, times: [] as number[], loss: Number.NaN, whole, created: 0 };
});
for (const r of runs) for (let i = 0; i < 3; i++) r.loss = await r.step();
for (let round = 0; round < rounds; round++)
  for (const r of round % 2 ? [...runs].reverse() : runs) {
    const created = be.poolStats().created;
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) r.loss = await r.step();
    r.times.push((performance.now() - t0) / steps);
    r.created += (be.poolStats().created - created) / (steps * rounds);
  }
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const [f32, mixed, compiled] = runs.map((r) => med(r.times)) as [number, number, number];
const row = {
  device: be.deviceName,
  width: 384,
  heads: 6,
  depth,
  tokens: 197,
  batch,
  float32StepMs: f32,
  mixedStepMs: mixed,
  speedup: f32 / mixed,
  float16MatmulTile: f16Tile,
  subgroupMatrixBuiltins: arg('builtins', 'auto'),
  compiledStepMs: compiled,
  compiledStats: { ...runs[2]!.whole.stats },
  buffersCreatedPerStep: Object.fromEntries(runs.map((r) => [r.mode, r.created])),
  ...(arg('pool-bytes', '') ? { maxPooledBytes: Number(arg('pool-bytes', '')) } : {}),
  losses: Object.fromEntries(runs.map((r) => [r.mode, r.loss])),
};
console.log(JSON.stringify(row));
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows: [row] }, null, 2)}\n`);
be.dispose();
process.exit(0);
