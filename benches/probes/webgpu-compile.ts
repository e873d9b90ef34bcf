/**
 * Inference of the main job's models (MLP, CNN, ViT; eval mode, batch 64 and 1) on webgpu, eager against
 * `compile` (captured once, replayed), in one process on the same inputs: each call runs the forward and reads
 * the logits back. Rounds alternate the two; prints the median round of each, the ratio, and the kernels and
 * submissions per call; checks that both give the same bits.
 *   node webgpu-compile.mjs [--rounds 5] [--calls 40] [--json f]
 */
import { writeFileSync } from 'node:fs';
import { compile, scope, type Tensor as T, Tensor, noGrad } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { buildModel, type ModelKind, toModelInput } from '@polyhal/models';

const arg = (name: string, d: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const roundsN = arg('--rounds', 5);
const calls = arg('--calls', 40);
const be = await createWebGpuBackend();
const stats = () => (be as unknown as { kernelStats(): { dispatches: number; submissions: number } }).kernelStats();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: Record<string, unknown>[] = [];

for (const kind of ['mlp', 'cnn', 'vit'] as ModelKind[]) {
  const model = buildModel(kind, be, 0);
  model.eval();
  const fn = (x: T): T => model.forward(toModelInput(kind, x));
  const compiled = compile(fn);
  const eager = (x: T): T => scope(() => noGrad(() => fn(x)));
  for (const batch of [64, 1]) {
    const xs = Float32Array.from({ length: batch * 784 }, (_, i) => ((i * 7919) % 255) / 255);
    const x = Tensor.fromArray(be, xs, [batch, 784]);
    const run = async (f: (x: T) => T): Promise<Float32Array> => {
      const y = f(x);
      const d = (await y.data()) as Float32Array;
      y.dispose();
      return d;
    };
    for (let i = 0; i < 5; i++) {
      await run(eager);
      await run(compiled);
    }
    const [a, b] = [await run(eager), await run(compiled)];
    const same = a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
    const per: Record<string, { ms: number[]; kernels: number; submissions: number }> = {
      eager: { ms: [], kernels: 0, submissions: 0 },
      compiled: { ms: [], kernels: 0, submissions: 0 },
    };
    for (let r = 0; r < roundsN; r++)
      for (const [name, f] of r % 2
        ? ([
            ['compiled', compiled],
            ['eager', eager],
          ] as const)
        : ([
            ['eager', eager],
            ['compiled', compiled],
          ] as const)) {
        const k0 = stats();
        const t = performance.now();
        for (let i = 0; i < calls; i++) await run(f);
        per[name]!.ms.push((performance.now() - t) / calls);
        const k1 = stats();
        per[name]!.kernels = (k1.dispatches - k0.dispatches) / calls;
        per[name]!.submissions = (k1.submissions - k0.submissions) / calls;
      }
    const e = median(per['eager']!.ms);
    const c = median(per['compiled']!.ms);
    const row = {
      model: kind,
      size: batch, // the batch (the results' row key)
      eagerMs: +e.toFixed(3),
      compiledMs: +c.toFixed(3),
      speedup: +(e / c).toFixed(2),
      sameBits: same,
      eagerKernels: per['eager']!.kernels,
      compiledKernels: per['compiled']!.kernels,
      compiledSubmissions: per['compiled']!.submissions,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
    x.dispose();
  }
  compiled.release();
  model.dispose();
}
console.log(`device: ${be.deviceName}`);
const j = process.argv.indexOf('--json');
if (j > 0) writeFileSync(process.argv[j + 1]!, JSON.stringify({ device: be.deviceName, rows }, null, 2));
be.dispose();
