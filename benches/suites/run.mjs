// npm run bench -- [--suite matmul,elementwise,latency,softmaxCrossEntropy,mlpStep,conv,...|all] [--backend
// cpu,wasm,webgpu|all] [--machine node-2core] [--out benches/results]
// Each PolyHAL backend against its TensorFlow.js 4.22 counterpart, in one process, on the same inputs.
// Writes one results file per suite, <out>/<machine>/<suite>.json (benches/lib/results.mjs), replacing the
// runs of the backends measured now; then `node scripts/results-docs.mjs` regenerates docs/results/.
import { DEFAULT_BACKENDS } from '@polyhal/hal';
import { Command } from 'commander';
import { machine as host, versions } from '../lib/harness.mjs';
import { machineKey, recordHarnessRun, RESULTS_DIR } from '../lib/results.mjs';
import { SUITES } from './index.mjs';

const program = new Command()
  .name('bench')
  .option('--suite <names>', `comma list of ${Object.keys(SUITES).join(', ')}, or all`, 'all')
  .option('--backend <names>', 'comma list of cpu, wasm, webgpu, or all', 'all')
  .option('--machine <name>', 'results folder of this machine (a GPU machine names its card: h100, h200)', machineKey())
  .option('--out <dir>', 'results root', RESULTS_DIR)
  .exitOverride();
try {
  program.parse(process.argv.slice(2), { from: 'user' });
} catch {
  process.exit(2);
}
const o = program.opts();
const suites = o.suite === 'all' ? Object.keys(SUITES) : o.suite.split(',');
const backends = o.backend === 'all' ? DEFAULT_BACKENDS.map((b) => b.name) : o.backend.split(',');
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
const written = new Set();
// BENCH_ROWS (a regexp) runs some rows of a suite only: they are merged into the recorded run, not replacing it.
const merge = Boolean(process.env.BENCH_ROWS);
for (const name of backends) {
  const be = await factories[name]();
  await tf.setBackend(name);
  await tf.ready();
  const software = Boolean(be.isSoftware);
  const run = (rows) => ({
    backend: name,
    date: new Date().toISOString(),
    host: host(),
    device: be.deviceName,
    versions: versions(),
    rows,
  });
  for (const s of suites) {
    const rows = [];
    process.stdout.write(`${s} on ${name} … `);
    let out;
    try {
      out = await SUITES[s](be, tf, { software });
    } catch (e) {
      // The peer may lack a kernel (tfjs-wasm has no Conv2DBackpropFilter): record it, keep going.
      console.log(`failed: ${e.message.split('\n')[0]}`);
      rows.push({
        name: s,
        size: 0,
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
      written.add(recordHarnessRun(o.machine, s, run(rows), { dir: o.out, merge }));
      continue;
    }
    for (const r of out) {
      rows.push({
        name: r.suite,
        size: r.size,
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
        ...r.extra, // a suite's own figures beside the times (tfjs-ports: accuracy, lines, load)
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
    written.add(recordHarnessRun(o.machine, s, run(rows), { dir: o.out, merge }));
  }
  be.dispose();
}
for (const path of written) console.log(`wrote ${path}`);
console.log('now run node scripts/results-docs.mjs to regenerate docs/results/');
process.exit(0);
