/**
 * float16 matmul on tensor cores in @polyhal/backend-webgpu (dispatch-matmul-f16.ts), on a device with f16
 * subgroup matrices (Dawn on NVIDIA with `allow_unsafe_apis,vulkan_enable_f16_on_nvidia`):
 *  1. accuracy: float16 operands (uniform in [−1, 1], rounded to float16) at odd, batched, broadcast and
 *     transposed shapes through the tensor-core path for every size (`float16Matmul: 'subgroup-matrix'`), against
 *     a float64 product of the same float16 values; the error is reported as a fraction of the float32
 *     accumulation bound K·2^-24·Σ|a||b| (≤ 1: within it). The product goes to float32 (the kernel's output;
 *     the HAL rounds it to float16 after);
 *  2. speed: N×N×N float16 products against PolyHAL's own float32 matmul of the same size in the same process
 *     (alternating trials, TFLOP/s from the first of `reps` queued products to a synchronize, median of trials).
 *   node webgpu-f16-matmul.mjs [--sizes 1024,2048,4096,8192] [--robustness on|off] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type ComputeBackend, type DeviceBuffer, mulberry32, type NDArray, transposeView, viewOf } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '1024,2048,4096,8192').split(',').map(Number);
const robust = arg('robustness', 'on') === 'on';
const trials = Number(arg('trials', '7'));
const flags = [
  `enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia${robust ? '' : ',disable_robustness'}`,
];
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  const r = { robustness: robust ? 'on' : 'off', ...row };
  rows.push(r);
  console.log(JSON.stringify(r));
};

type Kernel = (a: NDArray, b: NDArray, out: DeviceBuffer) => void;
/** The backend's matmulKernel: float16 operands in 2-byte storage into a float32 out. */
const kernelOf = (be: ComputeBackend): Kernel =>
  (be as unknown as { matmulKernel: Kernel }).matmulKernel.bind(be) as Kernel;

const forced = await createWebGpuBackend({ dawnFlags: flags, float16Matmul: 'subgroup-matrix' });
emit({ event: 'device', deviceName: forced.deviceName });
const rand = mulberry32(7);
const half = (be: ComputeBackend, shape: number[]): NDArray =>
  be.fromArray(
    Float32Array.from({ length: shape.reduce((p, d) => p * d, 1) }, () => 2 * rand() - 1),
    shape,
    'float16',
  );

// 1. accuracy: [batch…, M, K] · [batch…, K, N]
const CASES: { name: string; a: number[]; b: number[]; transposeB?: boolean }[] = [
  { name: '1×1×1', a: [1, 1], b: [1, 1] },
  { name: '3×7×5', a: [3, 7], b: [7, 5] },
  { name: '17×9×33', a: [17, 9], b: [9, 33] },
  { name: '130×45×70', a: [130, 45], b: [45, 70] },
  { name: '256×256×256 (tile multiples: operands read as they are, direct store)', a: [256, 256], b: [256, 256] },
  { name: 'batched 2×128×64 · 64×128 (aligned, broadcast b: no packs)', a: [2, 128, 64], b: [1, 64, 128] },
  { name: 'batched 3×65×40 · 40×33 (broadcast b)', a: [3, 65, 40], b: [1, 40, 33] },
  { name: 'bᵀ view 96×64 · (80×64)ᵀ', a: [96, 64], b: [80, 64], transposeB: true },
  { name: 'K = 1000 (not a multiple of 32)', a: [64, 1000], b: [1000, 48] },
  { name: '320×96×256 (the medium tile divides M and N: no packs, direct store)', a: [320, 96], b: [96, 256] },
  { name: '192×64×192 (the small tile divides M and N)', a: [192, 64], b: [64, 192] },
  { name: 'batched 3×192×32 · 32×128 (medium tile, broadcast b)', a: [3, 192, 32], b: [1, 32, 128] },
];
const kernel = kernelOf(forced);
for (const c of CASES) {
  const a = half(forced, c.a);
  const b0 = half(forced, c.b);
  const b = c.transposeB ? transposeView(b0) : b0;
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[b.shape.length - 1]!];
  const batch = a.shape.slice(0, -2).reduce((p, d) => p * d, 1);
  const bb = b.shape.length === r ? b : { ...b };
  const eb: NDArray =
    r === 3 && b.shape.length === 3
      ? { ...bb, shape: [batch, K, N], strides: [0, bb.strides[1]!, bb.strides[2]!] }
      : bb;
  const out = forced.allocate(batch * M * N, 'float32');
  kernel(a, eb, out);
  const got = (await forced.read(viewOf(out, [batch * M * N]))) as Float32Array;
  const av = (await forced.read(a)) as Float32Array;
  const bv = (await forced.read(b)) as Float32Array; // row-major values of b's view, [.., K, N]
  let worst = 0;
  for (let t = 0; t < batch; t++)
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let s = 0;
        let bound = 0;
        for (let k = 0; k < K; k++) {
          const p = av[t * M * K + i * K + k]! * bv[k * N + j]!;
          s += p;
          bound += Math.abs(p);
        }
        const err = Math.abs(got[t * M * N + i * N + j]! - s) / (K * 2 ** -24 * bound + 1e-30);
        worst = Math.max(worst, err);
      }
  emit({ event: 'accuracy', case: c.name, worstOfBound: worst, within: worst <= 1 });
  for (const x of [a, b0]) forced.free(x);
  forced.deallocate(out);
}
forced.dispose();

// 2. speed: float16 on tensor cores ('auto') against float32 in one process
const be = await createWebGpuBackend({ dawnFlags: flags, maxPooledBytes: 2 ** 31 });
const k16 = kernelOf(be);
for (const n of sizes) {
  const [a16, b16] = [half(be, [n, n]), half(be, [n, n])];
  const [a32, b32] = [be.cast(a16, 'float32'), be.cast(b16, 'float32')];
  const out = be.allocate(n * n, 'float32');
  const reps = n <= 2048 ? 20 : n <= 4096 ? 10 : 4;
  const time = async (f16: boolean): Promise<number> => {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) {
      if (f16) k16(a16, b16, out);
      else be.free(be.matmul(a32, b32));
    }
    await be.synchronize();
    return (performance.now() - t0) / reps;
  };
  for (let w = 0; w < 3; w++) await Promise.all([time(true), time(false)]);
  const t = { f16: [] as number[], f32: [] as number[] };
  for (let i = 0; i < trials; i++) {
    t.f16.push(await time(true));
    t.f32.push(await time(false));
  }
  const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
  const [m16, m32] = [med(t.f16), med(t.f32)];
  const tf = (ms: number): number => (2 * n ** 3) / ms / 1e9;
  emit({ event: 'speed', size: n, f16Ms: m16, f16Tflops: tf(m16), f32Ms: m32, f32Tflops: tf(m32), ratio: m32 / m16 });
  for (const x of [a16, b16, a32, b32]) be.free(x);
  be.deallocate(out);
}
be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
