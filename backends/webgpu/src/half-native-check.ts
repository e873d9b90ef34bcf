/**
 * Whether this device's `shader-f16` gives the float16 kernels of kernels/half-native.ts the results of the
 * emulated ones (kernels/half.ts), checked once per adapter at backend creation (`float16Arithmetic: 'auto'`):
 *
 * 1. the conversions the native kernels use (`f32(h)` and `f16(v)` via to_h), by half-check.ts's dispatch: every
 *    float16 value, every midpoint between neighbours and one float32 unit on either side of it, both signs,
 *    the range's edges, and all 65,536 decodes;
 * 2. f16 `+`, `-`, `*` on vec4<f16> (as the kernels use them) over pairs of specials (±0, the smallest and largest
 *    subnormals, 1 and its neighbours, 65504, ±Inf, NaN) and pseudo-random pairs (near-cancelling ones among
 *    them): every result must be float16Bits of the exact result (IEEE nearest-even, subnormals kept, ±Inf on
 *    overflow), any NaN where that is NaN.
 */
import { float16Bits, float16FromBits } from '@polyhal/hal';
import type { GpuDeviceLike } from './gpu-types.js';
import { checkHardwareFloat16, type HalfCheck } from './half-check.js';
import { F16_NATIVE_CONVERSIONS } from './kernels/half-native.js';

const SPECIALS = [
  0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x03ff, 0x83ff, 0x0400, 0x0401, 0x0200, 0x3c00, 0x3c01, 0x3bff, 0xbc00,
  0x3555, 0x7bff, 0xfbff, 0x7bfe, 0x7c00, 0xfc00, 0x7e00, 0x1400, 0x0c00, 0x5bff,
];

/** The operand pairs (a multiple of 4 long). */
function pairs(): { a: Uint16Array; b: Uint16Array } {
  const a: number[] = [];
  const b: number[] = [];
  for (const x of SPECIALS)
    for (const y of SPECIALS) {
      a.push(x);
      b.push(y);
    }
  let s = 0x2545f491;
  const next = (): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  for (let i = 0; i < 8192; i++) {
    const x = next() & 0xffff;
    const r = next();
    // a quarter near-cancelling (same exponent, other low bits), a quarter small (subnormal sums and products)
    const y = i % 4 === 0 ? (x ^ (r & 0x83ff)) & 0xffff : i % 4 === 1 ? r & 0x87ff : (r >>> 8) & 0xffff;
    a.push(x);
    b.push(y);
  }
  while (a.length % 4) {
    a.push(0);
    b.push(0);
  }
  return { a: Uint16Array.from(a), b: Uint16Array.from(b) };
}

const SHADER = `enable f16;
@group(0) @binding(0) var<storage, read> a: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> sum: array<vec4<f16>>;
@group(0) @binding(3) var<storage, read_write> dif: array<vec4<f16>>;
@group(0) @binding(4) var<storage, read_write> prd: array<vec4<f16>>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= arrayLength(&a)) { return; }
  let x = a[i];
  let y = b[i];
  sum[i] = x + y;
  dif[i] = x - y;
  prd[i] = x * y;
}`;

async function checkArithmetic(device: GpuDeviceLike): Promise<HalfCheck> {
  const { a, b } = pairs();
  const bytes = a.byteLength;
  const made: GPUBuffer[] = [];
  const buffer = (usage: number): GPUBuffer => {
    const buf = device.createBuffer({ size: bytes, usage });
    made.push(buf);
    return buf;
  };
  const STORAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST
  try {
    device.pushErrorScope('validation');
    const [ga, gb] = [buffer(STORAGE), buffer(STORAGE)];
    device.queue.writeBuffer(ga, 0, a.buffer, 0, bytes);
    device.queue.writeBuffer(gb, 0, b.buffer, 0, bytes);
    const outs = [buffer(STORAGE), buffer(STORAGE), buffer(STORAGE)];
    const reads = outs.map(() => buffer(0x1 | 0x8)); // MAP_READ | COPY_DST
    const module = device.createShaderModule({ code: SHADER });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const bind = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [ga, gb, ...outs].map((buf, binding) => ({ binding, resource: { buffer: buf } })),
    });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(Math.ceil(a.length / 4 / 64));
    pass.end();
    outs.forEach((o, k) => enc.copyBufferToBuffer(o, 0, reads[k]!, 0, bytes));
    device.queue.submit([enc.finish()]);
    const error = await device.popErrorScope();
    if (error) return { ok: false, detail: `the check did not run: ${error.message}` };
    await Promise.all(reads.map((r) => r.mapAsync(1)));
    const got = reads.map((r) => new Uint16Array(r.getMappedRange().slice(0)));
    const ops: [string, (x: number, y: number) => number][] = [
      ['+', (x, y) => x + y],
      ['-', (x, y) => x - y],
      ['*', (x, y) => x * y],
    ];
    for (let i = 0; i < a.length; i++) {
      const [x, y] = [float16FromBits(a[i]!), float16FromBits(b[i]!)];
      for (let k = 0; k < 3; k++) {
        const exact = ops[k]![1](x, y);
        const h = got[k]![i]!;
        const nan = (h & 0x7fff) > 0x7c00;
        if (Number.isNaN(exact) ? !nan : h !== float16Bits(exact))
          return { ok: false, detail: `f16 ${x} ${ops[k]![0]} ${y} gave 0x${h.toString(16)}, not ${exact}` };
      }
    }
    return { ok: true, detail: `${a.length} f16 sums, differences and products agree` };
  } catch (e) {
    return { ok: false, detail: `the check did not run: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    for (const buf of made) buf.destroy();
  }
}

/** Runs both checks on `device` (it must have `shader-f16`); the first failure's detail, or both agreeing. */
export async function checkNativeFloat16(device: GpuDeviceLike): Promise<HalfCheck> {
  const conv = await checkHardwareFloat16(device, F16_NATIVE_CONVERSIONS);
  if (!conv.ok) return conv;
  const arith = await checkArithmetic(device);
  return arith.ok ? { ok: true, detail: `${conv.detail}; ${arith.detail}` } : arith;
}

/** Checks of earlier backends, by adapter. */
const checked = new Map<string, Promise<HalfCheck>>();

/** checkNativeFloat16 once per adapter `key` (the adapter's description); no key: every time. */
export function checkNativeFloat16Once(device: GpuDeviceLike, key: string | null): Promise<HalfCheck> {
  if (!key) return checkNativeFloat16(device);
  let c = checked.get(key);
  if (!c) {
    c = checkNativeFloat16(device);
    checked.set(key, c);
  }
  return c;
}
