/**
 * Probe: int8 GEMM on WebGPU, C[M,N] (int32) = A[M,K] (int8) · B[K,N] (int8), on raw Dawn devices, before
 * the kernels move into @polyhal/backend-webgpu. Three kernels:
 *  - `sgm-direct`: subgroup matrices (`chromium_experimental_subgroup_matrix`, i8×i8→i32 at M16×N16×K32);
 *    a workgroup of 4 subgroups computes a 128×128 tile, each subgroup 64×64 as 4×4 result matrices,
 *    loading its operands straight from the storage buffers;
 *  - `sgm-shared`: the same, with each 64-deep slab of A and B staged in workgroup memory first;
 *  - `dot4`: no subgroup matrices: `dot4I8Packed` (core WGSL), 256 invocations computing a 64×64 tile,
 *    4×4 outputs each, A and Bᵀ slabs in workgroup memory.
 * A is row-major with 4 int8 packed per u32; B is row-major for the subgroup-matrix kernels and
 * transposed ([N, K], packed along K) for dot4. Correctness is checked exactly against a host GEMM at
 * 256×256×256 (and 128×256×384); then TOPS = 2·M·N·K / time at each size, time
 * from the first of R queued dispatches to onSubmittedWorkDone. PolyHAL's float32 matmul on the same
 * GPU is `benches/probes/webgpu-matmul.ts`.
 *   node webgpu-int8-probe.mjs [--sizes 4096,8192] [--reps 10] [--kernels sgm-direct,sgm-shared,dot4]
 */
import { mulberry32 } from '@polyhal/hal';
import { openProbeDevice, readInt32, SGM_PROBE_HEADER } from './dawn-probe.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '4096,8192').split(',').map(Number);
const reps = Number(arg('reps', '10'));
const kernels = arg('kernels', 'sgm,dot4').split(',');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const { adapter, device, hasSgm } = await openProbeDevice(arg('toggles', 'allow_unsafe_apis'));
const configs = (
  (adapter.info as unknown as { subgroupMatrixConfigs?: Record<string, unknown>[] }).subgroupMatrixConfigs ?? []
).map((c) => `${c['componentType']}→${c['resultComponentType']} ${c['M']}×${c['N']}×${c['K']}`);
console.log(
  `adapter: ${adapter.info.vendor} ${adapter.info.description}; subgroup matrix: ${hasSgm} ${configs.join(', ')}`,
);

const HEADER = `
struct Dims { m: u32, n: u32, k: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@group(0) @binding(3) var<uniform> dims: Dims;
`;

/**
 * Subgroup-matrix kernel, fully unrolled (WGSL has no unroll hint, and an array of subgroup matrices
 * indexed in a loop may live in local memory): 4 subgroups in a 2×2 grid, each computing (16·FM)×(16·FN)
 * as FM×FN result matrices; with `shared`, each KT-deep slab of A and B goes through workgroup memory.
 */
