// @polyhal/backend-wasm vs @tensorflow/tfjs-backend-wasm 4.22.0, one process, same inputs, 1 thread.
// matmul f32 N×N (GFLOP/s), add and relu over 1M and 16M elements: kernel time, inputs and outputs
// stay on the backend (both compute synchronously inside the call). Usage: node benches/wasm.mjs
import { Bench } from 'tinybench';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { mulberry32 } from '@polyhal/hal';

await tf.setBackend('wasm');
await tf.ready();
const be = await createWasmBackend({ threads: 1 });
const results = [];
const rand = (n, seed) => { const r = mulberry32(seed); return Float32Array.from({ length: n }, () => r() * 2 - 1); };

async function compare(name, size, work, ours, theirs, iterations) {
  const bench = new Bench({ iterations, warmupIterations: 3, time: 0, warmupTime: 0 });
  bench.add('polyhal-wasm', ours).add('tfjs-wasm', theirs);
  await bench.run();
  const [p, t] = bench.tasks.map((x) => x.result.latency.p50);
  const row = { suite: name, size, polyhalMs: p, tfjsMs: t, ratio: t / p };
  if (work) Object.assign(row, { polyhalGflops: work / (p * 1e6), tfjsGflops: work / (t * 1e6) });
  results.push(row);
  console.log(`${name} ${size}: polyhal-wasm ${p.toFixed(3)} ms${work ? ` (${row.polyhalGflops.toFixed(1)} GFLOP/s)` : ''}, tfjs-wasm ${t.toFixed(3)} ms${work ? ` (${row.tfjsGflops.toFixed(1)} GFLOP/s)` : ''}, ratio ${row.ratio.toFixed(2)}x`);
}

for (const n of [256, 512, 1024]) {
  const a = rand(n * n, 1), b = rand(n * n, 2);
  const pa = be.fromArray(a, [n, n]), pb = be.fromArray(b, [n, n]);
  const ta = tf.tensor2d(a, [n, n]), tb = tf.tensor2d(b, [n, n]);
  // Both backends compute synchronously in the call; the output stays on the backend (no copy out).
  await compare('matmul', n, 2 * n ** 3, () => be.free(be.matmul(pa, pb)), () => tf.matMul(ta, tb).dispose(), n >= 1024 ? 10 : 30);
  be.free(pa); be.free(pb); ta.dispose(); tb.dispose();
}
for (const n of [1 << 20, 1 << 24]) {
  const a = rand(n, 3), b = rand(n, 4);
  const pa = be.fromArray(a, [n]), pb = be.fromArray(b, [n]);
  const ta = tf.tensor1d(a), tb = tf.tensor1d(b);
  const it = n > 1 << 20 ? 10 : 50;
  await compare('add', n, 0, () => be.free(be.add(pa, pb)), () => tf.add(ta, tb).dispose(), it);
  await compare('relu', n, 0, () => be.free(be.relu(pa)), () => tf.relu(ta).dispose(), it);
  be.free(pa); be.free(pb); ta.dispose(); tb.dispose();
}
// 2 threads (workers on one shared memory), after warm-up rounds so every worker runs optimized code.
{
  const mt = await createWasmBackend({ threads: 2 });
  const n = 1024;
  const a = mt.fromArray(rand(n * n, 1), [n, n]), b = mt.fromArray(rand(n * n, 2), [n, n]);
  const bench = new Bench({ iterations: 20, warmupIterations: 20, time: 0, warmupTime: 0 });
  bench.add('polyhal-wasm 2 threads', () => mt.free(mt.matmul(a, b)));
  await bench.run();
  const p = bench.tasks[0].result.latency.p50;
  results.push({ suite: 'matmul-2-threads', size: n, polyhalMs: p, polyhalGflops: 2 * n ** 3 / (p * 1e6) });
  console.log(`matmul ${n}, ${mt.deviceName}: ${p.toFixed(2)} ms (${(2 * n ** 3 / (p * 1e6)).toFixed(1)} GFLOP/s); tfjs-wasm has no threads in Node`);
  mt.dispose();
}
if (process.env.BENCH_JSON) (await import('node:fs')).writeFileSync(process.env.BENCH_JSON, JSON.stringify(results, null, 2));
