// matmul f32 square N×N: @polyhal/backend-cpu vs @tensorflow/tfjs-backend-cpu, one process, same inputs.
// Usage: node benches/probes/matmul-cpu.mjs [--sizes 128,256,512,1024]
import { Bench } from 'tinybench';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { CpuBackend } from '@polyhal/backend-cpu';
import { mulberry32 } from '@polyhal/hal';

const arg = process.argv.indexOf('--sizes');
const sizes = (arg > 0 ? process.argv[arg + 1] : '128,256,512,1024').split(',').map(Number);
await tf.setBackend('cpu');
const be = new CpuBackend();
const rows = [];
for (const n of sizes) {
  const rng = mulberry32(n);
  const a = Float32Array.from({ length: n * n }, () => rng() * 2 - 1);
  const b = Float32Array.from({ length: n * n }, () => rng() * 2 - 1);
  const pa = be.fromArray(a, [n, n]);
  const pb = be.fromArray(b, [n, n]);
  const ta = tf.tensor2d(a, [n, n]);
  const tb = tf.tensor2d(b, [n, n]);
  const iterations = n >= 1024 ? 5 : n >= 512 ? 10 : 30;
  const bench = new Bench({ iterations, warmupIterations: 2, time: 0, warmupTime: 0 });
  bench
    .add('polyhal-cpu', () => {
      const c = be.matmul(pa, pb);
      be.readSync(c);
      be.free(c);
    })
    .add('tfjs-cpu', () => {
      const c = tf.matMul(ta, tb);
      c.dataSync();
      c.dispose();
    });
  await bench.run();
  const med = Object.fromEntries(bench.tasks.map((t) => [t.name, t.result.latency.p50]));
  const gflops = (ms) => (2 * n ** 3) / (ms * 1e6);
  rows.push({
    n,
    polyhal: gflops(med['polyhal-cpu']),
    tfjs: gflops(med['tfjs-cpu']),
    ratio: med['tfjs-cpu'] / med['polyhal-cpu'],
  });
  console.log(
    `matmul ${n}: polyhal-cpu ${gflops(med['polyhal-cpu']).toFixed(2)} GFLOP/s, tfjs-cpu ` +
      `${gflops(med['tfjs-cpu']).toFixed(2)} GFLOP/s, ratio ${(med['tfjs-cpu'] / med['polyhal-cpu']).toFixed(2)}x`,
  );
  be.free(pa);
  be.free(pb);
  ta.dispose();
  tb.dispose();
}
