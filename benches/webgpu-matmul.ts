/**
 * @polyhal/backend-webgpu vs @tensorflow/tfjs-backend-webgpu 4.22.0 on the same GPU (one GPU object,
 * one process) and the same inputs: matmul f32 N×N (TFLOP/s, dispatch to result: a 1-element read
 * after the last of R queued matmuls), and small-op latency (add of 1K elements, dispatch to result).
 * Runs in Node on Dawn; bundled with esbuild (webgpu external) to run on a GPU machine.
 *   node webgpu-matmul.mjs [--sizes 1024,4096,8192] [--json out.json] [--tiles auto,large,large16,medium]
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
const tiles = arg('tiles', 'auto').split(',') as ('auto' | TileName)[];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

Object.assign(globalThis, globals);
const gpu = create([]);
(globalThis as { navigator?: unknown }).navigator = { gpu, userAgent: 'node' };
const tf: Tf = await import('@tensorflow/tfjs-core');
await import('@tensorflow/tfjs-backend-webgpu');
await tf.setBackend('webgpu');
await tf.ready();
const backends = await Promise.all(tiles.map((matmulTile) => createWebGpuBackend({ gpu, matmulTile })));
const be = backends[0]!;
console.log(`GPU: ${be.deviceName}`);

const rows: Record<string, unknown>[] = [];
for (const n of sizes) {
  const rng = mulberry32(n);
  const data = Float32Array.from({ length: n * n }, () => rng() * 2 - 1);
  const ta = tf.tensor2d(data, [n, n]);
  const tb = tf.tensor2d(data, [n, n]);
  const reps = n >= 8192 ? 3 : n >= 4096 ? 10 : 30;
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
  await theirs();
  const pt: number[] = [];
  for (let trial = 0; trial < 5; trial++) pt.push(await theirs());
  const mt = median(pt);
  const tflops = (ms: number): number => (2 * n ** 3) / (ms * 1e9);
  console.log(`matmul ${n}: tfjs-webgpu ${tflops(mt).toFixed(2)} TFLOP/s (${mt.toFixed(2)} ms)`);
  ta.dispose();
  tb.dispose();
  for (const [k, b] of backends.entries()) {
    const pa = b.fromArray(data, [n, n]);
    const pb = b.fromArray(data, [n, n]);
    const ours = async (): Promise<number> => {
      const t0 = performance.now();
      let c = b.matmul(pa, pb);
      for (let r = 1; r < reps; r++) {
        b.free(c);
        c = b.matmul(pa, pb);
      }
      await b.read(b.shrink(c, [[0, 1], [0, 1]]));
      b.free(c);
      return (performance.now() - t0) / reps;
    };
    await ours();
    const po: number[] = [];
    for (let trial = 0; trial < 5; trial++) po.push(await ours());
    const mo = median(po);
    rows.push({ suite: 'matmul', size: n, tile: tiles[k], polyhalMs: mo, tfjsMs: mt, polyhalTflops: tflops(mo), tfjsTflops: tflops(mt), ratio: mt / mo });
    console.log(`  polyhal-webgpu [tile ${tiles[k]}] ${tflops(mo).toFixed(2)} TFLOP/s (${mo.toFixed(2)} ms), ratio to tfjs ${(mt / mo).toFixed(2)}x`);
    b.free(pa);
    b.free(pb);
  }
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
  console.log(`add 1K dispatch→result: polyhal-webgpu ${mo.toFixed(3)} ms, tfjs-webgpu ${mt.toFixed(3)} ms, ratio ${(mt / mo).toFixed(2)}x`);
}
const out = arg('json', '');
if (out) writeFileSync(out, JSON.stringify({ gpu: be.deviceName, date: new Date().toISOString(), results: rows }, null, 2));
for (const b of backends) b.dispose();
process.exit(0);
