/**
 * Probe: does this adapter offer WebGPU's `shader-f16` feature, under which Dawn toggles, and does an
 * `enable f16;` shader that loads, converts and stores f16 give exact results there? Prints one JSON
 * line per toggle set (features, device creation, the shader's check). Usage, once packed:
 *   node webgpu-f16-probe.mjs [--out FILE]   (bundled by ../shared/gpu/pack.sh)
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);

const TOGGLE_SETS: string[][] = [
  [],
  ['enable-dawn-features=allow_unsafe_apis'],
  ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'],
  ['enable-dawn-features=vulkan_enable_f16_on_nvidia'],
  ['enable-dawn-features=allow_unsafe_apis', 'disable-dawn-features=vulkan_use_storage_input_output_16'],
  [
    'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia',
    'disable-dawn-features=vulkan_use_storage_input_output_16',
  ],
];

const SHADER = `enable f16;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> h: array<f16>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= arrayLength(&a)) { return; }
  o[i] = f32(a[i]);
  h[i] = a[i] * 2.0h;
}`;

/** Every float16 bit pattern that is finite, as little-endian halves. */
function halves(): Uint16Array {
  const out: number[] = [];
  for (let b = 0; b < 0x10000; b++) if ((b & 0x7c00) !== 0x7c00) out.push(b);
  return Uint16Array.from(out);
}
function f16ToNumber(b: number): number {
  const s = b & 0x8000 ? -1 : 1;
  const e = (b >> 10) & 0x1f;
  const m = b & 0x3ff;
  if (e === 31) return m === 0 ? s * Infinity : Number.NaN;
  return e === 0 ? s * m * 2 ** -24 : s * (1 + m / 1024) * 2 ** (e - 15);
}

const lines: string[] = [];
const keep: unknown[] = []; // the Dawn instances stay reachable until exit
for (const toggles of TOGGLE_SETS) {
  const row: Record<string, unknown> = { toggles };
  try {
    const gpu = create(toggles);
    keep.push(gpu);
    const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!adapter) throw new Error('no adapter');
    row.adapter = `${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}`;
    row.shaderF16 = adapter.features.has('shader-f16');
    row.features = [...adapter.features].sort();
    if (row.shaderF16) {
      const device = await adapter.requestDevice({ requiredFeatures: ['shader-f16'] });
      const input = halves();
      const n = input.length;
      const usage = 0x80 | 0x4 | 0x8;
      const a = device.createBuffer({ size: n * 2, usage });
      device.queue.writeBuffer(a, 0, input);
      const o = device.createBuffer({ size: n * 4, usage });
      const h = device.createBuffer({ size: n * 2, usage });
      device.pushErrorScope('validation');
      const module = device.createShaderModule({ code: SHADER });
      const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      const bg = device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [a, o, h].map((buffer, binding) => ({ binding, resource: { buffer } })),
      });
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(Math.ceil(n / 64));
      pass.end();
      const ro = device.createBuffer({ size: n * 4, usage: 0x1 | 0x8 });
      const rh = device.createBuffer({ size: n * 2, usage: 0x1 | 0x8 });
      enc.copyBufferToBuffer(o, 0, ro, 0, n * 4);
      enc.copyBufferToBuffer(h, 0, rh, 0, n * 2);
      device.queue.submit([enc.finish()]);
      const err = await device.popErrorScope();
      if (err) throw new Error(`validation: ${err.message}`);
      await ro.mapAsync(1);
      await rh.mapAsync(1);
      const widened = new Float32Array(ro.getMappedRange().slice(0));
      const doubled = new Uint16Array(rh.getMappedRange().slice(0));
      let wrongWiden = 0;
      let subnormalsKept = 0;
      let wrongDouble = 0;
      const samples: string[] = [];
      for (let k = 0; k < n; k++) {
        const v = f16ToNumber(input[k]!);
        if (!Object.is(widened[k], v) && !(v === 0 && widened[k] === 0)) wrongWiden++;
        if ((input[k]! & 0x7c00) === 0 && (input[k]! & 0x3ff) !== 0 && widened[k] === v) subnormalsKept++;
        const d = f16ToNumber(doubled[k]!);
        const want = Math.abs(v * 2) >= 65520 ? Math.sign(v) * Infinity : v * 2; // 2v is exact below 65520
        if (!Object.is(d, want) && !(want === 0 && d === 0)) {
          wrongDouble++;
          if (samples.length < 4) samples.push(`2·${v} gave ${d}`);
        }
      }
      row.check = { elements: n, wrongWiden, subnormalsKept, wrongDouble, samples };
      device.destroy();
    }
  } catch (e) {
    row.error = e instanceof Error ? e.message : String(e);
  }
  const line = JSON.stringify(row);
  console.log(line);
  lines.push(line);
}
const at = process.argv.indexOf('--out');
if (at > 0) writeFileSync(process.argv[at + 1]!, `${lines.join('\n')}\n`);