function sgmKernel(FM: number, FN: number, shared: boolean, KT = 64, bt = false): string {
  const TM = 32 * FM; // workgroup tile rows (2 subgroups of 16·FM)
  const TN = 32 * FN;
  const lines: string[] = [];
  const acc = (i: number, j: number) => `acc${i}_${j}`;
  for (let i = 0; i < FM; i++) for (let j = 0; j < FN; j++) lines.push(`  var ${acc(i, j)} = C();`);
  const step = (
    src: string,
    aOff: (i: number) => string,
    aStride: string,
    bOff: (j: number) => string,
    bStride: string,
    pad: string,
  ) => {
    for (let i = 0; i < FM; i++)
      lines.push(
        `${pad}let l${i} = subgroupMatrixLoad<L>(&${src === 'g' ? 'a' : 'sa'}, ${aOff(i)}, false, ${aStride});`,
      );
    for (let j = 0; j < FN; j++)
      lines.push(
        `${pad}let r${j} = subgroupMatrixLoad<R>(&${src === 'g' ? 'b' : 'sb'}, ${bOff(j)}, ${bt}, ${bStride});`,
      );
    for (let i = 0; i < FM; i++)
      for (let j = 0; j < FN; j++)
        lines.push(`${pad}${acc(i, j)} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${acc(i, j)});`);
  };
  if (!shared) {
    lines.push('  for (var k = 0u; k < dims.k; k += 32u) {');
    if (bt)
      step(
        'g',
        (i) => `(row0 + ${16 * i}u) * dims.k + k`,
        'dims.k',
        (j) => `(col0 + ${16 * j}u) * dims.k + k`,
        'dims.k',
        '    ',
      );
    else
      step(
        'g',
        (i) => `(row0 + ${16 * i}u) * dims.k + k`,
        'dims.k',
        (j) => `k * dims.n + col0 + ${16 * j}u`,
        'dims.n',
        '    ',
      );
    lines.push('  }');
  } else {
    const aWords = (TM * KT) / 4;
    const bWords = (KT * TN) / 4;
    lines.push(`  for (var k = 0u; k < dims.k; k += ${KT}u) {`);
    lines.push(
      `    for (var w = t; w < ${aWords}u; w += 128u) { ` +
        `sa[w] = a[(wg.y * ${TM}u + w / ${KT / 4}u) * kw + k / 4u + w % ${KT / 4}u]; }`,
    );
    if (bt)
      lines.push(
        `    for (var w = t; w < ${bWords}u; w += 128u) { ` +
          `sb[w] = b[(wg.x * ${TN}u + w / ${KT / 4}u) * kw + k / 4u + w % ${KT / 4}u]; }`,
      );
    else
      lines.push(
        `    for (var w = t; w < ${bWords}u; w += 128u) { ` +
          `sb[w] = b[(k + w / ${TN / 4}u) * nw + wg.x * ${TN / 4}u + w % ${TN / 4}u]; }`,
      );
    lines.push('    workgroupBarrier();');
    for (let kk = 0; kk < KT; kk += 32) {
      lines.push('    {');
      if (bt)
        step(
          's',
          (i) => `(lr0 + ${16 * i}u) * ${KT}u + ${kk}u`,
          `${KT}u`,
          (j) => `(lc0 + ${16 * j}u) * ${KT}u + ${kk}u`,
          `${KT}u`,
          '      ',
        );
      else
        step(
          's',
          (i) => `(lr0 + ${16 * i}u) * ${KT}u + ${kk}u`,
          `${KT}u`,
          (j) => `${kk * TN}u + lc0 + ${16 * j}u`,
          `${TN}u`,
          '      ',
        );
      lines.push('    }');
    }
    lines.push('    workgroupBarrier();');
    lines.push('  }');
  }
  for (let i = 0; i < FM; i++)
    for (let j = 0; j < FN; j++)
      lines.push(
        `  subgroupMatrixStore(&c, (row0 + ${16 * i}u) * dims.n + col0 + ${16 * j}u, ${acc(i, j)}, false, dims.n);`,
      );
  return `enable chromium_experimental_subgroup_matrix;
${HEADER}
alias L = subgroup_matrix_left<i8, 32, 16>;
alias R = subgroup_matrix_right<i8, 16, 32>;
alias C = subgroup_matrix_result<i32, 16, 16>;
${shared ? `var<workgroup> sa: array<i32, ${(TM * KT) / 4}>;\nvar<workgroup> sb: array<i32, ${(KT * TN) / 4}>;` : ''}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(subgroup_id) sg: u32,
        @builtin(local_invocation_index) t: u32) {
  let lr0 = (sg >> 1u) * ${16 * FM}u;
  let lc0 = (sg & 1u) * ${16 * FN}u;
  let row0 = wg.y * ${TM}u + lr0;
  let col0 = wg.x * ${TN}u + lc0;
  let kw = dims.k / 4u;
  let nw = dims.n / 4u;
${lines.join('\n')}
}`;
}

/**
 * One subgroup per workgroup (32 invocations): the workgroup tile is the subgroup's (16·FM)×(16·FN), B is
 * transposed, slabs of 64 along K are staged in workgroup memory with vec4 loads, and every
 * subgroup-matrix load reads a compile-time offset of a fixed-size workgroup array.
 */
function sgmSingle(FM: number, FN: number): string {
  const [TM, TN, KT] = [16 * FM, 16 * FN, 64];
  const lines: string[] = [];
  const acc = (i: number, j: number) => `acc${i}_${j}`;
  for (let i = 0; i < FM; i++) for (let j = 0; j < FN; j++) lines.push(`  var ${acc(i, j)} = C();`);
  lines.push(`  for (var k = 0u; k < dims.k; k += ${KT}u) {`);
  // (TM + TN) rows × 16 words = vec4s: TM·4 + TN·4
  for (const [dst, src, T, g] of [
    ['sa', 'a', TM, 'wg.y'],
    ['sb', 'b', TN, 'wg.x'],
  ] as const)
    lines.push(
      `    for (var v = t; v < ${T * 4}u; v += 32u) { ` +
        `let q = ${src}[(${g} * ${T}u + v / 4u) * kv + k / 16u + v % 4u]; ` +
        `${dst}[4u * v] = q.x; ${dst}[4u * v + 1u] = q.y; ${dst}[4u * v + 2u] = q.z; ${dst}[4u * v + 3u] = q.w; }`,
    );
  lines.push('    workgroupBarrier();');
  for (let kk = 0; kk < KT; kk += 32) {
    lines.push('    {');
    for (let i = 0; i < FM; i++)
      lines.push(`      let l${i} = subgroupMatrixLoad<LM>(&sa, ${16 * i * KT + kk}u, false, ${KT}u);`);
    for (let j = 0; j < FN; j++)
      lines.push(`      let r${j} = subgroupMatrixLoad<RM>(&sb, ${16 * j * KT + kk}u, true, ${KT}u);`);
    for (let i = 0; i < FM; i++)
      for (let j = 0; j < FN; j++)
        lines.push(`      ${acc(i, j)} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${acc(i, j)});`);
    lines.push('    }');
  }
  lines.push('    workgroupBarrier();');
  lines.push('  }');
  for (let i = 0; i < FM; i++)
    for (let j = 0; j < FN; j++)
      lines.push(
        `  subgroupMatrixStore(&c, (wg.y * ${TM}u + ${16 * i}u) * dims.n + wg.x * ${TN}u + ${16 * j}u, ` +
          `${acc(i, j)}, false, dims.n);`,
      );
  return `${SGM_PROBE_HEADER}var<workgroup> sa: array<i32, ${TM * 16}>;
var<workgroup> sb: array<i32, ${TN * 16}>;
@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let kv = dims.k / 16u;
${lines.join('\n')}
}`;
}

