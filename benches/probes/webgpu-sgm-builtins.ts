/**
 * The tensor-core kernels (kernels/subgroup-matrix-gemm.ts) in the two forms of the subgroup-matrix builtins
 * (option `subgroupMatrixBuiltins`: 'legacy', majorness a runtime argument and slabs of the fragments' type;
 * 'vector', majorness a template parameter and slabs of vec4 words), two backends on one GPU in one process:
 *  1. agreement: float16 products (uniform in [−1, 1], rounded to float16) at odd, batched and tile-multiple
 *     shapes into float32, the two forms' results compared bit for bit (same products, same order) and each
 *     against a float64 oracle as a fraction of the float32 accumulation bound K·2^-24·Σ|a||b|; int8 products
 *     through matmulInteger against the float32 product of the same values (exact below 2^24);
 *  2. speed: float16 N³ and ViT-S-shaped products, and int8 N³, the two forms alternating trial by trial; ms from
 *     the first of `reps` queued products to a synchronize, median of the trials.
 *   node webgpu-sgm-builtins.mjs [--sizes 4096,8192] [--trials 7] [--json FILE]
 * Needs Dawn on NVIDIA with `allow_unsafe_apis,vulkan_enable_f16_on_nvidia` (robustness off: the large tiles).
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type ComputeBackend, type DeviceBuffer, mulberry32, type NDArray, viewOf } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '4096,8192').split(',').map(Number);
const trials = Number(arg('trials', '7'));
const flags = ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'];
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  rows.push(row);
  console.log(JSON.stringify(row));
};
const FORMS = ['legacy', 'vector'] as const;
const backends: ComputeBackend[] = [];
for (const f of FORMS)
  backends.push(
    await createWebGpuBackend({
      dawnFlags: flags,
      subgroupMatrixBuiltins: f,
      float16Matmul: 'subgroup-matrix',
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
const size = (s: number[]): number => s.reduce((p, d) => p * d, 1);

// 1. agreement
const CASES: [number[], number[]][] = [
  [
    [17, 9],
    [9, 33],
  ],
  [
    [130, 45],
    [45, 70],
  ],
  [
    [256, 256],
    [256, 256],
  ],
  [
    [3, 65, 40],
    [3, 40, 33],
  ],
  [
    [64, 1000],
    [1000, 48],
  ],
  [
    [320, 96],
    [96, 256],
  ],
  [
    [512, 384],
    [384, 1536],
  ],
];
for (const [sa, sb] of CASES) {
  const [M, K, N] = [sa.at(-2)!, sa.at(-1)!, sb.at(-1)!];
  const batch = size(sa.slice(0, -2));
  const [av, bv] = [values(size(sa), 1), values(size(sb), 2)];
  const got: Float32Array[] = [];
  let worst = 0;
  for (const be of backends) {
    const [a, b] = [be.fromArray(av, sa, 'float16'), be.fromArray(bv, sb, 'float16')];
    const out = be.allocate(batch * M * N, 'float32');
    kernelOf(be)(a, b, out);
    const r = (await be.read(viewOf(out, [batch * M * N]))) as Float32Array;
    got.push(r);
    const [ah, bh] = [(await be.read(a)) as Float32Array, (await be.read(b)) as Float32Array];
    for (let t = 0; t < batch; t++)
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++) {
          let [s, bound] = [0, 0];
          for (let k = 0; k < K; k++) {
            const p = ah[t * M * K + i * K + k]! * bh[t * K * N + k * N + j]!;
            s += p;
            bound += Math.abs(p);
          }
          worst = Math.max(worst, Math.abs(r[t * M * N + i * N + j]! - s) / (K * 2 ** -24 * bound + 1e-30));
        }
    be.free(a);
    be.free(b);
    be.deallocate(out);
  }
  const differ = got[0]!.reduce((n, x, i) => n + (Object.is(x, got[1]![i]) ? 0 : 1), 0);
  emit({ event: 'float16 agreement', a: sa, b: sb, differ, worstOfBound: worst, within: worst <= 1 });
}
for (const [m, k, n] of [
  [512, 512, 512],
  [200, 300, 70],
  [1984, 300, 2100],
]) {
  const gen = (len: number, seed: number) =>
    Int32Array.from({ length: len }, (_, i) => (((i + seed) * 2654435761) >>> 24) - 128);
  for (const [f, be] of backends.entries()) {
    const [a, b] = [be.fromArray(gen(m! * k!, 1), [m!, k!], 'int8'), be.fromArray(gen(k! * n!, 7), [k!, n!], 'int8')];
    const got = await be.read(be.matmulInteger(a, b));
    const want = await be.read(be.cast(be.matmul(be.cast(a, 'float32'), be.cast(b, 'float32')), 'int32'));
    let wrong = 0;
    for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) wrong++;
    emit({ event: 'int8 exactness', form: FORMS[f], m, k, n, wrong });
  }
}

// 2. speed, the two forms alternating
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
async function race(what: string, shapes: [number[], number[]], dtype: 'float16' | 'int8'): Promise<void> {
  const [sa, sb] = shapes;
  const [M, K, N] = [sa[0]!, sa[1]!, sb[1]!];
  const flops = 2 * M * N * K;
  const reps = Math.max(4, Math.min(50, Math.round(2e12 / flops)));
  const runs = backends.map((be) => {
    const src = (s: number[], seed: number): Float32Array | Int32Array =>
      dtype === 'float16' ? values(size(s), seed) : Int32Array.from(values(size(s), seed), (x) => Math.round(127 * x));
    const [a, b] = [be.fromArray(src(sa, 3), sa, dtype), be.fromArray(src(sb, 4), sb, dtype)];
    const out = be.allocate(M * N, dtype === 'float16' ? 'float32' : 'int32');
    const k = kernelOf(be);
    const once = (): void => {
      if (dtype === 'float16') k(a, b, out);
      else be.free(be.matmulInteger(a, b));
    };
    return { be, once, a, b, out };
  });
  const time = async (r: (typeof runs)[number]): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) r.once();
    await r.be.synchronize();
    return (performance.now() - t0) / reps;
  };
  for (let w = 0; w < 3; w++) for (const r of runs) await time(r);
  const t: number[][] = runs.map(() => []);
  for (let i = 0; i < trials; i++) for (const [j, r] of runs.entries()) t[j]!.push(await time(r));
  const [legacy, vector] = t.map(med) as [number, number];
  const rate = (ms: number): number => flops / ms / 1e9;
  emit({
    event: 'speed',
    what,
    dtype,
    M,
    K,
    N,
    legacyMs: legacy,
    vectorMs: vector,
    legacyRate: rate(legacy),
    vectorRate: rate(vector),
    legacyOverVector: legacy / vector,
  });
  for (const r of runs) {
    r.be.free(r.a);
    r.be.free(r.b);
    r.be.deallocate(r.out);
  }
}
for (const n of sizes)
  await race(
    `float16 ${n}³`,
    [
      [n, n],
      [n, n],
    ],
    'float16',
  );
await race(
  'float16 ViT-S qkv-like',
  [
    [12608, 384],
    [384, 1152],
  ],
  'float16',
);
await race(
  'float16 ViT-S fc1',
  [
    [12608, 384],
    [384, 1536],
  ],
  'float16',
);
await race(
  'float16 ViT-S fc2',
  [
    [12608, 1536],
    [1536, 384],
  ],
  'float16',
);
for (const n of sizes)
  await race(
    `int8 ${n}³`,
    [
      [n, n],
      [n, n],
    ],
    'int8',
  );
for (const be of backends) be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
