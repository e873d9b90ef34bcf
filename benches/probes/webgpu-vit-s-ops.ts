/**
 * Where the GPU time of the ViT-S-like step (vit-s.ts: width 384, 6 heads, 197 tokens, batch 64) goes, op by op and
 * shape by shape, in float32 and in mixed precision: `profile(be, { groupByInputShape: true })` of @polyhal/autograd
 * records one eager step after two warm-up steps and replays each recorded call alone between two synchronize()
 * calls (its time less one synchronize round trip). So each row is the time of that call's kernels on an idle
 * GPU, without the per-op JavaScript that overlaps them in a real step; the sum is the step's GPU work, to set
 * beside the step time webgpu-vit-amp.ts measures. Prints, per mode, the rows with the most time, the share of
 * matmul, and the op families' totals; `--json` writes every row.
 *   node webgpu-vit-s-ops.mjs [--dawn-flags F] [--depth 12] [--batch 64] [--top 25] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { profile } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { syntheticDigits, vitS } from './vit-s.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const flags = arg('dawn-flags', '');
const [depth, batch, top] = ['depth', 'batch', 'top'].map((k, i) => Number(arg(k, ['12', '64', '25'][i]!))) as [
  number,
  number,
  number,
];
const gpu = await createWebGpuBackend({ dawnFlags: flags ? [flags] : [], memoryLimit: 2 ** 35 });
console.log(`device: ${gpu.deviceName}`);
const out: Record<string, unknown>[] = [];
for (const mixed of [false, true]) {
  const prof = profile(gpu, { groupByInputShape: true });
  const be = prof.backend;
  const { x, y } = syntheticDigits(be, batch);
  const { model, opt, step } = vitS(be, depth, mixed, x, y);
  for (let i = 0; i < 2; i++) await step();
  await prof.start();
  await step();
  const report = await prof.stop();
  const mode = mixed ? 'mixed' : 'float32';
  const family = new Map<string, number>();
  for (const r of report.rows) {
    const op = r.op.split(' ')[0]!;
    family.set(op, (family.get(op) ?? 0) + r.ms);
  }
  const kernelsMs = report.totalMs - report.outsideMs;
  const matmulMs = family.get('matmul') ?? 0;
  console.log(
    `\n${mode}: calls replayed alone ${kernelsMs.toFixed(1)} ms (matmul ${matmulMs.toFixed(1)} ms, ` +
      `${((100 * matmulMs) / kernelsMs).toFixed(0)}%); recorded step wall ${report.wallMs.toFixed(1)} ms`,
  );
  const fams = [...family].sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(`  by op: ${fams.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
  for (const r of report.rows.slice(0, top))
    console.log(`  ${r.ms.toFixed(2).padStart(8)} ms ${String(r.calls).padStart(4)}× ${r.op}`);
  out.push({
    mode,
    kernelsMs,
    matmulMs,
    wallMs: report.wallMs,
    syncOverheadMs: report.syncOverheadMs,
    families: Object.fromEntries(family),
    rows: report.rows.map((r) => ({ op: r.op, calls: r.calls, ms: r.ms })),
  });
  for (const t of [x, y, model, opt]) t.dispose();
}
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ device: gpu.deviceName, depth, batch, modes: out }, null, 2)}\n`);
gpu.dispose();
process.exit(0);
