// @polyhal/backend-wasm vs @tensorflow/tfjs-backend-wasm 4.22.0, one process, same inputs, 1 thread.
// matmul f32 N×N (GFLOP/s), add and relu over 1M and 16M elements: kernel time, inputs and outputs
// stay on the backend (both compute synchronously inside the call). Tasks are timed in rotating
// rounds (benches/lib.mjs `group`); ratios are medians of per-round ratios (tfjs time / ours).
//
// Where the runtime has WebAssembly relaxed SIMD (Chrome ≥ 114, Node ≥ 22, Deno, Bun; Node 20 with
// --experimental-wasm-relaxed-simd) both PolyHAL builds run side by side: plain SIMD
// (`relaxedSimd: false`) and relaxed SIMD (fused multiply-add in matmul).
//   node benches/wasm.mjs                                   # plain SIMD only on Node 20
//   node --experimental-wasm-relaxed-simd benches/wasm.mjs  # both builds
//   BENCH_JSON=out.json node benches/wasm.mjs               # also write the rows as JSON
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { createWasmBackend, hasRelaxedSimd } from '@polyhal/backend-wasm';
import { mulberry32 } from '@polyhal/hal';
import { group, machine, roundRatio, versions } from './lib.mjs';

await tf.setBackend('wasm');
await tf.ready();
const builds = { simd: await createWasmBackend({ threads: 1, relaxedSimd: false }) };
if (hasRelaxedSimd()) builds.relaxed = await createWasmBackend({ threads: 1, relaxedSimd: true });
console.log(`${machine()}; ${JSON.stringify(versions())}`);
for (const [k, be] of Object.entries(builds)) console.log(`polyhal-${k}: ${be.deviceName}`);
const results = [];
const rand = (n, seed) => { const r = mulberry32(seed); return Float32Array.from({ length: n }, () => r() * 2 - 1); };

/** `ours(be, inputs)` per build and `theirs()` timed in rotating rounds; prints and records one row per build. */
async function compare(name, size, work, host, ours, theirs, { iterations, rounds = 6 }) {
  const inputs = Object.fromEntries(Object.entries(builds).map(([k, be]) => [k, host.map(([data, shape]) => be.fromArray(data, shape))]));
  const tasks = { tfjs: theirs };
  for (const [k, be] of Object.entries(builds)) tasks[k] = () => ours(be, inputs[k]);
  const r = await group(tasks, { iterations, rounds, warmup: 3 });
  for (const [k, be] of Object.entries(builds)) {
    const p = r[k].median, t = r.tfjs.median;
    const row = { suite: name, size, build: k, polyhalMs: p, tfjsMs: t, ratio: roundRatio(r[k], r.tfjs), rounds };
    if (work) Object.assign(row, { polyhalGflops: work / (p * 1e6), tfjsGflops: work / (t * 1e6) });
    results.push(row);
    const g = (x) => (work ? ` (${(work / (x * 1e6)).toFixed(1)} GFLOP/s)` : '');
    console.log(`${name} ${size} [${k}]: polyhal ${p.toFixed(3)} ms${g(p)}, tfjs-wasm ${t.toFixed(3)} ms${g(t)}, ratio ${row.ratio.toFixed(2)}x (median of ${rounds} round ratios)`);
    for (const x of inputs[k]) be.free(x);
  }
}

for (const n of [256, 512, 1024]) {
  const a = rand(n * n, 1), b = rand(n * n, 2);
  const ta = tf.tensor2d(a, [n, n]), tb = tf.tensor2d(b, [n, n]);
  await compare('matmul', n, 2 * n ** 3, [[a, [n, n]], [b, [n, n]]], (be, [x, y]) => be.free(be.matmul(x, y)), () => tf.matMul(ta, tb).dispose(), { iterations: n >= 1024 ? 3 : n >= 512 ? 8 : 30 });
  ta.dispose(); tb.dispose();
}
for (const n of [1 << 20, 1 << 24]) {
  const a = rand(n, 3), b = rand(n, 4);
  const ta = tf.tensor1d(a), tb = tf.tensor1d(b);
  const iterations = n > 1 << 20 ? 5 : 40;
  await compare('add', n, 0, [[a, [n]], [b, [n]]], (be, [x, y]) => be.free(be.add(x, y)), () => tf.add(ta, tb).dispose(), { iterations });
  await compare('relu', n, 0, [[a, [n]]], (be, [x]) => be.free(be.relu(x)), () => tf.relu(ta).dispose(), { iterations });
  ta.dispose(); tb.dispose();
}
// 2 threads (workers on one shared memory), after warm-up rounds so every worker runs optimized code.
for (const [k, be] of Object.entries(builds)) {
  be.dispose();
  const mt = await createWasmBackend({ threads: 2, relaxedSimd: k === 'relaxed' });
  const n = 1024;
  const a = mt.fromArray(rand(n * n, 1), [n, n]), b = mt.fromArray(rand(n * n, 2), [n, n]);
  const r = await group({ mt: () => mt.free(mt.matmul(a, b)) }, { iterations: 10, rounds: 4, warmup: 20 });
  const p = r.mt.median;
  results.push({ suite: 'matmul-2-threads', size: n, build: k, polyhalMs: p, polyhalGflops: 2 * n ** 3 / (p * 1e6) });
  console.log(`matmul ${n} [${k}], ${mt.deviceName}: ${p.toFixed(2)} ms (${(2 * n ** 3 / (p * 1e6)).toFixed(1)} GFLOP/s); tfjs-wasm has no threads in Node`);
  mt.dispose();
}
if (process.env.BENCH_JSON) (await import('node:fs')).writeFileSync(process.env.BENCH_JSON, JSON.stringify({ machine: machine(), versions: versions(), results }, null, 2));
