/**
 * GPU time of a ViT-S step's weight gradients on the webgpu backend's tiled GEMM, by tile and split-K count: the
 * products gᵀ·x over the 12,608 tokens of a batch of 64 images (197 tokens each), with both operands contiguous as
 * the backend packs them: [1152, 12608]·[12608, 384] (the QKV projection), [384, 12608]·[12608, 384] (the output
 * projection), [1536, 12608]·[12608, 384] (fc1) and [384, 12608]·[12608, 1536] (fc2). Each configuration (`--tiles`
 * × `--splits`, each a backend created with matmulTile and matmulSplitK) captures each product once and replays it:
 * the GPU time of its kernels (the GEMM and the split-K sum) from kernelTimestamps, median of `--reps` replays.
 * TFLOP/s: 2·M·N·K over that time. One JSON row per product and configuration, then the sum over the four
 * products per configuration (a step runs each 12 times).
 *   node webgpu-matmul-long-k.mjs [--tiles auto,medium,large,tall,wide] [--splits auto,4,8,16,32] [--reps 20]
 *     [--dawn-flags F] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import type { NDArray } from '@polyhal/hal';
import { createWebGpuBackend, type TileName } from '@polyhal/backend-webgpu';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const tiles = arg('tiles', 'auto,medium,large,tall,wide').split(',') as ('auto' | TileName)[];
const splits = arg('splits', 'auto,4,8,16,32')
  .split(',')
  .map((s) => (s === 'auto' ? 'auto' : Number(s)));
const reps = Number(arg('reps', '20'));
const median = (xs: number[]): number => [...xs].sort((p, q) => p - q)[xs.length >> 1]!;
const r3 = (x: number): number => +x.toFixed(3);

Object.assign(globalThis, globals);
const gpu = create(arg('dawn-flags', '').split(' ').filter(Boolean));
const TOKENS = 12608;
const products: { name: string; m: number; n: number }[] = [
  { name: 'qkv', m: 1152, n: 384 },
  { name: 'out-proj', m: 384, n: 384 },
  { name: 'fc1', m: 1536, n: 384 },
  { name: 'fc2', m: 384, n: 1536 },
];
const rows: Record<string, unknown>[] = [];
let device = '';
for (const tile of tiles)
  for (const split of splits) {
    const be = await createWebGpuBackend({
      gpu,
      kernelTimestamps: true,
      matmulTile: tile,
      matmulSplitK: split as 'auto' | number,
      maxPooledBytes: 2 ** 32,
      memoryLimit: 2 ** 34,
    });
    device = be.deviceName;
    let seed = 1;
    const rand = (shape: number[]): NDArray => {
      const n = shape.reduce((p, d) => p * d, 1);
      const h = new Float32Array(n);
      for (let i = 0; i < n; i++) h[i] = (((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24) * 2 - 1;
      return be.fromArray(h, shape);
    };
    let totalMs = 0;
    for (const p of products) {
      const [a, b] = [rand([p.m, TOKENS]), rand([TOKENS, p.n])];
      be.beginCapture([]);
      const y = be.matmul(a, b);
      const r = be.endCapture([y.buffer]);
      if (!('work' in r)) throw new Error(`the capture of ${p.name} broke: ${r.broken}`);
      r.work.replay([]);
      const gpuNs: number[] = [];
      let kernels: string[] = [];
      for (let i = 0; i < reps; i++) {
        r.work.replay([]);
        const times = (await be.replayKernelTimes()) ?? [];
        gpuNs.push(times.reduce((s, k) => s + k.ns, 0));
        kernels = times.map((k) => k.kernel);
      }
      const ms = median(gpuNs) / 1e6;
      totalMs += ms;
      const row = {
        product: p.name,
        shape: [p.m, p.n, TOKENS],
        tile,
        variant: `split ${split}`,
        kernels,
        gpuMs: r3(ms),
        tflops: +((2 * p.m * p.n * TOKENS) / ms / 1e9).toFixed(2),
      };
      console.log(JSON.stringify(row));
      rows.push(row);
      r.work.release();
      for (const x of [a, b, y]) be.free(x);
    }
    const sum = { product: 'all four', tile, variant: `split ${split}`, gpuMs: r3(totalMs), stepMs: r3(12 * totalMs) };
    console.log(JSON.stringify(sum));
    rows.push(sum);
    be.dispose();
  }
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ device, reps, rows }, null, 1)}\n`);
process.exit(0);
