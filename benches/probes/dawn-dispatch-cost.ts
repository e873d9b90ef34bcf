/**
 * What one kernel of a replayed plan costs through the `webgpu` package (Dawn), on the host and on the GPU, with
 * raw WebGPU only (no PolyHAL): the floor under a compiled step's time per kernel.
 * - Host: JavaScript to encode K small kernels (K bind groups over one uniform buffer, 8 pipelines taken in turn,
 *   as replay-plan.ts encodes them) in one compute pass, per kernel, in five forms: setBindGroup with a dynamic
 *   offset (a number[] per kernel, as the plan), with a Uint32Array, without dynamic offsets (each bind group at its
 *   own static offset), the last with setPipeline on every kernel, and kernels binding 8 storage arrays each (the
 *   default limit) instead of 2; then finish() and submit(), per kernel.
 * - GPU: K tiny kernels (64 threads, one element each) as a dependent chain (kernel i reads i − 1's output: Dawn puts
 *   a barrier between them) and as independent kernels (each reads the input, writes its own buffer), in one pass and
 *   in a pass each; each submitted after it is encoded and timed from submit to onSubmittedWorkDone, minus the
 *   same for an empty command buffer.
 *   node dawn-dispatch-cost.mjs [--kernels 288] [--trials 15] [--json out.json]
 */
import { writeFileSync } from 'node:fs';
import { openProbeDevice } from './dawn-probe.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const K = Number(arg('kernels', '288'));
const trials = Number(arg('trials', '15'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const { adapter, device } = await openProbeDevice(arg('toggles', 'allow_unsafe_apis'));
const description = `${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}`.trim();
const bindingLimits = {
  maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
  maxBindingsPerBindGroup: adapter.limits.maxBindingsPerBindGroup,
};
console.log(`adapter: ${description}; ${K} kernels a plan, ${trials} trials; ${JSON.stringify(bindingLimits)}`);

const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
const PIPES = 8;
// Kernel p of the 8 adds p + params.x to each element: distinct pipelines of the same shape.
const addShader = (p: number): string => `
struct P { x: f32, n: u32, a: u32, b: u32 }
@group(0) @binding(0) var<uniform> params: P;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x >= params.n) { return; }
  dst[g.x] = src[g.x] + params.x + ${p}.0;
}`;
const pipes = Array.from({ length: PIPES }, (_, p) =>
  device.createComputePipeline({
    layout: 'auto',
    compute: {
      entryPoint: 'main',
      module: device.createShaderModule({
        code: addShader(p),
      }),
    },
  }),
);
// The same pipelines with an explicit layout whose uniform binding takes a dynamic offset (as the plan binds).
const dynLayout = device.createBindGroupLayout({
  entries: [
    { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true } },
    { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
    { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
  ],
});
const dynPipes = pipes.map((_, p) =>
  device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [dynLayout] }),
    compute: {
      entryPoint: 'main',
      module: device.createShaderModule({
        code: addShader(p),
      }),
    },
  }),
);
const NL = '\n';
// Kernels that bind 7 storage arrays besides their output, 8 in all (a fused chain's or an optimizer's width).
const WIDE = 7;
const widePipes = Array.from({ length: PIPES }, (_, p) =>
  device.createComputePipeline({
    layout: 'auto',
    compute: {
      entryPoint: 'main',
      module: device.createShaderModule({
        code: `
struct P { x: f32, n: u32, a: u32, b: u32 }
@group(0) @binding(0) var<uniform> params: P;
${Array.from({ length: WIDE }, (_, j) => `@group(0) @binding(${j + 1}) var<storage, read> s${j}: array<f32>;`).join(NL)}
@group(0) @binding(${WIDE + 1}) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x >= params.n) { return; }
  dst[g.x] = ${Array.from({ length: WIDE }, (_, j) => `s${j}[g.x]`).join(' + ')} + params.x + ${p}.0;
}`,
      }),
    },
  }),
);
const align = Math.max(256, device.limits.minUniformBufferOffsetAlignment);
const uniforms = device.createBuffer({ size: K * align, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const words = new Uint32Array((K * align) / 4);
const f = new Float32Array(words.buffer);
for (let i = 0; i < K; i++) {
  f[(i * align) / 4] = 1e-3;
  words[(i * align) / 4 + 1] = 64;
}
device.queue.writeBuffer(uniforms, 0, words);
const N = 64;
const bufs = Array.from({ length: K + 1 }, () => device.createBuffer({ size: N * 4, usage: S }));

type Bound = { pipe: GPUComputePipeline; bind: GPUBindGroup; dyn: number[]; dynU: Uint32Array };
/** Kernel i reads `src(i)` and writes bufs[i + 1]; bound with a dynamic offset (dyn) or at a static offset. */
const bindAll = (src: (i: number) => GPUBuffer, dynamic: boolean): Bound[] =>
  Array.from({ length: K }, (_, i) => {
    const p = i % PIPES;
    const bind = device.createBindGroup({
      layout: dynamic ? dynLayout : pipes[p]!.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: uniforms, offset: dynamic ? 0 : i * align, size: 16 } },
        { binding: 1, resource: { buffer: src(i) } },
        { binding: 2, resource: { buffer: bufs[i + 1]! } },
      ],
    });
    return { pipe: (dynamic ? dynPipes : pipes)[p]!, bind, dyn: [i * align], dynU: new Uint32Array([i * align]) };
  });
