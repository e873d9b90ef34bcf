/**
 * Where a ViT-S-like training step's GPU time goes (`benches/probes/webgpu-vit-amp.ts`'s model: width 384, 6 heads,
 * MLP ratio 4, patch 2: 197 tokens; synthetic data, AdamW), call by call: `profile(backend, { groupByInputShape })`
 * records one step after warm-up steps and replays each backend call alone between two `synchronize()` calls, so a
 * row is a method with its argument shapes, its calls and its milliseconds of GPU-and-driver time. Prints the rows
 * that make up most of the step, the per-method totals, and the kernels per step.
 *   node webgpu-vit-profile.mjs [--dawn-flags F] [--depth 12] [--batch 64] [--mode float32|mixed] [--top 40]
 *     [--json FILE]
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
const mode = arg('mode', 'float32');
const [depth, batch, top] = ['depth', 'batch', 'top'].map((k, i) => Number(arg(k, ['12', '64', '40'][i]!)));
const be = await createWebGpuBackend({
  dawnFlags: flags ? [flags] : [],
  memoryLimit: 2 ** 35, // the activations of 12 blocks at batch 64 pass the 2 GiB default
});
console.log(`device: ${be.deviceName}`);
const p = profile(be, { groupByInputShape: true });
const { x, y } = syntheticDigits(p.backend, batch!);
const { step } = vitS(p.backend, depth!, mode === 'mixed', x, y);
const wall: number[] = [];
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  await step();
  wall.push(performance.now() - t0);
}
await p.start();
await step();
const r = await p.stop();
const byMethod = new Map<string, { calls: number; ms: number }>();
for (const row of r.rows) {
  const m = row.op.split(' ')[0]!;
  const s = byMethod.get(m) ?? { calls: 0, ms: 0 };
  s.calls += row.calls;
  s.ms += row.ms;
  byMethod.set(m, s);
}
const methods = [...byMethod.entries()].sort((a, b) => b[1].ms - a[1].ms);
const opsMs = r.rows.reduce((s, x) => s + x.ms, 0);
const warm = wall.map((w) => w.toFixed(0)).join(', ');
console.log(
  `mode ${mode}, depth ${depth}, batch ${batch}: wall step ${wall.at(-1)!.toFixed(1)} ms (warm-up steps: ${warm}); ` +
    `replayed calls ${opsMs.toFixed(1)} ms; outside ${r.outsideMs.toFixed(1)} ms`,
);
const pct = (ms: number): string => ((100 * ms) / opsMs).toFixed(1).padStart(5);
console.log('per method:');
for (const [m, s] of methods.slice(0, 20))
  console.log(`  ${m.padEnd(24)} ${String(s.calls).padStart(6)} ${s.ms.toFixed(2).padStart(10)} ms ${pct(s.ms)}%`);
console.log(`top ${top} rows by shape:`);
for (const row of r.rows.slice(0, top))
  console.log(`  ${row.ms.toFixed(2).padStart(9)} ms ${String(row.calls).padStart(5)}× ${pct(row.ms)}%  ${row.op}`);
const json = arg('json', '');
if (json)
  writeFileSync(
    json,
    `${JSON.stringify(
      {
        device: be.deviceName,
        mode,
        depth,
        batch,
        wallMs: wall,
        opsMs,
        outsideMs: r.outsideMs,
        syncOverheadMs: r.syncOverheadMs,
        methods: Object.fromEntries(methods),
        rows: r.rows.filter((x) => x.calls > 0),
      },
      null,
      1,
    )}\n`,
  );
be.dispose();
process.exit(0);
