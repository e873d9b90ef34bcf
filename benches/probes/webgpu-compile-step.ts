/**
 * The main job's training steps (MLP, CNN, ViT; batch 64, AdamW) on webgpu, in one process on the same inputs, three
 * ways, each on its own copy of the model built from the same seed:
 * - eager: zeroGrad, forward and backward, optimizer step, loss read back;
 * - forward+backward compiled (`compile`: recorded once, replayed), the optimizer stepping outside, eagerly;
 * - the whole step compiled: zeroGrad, forward, backward and the optimizer's step inside fn, so that a replay is
 *   the step's kernels plus one host callback (the optimizer's: it advances stepCount, and its update kernels take
 *   the step's lr and bias corrections), then the loss read back.
 * Rounds alternate the three; prints, per model, a row for each compiled form — the median round of eager and of
 * the compiled form, the ratio, the JavaScript time of the call alone (eagerHostMs, compiledHostMs: encoding,
 * without waiting for the GPU or the read), the kernels and submissions per step, the host callbacks and live
 * kernels of a replay — and checks that each compiled copy's losses equal the eager copy's bit for bit over the
 * warm-up steps, and the whole-step copy's weights after them. `--read-every N` reads the loss back every N timed
 * steps (a loop that logs every N steps) instead of every step: the read's round trip is part of a step's time, and
 * the rows name N.
 * `--merge off` and `--fuse off` turn the backend's mergeInCapture and fuseInCapture off (the rows name them).
 * `--kernel-times` (the backend's kernelTimestamps) adds to each whole-step row the GPU time of each kernel of one
 * more replay: their sum, per kernel family, per pipeline key and the slowest (Dawn rounds timestamps to ~65 µs
 * unless `--dawn-flags disable-dawn-features=timestamp_quantization`).
 *   node webgpu-compile-step.mjs [--rounds 5] [--steps 40] [--models mlp,cnn,vit] [--read-every 1] [--merge off]
 *     [--fuse off] [--kernel-times] [--dawn-flags F]
 *     [--matmul-tile auto|small|medium|...] [--layer-norm-kernel auto|subgroup|workgroup|invocation] [--json f]
 */
import { writeFileSync } from 'node:fs';
import { AdamW, compile, crossEntropy, scope, Tensor } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { buildModel, type ModelKind, toModelInput } from '@polyhal/models';
import { summarizeKernelTimes } from './kernel-times.js';

