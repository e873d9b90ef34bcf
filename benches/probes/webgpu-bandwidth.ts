/**
 * Memory bandwidth of large elementwise ops on WebGPU: @polyhal/backend-webgpu against
 * @tensorflow/tfjs-backend-webgpu 4.22.0 (one GPU object, one process, the same inputs), and against two
 * references measured on the same GPU: `copyBufferToBuffer` (the copy engine) and a plain vec4 WGSL add
 * written here (one f32x4 load per operand and one store per invocation, 256 invocations a workgroup; not
 * a ceiling: a kernel doing more per invocation can beat it).
 * Each timed block queues R ops of one kind (outputs freed as the next is queued, no reads in between)
 * and then reads one element of the last result, so the time is dispatch to result and the GPU's work
 * dominates. Bytes per element: add 12 (two loads, one store), relu 8, chain 40 (add, relu, mul by a
 * tensor, add: four separate ops of 12 + 8 + 12 + 8 bytes — a fused kernel would move 16). The "chain,
 * captured and fused" row (`captured`) captures PolyHAL's chain once (beginCapture/endCapture: the backend's
 * fuseInCapture makes it one fusedElementwise kernel) and replays it R times, against tfjs's chain; its bytes
 * per element are 12, what reaches memory: x is a, so the kernel's bindings x and a (the last addend) are one buffer
 * whose element one invocation loads twice (the second from the cache), plus b and the output. Counted as 16 it
 * read above the data sheet's bandwidth on an H200 (4924 of 4800 GB/s).
 * float16 rows: the same ops on float16 arrays (2 bytes per element, native or emulated as `--float16-arithmetic`:
 * half the bytes, add 6, relu 4, chain 20) against PolyHAL's own float32, alternated in one loop (tfjs has no
 * float16); per block as above, and per op as the slope between blocks of `reps` and 5·`reps` ops (the block's fixed
 * cost dropped).
 * GB/s = bytes / time (10^9 bytes per second). The share of the device's memory bandwidth uses
 * `--peak-gbps` (the data sheet's figure: H100 SXM 3350, H200 4800 GB/s; WebGPU's adapter info on NVIDIA
 * names the driver, not the model), else a model name found in the adapter's description.
 *   node webgpu-bandwidth.mjs [--sizes 16777216,67108864] [--reps 20] [--trials 7] [--json out.json]
 *     [--float16-conversions auto|integer|hardware] [--float16-arithmetic auto|native|emulated]
 *     [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'] [--peak-gbps N]
 * float16Arithmetic 'native' (f16 arrays) needs an adapter offering `shader-f16`: on NVIDIA the Dawn flags above.
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';

type Tf = typeof import('@tensorflow/tfjs-core');
type TfTensor = import('@tensorflow/tfjs-core').Tensor;

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '16777216,67108864').split(',').map(Number);
const reps = Number(arg('reps', '20'));
const trials = Number(arg('trials', '7'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

Object.assign(globalThis, globals);
const gpu = create(arg('dawn-flags', '').split(' ').filter(Boolean));
(globalThis as { navigator?: unknown }).navigator = { gpu, userAgent: 'node' };
const tf: Tf = await import('@tensorflow/tfjs-core');
await import('@tensorflow/tfjs-backend-webgpu');
await tf.setBackend('webgpu');
await tf.ready();
const conversions = arg('float16-conversions', 'auto') as 'auto' | 'integer' | 'hardware';
const arithmetic = arg('float16-arithmetic', 'auto') as 'auto' | 'native' | 'emulated';
const be = await createWebGpuBackend({ gpu, float16Conversions: conversions, float16Arithmetic: arithmetic });
const adapter = (await gpu.requestAdapter())!;
const raw = await adapter.requestDevice({
  requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  },
});
const description = `${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}`.trim();
const known: [RegExp, number][] = [
  [/H200/i, 4800],
  [/H100/i, 3350],
];
const peak =
  Number(arg('peak-gbps', '0')) || known.find(([re]) => re.test(`${be.deviceName} ${description}`))?.[1] || 0;
console.log(
  `GPU: ${be.deviceName} (${description}); memory bandwidth ${peak ? `${peak} GB/s` : 'unknown'}; ` +
    `float16 conversions: ${be.float16Conversions}, arithmetic: ${be.float16Arithmetic}`,
);

/** The plain vec4 add: c = a + b over n/4 f32x4, 256 invocations per workgroup, 2-D grid. */
const addPipeline = raw.createComputePipeline({
  layout: 'auto',
  compute: {
    entryPoint: 'main',
    module: raw.createShaderModule({
      code: `
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let i = (w.y * g.x + w.x) * 256u + l;
  if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}`,
    }),
  },
});

type Runner = { run: (count?: number) => Promise<number>; dispose: () => void };

