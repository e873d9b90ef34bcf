// The 8-wide contiguous casts between float32 and float16 in 2-byte storage (backends/webgpu/src/kernels/
// half-cast-vec.ts, dispatched by dispatchCopyHalf in dispatch-half.ts): float32 → float16 and float16 → float32
// of contiguous arrays into row-major regions, count and offsets multiples of 8, through the copy hooks as the
// HAL's cast and autocast reach them. Each result is read as raw bits and checked against an oracle computed here
// (the HAL's float16Bits / float16FromBits, and IEEE 754's rule for NaN: quiet, sign and the top 10 payload bits
// kept), and bit for bit against the general kernel (copyHalfWgsl) run on a non-contiguous view of the same values;
// the kernel that ran is read from the pipeline key of its dispatch. Counts and offsets that are not multiples of 8
// fall back to the general kernel with the same bits, and a capture merges two of the new casts into one dispatch.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type DeviceBuffer, float16Bits, float16FromBits, type NDArray, viewOf } from '@polyhal/hal';
import { type Capturing, captureRun } from '../support/capture-run.js';

type CopyInto = (x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number) => void;
interface Internals {
  batch: { dispatch: (op: string, key: string, ...rest: unknown[]) => void };
  copyIntoKernel: CopyInto;
  reader: { read(b: DeviceBuffer): Promise<Float32Array | Int32Array> };
  gpu(b: DeviceBuffer, half: boolean): GPUBuffer;
  device: GPUDevice;
}

interface Setup {
  be: WebGpuBackend;
  keys: string[];
  copyInto: CopyInto;
  inner: Internals;
}

async function setup(float16Conversions: 'auto' | 'integer'): Promise<Setup> {
  const be = await createWebGpuBackend({ float16Conversions });
  const inner = be as unknown as Internals;
  const keys: string[] = [];
  const dispatch = inner.batch.dispatch.bind(inner.batch);
  inner.batch.dispatch = (op: string, key: string, ...rest: unknown[]): void => {
    keys.push(key);
    dispatch(op, key, ...rest);
  };
  return { be, keys, copyInto: inner.copyIntoKernel.bind(be), inner };
}

/** binary16 bits of the float32 with bits `u`: the HAL's rounding, NaN by IEEE 754's rule. */
function wantHalf(u: number): number {
  const s = (u >>> 16) & 0x8000;
  const a = u & 0x7fffffff;
  if (a > 0x7f800000) return s | 0x7e00 | ((a >>> 13) & 0x3ff);
  const f = new Float32Array(new Uint32Array([u]).buffer)[0]!;
  return float16Bits(f);
}

/**
 * float32 bits of the binary16 `h` (exact; NaN: sign and payload kept, quiet bit as it is — or set, `quiet`: WGSL's
 * unpack2x16float, the 'hardware' conversions, may quiet a signaling NaN, and half-check.ts accepts any NaN).
 */
function wantWide(h: number, quiet = false): number {
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0x1f && m !== 0) return (((h & 0x8000) << 16) | 0x7f800000 | (m << 13) | (quiet ? 0x400000 : 0)) >>> 0;
  return new Uint32Array(new Float32Array([float16FromBits(h)]).buffer)[0]!;
}

const f32 = (bits: Uint32Array): Float32Array => new Float32Array(bits.buffer, bits.byteOffset, bits.length);

/** Deterministic float32 bits over float16's range and past it, both signs. */
function mixed(n: number, seed: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const u = Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453;
    const r = u - Math.floor(u);
    const v = (r * 2 - 1) * 2 ** (Math.floor(r * 44) - 28) * (1 + i / 7);
    out[i] = new Uint32Array(new Float32Array([v]).buffer)[0]!;
  }
  return out;
}

/**
 * The special float32 inputs: ±0, float16 subnormals and the float32 values around them, the ties between two
 * float16s (even and odd below), the largest finite 65504, 65519 (→ 65504), 65520 (→ Inf), ±Inf, NaNs with
 * payloads (quiet and signaling, bits above and below the 10 kept), values below half the smallest subnormal.
 */
function specials(): Uint32Array {
  const v: number[] = [0, 0x80000000, 0x7f800000, 0xff800000];
  const bits = (x: number): number => new Uint32Array(new Float32Array([x]).buffer)[0]!;
  for (const x of [65504, 65519, 65519.996, 65520, 65536, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -14, 2 ** -15]) {
    v.push(bits(x), bits(-x));
  }
  for (const k of [1, 2, 3, 511, 512, 1023]) v.push(bits(k * 2 ** -24), bits(-(k + 0.5) * 2 ** -24));
  for (const x of [1, 1.5, 1000, 2048, 0.099975586]) {
    const u = bits(x);
    v.push(u + 0x1000, u + 0x3000, u + 0xfff, u + 0x1001, (u + 0x1000) | 0x80000000);
  }
  v.push(0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fa00000, 0x7f802000, 0x7fffe000, 0x7f801fff, 0xffa5a000);
  v.push(0x33000000, 0x33000001, 0x32ffffff, 0x00000001, 0x80800000);
  while (v.length % 8 !== 0) v.push(bits(v.length));
  return Uint32Array.from(v, (u) => u >>> 0);
}

