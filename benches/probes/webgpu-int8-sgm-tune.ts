/**
 * Tuning probe for the int8 subgroup-matrix GEMM (i8×i8→i32 at 16×16×32) on raw Dawn devices:
 * C [M, N] (int32) = A [M, K] · Bᵀ [N, K] (int8, four per word, K contiguous in both).
 * Each variant is named by its parameters, e.g. `f2x4-w2x2-k64-p16-pf-sw8`:
 *  - f{FM}x{FN}: result matrices per subgroup (a (16·FM)×(16·FN) subgroup tile);
 *  - w{WM}x{WN}: subgroups per workgroup (a (16·FM·WM)×(16·FN·WN) workgroup tile);
 *  - k{KT}: slab depth along K (int8 values) staged in workgroup memory;
 *  - p{PAD}: bytes of padding per slab row (16 puts the 8 rows a tensor-core fragment reads in
 *    distinct shared-memory banks; 0 gives 4-way conflicts at a 64-byte stride);
 *  - pf: the next slab is loaded into registers while the current one is multiplied;
 *  - sw{G}: workgroups walk groups of G tile rows column by column (L2 reuse), else row by row.
 * Every variant is checked exactly against a host GEMM at 256×256×256 and 128×256×384 first;
 * TOPS = 2·N³ / time, time from the first of `reps` queued dispatches to onSubmittedWorkDone,
 * median of 7 trials after 3 untimed ones.
 *   node webgpu-int8-sgm-tune.mjs [--sizes 4096,8192] [--reps 10] [--variants v1,v2] [--toggles T] [--json F]
 */
import { mulberry32 } from '@polyhal/hal';
import { openProbeDevice, readInt32, SGM_PROBE_HEADER } from './dawn-probe.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const DEFAULT_VARIANTS = [
  'f2x4-w1x1-k64-p0',
  'f2x4-w1x1-k64-p16',
  'f2x4-w1x1-k128-p16',
  'f2x4-w1x1-k64-p16-pf',
  'f2x4-w1x1-k128-p16-pf',
  'f4x4-w1x1-k64-p16-pf',
  'f2x4-w2x1-k64-p16-pf',
  'f2x4-w2x2-k64-p16-pf',
  'f4x4-w2x2-k64-p16-pf',
  'f4x4-w2x2-k64-p0-pf',
  'f2x4-w4x2-k64-p16-pf',
  'f4x2-w2x4-k64-p16-pf',
  'f4x4-w2x2-k128-p16-pf',
  'f2x4-w1x1-k64-p16-pf-sw8',
  'f2x4-w2x2-k64-p16-pf-sw8',
  'f4x4-w2x2-k64-p16-pf-sw8',
];
const sizes = arg('sizes', '4096,8192').split(',').map(Number);
const reps = Number(arg('reps', '10'));
const variants = arg('variants', DEFAULT_VARIANTS.join(',')).split(',');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface Spec {
  FM: number;
  FN: number;
  WM: number;
  WN: number;
  KT: number;
  PAD: number;
  PF: boolean;
  SW: number;
  DB: boolean;
}

function parse(name: string): Spec {
  const m = /^f(\d)x(\d)-w(\d)x(\d)-k(\d+)-p(\d+)(-pf)?(?:-sw(\d+))?(-db)?$/.exec(name);
  if (!m) throw new Error(`bad variant ${name}`);
  const n = m.slice(1).map((x) => Number(x ?? 0));
  return {
    FM: n[0]!,
    FN: n[1]!,
    WM: n[2]!,
    WN: n[3]!,
    KT: n[4]!,
    PAD: n[5]!,
    PF: !!m[7] || !!m[9],
    SW: Number(m[8] ?? 0),
    DB: !!m[9],
  };
}