/** dot4I8Packed: 16×16 invocations, a 64×64 tile, 4×4 outputs each; K slabs of 64 (16 words). */
const DOT4 = `${HEADER}
var<workgroup> sa: array<u32, 1024>;
var<workgroup> sb: array<u32, 1024>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let kw = dims.k / 4u;
  var acc: array<array<i32, 4>, 4>;
  for (var kb = 0u; kb < kw; kb += 16u) {
    for (var e = 0u; e < 4u; e++) {
      let w = e * 256u + t;
      sa[w] = u32(a[(wg.y * 64u + w / 16u) * kw + kb + w % 16u]);
      sb[w] = u32(b[(wg.x * 64u + w / 16u) * kw + kb + w % 16u]);
    }
    workgroupBarrier();
    for (var q = 0u; q < 16u; q++) {
      var av: array<u32, 4>;
      var bv: array<u32, 4>;
      for (var i = 0u; i < 4u; i++) {
        av[i] = sa[(l.y + i * 16u) * 16u + q];
        bv[i] = sb[(l.x + i * 16u) * 16u + q];
      }
      for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) { acc[i][j] += dot4I8Packed(av[i], bv[j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      c[(wg.y * 64u + l.y + i * 16u) * dims.n + wg.x * 64u + l.x + j * 16u] = acc[i][j];
    }
  }
}`;

type Kernel = { name: string; code: string; tileM: number; tileN: number; transposedB: boolean };
const KERNELS: Kernel[] = [
  { name: 'sgm-bt-direct-4x4', code: sgmKernel(4, 4, false, 64, true), tileM: 128, tileN: 128, transposedB: true },
  { name: 'sgm-bt-shared-4x4', code: sgmKernel(4, 4, true, 64, true), tileM: 128, tileN: 128, transposedB: true },
  { name: 'sgm-bt-shared-4x2', code: sgmKernel(4, 2, true, 64, true), tileM: 128, tileN: 64, transposedB: true },
  { name: 'sgm-bt-shared-2x4', code: sgmKernel(2, 4, true, 64, true), tileM: 64, tileN: 128, transposedB: true },
  { name: 'sgm-bt-shared-4x4-k128', code: sgmKernel(4, 4, true, 128, true), tileM: 128, tileN: 128, transposedB: true },
  { name: 'sgm-single-4x4', code: sgmSingle(4, 4), tileM: 64, tileN: 64, transposedB: true },
  { name: 'sgm-single-4x2', code: sgmSingle(4, 2), tileM: 64, tileN: 32, transposedB: true },
  { name: 'sgm-single-2x4', code: sgmSingle(2, 4), tileM: 32, tileN: 64, transposedB: true },
  { name: 'sgm-single-8x4', code: sgmSingle(8, 4), tileM: 128, tileN: 64, transposedB: true },
  { name: 'sgm-direct-2x2', code: sgmKernel(2, 2, false), tileM: 64, tileN: 64, transposedB: false },
  { name: 'sgm-direct-4x4', code: sgmKernel(4, 4, false), tileM: 128, tileN: 128, transposedB: false },
  { name: 'sgm-shared-4x4', code: sgmKernel(4, 4, true), tileM: 128, tileN: 128, transposedB: false },
  { name: 'sgm-shared-4x2', code: sgmKernel(4, 2, true), tileM: 128, tileN: 64, transposedB: false },
  { name: 'sgm-shared-4x4-k128', code: sgmKernel(4, 4, true, 128), tileM: 128, tileN: 128, transposedB: false },
  { name: 'dot4', code: DOT4, tileM: 64, tileN: 64, transposedB: true },
].filter((k) => kernels.some((x) => k.name.startsWith(x)) && (hasSgm || !k.name.startsWith('sgm')));

