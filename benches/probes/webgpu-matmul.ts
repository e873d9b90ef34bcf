/**
 * @polyhal/backend-webgpu vs @tensorflow/tfjs-backend-webgpu 4.22.0 on the same GPU (one GPU object,
 * one process) and the same inputs: matmul f32 N×N (TFLOP/s, dispatch to result: a 1-element read
 * after the last of R queued matmuls), and small-op latency (add of 1K elements, dispatch to result).
 * Runs in Node on Dawn; bundled with esbuild (webgpu external) to run on a GPU machine.
 * Trials alternate between tfjs and every PolyHAL configuration (rotating order) after a warm-up, so
 * GPU clock changes hit all alike; each timed block follows an untimed one on the same device (each
 * configuration has its own GPUDevice, and the first work after another device's measured slower);
 * the ratio is the median of per-trial ratios.
 *   node webgpu-matmul.mjs [--sizes 1024,4096,8192] [--json out.json] [--tiles auto,large,tall:2,large:4]
 * (--tiles: tile name, optionally `:S` to force split-K S and `+batch` for errorScopes 'batch';
 *  `auto` = the backend's own choice). "encode" is the CPU time per call before the GPU result.
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { mulberry32 } from '@polyhal/hal';
import { createWebGpuBackend, type TileName } from '@polyhal/backend-webgpu';

type Tf = typeof import('@tensorflow/tfjs-core');

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '1024,4096,8192').split(',').map(Number);
const tiles = arg('tiles', 'auto').split(',');
const trials = Number(arg('trials', '9'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

Object.assign(globalThis, globals);
const gpu = create([]);
(globalThis as { navigator?: unknown }).navigator = { gpu, userAgent: 'node' };
const tf: Tf = await import('@tensorflow/tfjs-core');
await import('@tensorflow/tfjs-backend-webgpu');
await tf.setBackend('webgpu');
await tf.ready();
const backends = await Promise.all(
  tiles.map((spec) => {
    const [base, flag] = spec.split('+');
    const [tile, split] = base!.split(':');
    return createWebGpuBackend({
      gpu,
      matmulTile: tile as 'auto' | TileName,
      matmulSplitK: split ? Number(split) : 'auto',
      errorScopes: flag === 'batch' ? 'batch' : 'op',
    });
  }),
);
const be = backends[0]!;
console.log(`GPU: ${be.deviceName}`);

const rows: Record<string, unknown>[] = [];
for (const n of sizes) {
  const rng = mulberry32(n);
  const data = Float32Array.from({ length: n * n }, () => rng() * 2 - 1);
  const ta = tf.tensor2d(data, [n, n]);
  const tb = tf.tensor2d(data, [n, n]);
  const reps = n >= 8192 ? 3 : n >= 4096 ? 10 : 50;
  const theirs = async (): Promise<number> => {
    const t0 = performance.now();
    let c = tf.matMul(ta, tb);
    for (let r = 1; r < reps; r++) {
      c.dispose();
      c = tf.matMul(ta, tb);
    }
    const one = tf.slice(c, [0, 0], [1, 1]);
    await one.data();
    one.dispose();
    c.dispose();
    return (performance.now() - t0) / reps;
  };
  const inputs = backends.map((b) => [b.fromArray(data, [n, n]), b.fromArray(data, [n, n])] as const);
  const encode: number[][] = backends.map(() => []);
  const ours = (k: number) => async (): Promise<number> => {
    const b = backends[k]!;
    const [pa, pb] = inputs[k]!;
    const t0 = performance.now();
    let c = b.matmul(pa, pb);
    for (let r = 1; r < reps; r++) {
      b.free(c);
      c = b.matmul(pa, pb);
    }
    encode[k]!.push((performance.now() - t0) / reps);
    await b.read(
      b.shrink(c, [
        [0, 1],
        [0, 1],
      ]),
    );
    b.free(c);
    return (performance.now() - t0) / reps;
  };
  const runners = [theirs, ...backends.map((_, k) => ours(k))];
  // Warm-up: compile every pipeline and bring the GPU to its working clock (about one second of work).
  for (const t0 = performance.now(); performance.now() - t0 < 1000; ) for (const run of runners) await run();
  const times: number[][] = runners.map(() => []);
  for (let trial = 0; trial < trials; trial++) {
    for (let j = 0; j < runners.length; j++) {
      const i = (j + trial) % runners.length;
      await runners[i]!(); // untimed: the GPU switches from the previous runner's device first
      times[i]!.push(await runners[i]!());
    }
  }
  const tflops = (ms: number): number => (2 * n ** 3) / (ms * 1e9);
  const fmt = (x: number): string => x.toFixed(x < 1 ? 4 : 2);
  const mt = median(times[0]!);
  console.log(`matmul ${n}: tfjs-webgpu ${fmt(tflops(mt))} TFLOP/s (${mt.toFixed(3)} ms)`);
  for (const [k, b] of backends.entries()) {
    const mine = times[k + 1]!;
    const mo = median(mine);
    const ratio = median(mine.map((x, i) => times[0]![i]! / x));
    const enc = median(encode[k]!);
    rows.push({
      suite: 'matmul',
      size: n,
      tile: tiles[k],
      polyhalMs: mo,
      tfjsMs: mt,
      polyhalTflops: tflops(mo),
      tfjsTflops: tflops(mt),
      ratio,
      trials,
      encodeMsPerCall: enc,
    });
    console.log(
      `  polyhal-webgpu [${tiles[k]}] ${fmt(tflops(mo))} TFLOP/s (${mo.toFixed(3)} ms), ratio to ` +
        `tfjs ${ratio.toFixed(2)}x (median of ${trials} trial ratios; min..max ` +
        `${Math.min(...mine.map((x, i) => times[0]![i]! / x)).toFixed(2)}..` +
        `${Math.max(...mine.map((x, i) => times[0]![i]! / x)).toFixed(2)}; ` +
        `encode ${(enc * 1000).toFixed(0)} µs/call)`,
    );
    for (const x of inputs[k]!) b.free(x);
  }
  ta.dispose();
  tb.dispose();
}

// Small-op latency: add of 1K elements, from the call to the data on the host.
{
  const data = Float32Array.from({ length: 1024 }, (_, i) => i);
  const pa = be.fromArray(data, [1024]);
  const ta = tf.tensor1d(data);
  const lo: number[] = [];
  const lt: number[] = [];
  for (let i = 0; i < 60; i++) {
    let t0 = performance.now();
    const c = be.add(pa, pa);
    await be.read(c);
    lo.push(performance.now() - t0);
    be.free(c);
    t0 = performance.now();
    const d = tf.add(ta, ta);
    await d.data();
    lt.push(performance.now() - t0);
    d.dispose();
  }
  const [mo, mt] = [median(lo.slice(10)), median(lt.slice(10))];
  rows.push({ suite: 'add-latency', size: 1024, polyhalMs: mo, tfjsMs: mt, ratio: mt / mo });
  console.log(
    `add 1K dispatch→result: polyhal-webgpu ${mo.toFixed(3)} ms, tfjs-webgpu ${mt.toFixed(3)} ms, ` +
      `ratio ${(mt / mo).toFixed(2)}x`,
  );
}
const out = arg('json', '');
if (out)
  writeFileSync(out, JSON.stringify({ gpu: be.deviceName, date: new Date().toISOString(), results: rows }, null, 2));
for (const b of backends) b.dispose();
process.exit(0);
