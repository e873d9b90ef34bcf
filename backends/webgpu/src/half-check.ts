/**
 * Whether this adapter's float16 conversions (`pack2x16float`, `unpack2x16float`: core WGSL, whose
 * rounding and subnormal handling WGSL leaves to the implementation) give exactly the results of the
 * integer conversions the float16 kernels use otherwise (kernels/half.ts): one dispatch at backend
 * creation encodes every float16 value, every midpoint between neighbours (ties: nearest even) and the
 * float32 values one unit on either side of each midpoint, both signs, the edges of the range (65504,
 * 65520, 2^-24, 2^-25, float32 subnormals), and decodes all 65,536 bit patterns; the results are compared
 * with the HAL's float16Bits/float16FromBits on the host. Any difference → the integer conversions.
 */
import { float16Bits, float16FromBits } from '@polyhal/hal';
import type { GpuDeviceLike } from './gpu-types.js';
import { f16Wgsl } from './kernels/half.js';
import { floatBits } from './layout.js';

const bitsOf = (v: number): number => floatBits(v) >>> 0;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const floatOf = (b: number): number => {
  u32[0] = b >>> 0;
  return f32[0]!;
};

/** The float32 bit patterns to encode. */
function encodeInputs(): Uint32Array {
  const out: number[] = [0x00000001, 0x007fffff, bitsOf(2 ** -25), bitsOf(2 ** -26), bitsOf(65519.99)];
  for (let h = 0; h < 0x7c00; h++) {
    const v = float16FromBits(h);
    const next = h === 0x7bff ? 65536 : float16FromBits(h + 1);
    const mid = bitsOf((v + next) / 2); // 12 significant bits: exact in float32
    out.push(bitsOf(v), mid, mid - 1, mid + 1);
  }
  const n = out.length;
  for (let i = 0; i < n; i++) out.push((out[i]! | 0x80000000) >>> 0);
  return Uint32Array.from(out);
}

const SHADER = (count: number, conversions: string): string => `${conversions}
@group(0) @binding(0) var<storage, read> enc_in: array<u32>;
@group(0) @binding(1) var<storage, read_write> enc_out: array<u32>;
@group(0) @binding(2) var<storage, read_write> dec_out: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i < ${count}u) { enc_out[i] = f16_bits(enc_in[i]); }
  if (i < 65536u) { dec_out[i] = bitcast<u32>(f16_value(i)); }
}`;

/** What the check found: `ok`, and the first difference when not. */
export interface HalfCheck {
  /** Whether the device's float16 encode and decode agree with the host's for every value tried. */
  ok: boolean;
  /** The first difference in words, or what agreed when ok. */
  detail: string;
}

/**
 * Runs the check on `device` (one dispatch, about 250,000 encodes and 65,536 decodes) of `conversions`:
 * WGSL defining f16_bits and f16_value, by default the hardware ones (kernels/half.ts f16Wgsl).
 */
export async function checkHardwareFloat16(
  device: GpuDeviceLike,
  conversions: string = f16Wgsl('hardware'),
): Promise<HalfCheck> {
  const input = encodeInputs();
  const n = input.length;
  const usage = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST
  const made: GPUBuffer[] = [];
  const buffer = (size: number, u = usage): GPUBuffer => {
    const b = device.createBuffer({ size, usage: u });
    made.push(b);
    return b;
  };
  try {
    device.pushErrorScope('validation');
    const encIn = buffer(n * 4);
    device.queue.writeBuffer(encIn, 0, input.buffer, 0, n * 4);
    const [encOut, decOut] = [buffer(n * 4), buffer(65536 * 4)];
    const module = device.createShaderModule({ code: SHADER(n, conversions) });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const bind = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [encIn, encOut, decOut].map((b, binding) => ({ binding, resource: { buffer: b } })),
    });
    const [readEnc, readDec] = [buffer(n * 4, 0x1 | 0x8), buffer(65536 * 4, 0x1 | 0x8)];
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(Math.ceil(Math.max(n, 65536) / 256));
    pass.end();
    enc.copyBufferToBuffer(encOut, 0, readEnc, 0, n * 4);
    enc.copyBufferToBuffer(decOut, 0, readDec, 0, 65536 * 4);
    device.queue.submit([enc.finish()]);
    const error = await device.popErrorScope();
    if (error) return { ok: false, detail: `the check did not run: ${error.message}` };
    await Promise.all([readEnc.mapAsync(1), readDec.mapAsync(1)]);
    const encoded = new Uint32Array(readEnc.getMappedRange().slice(0));
    const decoded = new Uint32Array(readDec.getMappedRange().slice(0));
    for (let i = 0; i < n; i++) {
      const want = float16Bits(floatOf(input[i]!));
      if (encoded[i] !== want)
        return {
          ok: false,
          detail: `pack2x16float(${floatOf(input[i]!)}) gave 0x${encoded[i]!.toString(16)}, not 0x${want.toString(16)}`,
        };
    }
    for (let h = 0; h < 65536; h++) {
      const v = float16FromBits(h);
      const got = decoded[h]!;
      const isNan = (got & 0x7fffffff) > 0x7f800000;
      if (Number.isNaN(v) ? !isNan : got !== bitsOf(v))
        return { ok: false, detail: `unpack2x16float(0x${h.toString(16)}) gave ${floatOf(got)}, not ${v}` };
    }
    return { ok: true, detail: `${n} encodes and 65536 decodes agree` };
  } catch (e) {
    return { ok: false, detail: `the check did not run: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    for (const b of made) b.destroy();
  }
}

/** Checks of earlier backends, by adapter (every device of one adapter converts alike). */
const checked = new Map<string, Promise<HalfCheck>>();

/** checkHardwareFloat16 once per adapter `key` (the adapter's description); no key: every time. */
export function checkHardwareFloat16Once(device: GpuDeviceLike, key: string | null): Promise<HalfCheck> {
  if (!key) return checkHardwareFloat16(device);
  let c = checked.get(key);
  if (!c) {
    c = checkHardwareFloat16(device);
    checked.set(key, c);
  }
  return c;
}
