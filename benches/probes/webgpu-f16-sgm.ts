/**
 * Probe: float16 GEMM on tensor cores from WGSL (subgroup matrices, f16×f16→f32) in the structure of PolyHAL's
 * int8 kernel (backends/webgpu/src/kernels/matmul-subgroup-matrix.ts): four subgroups in a 2×2 grid per
 * workgroup, 32-deep slabs of A and Bᵀ staged in workgroup memory with rows padded from 64 to 80 bytes, the next
 * slab prefetched into registers, workgroups walking groups of 8 tile rows. C [M, N] (float32) = A [M, K] ·
 * Bᵀ [N, K]ᵀ, both operands float16 with K contiguous, M, N multiples of the tile and K of 32.
 *
 * One variant per process, so that a hang or an abort ends only that run (run it under `timeout`):
 *   node webgpu-f16-sgm.mjs --variant f4x4-m16n16k16 [--sizes 256,1024,4096,8192] [--robust on|off]
 *     [--reps 10] [--json FILE]
 * `f{FM}x{FN}`: result matrices per subgroup; `m{M}n{N}k{K}`: the adapter's configuration used (16×16×16,
 * 16×8×16 or 16×8×8 on NVIDIA). Every run checks exactness first (256³ and 128×256×384: small integers, exact in
 * float32), then each size: the first dispatch under a watchdog (a dispatch that has not completed after
 * `--watchdog-ms` is reported as hung and the process exits 3), then TFLOP/s = 2·M·N·K / time, the median of 7
 * trials of `reps` queued dispatches after ~300 ms of untimed ones. `-kt{KT}`: the slab depth (default 32 halves);
 * `-db`: two slab buffers, one barrier per slab. `-tpl`: the builtins' templated form (majorness a template
 * parameter); `-vec`: that form on slabs of vec4<u32> (one workgroup store per loaded vec4), with `-db` too;
 * `-w8`: eight subgroups in a 2×4 grid (a workgroup of 256 invocations, a tile twice as wide).
 */
import { appendFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const variant = arg('variant', 'f4x4-m16n16k16');
const parsed = /^f(\d)x(\d)-m(\d+)n(\d+)k(\d+)(?:-kt(\d+))?(-db)?(-tpl|-vec)?(-w8)?$/.exec(variant);
if (!parsed) throw new Error(`bad --variant ${variant} (e.g. f4x4-m16n16k16, f4x4-m16n8k16-kt64)`);
const [FM, FN, SM, SN, SK] = parsed.slice(1, 6).map(Number) as [number, number, number, number, number];
const KT = Number(parsed[6] ?? 32); // slab depth along K (halves)
// `-db`: two slab buffers in workgroup memory, one barrier per slab (the next slab is stored while this one is used)
const DB = parsed[7] === '-db';
// `-tpl`: the builtins' templated form (majorness a template parameter: subgroupMatrixLoad<T, row_major>(p, o, s));
// `-vec`: that form on slabs of vec4<u32> (one store per register, offsets and strides in vec4s)
const FORM = (parsed[8] ?? '').slice(1) as '' | 'tpl' | 'vec';
if (DB && FORM === 'tpl') throw new Error('-db takes the legacy or the vector form');
// `-w8`: eight subgroups in a 2×4 grid (a workgroup of 256, the tile twice as wide), else four in a 2×2 grid
const GX = parsed[9] === '-w8' ? 4 : 2;
const WG = 64 * GX;
const robust = arg('robust', 'on') === 'on';
const sizes = arg('sizes', '256,1024,2048,4096,8192').split(',').map(Number);
const reps = Number(arg('reps', '10'));
const watchdogMs = Number(arg('watchdog-ms', '20000'));
const jsonFile = arg('json', '');
const emit = (row: Record<string, unknown>): void => {
  const line = JSON.stringify({ variant, robust, ...row });
  console.log(line);
  if (jsonFile) appendFileSync(jsonFile, `${line}\n`);
};

const ROWH = KT + 8; // slab row stride in halves: 80 bytes (16 of padding against bank conflicts)
const VR = KT / 8; // vec4<u32> (8 halves) per slab row
const [ROWS, COLS] = [2 * SM * FM, GX * SN * FN]; // the workgroup tile

/** The workgroup slab of `rows` rows: f16 (two of them with `-db`), or vec4<u32> with `-vec`. */
const slab = (rows: number): string =>
  FORM === 'vec'
    ? DB
      ? `array<array<vec4<u32>, ${(rows * ROWH) / 8}>, 2>`
      : `array<vec4<u32>, ${(rows * ROWH) / 8}>`
    : DB
      ? `array<array<f16, ${rows * ROWH}>, 2>`
      : `array<f16, ${rows * ROWH}>`;

function wgsl(): string {
  const [va, vb] = [(ROWS * VR) / WG, (COLS * VR) / WG];
  const L: string[] = [];
  const acc = (i: number, j: number): string => `acc${i}_${j}`;
  for (let i = 0; i < FM; i++) for (let j = 0; j < FN; j++) L.push(`  var ${acc(i, j)}: CM;`);
  const ops = [
    ['a', 'sa', ROWS, va, 'tm'],
    ['b', 'sb', COLS, vb, 'tn'],
  ] as const;
  for (const [src, , , v] of ops) for (let e = 0; e < v; e++) L.push(`  var ${src}${e}: vec4<u32>;`);
  const load = (k: string): void => {
    for (const [src, , T, v, g] of ops)
      for (let e = 0; e < v; e++) {
        const i = `(t + ${e * WG}u)`;
        L.push(`    ${src}${e} = ${src}[(${g} * ${T}u + ${i} / ${VR}u) * kv + ${k} / 8u + ${i} % ${VR}u];`);
      }
  };
  const stores = (buf: string): void => {
    for (const [src, dst, , v] of ops)
      for (let e = 0; e < v; e++) {
        const i = `(t + ${e * WG}u)`;
        const target = DB ? `${dst}[${buf}]` : dst;
        if (FORM === 'vec') {
          L.push(`    ${target}[(${i} / ${VR}u) * ${ROWH / 8}u + ${i} % ${VR}u] = ${src}${e};`);
          continue;
        }
        const halves = ['x', 'y', 'z', 'w']
          .map((c, w) => {
            const [lo, hi] = [`${target}[o + ${2 * w}u]`, `${target}[o + ${2 * w + 1}u]`];
            return `let h${c} = bitcast<vec2<f16>>(q.${c}); ${lo} = h${c}.x; ${hi} = h${c}.y;`;
          })
          .join(' ');
        L.push(`    { let q = ${src}${e}; let o = (${i} / ${VR}u) * ${ROWH}u + (${i} % ${VR}u) * 8u; ${halves} }`);
      }
  };
  const multiply = (buf: string): void => {
    const [pa, pb] = DB ? [`&sa[${buf}]`, `&sb[${buf}]`] : ['&sa', '&sb'];
    for (let kk = 0; kk < KT; kk += SK) {
      L.push('    {');
      const ld = (m: string, p: string, o: string, major: 'row' | 'col'): string =>
        FORM === ''
          ? `subgroupMatrixLoad<${m}>(${p}, ${o}, ${major === 'col'}, ${ROWH}u)`
          : FORM === 'tpl'
            ? `subgroupMatrixLoad<${m}, ${major}_major>(${p}, ${o}, ${ROWH}u)`
            : `subgroupMatrixLoad<${m}, ${major}_major>(${p}, (${o}) / 8u, ${ROWH / 8}u)`;
      for (let i = 0; i < FM; i++) L.push(`      let l${i} = ${ld('LM', pa, `ar + ${SM * i * ROWH + kk}u`, 'row')};`);
      for (let j = 0; j < FN; j++) L.push(`      let r${j} = ${ld('RM', pb, `br + ${SN * j * ROWH + kk}u`, 'col')};`);
      for (let i = 0; i < FM; i++)
        for (let j = 0; j < FN; j++)
          L.push(`      ${acc(i, j)} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${acc(i, j)});`);
      L.push('    }');
    }
  };
  load('0u');
  if (DB) {
    stores('0u');
    L.push('  workgroupBarrier();');
    L.push(`  for (var k = 0u; k < kp; k += ${KT}u) {`, `    let cur = (k / ${KT}u) % 2u;`);
    L.push(`    let kn = min(k + ${KT}u, kp - ${KT}u);`);
    load('kn');
    multiply('cur');
    stores('1u - cur');
    L.push('    workgroupBarrier();', '  }');
  } else {
    L.push(`  for (var k = 0u; k < kp; k += ${KT}u) {`);
    stores('');
    L.push('    workgroupBarrier();', `    let kn = min(k + ${KT}u, kp - ${KT}u);`);
    load('kn');
    multiply('');
    L.push('    workgroupBarrier();', '  }');
  }
  for (let i = 0; i < FM; i++)
    for (let j = 0; j < FN; j++)
      L.push(
        `  subgroupMatrixStore${FORM ? '<row_major>' : ''}(&c, ` +
          `(tm * ${ROWS}u + sr + ${SM * i}u) * np + tn * ${COLS}u + sc + ${SN * j}u, ` +
          `${acc(i, j)}${FORM ? '' : ', false'}, np);`,
      );
  return `enable f16;
enable chromium_experimental_subgroup_matrix;
struct Dims { m: u32, n: u32, k: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
alias LM = subgroup_matrix_left<f16, ${SK}, ${SM}>;
alias RM = subgroup_matrix_right<f16, ${SN}, ${SK}>;
alias CM = subgroup_matrix_result<f32, ${SN}, ${SM}>;
var<workgroup> sa: ${slab(ROWS)};
var<workgroup> sb: ${slab(COLS)};
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32, @builtin(subgroup_id) sg: u32) {
  let kp = dims.k;
  let kv = kp / 8u;
  let np = dims.n;
  let pid = wg.y * nwg.x + wg.x;
  let first = pid / (8u * nwg.x) * 8u;
  let gm = min(nwg.y - first, 8u);
  let tm = first + pid % (8u * nwg.x) % gm;
  let tn = pid % (8u * nwg.x) / gm;
  let sr = sg / ${GX}u * ${SM * FM}u;
  let sc = sg % ${GX}u * ${SN * FN}u;
  let ar = sr * ${ROWH}u;
  let br = sc * ${ROWH}u;
${L.join('\n')}
}`;
}

Object.assign(globalThis, globals);
const toggles = `allow_unsafe_apis,vulkan_enable_f16_on_nvidia${robust ? '' : ',disable_robustness'}`;
const gpu = create([`enable-dawn-features=${toggles}`]);
(globalThis as { keepGpu?: unknown }).keepGpu = gpu;
const adapter = (await gpu.requestAdapter({ powerPreference: 'high-performance' }))!;
const configs = (
  (adapter.info as unknown as { subgroupMatrixConfigs?: Record<string, unknown>[] }).subgroupMatrixConfigs ?? []
).map((c) => `${c.componentType}->${c.resultComponentType} ${c.M}x${c.N}x${c.K}`);
emit({ adapter: `${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}`, configs });
const device = await adapter.requestDevice({
  requiredFeatures: ['subgroups', 'chromium-experimental-subgroup-matrix', 'shader-f16'] as GPUFeatureName[],
  requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
    maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
  },
});
device.lost.then((i) => emit({ event: 'device lost', reason: i.reason, message: i.message }));
device.onuncapturederror = (e) => emit({ event: 'uncaptured', message: (e as GPUUncapturedErrorEvent).error.message });
const module = device.createShaderModule({ code: wgsl() });
const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error');
if (errors.length) {
  emit({ event: 'compile error', message: errors.map((m) => m.message).join(' | ') });
  process.exit(2);
}
const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
const U = GPUBufferUsage;
const HALF: Record<number, number> = { [-2]: 0xc000, [-1]: 0xbc00, 0: 0, 1: 0x3c00, 2: 0x4000 };