/** The WGSL of one variant (fully unrolled: WGSL has no unroll hint). */
function kernel(s: Spec): string {
  const { FM, FN, WM, WN, KT, PAD, PF, SW, DB } = s;
  const NT = 32 * WM * WN;
  const [TM, TN] = [16 * FM * WM, 16 * FN * WN];
  const RS = KT + PAD; // slab row stride, bytes (int8 elements)
  const VR = KT / 16; // vec4 per slab row
  const VA = (TM * VR) / NT; // vec4 of A per thread per slab
  const VB = (TN * VR) / NT;
  if (!Number.isInteger(VA) || !Number.isInteger(VB)) throw new Error('slab not divisible by threads');
  const L: string[] = [];
  const acc = (i: number, j: number) => `acc${i}_${j}`;
  for (let i = 0; i < FM; i++) for (let j = 0; j < FN; j++) L.push(`  var ${acc(i, j)} = C();`);
  const loads = (k: string, into: 'reg' | 'shared', par = ''): void => {
    for (const [src, dst, T, V, g] of [
      ['a', 'sa', TM, VA, 'tm'],
      ['b', 'sb', TN, VB, 'tn'],
    ] as const)
      for (let e = 0; e < V; e++) {
        const v = `(t + ${e * NT}u)`;
        const q = `${src}[(${g} * ${T}u + ${v} / ${VR}u) * kv + ${k} / 16u + ${v} % ${VR}u]`;
        const reg = `${src}${e}`;
        if (into === 'reg') L.push(`    ${reg} = ${q};`);
        else {
          const val = PF ? reg : q;
          L.push(
            `    { let q = ${val}; let o = ${par}(${v} / ${VR}u) * ${RS / 4}u + (${v} % ${VR}u) * 4u; ` +
              `${dst}[o] = q.x; ${dst}[o + 1u] = q.y; ${dst}[o + 2u] = q.z; ${dst}[o + 3u] = q.w; }`,
          );
        }
      }
  };
  if (PF) {
    for (let e = 0; e < VA; e++) L.push(`  var a${e}: vec4<i32>;`);
    for (let e = 0; e < VB; e++) L.push(`  var b${e}: vec4<i32>;`);
    loads('0u', 'reg');
  }
  // Double buffering: slab parity `par` selects one of two halves of sa and sb (one barrier per slab).
  const [wa, wb] = [(TM * RS) / 4, (TN * RS) / 4];
  if (DB) {
    loads('0u', 'shared', '');
    L.push('  workgroupBarrier();', '  var par = 0u;');
  }
  L.push(`  for (var k = 0u; k < K; k += ${KT}u) {`);
  if (!DB) {
    loads('k', 'shared');
    L.push('    workgroupBarrier();');
  }
  if (PF) {
    L.push(`    let kn = min(k + ${KT}u, K - ${KT}u);`);
    loads('kn', 'reg');
  }
  const [pa, pb] = DB ? [`par * ${TM * RS}u + `, `par * ${TN * RS}u + `] : ['', ''];
  for (let kk = 0; kk < KT; kk += 32) {
    L.push('    {');
    for (let i = 0; i < FM; i++)
      L.push(`      let l${i} = subgroupMatrixLoad<LM>(&sa, ${pa}ar + ${16 * i * RS + kk}u, false, ${RS}u);`);
    for (let j = 0; j < FN; j++)
      L.push(`      let r${j} = subgroupMatrixLoad<RM>(&sb, ${pb}br + ${16 * j * RS + kk}u, true, ${RS}u);`);
    for (let i = 0; i < FM; i++)
      for (let j = 0; j < FN; j++)
        L.push(`      ${acc(i, j)} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${acc(i, j)});`);
    L.push('    }');
  }
  if (DB) {
    // the other half: slab k + KT (sa and sb hold wa and wb words per half)
    const before = L.length;
    loads('kn', 'shared', '');
    for (let x = before; x < L.length; x++)
      L[x] = L[x]!.replace('let o = ', `let o = (1u - par) * ${L[x]!.includes('sa[') ? wa : wb}u + `);
    L.push('    workgroupBarrier();', '    par = 1u - par;', '  }');
  } else L.push('    workgroupBarrier();', '  }');
  for (let i = 0; i < FM; i++)
    for (let j = 0; j < FN; j++)
      L.push(
        `  subgroupMatrixStore(&c, (tm * ${TM}u + sr + ${16 * i}u) * N + tn * ${TN}u + sc + ${16 * j}u, ` +
          `${acc(i, j)}, false, N);`,
      );
  const tile = SW
    ? `  let pid = wg.y * nwg.x + wg.x;
  let grp = pid / (${SW}u * nwg.x);
  let first = grp * ${SW}u;
  let gm = min(nwg.y - first, ${SW}u);
  let tm = first + (pid % (${SW}u * nwg.x)) % gm;
  let tn = (pid % (${SW}u * nwg.x)) / gm;`
    : '  let tm = wg.y;\n  let tn = wg.x;';
  return `${SGM_PROBE_HEADER}var<workgroup> sa: array<i32, ${(DB ? 2 : 1) * wa}>;
var<workgroup> sb: array<i32, ${(DB ? 2 : 1) * wb}>;
@compute @workgroup_size(${NT})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32, @builtin(subgroup_id) sg: u32) {
  let N = dims.n;
  let K = dims.k;
  let kv = K / 16u;
${tile}
  let sr = (sg / ${WN}u) * ${16 * FM}u;
  let sc = (sg % ${WN}u) * ${16 * FN}u;
  let ar = sr * ${RS}u;
  let br = sc * ${RS}u;
${L.join('\n')}
}`;
}

