/**
 * The twelve float16 products of a ViT-S block's Linears (12,608 rows: batch 64 × 197 tokens; width 384, MLP 1536)
 * under autocast — forward x·Wᵀ, dX = g·W, dW = gᵀ·x, for qkv, proj, fc1, fc2, the operands as the autograd
 * passes them (Wᵀ and gᵀ transposed views) — on the tensor cores with each tile ('large' 128×128, 'medium' 64×128,
 * and 'auto', the backend's choice), three backends on one GPU in one process, in turn: ms from the first of `reps`
 * queued products (HAL matmul into float16, packs and crops included) to a synchronize, median of `--trials`.
 *   node webgpu-f16-vit-products.mjs [--trials 7] [--json FILE]
 * Needs Dawn on NVIDIA with `allow_unsafe_apis,vulkan_enable_f16_on_nvidia` (robustness off: the large tile).
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend, type WebGpuOptions } from '@polyhal/backend-webgpu';
import { type ComputeBackend, mulberry32, type NDArray, transposeView } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const trials = Number(arg('trials', '7'));
const flags = ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'];
const CONFIGS: [string, WebGpuOptions][] = [
  ['large', { float16MatmulTile: 'large' }],
  ['medium', { float16MatmulTile: 'medium' }],
  ['auto', {}],
];
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  rows.push(row);
  console.log(JSON.stringify(row));
};
const backends: ComputeBackend[] = [];
for (const [, o] of CONFIGS)
  backends.push(
    await createWebGpuBackend({ dawnFlags: flags, float16Matmul: 'subgroup-matrix', maxPooledBytes: 2 ** 31, ...o }),
  );
emit({ event: 'device', deviceName: backends[0]!.deviceName });
const values = (n: number, seed: number): Float32Array => {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 2 * rand() - 1);
};
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
const R = 12608;
const LINEARS: [string, number, number][] = [
  ['qkv', 384, 1152],
  ['proj', 384, 384],
  ['fc1', 384, 1536],
  ['fc2', 1536, 384],
];
const totals = CONFIGS.map(() => 0);
for (const [name, fin, fout] of LINEARS) {
  // per backend: x [R, fin], W [fout, fin], g [R, fout]
  const sets = backends.map((be) => {
    const x = be.fromArray(values(R * fin, 1), [R, fin], 'float16');
    const w = be.fromArray(values(fout * fin, 2), [fout, fin], 'float16');
    const g = be.fromArray(values(R * fout, 3), [R, fout], 'float16');
    const products: [string, NDArray, NDArray][] = [
      [`${name} forward x·Wᵀ`, x, transposeView(w)],
      [`${name} dX = g·W`, g, w],
      [`${name} dW = gᵀ·x`, transposeView(g), x],
    ];
    return { be, products, free: () => [x, w, g].forEach((a) => be.free(a)) };
  });
  for (let j = 0; j < 3; j++) {
    const [what, a0, b0] = sets[0]!.products[j]!;
    const flops = 2 * a0.shape[0]! * a0.shape[1]! * b0.shape[1]!;
    const reps = 20;
    const time = async (c: number): Promise<number> => {
      const { be, products } = sets[c]!;
      const [, a, b] = products[j]!;
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) be.free(be.matmul(a, b));
      await be.synchronize();
      return (performance.now() - t0) / reps;
    };
    for (let w = 0; w < 3; w++) for (let c = 0; c < backends.length; c++) await time(c);
    const t: number[][] = backends.map(() => []);
    for (let i = 0; i < trials; i++) for (let c = 0; c < backends.length; c++) t[c]!.push(await time(c));
    const ms = Object.fromEntries(CONFIGS.map(([n], c) => [n, med(t[c]!)]));
    CONFIGS.forEach(([n], c) => {
      totals[c]! += ms[n]!;
    });
    const tflops = Object.fromEntries(CONFIGS.map(([n]) => [n, flops / ms[n]! / 1e9]));
    emit({ event: 'product', product: what, ms, tflops });
  }
  for (const s of sets) s.free();
}
emit({ event: 'twelve products', ms: Object.fromEntries(CONFIGS.map(([n], c) => [n, totals[c]])) });
for (const be of backends) be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