async function rawBlock(n: number, kind: 'copy' | 'add'): Promise<Runner> {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const [a, b, c] = [0, 1, 2].map(() => raw.createBuffer({ size: n * 4, usage }));
  const groups = Math.ceil(n / 4 / 256);
  const gx = Math.min(groups, 65535);
  const gy = Math.ceil(groups / gx);
  const bind = raw.createBindGroup({
    layout: addPipeline.getBindGroupLayout(0),
    entries: [a, b, c].map((buffer, binding) => ({ binding, resource: { buffer: buffer! } })),
  });
  const run = async (): Promise<number> => {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) {
      const enc = raw.createCommandEncoder();
      if (kind === 'copy') enc.copyBufferToBuffer(a!, 0, c!, 0, n * 4);
      else {
        const pass = enc.beginComputePass();
        pass.setPipeline(addPipeline);
        pass.setBindGroup(0, bind);
        pass.dispatchWorkgroups(gx, gy);
        pass.end();
      }
      raw.queue.submit([enc.finish()]);
    }
    await raw.queue.onSubmittedWorkDone();
    return (performance.now() - t0) / reps;
  };
  return { run, dispose: () => [a, b, c].forEach((x) => x!.destroy()) };
}

type Op = 'add' | 'relu' | 'chain' | 'captured';
const BYTES: Record<Op, number> = { add: 12, relu: 8, chain: 40, captured: 12 };

function ours(n: number, op: Op, dtype: 'float32' | 'float16' = 'float32'): Runner {
  const init = Float32Array.from({ length: 1 << 16 }, (_, i) => Math.sin(i));
  const tile = (): NDArray => {
    const small = be.fromArray(init, [1 << 16], dtype);
    const big = be.contiguous(be.expand(be.reshape(small, [1, 1 << 16]), [n >> 16, 1 << 16]));
    be.free(small);
    return be.reshape(big, [n]);
  };
  const [a, b] = [tile(), tile()];
  const step = (x: NDArray): NDArray => {
    if (op === 'add') return be.add(x, b);
    if (op === 'relu') return be.relu(x);
    const t1 = be.add(x, b);
    const t2 = be.relu(t1);
    be.free(t1);
    const t3 = be.mul(t2, b);
    be.free(t2);
    const t4 = be.add(t3, a);
    be.free(t3);
    return t4;
  };
  if (op === 'captured') {
    // the chain recorded once (fused into one kernel while captured), then replayed: a and b read in place
    be.beginCapture([]);
    const y = step(a);
    const r = be.endCapture([y.buffer]);
    if (!('work' in r)) throw new Error(`the chain's capture broke: ${r.broken}`);
    const work = r.work;
    const run = async (): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) work.replay([]);
      await be.read(be.shrink(y, [[0, 1]]));
      return (performance.now() - t0) / reps;
    };
    return { run, dispose: () => [work.release(), ...[a, b, y].map((x) => be.free(x))] };
  }
  const run = async (count = reps): Promise<number> => {
    const t0 = performance.now();
    let y = step(a);
    for (let r = 1; r < count; r++) {
      be.free(y);
      y = step(a);
    }
    await be.read(be.shrink(y, [[0, 1]]));
    be.free(y);
    return (performance.now() - t0) / count;
  };
  return { run, dispose: () => [a, b].forEach((x) => be.free(x)) };
}

function theirs(n: number, op: Op): Runner {
  const init = Float32Array.from({ length: 1 << 16 }, (_, i) => Math.sin(i));
  const tile = (): TfTensor => tf.tidy(() => tf.reshape(tf.tile(tf.tensor1d(init), [n >> 16]), [n]));
  const [a, b] = [tile(), tile()];
  const step = (x: TfTensor): TfTensor =>
    op === 'add'
      ? tf.add(x, b)
      : op === 'relu'
        ? tf.relu(x)
        : tf.tidy(() => tf.add(tf.mul(tf.relu(tf.add(x, b)), b), a)); // chain and captured: tfjs's chain
  const run = async (): Promise<number> => {
    const t0 = performance.now();
    let y = step(a);
    for (let r = 1; r < reps; r++) {
      y.dispose();
      y = step(a);
    }
    const one = tf.slice(y, [0], [1]);
    await one.data();
    one.dispose();
    y.dispose();
    return (performance.now() - t0) / reps;
  };
  return { run, dispose: () => tf.dispose([a, b]) };
}