const { adapter, device, hasSgm } = await openProbeDevice(arg('toggles', 'allow_unsafe_apis,disable_robustness'));
if (!hasSgm) {
  console.log(`no subgroup matrices on ${adapter.info.description}; printing variant ${variants[0]}`);
  console.log(kernel(parse(variants[0]!)));
  process.exit(0);
}
console.log(`adapter: ${adapter.info.vendor} ${adapter.info.description}`);

async function pipeline(name: string, code: string): Promise<GPUComputePipeline | string> {
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  for (const m of info.messages)
    if (m.type === 'error') console.log(`  [${name}] ${m.type} ${m.lineNum}:${m.linePos} ${m.message}`);
  device.pushErrorScope('validation');
  const p = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const err = await device.popErrorScope();
  return err ? err.message : p;
}

const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
function make(data: ArrayBufferView | number, u = usage): GPUBuffer {
  const size = typeof data === 'number' ? data : data.byteLength;
  const buf = device.createBuffer({ size, usage: u });
  if (typeof data !== 'number') device.queue.writeBuffer(buf, 0, data as unknown as ArrayBuffer);
  return buf;
}

function operands(m: number, n: number, k: number, seed: number) {
  const rng = mulberry32(seed);
  const bytes = (count: number): Int8Array =>
    new Int8Array(Uint32Array.from({ length: count / 4 }, () => (rng() * 2 ** 32) >>> 0).buffer);
  const A = bytes(m * k);
  const Bt = bytes(n * k);
  return {
    A,
    Bt,
    a: make(A),
    b: make(Bt),
    c: make(m * n * 4),
    dims: make(new Uint32Array([m, n, k, 0]), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST),
  };
}
type Ops = ReturnType<typeof operands>;

function encode(p: GPUComputePipeline, o: Ops, gx: number, gy: number, count: number): void {
  const bind = device.createBindGroup({
    layout: p.getBindGroupLayout(0),
    entries: [o.a, o.b, o.c, o.dims].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, bind);
  for (let r = 0; r < count; r++) pass.dispatchWorkgroups(gx, gy);
  pass.end();
  device.queue.submit([enc.finish()]);
}

const destroy = (o: Ops): void => {
  for (const x of [o.a, o.b, o.c, o.dims]) x.destroy();
};
const results: Record<string, unknown>[] = [];
for (const name of variants) {
  const s = parse(name);
  const [TM, TN] = [16 * s.FM * s.WM, 16 * s.FN * s.WN];
  const p = await pipeline(name, kernel(s));
  if (typeof p === 'string') {
    console.log(`${name}: pipeline failed: ${p.split('\n')[0]}`);
    results.push({ variant: name, error: p });
    continue;
  }
  let exact = true;
  for (const [m, n, k] of [
    [256, 256, 256],
    [128, 256, 384],
  ] as const) {
    if (m % TM || n % TN || k % s.KT) continue;
    const o = operands(m, n, k, 7);
    encode(p, o, n / TN, m / TM, 1);
    const got = await readInt32(device, o.c, m * n);
    for (let i = 0; i < m && exact; i++)
      for (let j = 0; j < n && exact; j++) {
        let sum = 0;
        for (let q = 0; q < k; q++) sum += o.A[i * k + q]! * o.Bt[j * k + q]!;
        if (got[i * n + j] !== sum) {
          exact = false;
          console.log(`  ${name} ${m}×${n}×${k} C[${i},${j}] = ${got[i * n + j]}, expected ${sum}`);
        }
      }
    destroy(o);
  }
  if (!exact) {
    results.push({ variant: name, exact });
    continue;
  }
  const line: string[] = [];
  for (const size of sizes) {
    const o = operands(size, size, size, size);
    const times: number[] = [];
    // Three untimed trials first: the first size measured after a pipeline is built ran up to 4× slow.
    for (let trial = 0; trial < 10; trial++) {
      await device.queue.onSubmittedWorkDone();
      const t0 = performance.now();
      encode(p, o, size / TN, size / TM, reps);
      await device.queue.onSubmittedWorkDone();
      if (trial > 2) times.push((performance.now() - t0) / reps);
    }
    const ms = median(times);
    const tops = (2 * size ** 3) / (ms * 1e9);
    line.push(`${size}: ${tops.toFixed(1)} TOPS (${ms.toFixed(3)} ms)`);
    results.push({ variant: name, size, ms, tops });
    destroy(o);
  }
  console.log(`${name.padEnd(28)} exact; ${line.join('; ')}`);
}

const out = arg('json', '');
if (out) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(out, JSON.stringify({ adapter: adapter.info.description, results }, null, 2));
}
process.exit(0);
