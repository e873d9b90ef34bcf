/**
 * Split-K of the float16 tensor-core product (dispatch-matmul-f16-split.ts) on the products it is for: a Linear's
 * weight gradient over ViT-S's 12,608 rows, xᵀ·g with xᵀ a transposed view ([F, 12608] · [12608, G], K = 12,608,
 * few output tiles), against the same product unsplit, in one process on one GPU: one backend per configuration
 * (`matmulSplitK` 1, 'auto', forced counts; `float16MatmulTile`), trial by trial in turn.
 *  1. agreement: each configuration's result at 1,024 sampled outputs against a float64 oracle, as a fraction of
 *     the float32 accumulation bound K·2^-24·Σ|a||b| (split-K changes the order of the sum, not its bound);
 *  2. speed: ms from the first of `reps` queued products to a synchronize, median of `--trials`; and the N³
 *     products (`--sizes`), which 'auto' leaves unsplit, as a check that nothing else moved.
 *   node webgpu-f16-splitk.mjs [--sizes 4096] [--trials 7] [--json FILE]
 * Needs Dawn on NVIDIA with `allow_unsafe_apis,vulkan_enable_f16_on_nvidia` (robustness off: the large tile).
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type ComputeBackend, type DeviceBuffer, mulberry32, type NDArray, transposeView, viewOf } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '4096').split(',').filter(Boolean).map(Number);
const trials = Number(arg('trials', '7'));
const flags = ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'];
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  rows.push(row);
  console.log(JSON.stringify(row));
};
type Split = number | 'auto';
const CONFIGS: { name: string; splitK: Split; tile: 'auto' | 'large' | 'medium' }[] = [
  { name: 'unsplit', splitK: 1, tile: 'auto' },
  { name: 'auto', splitK: 'auto', tile: 'auto' },
  { name: 'split4', splitK: 4, tile: 'auto' },
  { name: 'split8', splitK: 8, tile: 'auto' },
  { name: 'split16', splitK: 16, tile: 'auto' },
  { name: 'large-auto', splitK: 'auto', tile: 'large' },
  { name: 'large-split16', splitK: 16, tile: 'large' },
];
const backends: ComputeBackend[] = [];
for (const c of CONFIGS)
  backends.push(
    await createWebGpuBackend({
      dawnFlags: flags,
      float16Matmul: 'subgroup-matrix',
      float16MatmulTile: c.tile,
      matmulSplitK: c.splitK,
      maxPooledBytes: 2 ** 31,
    }),
  );
emit({ event: 'device', deviceName: backends[0]!.deviceName });

type Kernel = (a: NDArray, b: NDArray, out: DeviceBuffer) => void;
const kernelOf = (be: ComputeBackend): Kernel =>
  (be as unknown as { matmulKernel: Kernel }).matmulKernel.bind(be) as Kernel;
const values = (n: number, seed: number): Float32Array => {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 2 * rand() - 1);
};
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;

/** [F, R]ᵀ-view · [R, G]: a = transpose of an [R, F] array (or a plain [F, R] one with `plain`). */
async function race(what: string, F: number, R: number, G: number, plain = false): Promise<void> {
  const flops = 2 * F * G * R;
  const reps = Math.max(4, Math.min(50, Math.round(5e11 / flops)));
  const [xv, gv] = [values(R * F, 3), values(R * G, 4)];
  const runs = backends.map((be) => {
    const x = be.fromArray(xv, plain ? [F, R] : [R, F], 'float16');
    const a = plain ? x : transposeView(x);
    const b = be.fromArray(gv, [R, G], 'float16');
    const out = be.allocate(F * G, 'float32');
    const k = kernelOf(be);
    return { be, x, b, out, once: () => k(a, b, out) };
  });
  // 1. agreement at sampled outputs (each configuration's own float16 operands: the same values)
  const xh = (await runs[0]!.be.read(runs[0]!.x)) as Float32Array;
  const gh = (await runs[0]!.be.read(runs[0]!.b)) as Float32Array;
  const rand = mulberry32(9);
  const picks = Array.from({ length: 1024 }, () => [Math.floor(rand() * F), Math.floor(rand() * G)] as const);
  const worst: Record<string, number> = {};
  for (const [c, r] of runs.entries()) {
    r.once();
    const got = (await r.be.read(viewOf(r.out, [F * G]))) as Float32Array;
    let w = 0;
    for (const [i, j] of picks) {
      let [s, bound] = [0, 0];
      for (let k = 0; k < R; k++) {
        const p = (plain ? xh[i * R + k]! : xh[k * F + i]!) * gh[k * G + j]!;
        s += p;
        bound += Math.abs(p);
      }
      w = Math.max(w, Math.abs(got[i * G + j]! - s) / (R * 2 ** -24 * bound + 1e-30));
    }
    worst[CONFIGS[c]!.name] = w;
  }
  // 2. speed, configurations in turn
  const time = async (r: (typeof runs)[number]): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) r.once();
    await r.be.synchronize();
    return (performance.now() - t0) / reps;
  };
  for (let w = 0; w < 3; w++) for (const r of runs) await time(r);
  const t: number[][] = runs.map(() => []);
  for (let i = 0; i < trials; i++) for (const [j, r] of runs.entries()) t[j]!.push(await time(r));
  const ms = Object.fromEntries(CONFIGS.map((c, j) => [c.name, med(t[j]!)]));
  const tflops = Object.fromEntries(CONFIGS.map((c) => [c.name, flops / ms[c.name]! / 1e9]));
  emit({
    event: 'speed',
    product: what,
    M: F,
    K: R,
    N: G,
    ms,
    tflops,
    worstOfBound: worst,
    unsplitOverAuto: ms.unsplit! / ms.auto!,
  });
  for (const r of runs) {
    r.be.free(r.x);
    r.be.free(r.b);
    r.be.deallocate(r.out);
  }
}
await race('ViT-S fc1 weight gradient xᵀ·g', 384, 12608, 1536);
await race('ViT-S fc2 weight gradient xᵀ·g', 1536, 12608, 384);
await race('ViT-S qkv weight gradient xᵀ·g', 384, 12608, 1152);
await race('ViT-S proj weight gradient xᵀ·g', 384, 12608, 384);
await race('[384, 12608] · [12608, 1536], a row-major', 384, 12608, 1536, true);
for (const n of sizes) await race(`${n}³, a transposed`, n, n, n);
for (const be of backends) be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
