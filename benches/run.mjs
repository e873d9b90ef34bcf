// npm run bench -- [--suite matmul,elementwise,latency,softmaxCrossEntropy,mlpStep,conv|all] [--backend
// cpu,wasm,webgpu|all] [--out benches/results]
// Each PolyHAL backend against its TensorFlow.js 4.22 counterpart, in one process, on the same inputs.
// Writes bench.json (rows + machine + versions), one SVG chart per suite and BENCH.md (a markdown table).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { machine, versions } from './lib.mjs';
import { markdown, svg } from './report.mjs';
import { SUITES } from './suites.mjs';

const program = new Command()
  .name('bench')
  .option('--suite <names>', `comma list of ${Object.keys(SUITES).join(', ')}, or all`, 'all')
  .option('--backend <names>', 'comma list of cpu, wasm, webgpu, or all', 'all')
  .option('--out <dir>', 'output folder', 'benches/results')
  .exitOverride();
try {
  program.parse(process.argv.slice(2), { from: 'user' });
} catch {
  process.exit(2);
}
const o = program.opts();
const suites = o.suite === 'all' ? Object.keys(SUITES) : o.suite.split(',');
const backends = o.backend === 'all' ? ['cpu', 'wasm', 'webgpu'] : o.backend.split(',');
for (const s of suites)
  if (!SUITES[s]) {
    console.error(`unknown suite '${s}' (known: ${Object.keys(SUITES).join(', ')})`);
    process.exit(2);
  }

// One GPU object for both libraries: tfjs-backend-webgpu reads navigator.gpu when it loads.
let gpu;
if (backends.includes('webgpu')) {
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  gpu = create([]);
  globalThis.navigator = { gpu, userAgent: 'node' };
}
const tf = await import('@tensorflow/tfjs');
if (backends.includes('wasm')) await import('@tensorflow/tfjs-backend-wasm');
if (gpu) await import('@tensorflow/tfjs-backend-webgpu');

const factories = {
  cpu: async () => new (await import('@polyhal/backend-cpu')).CpuBackend(),
  // One thread: tfjs-wasm cannot use threads in Node, so the comparison is thread for thread.
  wasm: async () => (await import('@polyhal/backend-wasm')).createWasmBackend({ threads: 1 }),
  webgpu: async () => (await import('@polyhal/backend-webgpu')).createWebGpuBackend({ gpu }),
};
const rows = [];
const devices = [];
for (const name of backends) {
  const be = await factories[name]();
  await tf.setBackend(name);
  await tf.ready();
  const software = Boolean(be.isSoftware);
  devices.push(`${name}: ${be.deviceName}`);
  for (const s of suites) {
    process.stdout.write(`${s} on ${name} … `);
    let out;
    try {
      out = await SUITES[s](be, tf, { software });
    } catch (e) {
      // The peer may lack a kernel (tfjs-wasm has no Conv2DBackpropFilter): record it, keep going.
      console.log(`failed: ${e.message.split('\n')[0]}`);
      rows.push({
        suite: s,
        size: 0,
        backend: name,
        peer: `tfjs-${name}`,
        unit: 'ms',
        work: 0,
        medianMs: NaN,
        spreadMs: NaN,
        peerMedianMs: null,
        peerSpreadMs: null,
        ratio: null,
        peerError: e.message.split('\n')[0],
      });
      continue;
    }
    for (const r of out) {
      rows.push({
        suite: r.suite,
        size: r.size,
        backend: name,
        peer: `tfjs-${name}`,
        unit: r.unit,
        work: r.work,
        medianMs: r.ours.median,
        spreadMs: r.ours.spread,
        peerMedianMs: r.theirs?.median ?? null,
        peerSpreadMs: r.theirs?.spread ?? null,
        ratio: r.theirs ? r.theirs.median / r.ours.median : null,
        peerError: r.peerError,
        ...(r.peakBytes !== undefined ? { peakBytes: r.peakBytes, peerPeakBytes: r.peerPeakBytes } : {}),
      });
    }
    console.log(
      out
        .map(
          (r) =>
            `${r.size}: ` +
            (r.theirs ? `${(r.theirs.median / r.ours.median).toFixed(2)}×` : `peer failed (${r.peerError})`),
        )
        .join(', '),
    );
  }
  be.dispose();
}
const result = { date: new Date().toISOString(), machine: machine(), devices, versions: versions(), rows };
mkdirSync(o.out, { recursive: true });
writeFileSync(join(o.out, 'bench.json'), JSON.stringify(result, null, 2));
writeFileSync(join(o.out, 'BENCH.md'), markdown(result));
for (const s of [...new Set(rows.map((r) => r.suite))]) {
  const chart = svg(
    s,
    rows.filter((r) => r.suite === s && r.peerMedianMs !== null),
  );
  if (chart) writeFileSync(join(o.out, `${s.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '')}.svg`), chart);
}
console.log(`wrote ${join(o.out, 'bench.json')}, BENCH.md and SVG charts`);
process.exit(0);
