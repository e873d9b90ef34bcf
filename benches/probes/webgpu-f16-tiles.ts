/**
 * float16 products on tensor cores per tile (backend option float16MatmulTile: large 128×128, medium 64×128,
 * small 64×64) at the ViT-S-like step's shapes (12,608 tokens of width 384, MLP 1,536: the linear layers' forward
 * [T, 384]·[384, N], input gradients [T, N]·[N, 384], weight gradients [384, T]·[T, N] with K = 12,608) and at
 * 4096³, beside PolyHAL's float32 matmul of the same shape in the same process: TFLOP/s = 2·M·N·K / time, the
 * median of trials of `reps` queued products to a synchronize; and per shape the largest difference between the
 * tiles' float32 results (they sum in the same order per 16×16×16 step: 0 expected).
 * `--tiles` names the tiles to time (each on a device of its own; one per process keeps the others' devices out).
 *   node webgpu-f16-tiles.mjs [--shapes 12608x384x384,...] [--tiles large,medium,small] [--trials 7] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type ComputeBackend, type DeviceBuffer, mulberry32, type NDArray } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const shapes = arg('shapes', '12608x384x384,12608x384x1536,12608x1536x384,384x12608x384,384x12608x1536,4096x4096x4096')
  .split(',')
  .map((s) => s.split('x').map(Number) as [number, number, number]);
const trials = Number(arg('trials', '7'));
const flags = ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'];
const TILES = arg('tiles', 'large,medium,small').split(',') as ('large' | 'medium' | 'small')[];
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  rows.push(row);
  console.log(JSON.stringify(row));
};

type Kernel = (a: NDArray, b: NDArray, out: DeviceBuffer) => void;
const kernelOf = (be: ComputeBackend): Kernel =>
  (be as unknown as { matmulKernel: Kernel }).matmulKernel.bind(be) as Kernel;
const bes = await Promise.all(
  TILES.map((t) => createWebGpuBackend({ dawnFlags: flags, float16MatmulTile: t, float16Matmul: 'subgroup-matrix' })),
);
emit({ event: 'device', deviceName: bes[0]!.deviceName });
const rand = mulberry32(7);
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;

for (const [M, K, N] of shapes) {
  const a = Float32Array.from({ length: M * K }, () => 2 * rand() - 1);
  const b = Float32Array.from({ length: K * N }, () => 2 * rand() - 1);
  const flops = 2 * M * N * K;
  const reps = Math.max(3, Math.min(50, Math.round(2e11 / flops)));
  const results: Float32Array[] = [];
  const row: Record<string, unknown> = { event: 'speed', shape: `${M}x${K}x${N}`, reps };
  for (const [i, be] of bes.entries()) {
    const [a16, b16] = [be.fromArray(a, [M, K], 'float16'), be.fromArray(b, [K, N], 'float16')];
    const out = be.allocate(M * N, 'float32');
    const k16 = kernelOf(be);
    const time = async (f16: boolean, a32?: NDArray, b32?: NDArray): Promise<number> => {
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) {
        if (f16) k16(a16, b16, out);
        else be.free(be.matmul(a32!, b32!));
      }
      await be.synchronize();
      return (performance.now() - t0) / reps;
    };
    const withF32 = i === 0; // float32 on the first tile's device
    const [a32, b32] = withF32 ? [be.cast(a16, 'float32'), be.cast(b16, 'float32')] : [undefined, undefined];
    for (let w = 0; w < 2; w++) await time(true);
    if (withF32) for (let w = 0; w < 2; w++) await time(false, a32, b32);
    const t16: number[] = [];
    const t32: number[] = [];
    for (let j = 0; j < trials; j++) {
      t16.push(await time(true));
      if (withF32) t32.push(await time(false, a32, b32));
    }
    const ms = med(t16);
    row[`${TILES[i]}Ms`] = +ms.toFixed(4);
    row[`${TILES[i]}Tflops`] = +(flops / ms / 1e9).toFixed(1);
    if (withF32) {
      row.f32Ms = +med(t32).toFixed(4);
      row.f32Tflops = +(flops / med(t32) / 1e9).toFixed(1);
      be.free(a32!);
      be.free(b32!);
    }
    results.push(
      (await be.read({ buffer: out, shape: [M * N], strides: [1], offset: 0, dtype: 'float32' })) as Float32Array,
    );
    for (const x of [a16, b16]) be.free(x);
    be.deallocate(out);
  }
  let diff = 0;
  for (let i = 1; i < results.length; i++)
    for (let j = 0; j < results[0]!.length; j++) diff = Math.max(diff, Math.abs(results[i]![j]! - results[0]![j]!));
  row.maxTileDiff = diff;
  emit(row);
}
for (const be of bes) be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
