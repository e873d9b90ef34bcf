/**
 * How near float16 elementwise kernels come to twice float32's speed (half the bytes), with raw WGSL only: an add
 * and a relu over n elements in float32 and in float16 (`shader-f16`), in several shapes of kernel — elements per
 * invocation (one vec4<f32>, one or two vec4<u32> of halves, one vec4<f16>), a grid-stride loop over a fixed grid,
 * and relu on the bits branch-free or per half — so that PolyHAL's own kernels (kernels/half-native.ts) can take
 * the best. Each timed block is R dispatches in one pass, writing two outputs in turn or one output each time (as
 * eager ops do whose outputs the pool hands back: a write-after-write barrier between them), submitted and awaited;
 * the median block over trials gives ms per op and GB/s (add moves 3 arrays, relu 2).
 *   node webgpu-f16-elementwise.mjs [--sizes 67108864] [--reps 20] [--trials 9] [--json out.json]
 *     [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia']
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sizes = arg('sizes', '67108864').split(',').map(Number);
const reps = Number(arg('reps', '20'));
const trials = Number(arg('trials', '9'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
Object.assign(globalThis, globals);
const gpu = create(arg('dawn-flags', 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia').split(' '));
(globalThis as { polyhalGpu?: unknown }).polyhalGpu = gpu;
const adapter = (await gpu.requestAdapter({ powerPreference: 'high-performance' }))!;
if (!adapter.features.has('shader-f16')) throw new Error('the adapter offers no shader-f16 (on NVIDIA: --dawn-flags)');
const device = await adapter.requestDevice({
  requiredFeatures: ['shader-f16'],
  requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  },
});
device.onuncapturederror = (e) => console.error(`uncaptured: ${(e as GPUUncapturedErrorEvent).error.message}`);
const description = `${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}`.trim();
console.log(`adapter: ${description}`);

/** A kernel: its WGSL body over `a` (and `b`) into `out`, the element type, elements per invocation, grid-stride. */
interface Variant {
  name: string;
  op: 'add' | 'relu';
  dtype: 'float32' | 'float16';
  /** Elements one invocation handles per iteration. */
  per: number;
  /** Element type of the bindings. */
  t: string;
  body: string;
  /** Invocations of the fixed grid of a grid-stride kernel (0: one iteration per invocation). */
  stride?: number;
}
const RELU_BITS = `
fn relu_bits(w: u32) -> u32 {
  // per half: negative (sign set) and not NaN ((h & 0x7fff) <= 0x7c00) → 0; the carry of + 0x03ff marks NaN
  let nan = ((w & 0x7fff7fffu) + 0x03ff03ffu) & 0x80008000u;
  let neg = w & 0x80008000u & ~nan;
  return w & ~((neg >> 15u) * 0xffffu);
}
fn relu_loop(w: u32) -> u32 {
  var r = w;
  for (var k = 0u; k < 32u; k += 16u) {
    let h = (w >> k) & 0xffffu;
    if ((h & 0x8000u) != 0u && (h & 0x7fffu) <= 0x7c00u) { r &= ~(0xffffu << k); }
  }
  return r;
}`;
const h2 = (x: string): string => `bitcast<vec2<f16>>(${x})`;
const addWords = (a: string, b: string): string =>
  `vec4<u32>(bitcast<u32>(${h2(`${a}.x`)} + ${h2(`${b}.x`)}), bitcast<u32>(${h2(`${a}.y`)} + ${h2(`${b}.y`)}), ` +
  `bitcast<u32>(${h2(`${a}.z`)} + ${h2(`${b}.z`)}), bitcast<u32>(${h2(`${a}.w`)} + ${h2(`${b}.w`)}))`;
const VARIANTS: Variant[] = [
  { name: 'f32 add, vec4', op: 'add', dtype: 'float32', per: 4, t: 'vec4<f32>', body: 'out[i] = a[i] + b[i];' },
  {
    name: 'f32 add, 2×vec4',
    op: 'add',
    dtype: 'float32',
    per: 8,
    t: 'vec4<f32>',
    body: 'out[2u * i] = a[2u * i] + b[2u * i]; out[2u * i + 1u] = a[2u * i + 1u] + b[2u * i + 1u];',
  },
  { name: 'f16 add, vec4<f16>', op: 'add', dtype: 'float16', per: 4, t: 'vec4<f16>', body: 'out[i] = a[i] + b[i];' },
  {
    name: 'f16 add, vec4<u32> (8 halves)',
    op: 'add',
    dtype: 'float16',
    per: 8,
    t: 'vec4<u32>',
    body: `out[i] = ${addWords('a[i]', 'b[i]')};`,
  },
  {
    name: 'f16 add, vec4<u32>, stored lane by lane',
    op: 'add',
    dtype: 'float16',
    per: 8,
    t: 'vec4<u32>',
    body:
      'let av = a[i]; let bv = b[i]; var o: vec4<u32>; ' +
      [0, 1, 2, 3].map((k) => `o[${k}] = bitcast<u32>(${h2(`av[${k}]`)} + ${h2(`bv[${k}]`)});`).join(' ') +
      ' out[i] = o;',
  },
  {
    name: 'f16 add, 2×vec4<u32> (16 halves)',
    op: 'add',
    dtype: 'float16',
    per: 16,
    t: 'vec4<u32>',
    body: `let j = 2u * i; out[j] = ${addWords('a[j]', 'b[j]')}; out[j + 1u] = ${addWords('a[j + 1u]', 'b[j + 1u]')};`,
  },
  {
    name: 'f32 add, vec4, grid-stride',
    op: 'add',
    dtype: 'float32',
    per: 4,
    t: 'vec4<f32>',
    body: 'out[i] = a[i] + b[i];',
    stride: 1 << 18,
  },
  {
    name: 'f16 add, vec4<u32>, grid-stride',
    op: 'add',
    dtype: 'float16',
    per: 8,
    t: 'vec4<u32>',
    body: `out[i] = ${addWords('a[i]', 'b[i]')};`,
    stride: 1 << 18,
  },
  {
    name: 'f32 relu, vec4',
    op: 'relu',
    dtype: 'float32',
    per: 4,
    t: 'vec4<f32>',
    body: 'out[i] = max(a[i], vec4(0.0));',
  },
  {
    name: 'f16 relu, vec4<u32>, per-half loop',
    op: 'relu',
    dtype: 'float16',
    per: 8,
    t: 'vec4<u32>',
    body: 'let w = a[i]; out[i] = vec4<u32>(relu_loop(w.x), relu_loop(w.y), relu_loop(w.z), relu_loop(w.w));',
  },
  {
    name: 'f16 relu, vec4<u32>, branch-free bits',
    op: 'relu',
    dtype: 'float16',
    per: 8,
    t: 'vec4<u32>',
    body: 'let w = a[i]; out[i] = vec4<u32>(relu_bits(w.x), relu_bits(w.y), relu_bits(w.z), relu_bits(w.w));',
  },
  {
    name: 'f16 relu, 2×vec4<u32>, branch-free bits',
    op: 'relu',
    dtype: 'float16',
    per: 16,
    t: 'vec4<u32>',
    body:
      'for (var k = 0u; k < 2u; k++) { let j = 2u * i + k; let w = a[j]; ' +
      'out[j] = vec4<u32>(relu_bits(w.x), relu_bits(w.y), relu_bits(w.z), relu_bits(w.w)); }',
  },
];