/** Every binary16 pattern in turn, 65536 of them. */
const allHalves = (): Uint16Array => Uint16Array.from({ length: 65536 }, (_, i) => i);

function suite(conversions: 'auto' | 'integer'): void {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(conversions);
  });
  afterAll(() => s?.be.dispose());

  const take = (prefix: string): string[] => {
    const k = s.keys.filter((x) => x.startsWith(prefix));
    s.keys.length = 0;
    return k;
  };

  /** The raw 32-bit words of a buffer's storage (float16: two halves a word). */
  async function raw(b: DeviceBuffer, half: boolean): Promise<Uint32Array> {
    const byteLength = half ? Math.max(4, Math.ceil(b.size / 2) * 4) : b.size * 4;
    const r = await s.inner.reader.read({ ...b, dtype: 'int32', byteLength });
    return new Uint32Array(r.buffer, r.byteOffset, byteLength / 4);
  }
  const halves = async (b: DeviceBuffer): Promise<Uint16Array> => {
    const w = await raw(b, true);
    return new Uint16Array(w.buffer, w.byteOffset, b.size);
  };

  /** A float16 buffer of `size` elements holding exactly `bits`. */
  async function halfBuffer(bits: Uint16Array): Promise<DeviceBuffer> {
    const b = s.be.allocate(bits.length, 'float16');
    await s.be.synchronize();
    const words = new Uint16Array(bits.length + (bits.length & 1));
    words.set(bits);
    s.inner.device.queue.writeBuffer(s.inner.gpu(b, true), 0, words.buffer, 0, words.byteLength);
    return b;
  }

  /**
   * `src` (float32 bits, or binary16 bits when `widen`) cast through copyIntoKernel: elements [off, off + n) of
   * the source into [dOff, dOff + n) of a destination prefilled with `fill` (float16 bits or float32 bits), read
   * back raw; `permuted` reads the source through a non-contiguous view of a permuted copy (the general kernel).
   */
  async function cast(
    src: Uint32Array | Uint16Array,
    widen: boolean,
    n: number,
    off: number,
    dOff: number,
    permuted = false,
  ) {
    const len = src.length;
    let data = src;
    let view: Pick<NDArray, 'shape' | 'strides' | 'offset'> = { shape: [n], strides: [1], offset: off };
    if (permuted) {
      // [2, n/2] with strides [1, 2] from `off`: element (i, j) is storage off + i + 2j, row-major position i·n/2 + j
      const h = n / 2;
      data = src.slice();
      for (let i = 0; i < 2; i++) for (let j = 0; j < h; j++) data[off + i + 2 * j] = src[off + i * h + j]!;
      view = { shape: [2, h], strides: [1, 2], offset: off };
    }
    const x = widen
      ? await halfBuffer(data as Uint16Array)
      : s.be.fromArray(f32(data as Uint32Array), [len], 'float32').buffer;
    const size = dOff + n + 5;
    const dst = widen
      ? s.be.fromArray(f32(Uint32Array.from({ length: size }, (_, i) => 0x7f80dead + i)), [size], 'float32').buffer
      : await halfBuffer(Uint16Array.from({ length: size }, (_, i) => (0x1234 + i) & 0xffff));
    take('');
    const shape = view.shape;
    const strides = shape.length === 1 ? [1] : [shape[1]!, 1];
    s.copyInto({ buffer: x, dtype: 'float32', ...view }, dst, strides, dOff);
    const keys = take('copyh');
    const got = widen ? await raw(dst, false) : Uint32Array.from(await halves(dst));
    s.be.free(viewOf(x));
    s.be.free(viewOf(dst));
    return { got, keys };
  }

  /** Checks a cast against the oracle, the prefilled elements outside it, and the general kernel's bits. */
  async function check(src: Uint32Array | Uint16Array, widen: boolean, n: number, off: number, dOff: number) {
    const { got, keys } = await cast(src, widen, n, off, dOff);
    const size = dOff + n + 5;
    const want = Uint32Array.from({ length: size }, (_, i) => {
      if (i < dOff || i >= dOff + n) return widen ? (0x7f80dead + i) >>> 0 : (0x1234 + i) & 0xffff;
      const u = src[off + i - dOff]!;
      return widen ? wantWide(u, s.be.float16Conversions === 'hardware') : wantHalf(u);
    });
    expect(Array.from(got)).toEqual(Array.from(want));
    if (n % 2 === 0) {
      const twin = await cast(src, widen, n, off, dOff, true);
      expect(twin.keys).toEqual([expect.stringMatching(widen ? /^copyh\/.*\/wide\// : /^copyh\/.*\/words\//)]);
      expect(Array.from(twin.got)).toEqual(Array.from(got));
    }
    return keys;
  }

  const vec = (dir: string): RegExp => new RegExp(`^copyh8/${dir}/(integer|hardware)$`);

  test('float32 → float16, contiguous, 8 wide: 8, 64, 1000, 4800 elements from offsets 0 and 8', async () => {
    for (const n of [8, 64, 1000, 4800]) {
      for (const [off, dOff] of [
        [0, 0],
        [8, 0],
        [0, 8],
        [8, 16],
      ] as const) {
        const keys = await check(mixed(n + off, n), false, n, off, dOff);
        expect(keys).toEqual([expect.stringMatching(vec('narrow'))]);
      }
    }
  });

  test('float16 → float32, contiguous, 8 wide: 8, 64, 1000, 4800 elements from offsets 0 and 8', async () => {
    for (const n of [8, 64, 1000, 4800]) {
      for (const [off, dOff] of [
        [0, 0],
        [8, 8],
      ] as const) {
        const src = Uint16Array.from(mixed(n + off, n + 1), (u) => wantHalf(u));
        const keys = await check(src, true, n, off, dOff);
        expect(keys).toEqual([expect.stringMatching(vec('widen'))]);
      }
    }
  });

  test('special values both ways: zeros, subnormals, ties, 65504, 65519, 65520, ±Inf, NaN payloads', async () => {
    const sp = specials();
    expect(await check(sp, false, sp.length, 0, 0)).toEqual([expect.stringMatching(vec('narrow'))]);
    const h = Uint16Array.from(sp, (u) => wantHalf(u));
    expect(await check(h, true, h.length, 0, 0)).toEqual([expect.stringMatching(vec('widen'))]);
  });

  test('every binary16 pattern widened, and each narrowed back (NaNs quieted)', async () => {
    const all = allHalves();
    expect(await check(all, true, all.length, 0, 0)).toEqual([expect.stringMatching(vec('widen'))]);
    const wide = Uint32Array.from(all, (h) => wantWide(h));
    expect(await check(wide, false, wide.length, 0, 0)).toEqual([expect.stringMatching(vec('narrow'))]);
  });

  test('counts and offsets that are not multiples of 8: the general kernel, the same bits', async () => {
    const general = (dir: 'words' | 'wide'): unknown[] => [expect.stringMatching(new RegExp(`^copyh/.*/${dir}/`))];
    for (const [n, off, dOff] of [
      [1004, 0, 0],
      [4800, 3, 0],
      [4800, 0, 3],
      [64, 4, 0],
      [1001, 8, 8],
    ] as const) {
      expect(await check(mixed(n + off, 3), false, n, off, dOff)).toEqual(general('words'));
      const h = Uint16Array.from(mixed(n + off, 4), (u) => wantHalf(u));
      expect(await check(h, true, n, off, dOff)).toEqual(general('wide'));
    }
  });
}

describe('8-wide float32 ↔ float16 casts, the adapter-checked conversions (auto)', () => suite('auto'));
describe('8-wide float32 ↔ float16 casts, the integer conversions', () => suite('integer'));

describe('the 8-wide casts inside a capture', () => {
  let merged: Capturing;
  let plain: Capturing;
  beforeAll(async () => {
    merged = (await createWebGpuBackend()) as unknown as Capturing;
    plain = (await createWebGpuBackend({ mergeInCapture: false })) as unknown as Capturing;
  });
  afterAll(() => {
    for (const be of [merged, plain]) be?.dispose();
  });

  test('two independent casts to float16 merge into one dispatch; replays round as the oracle', async () => {
    const shape = [24, 40];
    const n = 960;
    const x0 = f32(mixed(n, 5));
    const next = f32(mixed(n, 6));
    const work = (be: Capturing, x: NDArray): NDArray[] => {
      const y = be.fromArray(f32(mixed(n, 7)), shape);
      const out = [be.cast(x, 'float16'), be.cast(y, 'float16')];
      be.free(y);
      return out;
    };
    const m = await captureRun(merged, x0, next, shape, work);
    const p = await captureRun(plain, x0, next, shape, work);
    expect(p.kernels).toBe(2);
    expect(m.kernels).toBe(1);
    expect(m.replayed).toEqual(p.replayed);
    const want = (bits: Uint32Array): number[] => Array.from(bits, (u) => float16FromBits(wantHalf(u)));
    expect(m.replayed[0]).toEqual(want(mixed(n, 6)));
    expect(m.replayed[1]).toEqual(want(mixed(n, 7)));
  });
});