async function pipeline(k: Kernel): Promise<GPUComputePipeline | string> {
  const module = device.createShaderModule({ code: k.code });
  const info = await module.getCompilationInfo();
  for (const m of info.messages) console.log(`  [${k.name}] ${m.type} ${m.lineNum}:${m.linePos} ${m.message}`);
  device.pushErrorScope('validation');
  const p = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const err = await device.popErrorScope();
  return err ? err.message : p;
}

const pack = (x: Int8Array): Int32Array => new Int32Array(x.buffer, x.byteOffset, x.length / 4);
function buffers(m: number, n: number, k: number, A: Int8Array, B: Int8Array) {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const make = (data: ArrayBufferView | number, u = usage) => {
    const size = typeof data === 'number' ? data : data.byteLength;
    const buf = device.createBuffer({ size, usage: u });
    if (typeof data !== 'number') device.queue.writeBuffer(buf, 0, data as unknown as ArrayBuffer);
    return buf;
  };
  return {
    a: make(pack(A)),
    b: make(pack(B)),
    c: make(m * n * 4),
    dims: make(new Uint32Array([m, n, k, 0]), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST),
  };
}

function encode(p: GPUComputePipeline, k: Kernel, bufs: ReturnType<typeof buffers>, m: number, n: number): void {
  const bind = device.createBindGroup({
    layout: p.getBindGroupLayout(0),
    entries: [bufs.a, bufs.b, bufs.c, bufs.dims].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(n / k.tileN, m / k.tileM);
  pass.end();
  device.queue.submit([enc.finish()]);
}

function operands(m: number, n: number, k: number, transposedB: boolean, seed: number) {
  const rng = mulberry32(seed);
  const bytes = (count: number): Int8Array =>
    new Int8Array(Uint32Array.from({ length: count / 4 }, () => (rng() * 2 ** 32) >>> 0).buffer);
  const A = bytes(m * k);
  const B = bytes(k * n);
  const Bt = new Int8Array(k * n);
  for (let r = 0; r < k; r++) for (let col = 0; col < n; col++) Bt[col * k + r] = B[r * n + col]!;
  return { A, B, upload: transposedB ? Bt : B };
}

const results: Record<string, unknown>[] = [];
for (const k of KERNELS) {
  const p = await pipeline(k);
  if (typeof p === 'string') {
    console.log(`${k.name}: pipeline failed: ${p}`);
    results.push({ kernel: k.name, error: p });
    continue;
  }
  for (const [m, n, kk] of [
    [256, 256, 256],
    [128, 256, 384],
  ] as const) {
    if (m % k.tileM || n % k.tileN) continue;
    const { A, B, upload } = operands(m, n, kk, k.transposedB, 7);
    const bufs = buffers(m, n, kk, A, upload);
    encode(p, k, bufs, m, n);
    const got = await readInt32(device, bufs.c, m * n);
    let bad = 0;
    for (let i = 0; i < m && bad < 3; i++)
      for (let j = 0; j < n && bad < 3; j++) {
        let s = 0;
        for (let q = 0; q < kk; q++) s += A[i * kk + q]! * B[q * n + j]!;
        if (got[i * n + j] !== s) {
          bad++;
          console.log(`  ${k.name} ${m}×${n}×${kk} C[${i},${j}] = ${got[i * n + j]}, expected ${s}`);
        }
      }
    console.log(`${k.name} ${m}×${n}×${kk}: ${bad ? 'WRONG' : 'exact'}`);
    results.push({ kernel: k.name, check: `${m}x${n}x${kk}`, exact: !bad });
    for (const x of Object.values(bufs)) x.destroy();
  }
  for (const s of sizes) {
    const { upload, A } = operands(s, s, s, k.transposedB, s);
    const bufs = buffers(s, s, s, A, upload);
    const times: number[] = [];
    for (let trial = 0; trial < 8; trial++) {
      await device.queue.onSubmittedWorkDone();
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) encode(p, k, bufs, s, s);
      await device.queue.onSubmittedWorkDone();
      if (trial > 0) times.push((performance.now() - t0) / reps);
    }
    const ms = median(times);
    const tops = (2 * s ** 3) / (ms * 1e9);
    console.log(`${k.name} ${s}: ${tops.toFixed(1)} TOPS (${ms.toFixed(3)} ms)`);
    results.push({ kernel: k.name, size: s, ms, tops });
    for (const x of Object.values(bufs)) x.destroy();
  }
}

const out = arg('json', '');
if (out) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(out, JSON.stringify({ adapter: adapter.info.description, configs, results }, null, 2));
}
process.exit(0);
