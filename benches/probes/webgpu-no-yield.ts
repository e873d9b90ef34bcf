/**
 * Native memory of a webgpu loop that never awaits (issue: Dawn frees finished work only when the event loop turns):
 * the main job's MLP training step (batch 64, AdamW), eager against the whole step compiled (`compile`: one
 * recorded step replayed in a few submissions), run `--steps` times in one synchronous loop, then once more with an
 * `await backend.synchronize()` every `--every` steps. Prints the process's resident memory (RSS) before and after
 * each loop and its growth per 1,000 steps, with the kernels and submissions each loop encoded; the loss of the last
 * step is read at the end of each loop (it must equal the eager loop's).
 *   node webgpu-no-yield.mjs [--steps 2000] [--every 100] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { AdamW, compile, crossEntropy, scope, Tensor } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { buildModel } from '@polyhal/models';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const steps = Number(arg('steps', '2000'));
const every = Number(arg('every', '100'));
const be = await createWebGpuBackend();
const stats = () => (be as unknown as { kernelStats(): { dispatches: number; submissions: number } }).kernelStats();
console.log(`device: ${be.deviceName}`);
const xs = Float32Array.from({ length: 64 * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(64 * 10);
for (let i = 0; i < 64; i++) ys[i * 10 + (i % 10)] = 1;
const x = Tensor.fromArray(be, xs, [64, 784]);
const y = Tensor.fromArray(be, ys, [64, 10]);
const mib = (): number => process.memoryUsage().rss / 2 ** 20;
const rows: Record<string, unknown>[] = [];
for (const variant of ['eager', 'compiled'] as const)
  for (const yielding of [false, true]) {
    const model = buildModel('mlp', be, 0);
    const opt = new AdamW(model.parameters(), { lr: 1e-3, weightDecay: 0.05 });
    const eager = (a: Tensor, b: Tensor): Tensor => {
      opt.zeroGrad();
      const l = crossEntropy(model.forward(a), b);
      l.backward();
      opt.step();
      return l;
    };
    const compiled = variant === 'compiled' ? compile(eager) : null;
    const step = compiled ?? eager;
    scope(() => step(x, y)).dispose(); // the trace (compiled) or a warm-up step (eager)
    await be.synchronize();
    const [rss0, k0] = [mib(), stats()];
    const t0 = performance.now();
    let last: Tensor | null = null;
    for (let i = 0; i < steps; i++) {
      last?.dispose();
      last = scope(() => step(x, y));
      if (yielding && (i + 1) % every === 0) await be.synchronize();
    }
    const loss = (await last!.data())[0]!;
    last!.dispose();
    const ms = performance.now() - t0;
    const rss1 = mib();
    const k1 = stats();
    const row = {
      variant: `${variant}${yielding ? `, await every ${every}` : ', never awaits'}`,
      steps,
      rssBeforeMiB: rss0,
      rssAfterMiB: rss1,
      growthMiBPer1000Steps: ((rss1 - rss0) * 1000) / steps,
      kernels: k1.dispatches - k0.dispatches,
      submissions: k1.submissions - k0.submissions,
      msPerStep: ms / steps,
      loss,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
    opt.zeroGrad();
    opt.dispose();
    model.dispose();
    compiled?.release();
    await be.synchronize();
    await new Promise((r) => setTimeout(r, 200)); // let Dawn reclaim the loop's work before the next
  }
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ device: be.deviceName, rows }, null, 1)}\n`);
be.dispose();
process.exit(0);