const rows: Record<string, unknown>[] = [];
for (const n of sizes) {
  const copy = await rawBlock(n, 'copy');
  const vec4 = await rawBlock(n, 'add');
  const gbps = (bytesPerElement: number, ms: number): number => (bytesPerElement * n) / (ms * 1e6);
  const references = { copy: [] as number[], vec4: [] as number[] };
  for (let t = 0; t < trials + 1; t++) {
    const [c, v] = [await copy.run(), await vec4.run()];
    if (t === 0) continue;
    references.copy.push(c);
    references.vec4.push(v);
  }
  copy.dispose();
  vec4.dispose();
  const copyGbps = gbps(8, median(references.copy));
  const vec4Gbps = gbps(12, median(references.vec4));
  console.log(
    `n=${n}: copyBufferToBuffer ${copyGbps.toFixed(0)} GB/s, plain vec4 add ${vec4Gbps.toFixed(0)} GB/s` +
      (peak ? ` (${((100 * vec4Gbps) / peak).toFixed(0)}% of ${peak})` : ''),
  );
  rows.push({ suite: 'reference', size: n, copyGbps, vec4AddGbps: vec4Gbps, peakGbps: peak });
  for (const op of ['add', 'relu', 'chain', 'captured'] as Op[]) {
    const runners = [ours(n, op), theirs(n, op)];
    const times: number[][] = [[], []];
    for (let t = 0; t < trials + 1; t++)
      for (let j = 0; j < 2; j++) {
        const i = (j + t) % 2;
        const ms = await runners[i]!.run();
        if (t > 0) times[i]!.push(ms);
      }
    for (const r of runners) r.dispose();
    const [mo, mt] = [median(times[0]!), median(times[1]!)];
    // tfjs runs the chain as its ops: its GB/s counts their bytes (40 per element), ours the fused kernel's
    const [go, gt] = [gbps(BYTES[op], mo), gbps(BYTES[op === 'captured' ? 'chain' : op], mt)];
    rows.push({
      suite: op,
      size: n,
      polyhalMs: mo,
      tfjsMs: mt,
      polyhalGbps: go,
      tfjsGbps: gt,
      ratio: mt / mo,
      shareOfPeak: peak ? go / peak : null,
      shareOfPlainVec4Add: go / vec4Gbps,
    });
    console.log(
      `  ${op.padEnd(5)} polyhal ${go.toFixed(0)} GB/s (${mo.toFixed(3)} ms), tfjs ${gt.toFixed(0)} GB/s, ` +
        `ratio ${(mt / mo).toFixed(2)}x` +
        (peak ? `, ${((100 * go) / peak).toFixed(0)}% of peak` : '') +
        `, ${((100 * go) / vec4Gbps).toFixed(0)}% of the plain vec4 add`,
    );
    if (op === 'captured') continue; // the float16 rows: the eager ops only
    // Per block of `reps` ops (one read at its end, as the rows above), and per op alone: the slope between blocks
    // of reps and 5·reps ops, (5·reps·t₅ − reps·t₁) / (4·reps), which drops the block's fixed cost (its read's
    // round trip, the first submission) that weighs more on the shorter float16 ops.
    const halves = [ours(n, op, 'float16'), ours(n, op, 'float32')];
    const ht: number[][] = [[], []];
    const slope: number[][] = [[], []];
    for (let t = 0; t < trials + 1; t++)
      for (let j = 0; j < 2; j++) {
        const i = (j + t) % 2;
        const ms = await halves[i]!.run();
        const ms5 = await halves[i]!.run(5 * reps);
        if (t > 0) ht[i]!.push(ms);
        if (t > 0) slope[i]!.push((5 * ms5 - ms) / 4);
      }
    for (const r of halves) r.dispose();
    const [m16, m32] = [median(ht[0]!), median(ht[1]!)];
    const [s16, s32] = [median(slope[0]!), median(slope[1]!)];
    const g16 = gbps(BYTES[op] / 2, m16);
    rows.push({
      suite: `${op}/float16`,
      size: n,
      float16Ms: m16,
      float32Ms: m32,
      float16Gbps: g16,
      speedupOverFloat32: m32 / m16,
      float16MsPerOp: s16,
      float32MsPerOp: s32,
      speedupPerOp: s32 / s16,
      shareOfPeak: peak ? g16 / peak : null,
    });
    console.log(
      `  ${op.padEnd(5)} float16 ${m16.toFixed(3)} ms (${g16.toFixed(0)} GB/s), float32 ${m32.toFixed(3)} ms: ` +
        `${(m32 / m16).toFixed(2)}x` +
        (peak ? `, ${((100 * g16) / peak).toFixed(0)}% of peak` : '') +
        `; per op (slope of ${reps} to ${5 * reps} ops a block): ${s16.toFixed(3)} against ${s32.toFixed(3)} ms, ` +
        `${(s32 / s16).toFixed(2)}x`,
    );
  }
}
const out = arg('json', '');
if (out)
  writeFileSync(
    out,
    JSON.stringify(
      {
        gpu: be.deviceName,
        description,
        float16Conversions: be.float16Conversions,
        float16Arithmetic: be.float16Arithmetic,
        date: new Date().toISOString(),
        rows,
      },
      null,
      2,
    ),
  );
be.dispose();
process.exit(0);