function problem(M: number, N: number, K: number) {
  const av = Int8Array.from({ length: M * K }, (_, i) => ((i * 7 + 3) % 5) - 2);
  const bv = Int8Array.from({ length: N * K }, (_, i) => ((i * 11 + 1) % 5) - 2); // Bᵀ [N, K]
  const buf = (vals: Int8Array): GPUBuffer => {
    const b = device.createBuffer({ size: vals.length * 2, usage: U.STORAGE, mappedAtCreation: true });
    const h = new Uint16Array(b.getMappedRange());
    for (let i = 0; i < vals.length; i++) h[i] = HALF[vals[i]!]!;
    b.unmap();
    return b;
  };
  const [ba, bb] = [buf(av), buf(bv)];
  const bc = device.createBuffer({ size: M * N * 4, usage: U.STORAGE | U.COPY_SRC });
  const bd = device.createBuffer({ size: 16, usage: U.UNIFORM | U.COPY_DST });
  device.queue.writeBuffer(bd, 0, new Uint32Array([M, N, K, 0]));
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [ba, bb, bc, bd].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const go = (r: number): Promise<undefined> => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    for (let i = 0; i < r; i++) pass.dispatchWorkgroups(N / COLS, M / ROWS);
    pass.end();
    device.queue.submit([enc.finish()]);
    return device.queue.onSubmittedWorkDone();
  };
  const destroy = (): void => [ba, bb, bc, bd].forEach((x) => x.destroy());
  return { av, bv, bc, go, destroy };
}

