// int8 matmul (matmulInteger, int32 sums) against PolyHAL's own float32 matmul on the same values, wasm,
// 2 threads, 256 / 512 / 1024 (tfjs-wasm has no int8 matmul): int16-packed operands on
// i32x4.dot_i16x8_s (assembly/matmul-int.ts gemmI16).
//   node benches/wasm-int8-matmul.mjs
import { createWasmBackend } from '@polyhal/backend-wasm';
import { group, machine } from './lib.mjs';

const be = await createWasmBackend({ threads: 2 });
console.log(`${machine()}; ${be.deviceName}`);
for (const n of [256, 512, 1024]) {
  const values = Array.from({ length: n * n }, (_, i) => ((i * 2654435761) >>> 24) - 128);
  const [a, b] = [be.fromArray(values, [n, n], 'int8'), be.fromArray(values.toReversed(), [n, n], 'int8')];
  const [fa, fb] = [be.cast(a, 'float32'), be.cast(b, 'float32')];
  const r = await group(
    { int8: () => be.free(be.matmulInteger(a, b)), float32: () => be.free(be.matmul(fa, fb)) },
    { iterations: 5, rounds: 4, warmup: 5 },
  );
  const rate = (ms) => ((2 * n ** 3) / (ms * 1e6)).toFixed(1);
  const [qi, qf] = [r.int8.median, r.float32.median];
  console.log(
    `${n}: int8 ${qi.toFixed(2)} ms (${rate(qi)} GOPS), float32 ${qf.toFixed(2)} ms (${rate(qf)} GFLOP/s): ` +
      `int8/float32 speed ${(qf / qi).toFixed(2)}×`,
  );
  for (const t of [a, b, fa, fb]) be.free(t);
}
be.dispose();
