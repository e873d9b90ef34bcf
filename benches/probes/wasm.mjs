// @polyhal/backend-wasm vs @tensorflow/tfjs-backend-wasm 4.22.0, one process, same inputs, 1 thread:
// the cases of benches/probes/wasm-cases.mjs (matmul 256/512/1024, add and relu over 1M and 16M elements,
// kernel time), then PolyHAL on 2 threads: matmul 1024, add and relu over 16M elements. The same
// cases in Chromium: benches/probes/wasm-browser.mjs.
//
// Where the runtime has WebAssembly relaxed SIMD (Chrome ≥ 114, Node ≥ 22, Deno, Bun; Node 20 with
// --experimental-wasm-relaxed-simd) both PolyHAL builds run side by side: plain SIMD
// (`relaxedSimd: false`) and relaxed SIMD (fused multiply-add in matmul).
//   node benches/probes/wasm.mjs                                   # plain SIMD only on Node 20
//   node --experimental-wasm-relaxed-simd benches/probes/wasm.mjs  # both builds
//   BENCH_JSON=out.json node benches/probes/wasm.mjs               # also write the rows as JSON
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { createWasmBackend, hasRelaxedSimd } from '@polyhal/backend-wasm';
import { group, machine, roundRatio, versions } from '../lib/harness.mjs';
import { rand, wasmCases } from './wasm-cases.mjs';

await tf.setBackend('wasm');
await tf.ready();
const builds = { simd: await createWasmBackend({ threads: 1, relaxedSimd: false }) };
if (hasRelaxedSimd()) builds.relaxed = await createWasmBackend({ threads: 1, relaxedSimd: true });
console.log(`${machine()}; ${JSON.stringify(versions())}`);
for (const [k, be] of Object.entries(builds)) console.log(`polyhal-${k}: ${be.deviceName}`);
const results = await wasmCases({ tf, builds });
// 2 threads (workers on one shared memory), after warm-up rounds so every worker runs optimized code:
// matmul 1024, and add/relu over 16M elements against this build's own 1-thread time (tfjs-wasm has no
// threads in Node).
for (const [k, be] of Object.entries(builds)) {
  const mt = await createWasmBackend({ threads: 2, relaxedSimd: k === 'relaxed' });
  const n = 1024;
  const a = mt.fromArray(rand(n * n, 1), [n, n]),
    b = mt.fromArray(rand(n * n, 2), [n, n]);
  const r = await group({ mt: () => mt.free(mt.matmul(a, b)) }, { iterations: 10, rounds: 4, warmup: 20 });
  const p = r.mt.median;
  results.push({ suite: 'matmul-2-threads', size: n, build: k, polyhalMs: p, polyhalGflops: (2 * n ** 3) / (p * 1e6) });
  console.log(
    `matmul ${n} [${k}], ${mt.deviceName}: ${p.toFixed(2)} ms ` +
      `(${((2 * n ** 3) / (p * 1e6)).toFixed(1)} GFLOP/s); tfjs-wasm has no threads in Node`,
  );
  const m = 1 << 24,
    x = rand(m, 3),
    y = rand(m, 4);
  const [x1, y1, x2, y2] = [be.fromArray(x, [m]), be.fromArray(y, [m]), mt.fromArray(x, [m]), mt.fromArray(y, [m])];
  const e = await group(
    {
      add1: () => be.free(be.add(x1, y1)),
      add2: () => mt.free(mt.add(x2, y2)),
      relu1: () => be.free(be.relu(x1)),
      relu2: () => mt.free(mt.relu(x2)),
    },
    { iterations: 5, rounds: 6, warmup: 3 },
  );
  for (const op of ['add', 'relu']) {
    const [one, two] = [e[`${op}1`], e[`${op}2`]];
    const speedup = roundRatio(two, one);
    results.push({
      suite: `${op}-2-threads`,
      size: m,
      build: k,
      polyhalMs: two.median,
      oneThreadMs: one.median,
      speedup,
    });
    console.log(
      `${op} ${m} [${k}], 2 threads: ${two.median.toFixed(3)} ms, 1 thread ${one.median.toFixed(3)} ` +
        `ms, ${speedup.toFixed(2)}x`,
    );
  }
  mt.dispose();
  be.dispose();
}
if (process.env.BENCH_JSON)
  (await import('node:fs')).writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify({ machine: machine(), versions: versions(), results }, null, 2),
  );
