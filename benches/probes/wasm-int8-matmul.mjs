// int8 matmul (matmulInteger, int32 sums) against PolyHAL's own float32 matmul on the same values, wasm,
// 2 threads, 256 / 512 / 1024 (tfjs-wasm has no int8 matmul): int16-packed operands on
// i32x4.dot_i16x8_s (assembly/matmul-int.ts gemmI16).
//   BENCH_JSON=out.json node benches/probes/wasm-int8-matmul.mjs     # BENCH_JSON: also write the rows, then file them:
//   node benches/lib/file-result.mjs out.json --machine node-2core --suite wasm-int8-matmul
import { writeFileSync } from 'node:fs';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { group, machine, versions } from '../lib/harness.mjs';

const threads = 2;
const be = await createWasmBackend({ threads });
console.log(`${machine()}; ${be.deviceName}`);
const rows = [];
for (const n of [256, 512, 1024]) {
  const values = Array.from({ length: n * n }, (_, i) => ((i * 2654435761) >>> 24) - 128);
  const [a, b] = [be.fromArray(values, [n, n], 'int8'), be.fromArray(values.toReversed(), [n, n], 'int8')];
  const [fa, fb] = [be.cast(a, 'float32'), be.cast(b, 'float32')];
  const r = await group(
    { int8: () => be.free(be.matmulInteger(a, b)), float32: () => be.free(be.matmul(fa, fb)) },
    { iterations: 5, rounds: 4, warmup: 5 },
  );
  const rate = (ms) => (2 * n ** 3) / (ms * 1e6);
  const [qi, qf] = [r.int8.median, r.float32.median];
  rows.push({
    size: n,
    threads,
    device: be.deviceName,
    int8Ms: qi,
    float32Ms: qf,
    int8Gops: rate(qi),
    float32Gflops: rate(qf),
    ratio: qf / qi,
  });
  console.log(
    `${n}: int8 ${qi.toFixed(2)} ms (${rate(qi).toFixed(1)} GOPS), float32 ${qf.toFixed(2)} ms ` +
      `(${rate(qf).toFixed(1)} GFLOP/s): int8/float32 speed ${(qf / qi).toFixed(2)}×`,
  );
  for (const t of [a, b, fa, fb]) be.free(t);
}
be.dispose();
if (process.env.BENCH_JSON)
  writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify({ machine: machine(), versions: versions(), date: new Date().toISOString(), rows }, null, 2),
  );
