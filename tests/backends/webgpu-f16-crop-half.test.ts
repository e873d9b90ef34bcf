// The crop of a float16 tensor-core product straight into float16 (backends/webgpu/src/kernels/
// matmul-f16-crop-half.ts, dispatched by dispatchHalfMatmul in place of a crop into float32 and a narrowing copy).
// lavapipe has no subgroup matrices, so the product itself does not run here; the crop kernel is dispatched on a
// padded float32 C made here, and each output half is checked against an oracle computed here: element (z, i, j)
// of the region is C[z, i, j] rounded by the HAL's float16Bits (IEEE 754's rule for NaN: quiet, sign and the top
// 10 payload bits kept), for values across float16's range and its edges (ties, subnormals, 65520, ±Inf, NaN);
// halves of the output's words outside the region (an odd first element or end) keep their bits.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type DeviceBuffer, float16Bits } from '@polyhal/hal';
import { CROP_HALF_WORDS, cropHalfProductToHalfWgsl } from '../../backends/webgpu/src/kernels/matmul-f16-crop-half.js';

interface Internals {
  batch: {
    dispatch(op: string, key: string, src: () => string, words: number, p: number[], b: GPUBuffer[], g: number[]): void;
  };
  reader: { read(b: DeviceBuffer): Promise<Float32Array | Int32Array> };
  gpu(b: DeviceBuffer, half: boolean): GPUBuffer;
  device: GPUDevice;
  float16Conversions: 'integer' | 'hardware';
}

const bitsOf = (x: number): number => new Uint32Array(new Float32Array([x]).buffer)[0]!;

/** binary16 bits of the float32 with bits `u`: the HAL's rounding, NaN by IEEE 754's rule. */
function wantHalf(u: number): number {
  const s = (u >>> 16) & 0x8000;
  const a = u & 0x7fffffff;
  if (a > 0x7f800000) return s | 0x7e00 | ((a >>> 13) & 0x3ff);
  return float16Bits(new Float32Array(new Uint32Array([u]).buffer)[0]!);
}

/** float32 bits: float16's edges first, then values over its range and past it, both signs. */
function values(n: number, seed: number): Uint32Array {
  const edge = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffa5a000, 0x7f801fff];
  for (const x of [65504, 65519, 65520, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -14, 1000.25]) edge.push(bitsOf(x));
  for (const x of [1, 1.5, 2048]) edge.push(bitsOf(x) + 0x1000, bitsOf(x) + 0x3000, (bitsOf(x) + 0x1000) | 0x80000000);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const u = Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453;
    const r = u - Math.floor(u);
    out[i] = i < edge.length ? edge[i]! : bitsOf((r * 2 - 1) * 2 ** (Math.floor(r * 40) - 26));
  }
  return out;
}

function suite(float16Conversions: 'auto' | 'integer'): void {
  let be: WebGpuBackend;
  let inner: Internals;
  beforeAll(async () => {
    be = await createWebGpuBackend({ float16Conversions });
    inner = be as unknown as Internals;
  });
  afterAll(() => be?.dispose());

  /**
   * Crops a padded C [items, Mp, Np] of `values` into elements [start, start + items·M·N) of a float16 output of
   * `size` elements prefilled with the halves `fill(e)`; returns the output's halves and C's float32 bits.
   */
  async function crop(dims: number[], items: number, start: number, size: number, fill: (e: number) => number) {
    const [M, N, Mp, Np] = dims as [number, number, number, number];
    const cBits = values(items * Mp * Np, M + N + start);
    const c = be.fromArray(new Float32Array(cBits.buffer), [cBits.length]);
    const out = be.allocate(size, 'float16');
    await be.synchronize();
    const init = Uint16Array.from({ length: size + (size & 1) }, (_, e) => fill(e));
    inner.device.queue.writeBuffer(inner.gpu(out, true), 0, init.buffer, 0, init.byteLength);
    const conv = inner.float16Conversions;
    const words = ((start + items * M * N + 1) >> 1) - (start >> 1);
    inner.batch.dispatch(
      'matmul',
      `matmul/f16-crop-half/${conv}`,
      () => cropHalfProductToHalfWgsl(conv),
      CROP_HALF_WORDS,
      [M, N, Mp, Np, start, items * M * N],
      [inner.gpu(c.buffer, false), inner.gpu(out, true)],
      [Math.ceil(words / 256), 1, 1],
    );
    const byteLength = Math.max(4, Math.ceil(size / 2) * 4);
    const r = await inner.reader.read({ ...out, dtype: 'int32', byteLength });
    const got = new Uint16Array(r.buffer, r.byteOffset, size);
    be.free(c);
    be.deallocate(out);
    return { got: Array.from(got), cBits };
  }

  /** The halves expected: the region's cropped, rounded values; the fill elsewhere. */
  function expected(dims: number[], items: number, start: number, size: number, fill: (e: number) => number) {
    const [M, N, Mp, Np] = dims as [number, number, number, number];
    const cBits = values(items * Mp * Np, M + N + start);
    return Array.from({ length: size }, (_, e) => {
      const r = e - start;
      if (r < 0 || r >= items * M * N) return fill(e);
      const [z, i, j] = [Math.floor(r / (M * N)), Math.floor((r % (M * N)) / N), r % N];
      return wantHalf(cBits[z * Mp * Np + i * Np + j]!);
    });
  }

  const cases: [string, number[], number, number, number][] = [
    ['one item, an even region of odd length (the last word half kept)', [5, 7, 64, 64], 1, 0, 36],
    ['three items from an odd first element (both boundary words kept)', [5, 7, 8, 16], 3, 35, 142],
    ['attention-like [197, 197] padded to 256', [197, 197, 256, 256], 2, 197 * 197, 3 * 197 * 197],
    ['[197, 64] padded to [256, 64]', [197, 64, 256, 64], 2, 0, 2 * 197 * 64],
  ];
  test.each(cases)('%s', async (_, dims, items, start, size) => {
    const fill = (e: number): number => 0x3c00 + (e % 977); // 1.0 upwards: not a value the crop writes
    const { got } = await crop(dims, items, start, size, fill);
    expect(got).toEqual(expected(dims, items, start, size, fill));
  });
}

describe('float16 crop of a tensor-core product, integer conversions', () => suite('integer'));
describe("float16 crop of a tensor-core product, the adapter's conversions where checked", () => suite('auto'));
