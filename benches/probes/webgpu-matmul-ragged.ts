/**
 * GPU time of a ViT-S's attention products (197 tokens, head width 64, `--batch` heads × images, 384 = 64 × 6) on
 * the webgpu backend's tiled GEMM with scalar loads (kernels/matmul-scalar-loads.ts: N or K = 197 is no multiple
 * of 4, and the transposed operands autograd passes): q·kᵀ [b, 197, 64]·[b, 64, 197] with kᵀ a transposed view
 * (sbk = 1; dP = dO·Vᵀ alike), P·V [b, 197, 197]·[b, 197, 64] (dQ = dS·K alike), Pᵀ·dO [b, 197, 197]ᵀ·[b, 197, 64]
 * with Pᵀ a transposed view (sam = 1; dK = dSᵀ·Q alike); and, as a reference on vec4 loads, the same products over
 * 200 tokens with contiguous operands. Each product is captured once (beginCapture/endCapture) and replayed: with the
 * backend's kernelTimestamps (a device with `timestamp-query`) the GPU time of its kernels (the GEMM, and the
 * split-K sum if any) in each of `--reps` replays (replayKernelTimes), median; always the wall time of `--reps`
 * replays and a final one-element read, per replay. TFLOP/s: 2·b·M·N·K over the median GPU time (else the wall
 * time). Prints one JSON row per product.
 *   node webgpu-matmul-ragged.mjs [--batch 384] [--reps 30] [--tile auto|large|tall|...] [--only name,...]
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
const b = Number(arg('batch', '384'));
const reps = Number(arg('reps', '30'));
const tile = arg('tile', 'auto') as 'auto' | TileName;
const only = arg('only', '').split(',').filter(Boolean);
const median = (xs: number[]): number => [...xs].sort((p, q) => p - q)[xs.length >> 1]!;
const r3 = (x: number): number => +x.toFixed(3);

Object.assign(globalThis, globals);
const gpu = create(arg('dawn-flags', '').split(' ').filter(Boolean));
const be = await createWebGpuBackend({
  gpu,
  kernelTimestamps: true,
  matmulTile: tile,
  maxPooledBytes: 2 ** 32,
  memoryLimit: 2 ** 34,
});
console.log(`device: ${be.deviceName}`);
let seed = 1;
const rand = (shape: number[]): NDArray => {
  const n = shape.reduce((p, d) => p * d, 1);
  const h = new Float32Array(n);
  for (let i = 0; i < n; i++) h[i] = (((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24) * 2 - 1;
  return be.fromArray(h, shape);
};
const T = 197;
const D = 64;
const heads = rand([b, T, D]);
const heads2 = rand([b, T, D]);
const scores = rand([b, T, T]);
const t = (x: NDArray): NDArray => be.permute(x, [0, 2, 1]);
// the vec4 reference: 200 tokens, every operand contiguous (kᵀ stored as [b, 64, 200])
const heads200 = rand([b, 200, D]);
const headsT200 = rand([b, D, 200]);
const scores200 = rand([b, 200, 200]);
const cases: { name: string; m: number; n: number; k: number; run: () => NDArray }[] = [
  { name: 'q·kᵀ (B transposed)', m: T, n: T, k: D, run: () => be.matmul(heads, t(heads2)) },
  { name: 'P·V', m: T, n: D, k: T, run: () => be.matmul(scores, heads) },
  { name: 'Pᵀ·dO (A transposed)', m: T, n: D, k: T, run: () => be.matmul(t(scores), heads) },
  { name: 'q·kᵀ 200 tokens, contiguous (vec4)', m: 200, n: 200, k: D, run: () => be.matmul(heads200, headsT200) },
  { name: 'P·V 200 tokens (vec4)', m: 200, n: D, k: 200, run: () => be.matmul(scores200, heads200) },
];
const rows: Record<string, unknown>[] = [];
let totalMs = 0;
for (const c of cases) {
  if (only.length && !only.some((o) => c.name.startsWith(o))) continue;
  be.beginCapture([]);
  const y = c.run();
  const r = be.endCapture([y.buffer]);
  if (!('work' in r)) throw new Error(`the capture of ${c.name} broke: ${r.broken}`);
  r.work.replay([]); // warm-up: pipelines compiled, clocks up
  const gpuNs: number[] = [];
  let kernels: string[] = [];
  for (let i = 0; i < reps; i++) {
    r.work.replay([]);
    const times = (await be.replayKernelTimes()) ?? [];
    if (times.length) gpuNs.push(times.reduce((s, k) => s + k.ns, 0));
    kernels = times.map((k) => k.kernel);
  }
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) r.work.replay([]);
  await be.read(be.shrink(be.reshape(y, [y.shape.reduce((p, d) => p * d, 1)]), [[0, 1]]));
  const wallMs = (performance.now() - t0) / reps;
  const ms = gpuNs.length ? median(gpuNs) / 1e6 : wallMs;
  const flop = 2 * b * c.m * c.n * c.k;
  if (!c.name.includes('vec4')) totalMs += ms;
  const row = {
    product: c.name,
    shape: [b, c.m, c.n, c.k],
    tile,
    kernels,
    gpuMs: gpuNs.length ? r3(ms) : null,
    gpuMsMin: gpuNs.length ? r3(Math.min(...gpuNs) / 1e6) : null,
    wallMsPerReplay: r3(wallMs),
    tflops: +(flop / ms / 1e9).toFixed(2),
  };
  console.log(JSON.stringify(row));
  rows.push(row);
  r.work.release();
  be.free(y);
}
// a ViT-S step (12 blocks) runs q·kᵀ and dP = dO·Vᵀ, P·V and dQ = dS·K, and dV = Pᵀ·dO and dK = dSᵀ·Q
console.log(JSON.stringify({ ragged3Ms: r3(totalMs), perStepEstimateMs: r3(totalMs * 2 * 12) }));
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ device: be.deviceName, batch: b, reps, rows }, null, 1)}\n`);
be.dispose();
process.exit(0);
