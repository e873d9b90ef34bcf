// node benches/onnx/profile.mjs [--models det,rec] [--backend wasm] [--threads n] [--runs 3] [--top 15] [--out <file>]
// Per-node profile of PolyHAL's InferenceSession: time per op type and the slowest nodes, from
// InferenceSession.run's onNode observer (the time between one node's callback and the next: the node's
// lowering and its kernels; the wasm and cpu backends compute synchronously, so that is the node's time).
// A warm-up run first (plans made), then `--runs` profiled runs; per node the median over them. Also the
// session's creation time split into decode+check+upload (InferenceSession.create) and the first run.
// For the benchmark itself (peers side by side, rotating rounds) see models.mjs; this is where the time goes.
import { readFileSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { MODELS } from './inputs.mjs';

const program = new Command()
  .name('onnx-profile')
  .option('--models <names>', 'comma list of det, rec, silero', 'det,rec')
  .option('--backend <name>', 'PolyHAL backend', 'wasm')
  .option('--threads <n>', "wasm worker threads (default: the backend's own, the cores up to 8)")
  .option('--runs <n>', 'profiled runs after the warm-up run', '3')
  .option('--top <n>', 'slowest nodes listed', '15')
  .option('--out <file>', 'also write the profile as JSON')
  .exitOverride();
try {
  program.parse(process.argv.slice(2), { from: 'user' });
} catch {
  process.exit(2);
}
const o = program.opts();
const { InferenceSession } = await import('@polyhal/onnx');
const { createBackend } = await import('@polyhal/hal');
// static specifiers, so that a bundler keeps them (the GPU machine runs this file bundled)
const BACKEND_MODULES = {
  cpu: () => import('@polyhal/backend-cpu'),
  wasm: () => import('@polyhal/backend-wasm'),
  webgpu: () => import('@polyhal/backend-webgpu'),
};
if (!BACKEND_MODULES[o.backend]) throw new Error(`unknown backend '${o.backend}' (cpu, wasm or webgpu)`);
await BACKEND_MODULES[o.backend]();
const { backend } = await createBackend({
  backend: o.backend,
  options: o.threads === undefined ? {} : { threads: Number(o.threads) },
});

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};
const ms = (x) => x.toFixed(x < 10 ? 2 : 1);

/** One run with the observer: per node (in order) its op and time in ms; the run's total. */
async function profiledRun(session, feeds) {
  const nodes = [];
  let last = 0;
  const t0 = performance.now();
  last = t0;
  await session.run(feeds, {
    onNode: (n) => {
      const now = performance.now();
      nodes.push({ node: n.path.length ? `${n.path.join('/')}/${n.node}` : n.node, op: n.op, ms: now - last });
      last = performance.now();
    },
  });
  return { nodes, total: performance.now() - t0 };
}

const out = { backend: backend.deviceName, date: new Date().toISOString(), models: {} };
for (const name of o.models.split(',')) {
  const model = MODELS[name];
  if (!model) throw new Error(`unknown model '${name}'`);
  const bytes = readFileSync(model.file);
  const t0 = performance.now();
  const session = await InferenceSession.create(bytes, { backend });
  const createMs = performance.now() - t0;
  const feeds = model.feeds(0);
  const t1 = performance.now();
  await session.run(feeds);
  const firstRunMs = performance.now() - t1;
  const t2 = performance.now();
  await session.run(feeds);
  const plainMs = performance.now() - t2;
  const runs = [];
  for (let r = 0; r < Number(o.runs); r++) runs.push(await profiledRun(session, feeds));
  await session.release();
  const perNode = runs[0].nodes.map((n, i) => ({ ...n, ms: median(runs.map((r) => r.nodes[i]?.ms ?? 0)) }));
  const byOp = {};
  for (const n of perNode) {
    const e = (byOp[n.op] ??= { op: n.op, count: 0, ms: 0 });
    e.count++;
    e.ms += n.ms;
  }
  const total = perNode.reduce((s, n) => s + n.ms, 0);
  const ops = Object.values(byOp).sort((a, b) => b.ms - a.ms);
  const top = [...perNode].sort((a, b) => b.ms - a.ms).slice(0, Number(o.top));
  console.log(
    `\n## ${name} on ${backend.deviceName}: create ${ms(createMs)} ms, first run ${ms(firstRunMs)} ms, ` +
      `run ${ms(plainMs)} ms (observed: ${ms(median(runs.map((r) => r.total)))} ms, nodes sum ${ms(total)} ms)`,
  );
  console.log('| op | nodes | ms | share |\n| --- | ---: | ---: | ---: |');
  for (const e of ops) console.log(`| ${e.op} | ${e.count} | ${ms(e.ms)} | ${((100 * e.ms) / total).toFixed(1)}% |`);
  console.log(`\nslowest nodes:\n| node | op | ms |\n| --- | --- | ---: |`);
  for (const n of top) console.log(`| ${n.node} | ${n.op} | ${ms(n.ms)} |`);
  out.models[name] = { createMs, firstRunMs, runMs: plainMs, total, ops, nodes: perNode };
}
if (o.out) writeFileSync(o.out, `${JSON.stringify(out, null, 2)}\n`);
backend.dispose();
