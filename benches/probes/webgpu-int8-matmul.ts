/**
 * int8 matmul through @polyhal/backend-webgpu (int8 [N, N] · int8 [N, N] → int32 via matmulInteger: the
 * packing passes plus subgroup matrices where the device has them, else dot4I8Packed) against the same
 * backend's float32 matmul, one process, the same GPU. TOPS = 2·N³ / time, from the first of R queued
 * products to a 1-element read of the last; median of 7 trials after a warm-up of a second per kernel.
 *   node webgpu-int8-matmul.mjs [--sizes 4096,8192] [--reps 10] [--toggles allow_unsafe_apis]
 *     [--kernel auto|subgroup-matrix|dot4] [--tile auto|128x128|64x128] [--storage packed|int32|both] [--json f]
 * (--toggles: Dawn's `enable-dawn-features`; subgroup matrices need allow_unsafe_apis, and
 * disable_robustness lifts Dawn's bounds checks: see benches/results/h100/webgpu-int8-matmul.json; `none`: no toggles,
 * the dot4I8Packed path a browser gets.)
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '4096,8192').split(',').map(Number);
const reps = Number(arg('reps', '10'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

Object.assign(globalThis, globals);
const toggles = arg('toggles', 'allow_unsafe_apis');
const gpu = create(toggles === 'none' ? [] : [`enable-dawn-features=${toggles}`]);
// Dawn's GPU object must stay reachable while its devices work (collected, the process aborts).
(globalThis as { polyhalGpu?: unknown }).polyhalGpu = gpu;
// `--storage`: int8 in 1-byte storage ('packed', the default), in int32 ('int32'), or 'both': a second backend on
// the same GPU with int32 storage, whose int8 products are timed alternately with the packed ones ('int8Int32').
const storage = arg('storage', 'packed');
const make = (int8Storage: 'packed' | 'int32') =>
  createWebGpuBackend({
    gpu,
    // Dawn's toggles reach the backend through `gpu`; named here too so that 'auto' sees disable_robustness.
    dawnFlags: toggles === 'none' ? [] : [`enable-dawn-features=${toggles}`],
    int8Kernel: arg('kernel', 'auto') as 'auto' | 'subgroup-matrix' | 'dot4',
    int8Tile: arg('tile', 'auto') as 'auto' | '128x128' | '64x128',
    // Freed buffers kept for reuse: 8192's 256 MiB results and operands are reused, not re-created per product.
    maxPooledBytes: 2 ** 31,
    int8Storage,
  });
const be = await make(storage === 'int32' ? 'int32' : 'packed');
const be32 = storage === 'both' ? await make('int32') : null;
console.log(`device: ${be.deviceName}`);
// Exactness first: at 512 (and 200×300·300×70, 1984×300·300×2100: padding, the 128-tile kernels' half
// tiles) every int8 sum is below 2^24 in magnitude, so the float32 product of the same values is exact and
// both must agree element for element.
for (const [m, k, n] of [
  [512, 512, 512],
  [200, 300, 70],
  [1984, 300, 2100],
]) {
  const gen = (len: number, seed: number) =>
    Int32Array.from({ length: len }, (_, i) => (((i + seed) * 2654435761) >>> 24) - 128);
  const [a, b] = [be.fromArray(gen(m * k, 1), [m, k], 'int8'), be.fromArray(gen(k * n, 7), [k, n], 'int8')];
  const got = await be.read(be.matmulInteger(a, b));
  const want = await be.read(be.cast(be.matmul(be.cast(a, 'float32'), be.cast(b, 'float32')), 'int32'));
  const bad = got.findIndex((v, i) => v !== want[i]);
  console.log(`check ${m}×${k}·${k}×${n}: ${bad < 0 ? 'exact' : `WRONG at ${bad}: ${got[bad]} vs ${want[bad]}`}`);
}
const rows: Record<string, unknown>[] = [];
for (const n of sizes) {
  const data = Int32Array.from({ length: n * n }, (_, i) => ((i * 2654435761) >>> 24) - 128);
  const [a8, b8] = [be.fromArray(data, [n, n], 'int8'), be.fromArray(data, [n, n], 'int8')];
  const [af, bf] = [be.cast(a8, 'float32'), be.cast(b8, 'float32')];
  const [a32, b32] = be32 ? [be32.fromArray(data, [n, n], 'int8'), be32.fromArray(data, [n, n], 'int8')] : [];
  const time = async (product: () => NDArray, on = be): Promise<number> => {
    const t0 = performance.now();
    let c = product();
    for (let r = 1; r < reps; r++) {
      on.free(c);
      c = product();
    }
    await on.read(
      on.shrink(c, [
        [0, 1],
        [0, 1],
      ]),
    );
    on.free(c);
    return (performance.now() - t0) / reps;
  };
  const runners: Record<string, [() => NDArray, typeof be]> = {
    int8: [() => be.matmulInteger(a8, b8), be],
    float32: [() => be.matmul(af, bf), be],
    ...(be32 ? { int8Int32: [() => be32.matmulInteger(a32!, b32!), be32] as [() => NDArray, typeof be] } : {}),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(runners).map((k) => [k, []]));
  // Warm-up: at least a second of products each, so that the GPU's clocks have left their idle state (the
  // first size after an idle spell ran at half speed on an H100, up to 2048 and 4096).
  for (const [run, on] of Object.values(runners))
    for (const t0 = performance.now(); performance.now() - t0 < 1000; ) await time(run, on);
  for (let t = 0; t < 7; t++) for (const [k, [run, on]] of Object.entries(runners)) times[k]!.push(await time(run, on));
  const ops = (ms: number): number => (2 * n ** 3) / (ms * 1e9);
  const [mi, mf] = [median(times['int8']!), median(times['float32']!)];
  const m32 = be32 ? median(times['int8Int32']!) : null;
  const int32Storage = m32 === null ? {} : { int8Int32Ms: m32, int8Int32Tops: ops(m32), packedOverInt32: m32 / mi };
  rows.push({
    size: n,
    int8Storage: storage,
    int8Ms: mi,
    float32Ms: mf,
    int8Tops: ops(mi),
    float32Tflops: ops(mf),
    ratio: mf / mi,
    ...int32Storage,
  });
  console.log(
    `${n}: int8 ${ops(mi).toFixed(1)} TOPS (${mi.toFixed(3)} ms), float32 ${ops(mf).toFixed(1)} TFLOP/s ` +
      `(${mf.toFixed(3)} ms): int8 ${(mf / mi).toFixed(2)}× float32` +
      (m32 === null ? '' : `; int8 in int32 storage ${ops(m32).toFixed(1)} TOPS (${m32.toFixed(3)} ms)`),
  );
  for (const x of [a8, b8, af, bf]) be.free(x);
  if (be32) for (const x of [a32!, b32!]) be32.free(x);
}
const out = arg('json', '');
if (out) writeFileSync(out, JSON.stringify({ device: be.deviceName, date: new Date().toISOString(), rows }, null, 2));
be.dispose();
be32?.dispose();
process.exit(0);
