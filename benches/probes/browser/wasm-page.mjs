// Chromium side of benches/probes/wasm-browser.mjs (bundled by esbuild). window.polyhalBench.single(): every
// case of benches/probes/wasm-cases.mjs with tfjs-wasm on 1 thread (SIMD). window.polyhalBench.threads():
// matmul 1024 with 2 threads — tfjs-wasm's threaded build on this page (asked for 2 threads; the
// count its thread pool reports is returned as tfjsThreads) against PolyHAL inside a dedicated Worker
// (a page's main thread may not block, so that is where PolyHAL gets threads), alternating blocks.
import * as tf from '@tensorflow/tfjs-core';
import { getThreadsCount, setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createWasmBackend, hasRelaxedSimd } from '@polyhal/backend-wasm';
import { rand, wasmCases } from '../wasm-cases.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function tfjsWasm(threads) {
  setWasmPaths('/tfjs/');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', threads > 1);
  if (threads > 1) setThreadsCount(threads);
  await tf.setBackend('wasm');
  await tf.ready();
}

async function single(options = {}) {
  await tfjsWasm(1);
  const builds = { simd: await createWasmBackend({ threads: 1, relaxedSimd: false }) };
  if (hasRelaxedSimd()) builds.relaxed = await createWasmBackend({ threads: 1, relaxedSimd: true });
  const lines = [];
  const t0 = performance.now();
  const rows = await wasmCases({
    tf,
    builds,
    log: (l) => lines.push(`${l} [${((performance.now() - t0) / 1000).toFixed(0)} s]`),
    ...options,
  });
  const devices = Object.fromEntries(Object.entries(builds).map(([k, be]) => [k, be.deviceName]));
  for (const be of Object.values(builds)) be.dispose();
  return { devices, rows, lines };
}

async function threads({ n = 1024, rounds = 8, block = 3 } = {}) {
  await tfjsWasm(2);
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const call = (msg) =>
    new Promise((resolve, reject) => {
      worker.onmessage = (e) => (e.data.error ? reject(new Error(e.data.error)) : resolve(e.data));
      worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
      worker.postMessage(msg);
    });
  const { device } = await call({ setup: n });
  const ta = tf.tensor2d(rand(n * n, 1), [n, n]),
    tb = tf.tensor2d(rand(n * n, 2), [n, n]);
  const tfjsBlock = (k) => {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) tf.matMul(ta, tb).dispose();
    return (performance.now() - t0) / k;
  };
  tfjsBlock(3);
  await call({ run: 3 });
  const ours = [],
    theirs = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      theirs.push(tfjsBlock(block));
      ours.push((await call({ run: block })).ms);
    } else {
      ours.push((await call({ run: block })).ms);
      theirs.push(tfjsBlock(block));
    }
  }
  worker.terminate();
  ta.dispose();
  tb.dispose();
  const gf = (ms) => (2 * n ** 3) / (ms * 1e6);
  return {
    device,
    tfjsThreads: getThreadsCount(),
    size: n,
    polyhalMs: median(ours),
    tfjsMs: median(theirs),
    polyhalGflops: gf(median(ours)),
    tfjsGflops: gf(median(theirs)),
    ratio: median(ours.map((x, i) => theirs[i] / x)),
    rounds,
  };
}

window.polyhalBench = {
  single,
  threads,
  userAgent: navigator.userAgent,
  crossOriginIsolated: globalThis.crossOriginIsolated,
};