const wide: Bound[] = Array.from({ length: K }, (_, i) => {
  const pipe = widePipes[i % PIPES]!;
  const bind = device.createBindGroup({
    layout: pipe.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: uniforms, offset: i * align, size: 16 } },
      ...Array.from({ length: WIDE }, (_, j) => ({ binding: j + 1, resource: { buffer: bufs[(i + K - j) % K]! } })),
      { binding: WIDE + 1, resource: { buffer: bufs[i + 1]! } },
    ],
  });
  return { pipe, bind, dyn: [], dynU: new Uint32Array(0) };
});
const chainDyn = bindAll((i) => bufs[i]!, true);
const chainStatic = bindAll((i) => bufs[i]!, false);
const indep = bindAll(() => bufs[0]!, false);

type Form = 'dynamicArray' | 'dynamicUint32' | 'static' | 'staticSetPipelineEach' | 'static8Storage';
/** Encodes the K kernels in one pass (or a pass each); returns the command buffer. */
const encode = (ks: Bound[], form: Form, passEach = false): GPUCommandBuffer => {
  const enc = device.createCommandEncoder();
  let pass = enc.beginComputePass();
  let pipe: GPUComputePipeline | null = null;
  for (let i = 0; i < ks.length; i++) {
    const k = ks[i]!;
    if (passEach && i > 0) {
      pass.end();
      pass = enc.beginComputePass();
      pipe = null;
    }
    if (form === 'staticSetPipelineEach' || k.pipe !== pipe) pass.setPipeline((pipe = k.pipe));
    if (form === 'dynamicArray') pass.setBindGroup(0, k.bind, k.dyn);
    else if (form === 'dynamicUint32') pass.setBindGroup(0, k.bind, k.dynU, 0, 1);
    else pass.setBindGroup(0, k.bind);
    pass.dispatchWorkgroups(1);
  }
  pass.end();
  return enc.finish();
};
const done = (): Promise<undefined> => device.queue.onSubmittedWorkDone();

const rows: Record<string, unknown>[] = [];
// Host: encode and submit, per kernel; the forms alternate within each trial (after one warm-up round).
const FORMS: Form[] = ['dynamicArray', 'dynamicUint32', 'static', 'staticSetPipelineEach', 'static8Storage'];
const enc = new Map(FORMS.map((f) => [f, [] as number[]]));
const sub = new Map(FORMS.map((f) => [f, [] as number[]]));
for (let t = 0; t <= trials; t++) {
  for (const form of t % 2 ? [...FORMS].reverse() : FORMS) {
    const t0 = performance.now();
    const cb = encode(form.startsWith('dynamic') ? chainDyn : form === 'static8Storage' ? wide : chainStatic, form);
    const t1 = performance.now();
    device.queue.submit([cb]);
    const t2 = performance.now();
    await done();
    if (t === 0) continue;
    enc.get(form)!.push(t1 - t0);
    sub.get(form)!.push(t2 - t1);
  }
}
for (const form of FORMS) {
  const row = {
    measure: 'host',
    form,
    kernels: K,
    encodeUsPerKernel: +((median(enc.get(form)!) * 1e3) / K).toFixed(3),
    submitUsPerKernel: +((median(sub.get(form)!) * 1e3) / K).toFixed(3),
  };
  console.log(JSON.stringify(row));
  rows.push(row);
}
// GPU: submit to done, minus an empty submission's.
const roundTrip = async (cb: GPUCommandBuffer): Promise<number> => {
  const t0 = performance.now();
  device.queue.submit([cb]);
  await done();
  return performance.now() - t0;
};
const empty: number[] = [];
for (let t = 0; t < trials; t++) empty.push(await roundTrip(device.createCommandEncoder().finish()));
const base = median(empty);
for (const [name, ks, passEach] of [
  ['dependent chain, one pass', chainStatic, false],
  ['independent, one pass', indep, false],
  ['dependent chain, a pass each', chainStatic, true],
  ['independent, a pass each', indep, true],
] as const) {
  const ts: number[] = [];
  for (let t = 0; t < trials; t++) ts.push(await roundTrip(encode(ks, 'static', passEach)));
  const row = {
    measure: 'gpu',
    form: name,
    kernels: K,
    emptySubmitUs: +(base * 1e3).toFixed(1),
    usPerKernel: +(((median(ts) - base) * 1e3) / K).toFixed(3),
  };
  console.log(JSON.stringify(row));
  rows.push(row);
}
const json = arg('json', process.env.BENCH_JSON ?? '');
if (json) writeFileSync(json, `${JSON.stringify({ adapter: description, bindingLimits, rows }, null, 2)}\n`);
