/**
 * The six batched products of ViT-S attention under autocast('float16') (batch 64, 6 heads, 197 tokens, head
 * width 64; q, k, v the head views of the qkv projection [64, 197, 1152], dOut of [64, 197, 384]) —
 * S = q·kᵀ, O = P·v; dP = dO·vᵀ, dv = Pᵀ·dO, dq = dS·k, dk = dSᵀ·q — each as the HAL's matmul of float16 operands
 * into float16, on backends that differ in how they run them, in one process on one GPU, in turn:
 * 'tensor cores' (float16Matmul 'subgroup-matrix', the tile by shape), 'tensor cores, 64×64' (float16MatmulTile
 * 'small'), 'float32' (float16Matmul 'float32': the float32 kernels on widened copies), 'auto' (the default rule).
 * ms from the first of `reps` queued products to a synchronize, median of `--trials`; results of each backend
 * checked against the float32 one (max abs difference over max abs value).
 *   node webgpu-f16-attention-products.mjs [--trials 7] [--json FILE]
 * Needs Dawn on NVIDIA with `allow_unsafe_apis,vulkan_enable_f16_on_nvidia` (robustness off).
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend, type WebGpuOptions } from '@polyhal/backend-webgpu';
import { type ComputeBackend, mulberry32, type NDArray } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const trials = Number(arg('trials', '7'));
const flags = ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'];
const CONFIGS: [string, WebGpuOptions][] = [
  ['tensor cores', { float16Matmul: 'subgroup-matrix' }],
  ['tensor cores, 64×64', { float16Matmul: 'subgroup-matrix', float16MatmulTile: 'small' }],
  ['float32', { float16Matmul: 'float32' }],
  ['auto', {}],
];
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  rows.push(row);
  console.log(JSON.stringify(row));
};
const backends: ComputeBackend[] = [];
for (const [, o] of CONFIGS)
  backends.push(await createWebGpuBackend({ dawnFlags: flags, maxPooledBytes: 2 ** 31, ...o }));
emit({ event: 'device', deviceName: backends[0]!.deviceName });

const [N, L, H, D] = [64, 197, 6, 64];
const values = (n: number, seed: number): Float32Array => {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 2 * rand() - 1);
};
/** A view of x with shape and strides (elements). */
const view = (x: NDArray, shape: number[], strides: number[], offset = 0): NDArray => ({
  ...x,
  shape,
  strides,
  offset: x.offset + offset,
});
const E = H * D;
const qkvStrides = [L * 3 * E, D, 3 * E, 1]; // [N, H, L, D] of [N, L, 3E]
const tStrides = (s: number[]): number[] => [s[0]!, s[1]!, s[3]!, s[2]!];
function operands(be: ComputeBackend) {
  const qkv = be.fromArray(values(N * L * 3 * E, 1), [N, L, 3 * E], 'float16');
  const dOut = be.fromArray(values(N * L * E, 2), [N, L, E], 'float16');
  const p = be.fromArray(values(N * H * L * L, 3), [N, H, L, L], 'float16');
  const q = view(qkv, [N, H, L, D], qkvStrides);
  const k = view(qkv, [N, H, L, D], qkvStrides, E);
  const v = view(qkv, [N, H, L, D], qkvStrides, 2 * E);
  const dO = view(dOut, [N, H, L, D], [L * E, D, E, 1]);
  const pT = view(p, [N, H, L, L], tStrides(p.strides as number[]));
  const kT = view(k, [N, H, D, L], tStrides(qkvStrides));
  const vT = view(v, [N, H, D, L], tStrides(qkvStrides));
  const products: [string, NDArray, NDArray][] = [
    ['S = q·kᵀ', q, kT],
    ['O = P·v', p, v],
    ['dP = dO·vᵀ', dO, vT],
    ['dv = Pᵀ·dO', pT, dO],
    ['dq = dS·k', p, k],
    ['dk = dSᵀ·q', pT, q],
  ];
  return { products, free: () => [qkv, dOut, p].forEach((x) => be.free(x)) };
}
const sets = backends.map(operands);
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
const reps = 20;
const totals = CONFIGS.map(() => 0);
for (let j = 0; j < sets[0]!.products.length; j++) {
  const name = sets[0]!.products[j]![0];
  // agreement with the float32 backend
  const ref = (await backends[2]!.read(
    backends[2]!.matmul(sets[2]!.products[j]![1], sets[2]!.products[j]![2]),
  )) as Float32Array;
  const scale = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  const diff: Record<string, number> = {};
  for (const [c, be] of backends.entries()) {
    const [, a, b] = sets[c]!.products[j]!;
    const got = (await be.read(be.matmul(a, b))) as Float32Array;
    diff[CONFIGS[c]![0]] = got.reduce((m, x, i) => Math.max(m, Math.abs(x - ref[i]!)), 0) / scale;
  }
  const time = async (c: number): Promise<number> => {
    const [, a, b] = sets[c]!.products[j]!;
    const be = backends[c]!;
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
  emit({ event: 'product', product: name, ms, relativeDifferenceFromFloat32: diff });
}
emit({ event: 'six products', ms: Object.fromEntries(CONFIGS.map(([n], c) => [n, totals[c]])) });
for (const s of sets) s.free();
for (const be of backends) be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