/** Resolves with the work's end, or exits the process (3) when it has not ended within the watchdog. */
async function watched(what: string, p: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<'hung'>((r) => {
    timer = setTimeout(() => r('hung'), watchdogMs);
  });
  const r = await Promise.race([p.then(() => 'done' as const), hung]);
  clearTimeout(timer);
  if (r === 'hung') {
    emit({ event: 'hung', what, watchdogMs });
    process.exit(3);
  }
}

for (const [M, N, K] of [
  [256, 256, 256],
  [128, 256, 384],
]) {
  if (M! % ROWS || N! % COLS) continue;
  const p = problem(M!, N!, K!);
  await watched(`exactness ${M}x${N}x${K}`, p.go(1));
  const staging = device.createBuffer({ size: M! * N! * 4, usage: U.MAP_READ | U.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(p.bc, 0, staging, 0, M! * N! * 4);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange());
  let wrong = 0;
  for (let i = 0; i < M!; i++)
    for (let j = 0; j < N!; j++) {
      let s = 0;
      for (let k = 0; k < K!; k++) s += p.av[i * K! + k]! * p.bv[j * K! + k]!;
      if (out[i * N! + j] !== s) wrong++;
    }
  emit({ event: 'exactness', M, N, K, wrong, of: M! * N! });
  staging.destroy();
  p.destroy();
}
for (const n of sizes) {
  if (n % ROWS || n % COLS) continue;
  const p = problem(n, n, n);
  await watched(`first dispatch ${n}`, p.go(1));
  // warm-up: ~300 ms of the same work first, so that the GPU's clocks are up before the trials
  for (const t0 = performance.now(); performance.now() - t0 < 300; ) await watched(`warm-up ${n}`, p.go(reps));
  const times: number[] = [];
  for (let t = 0; t < 7; t++) {
    const t0 = performance.now();
    await watched(`trial ${t} at ${n}`, p.go(reps));
    times.push((performance.now() - t0) / reps);
  }
  const ms = times.sort((x, y) => x - y)[3]!;
  emit({ event: 'timing', n, ms, tflops: (2 * n ** 3) / ms / 1e9 });
  p.destroy();
}
emit({ event: 'end' });
process.exit(0);