const WG = 256;
function pipelineOf(v: Variant): GPUComputePipeline {
  const units = v.per / (v.t === 'vec4<u32>' ? 8 : 4); // bound vectors per iteration
  const count = `arrayLength(&out) / ${units}u`;
  const loop = v.stride
    ? `for (var i = g.x; i < ${count}; i += ${v.stride}u) { ${v.body} }`
    : `let i = g.x + g.y * ${WG}u * nwg.x; if (i >= ${count}) { return; } ${v.body}`;
  const code = `enable f16;${RELU_BITS}
@group(0) @binding(0) var<storage, read> a: array<${v.t}>;
${v.op === 'add' ? `@group(0) @binding(1) var<storage, read> b: array<${v.t}>;` : ''}
@group(0) @binding(2) var<storage, read_write> out: array<${v.t}>;
@compute @workgroup_size(${WG}) fn main(@builtin(global_invocation_id) g: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>) {
  ${loop}
}`;
  return device.createComputePipeline({
    layout: 'auto',
    compute: { entryPoint: 'main', module: device.createShaderModule({ code }) },
  });
}

const rows: Record<string, unknown>[] = [];
const S = GPUBufferUsage.STORAGE;
for (const n of sizes) {
  const buf = (bytes: number): GPUBuffer => device.createBuffer({ size: bytes, usage: S });
  const [a32, b32, o32a, o32b] = [0, 1, 2, 3].map(() => buf(n * 4));
  const [a16, b16, o16a, o16b] = [0, 1, 2, 3].map(() => buf(n * 2));
  const runs = [false, true].flatMap((same) =>
    VARIANTS.filter((v) => !same || !v.stride).map((v) => {
      const pipe = pipelineOf(v);
      const [a, b, oa, ob] = v.dtype === 'float32' ? [a32, b32, o32a, o32b] : [a16, b16, o16a, o16b];
      const binds = (same ? [oa, oa] : [oa, ob]).map((o) =>
        device.createBindGroup({
          layout: pipe.getBindGroupLayout(0),
          entries: [
            { binding: 0, resource: { buffer: a! } },
            ...(v.op === 'add' ? [{ binding: 1, resource: { buffer: b! } }] : []),
            { binding: 2, resource: { buffer: o! } },
          ],
        }),
      );
      const invocations = v.stride ?? Math.ceil(n / v.per);
      const groups = Math.ceil(invocations / WG);
      const [x, y] = groups > 65535 ? [65535, Math.ceil(groups / 65535)] : [groups, 1];
      if (!v.stride && x * y * WG * v.per < n) throw new Error('grid too small');
      return { v, same, pipe, binds, x, y, ms: [] as number[] };
    }),
  );
  for (let t = 0; t <= trials; t++) {
    for (const r of t % 2 ? [...runs].reverse() : runs) {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(r.pipe);
      for (let k = 0; k < reps; k++) {
        pass.setBindGroup(0, r.binds[k % 2]!);
        pass.dispatchWorkgroups(r.x, r.y);
      }
      pass.end();
      const t0 = performance.now();
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      if (t > 0) r.ms.push((performance.now() - t0) / reps);
    }
  }
  for (const r of runs) {
    const ms = median(r.ms);
    const bytes = n * (r.v.dtype === 'float32' ? 4 : 2) * (r.v.op === 'add' ? 3 : 2);
    const row = {
      size: n,
      variant: r.v.name,
      output: r.same ? 'one buffer' : 'two, alternating',
      op: r.v.op,
      dtype: r.v.dtype,
      ms: +ms.toFixed(4),
      gbps: +(bytes / ms / 1e6).toFixed(0),
    };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
}
const json = arg('json', process.env.BENCH_JSON ?? '');
if (json) writeFileSync(json, `${JSON.stringify({ adapter: description, rows }, null, 2)}\n`);