const arg = (name: string, d: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : d;
};
const roundsN = Number(arg('--rounds', '5'));
const steps = Number(arg('--steps', '40'));
const readEvery = Number(arg('--read-every', '1'));
const kinds = arg('--models', 'mlp,cnn,vit').split(',') as ModelKind[];
// --merge off / --fuse off: the backend's mergeInCapture / fuseInCapture (what each saves, in one build)
const kernelTimes = process.argv.includes('--kernel-times');
const be = await createWebGpuBackend({
  mergeInCapture: arg('--merge', 'on') !== 'off',
  fuseInCapture: arg('--fuse', 'on') !== 'off',
  kernelTimestamps: kernelTimes,
  dawnFlags: arg('--dawn-flags', '') ? [arg('--dawn-flags', '')] : [],
  matmulTile: arg('--matmul-tile', 'auto') as 'auto',
  layerNormKernel: arg('--layer-norm-kernel', 'auto') as 'auto',
});
const stats = () => (be as unknown as { kernelStats(): { dispatches: number; submissions: number } }).kernelStats();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: Record<string, unknown>[] = [];
const xs = Float32Array.from({ length: 64 * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(64 * 10);
for (let i = 0; i < 64; i++) ys[i * 10 + (i % 10)] = 1;
const x = Tensor.fromArray(be, xs, [64, 784]);
const y = Tensor.fromArray(be, ys, [64, 10]);

type Variant = 'eager' | 'forwardBackward' | 'wholeStep';
const VARIANTS: Variant[] = ['eager', 'forwardBackward', 'wholeStep'];

for (const kind of kinds) {
  const models = VARIANTS.map(() => buildModel(kind, be, 0));
  const opts = models.map((m) => new AdamW(m.parameters(), { lr: 1e-3, weightDecay: 0.05 }));
  const forwardBackward =
    (i: number) =>
    (a: Tensor, b: Tensor): Tensor => {
      const loss = crossEntropy(models[i]!.forward(toModelInput(kind, a)), b);
      loss.backward();
      return loss;
    };
  const fb = compile(forwardBackward(1));
  const whole = compile((a: Tensor, b: Tensor): Tensor => {
    opts[2]!.zeroGrad();
    const loss = forwardBackward(2)(a, b);
    opts[2]!.step();
    return loss;
  });
  const run: Record<Variant, () => Tensor> = {
    eager: () => {
      opts[0]!.zeroGrad();
      const loss = scope(() => forwardBackward(0)(x, y));
      opts[0]!.step();
      return loss;
    },
    forwardBackward: () => {
      opts[1]!.zeroGrad();
      const loss = fb(x, y);
      opts[1]!.step();
      return loss;
    },
    wholeStep: () => whole(x, y),
  };
  const host: Record<Variant, number> = { eager: 0, forwardBackward: 0, wholeStep: 0 };
  const step = async (name: Variant, read = true): Promise<number> => {
    const t0 = performance.now();
    const loss = run[name]();
    host[name] += performance.now() - t0;
    const v = read ? await loss.item() : Number.NaN;
    loss.dispose();
    return v;
  };
  const sameLosses = { forwardBackward: true, wholeStep: true };
  for (let i = 0; i < 5; i++) {
    const [a, b, c] = [await step('eager'), await step('forwardBackward'), await step('wholeStep')];
    sameLosses.forwardBackward &&= a === b;
    sameLosses.wholeStep &&= a === c;
  }
  let sameWeights = true;
  const [p0, p2] = [models[0]!.parameters(), models[2]!.parameters()];
  for (let i = 0; i < p0.length; i++) {
    const [a, b] = [await p0[i]!.data(), await p2[i]!.data()];
    sameWeights = sameWeights && a.length === b.length && a.every((v, j) => Object.is(v, b[j]));
  }
  const per = Object.fromEntries(
    VARIANTS.map((v) => [v, { ms: [] as number[], hostMs: [] as number[], kernels: 0, submissions: 0 }]),
  );
  for (let r = 0; r < roundsN; r++) {
    const order = r % 2 ? [...VARIANTS].reverse() : VARIANTS;
    for (const name of order) {
      const k0 = stats();
      const h0 = host[name];
      const t = performance.now();
      for (let i = 0; i < steps; i++) await step(name, (i + 1) % readEvery === 0 || i === steps - 1);
      per[name]!.ms.push((performance.now() - t) / steps);
      per[name]!.hostMs.push((host[name] - h0) / steps);
      const k1 = stats();
      per[name]!.kernels = (k1.dispatches - k0.dispatches) / steps;
      per[name]!.submissions = (k1.submissions - k0.submissions) / steps;
    }
  }
  // --kernel-times: one more whole-step replay, each kernel timed on the GPU (the backend's replayKernelTimes)
  let gpu: Record<string, unknown> | undefined;
  if (kernelTimes) {
    await step('wholeStep');
    const { kernelsGpuUs, byFamily, byKey, slowest } = summarizeKernelTimes(
      (await be.replayKernelTimes()) ?? [],
      12,
      200,
    );
    gpu = { kernelsGpuUs, byFamily, byKey, slowest };
  }
  const e = median(per['eager']!.ms);
  for (const [name, compiled] of [
    ['forwardBackward', fb],
    ['wholeStep', whole],
  ] as const) {
    const c = median(per[name]!.ms);
    const row = {
      model: kind,
      size: 64, // the batch
      compiled:
        (name === 'wholeStep' ? 'whole step (optimizer inside)' : 'forward and backward (optimizer outside)') +
        (readEvery > 1 ? `, loss read every ${readEvery} steps` : '') +
        (arg('--merge', 'on') === 'off' ? ', no merging' : '') +
        (arg('--fuse', 'on') === 'off' ? ', no fusion' : '') +
        (arg('--matmul-tile', 'auto') !== 'auto' ? `, matmul tile ${arg('--matmul-tile', 'auto')}` : ''),
      eagerMs: +e.toFixed(3),
      compiledMs: +c.toFixed(3),
      speedup: +(e / c).toFixed(2),
      // JavaScript of the call alone (encoding, without waiting for the GPU or the read)
      eagerHostMs: +median(per['eager']!.hostMs).toFixed(3),
      compiledHostMs: +median(per[name]!.hostMs).toFixed(3),
      sameLosses: sameLosses[name],
      ...(name === 'wholeStep' ? { sameWeights } : {}),
      eagerKernels: per['eager']!.kernels,
      compiledKernels: per[name]!.kernels,
      compiledSubmissions: per[name]!.submissions,
      replayCallbacks: compiled.stats.recording?.callbacks ?? 0,
      replayLiveKernels: compiled.stats.recording?.liveKernels ?? 0,
      refused: compiled.stats.refused,
      ...(name === 'wholeStep' && gpu ? { gpu } : {}),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  fb.release();
  whole.release();
  for (const o of opts) o.zeroGrad();
  for (const o of opts) o.dispose();
  for (const m of models) m.dispose();
}
console.log(`device: ${be.deviceName}`);
const j = process.argv.indexOf('--json');
if (j > 0) writeFileSync(process.argv[j + 1]!, JSON.stringify({ device: be.deviceName, rows }, null, 2));
x.dispose();
y.dispose();
be.dispose();
