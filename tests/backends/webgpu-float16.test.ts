// float16 on webgpu in 2 bytes per element (the packedFloat16 hook; backends/webgpu/src/dispatch-half.ts):
// the storage size, and, bit for bit against the cpu backend (float16 in float32 storage, rounded by the
// HAL's host-independent rules), the paths that touch the two halves of a word — odd sizes and offsets,
// writes into part of a word (concat, pad), strided destinations (atomic), strided and broadcast reads,
// every float16 value through a cast, and the float32-only kernels reached through float32 copies.
// (cumsum and topk take float32, int32 and float64 only.)
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { checkHardwareFloat16, createWebGpuBackend, f16Wgsl, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
/** The fixture's webgpu backend converts as its check decided; this one with the integer conversions. */
let integer: WebGpuBackend | undefined;
beforeAll(async () => {
  if (fixture.backends['webgpu']) integer = await createWebGpuBackend({ float16Conversions: 'integer' });
});
afterAll(() => integer?.dispose());
let current: () => ComputeBackend | undefined = () => fixture.backends['webgpu'];
const gpu = (): ComputeBackend | undefined => current();

/** Deterministic float16-representable values with the special ones mixed in. */
const SPECIAL = [Number.NaN, Infinity, -Infinity, -0, 0, 2 ** -24, -(2 ** -20), 65504, -65504, 0.5];
const values = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) =>
    i % 5 === 0 ? SPECIAL[(i / 5 + seed) % SPECIAL.length]! : Math.round(Math.sin(i * seed + 1) * 3000) / 64,
  );

/** The same program on cpu and webgpu; their results as raw bits (float16 values are float32-exact). */
async function same(program: (be: ComputeBackend) => NDArray): Promise<void> {
  const be = gpu();
  if (!be) return;
  const bits = async (b: ComputeBackend): Promise<number[]> => {
    const x = program(b);
    const d = await b.read(x);
    b.free(x);
    return Array.from(d instanceof Float32Array ? new Int32Array(d.buffer, d.byteOffset, d.length) : d);
  };
  const [want, got] = [await bits(fixture.cpu), await bits(be)];
  // NaN payloads are not part of the contract: any NaN matches any NaN
  const nan = (v: number): number => ((v & 0x7fffffff) >>> 0 > 0x7f800000 ? 0x7fc00000 : v);
  expect(got.map(nan)).toEqual(want.map(nan));
}

const h = (be: ComputeBackend, n: number, seed: number, shape: number[] = [n]): NDArray =>
  be.fromArray(values(n, seed), shape, 'float16');

describe("the check of the adapter's float16 conversions", () => {
  test('the integer conversions pass it; conversions that truncate or flush subnormals fail it', async () => {
    const be = fixture.backends['webgpu'] as WebGpuBackend | undefined;
    if (!be) return;
    expect(await checkHardwareFloat16(be.device, f16Wgsl('integer'))).toEqual({ ok: true, detail: expect.any(String) });
    const hardware = (await checkHardwareFloat16(be.device)).ok;
    expect(be.float16Conversions).toBe(hardware ? 'hardware' : 'integer');
    const truncating = f16Wgsl('integer').replace('r = r + 0x2000u;', 'r = r;');
    const t = await checkHardwareFloat16(be.device, truncating);
    expect(t.ok).toBe(false);
    expect(t.detail).toMatch(/^pack2x16float\(.*\) gave 0x[0-9a-f]+, not 0x[0-9a-f]+$/);
    const flushing = f16Wgsl('integer').replace('if (m == 0u) { return bitcast<f32>(s); }', 'return bitcast<f32>(s);');
    const f = await checkHardwareFloat16(be.device, flushing);
    expect(f.ok).toBe(false);
    expect(f.detail).toMatch(/^unpack2x16float\(0x[0-9a-f]+\) gave -?0, not/);
  });
});

for (const mode of ['as checked', 'integer conversions'] as const)
  describe(`webgpu float16 in 2-byte storage (${mode})`, () => {
    beforeAll(() => {
      current = mode === 'integer conversions' ? () => integer : () => fixture.backends['webgpu'];
    });
    test('float16 arrays take 2 bytes per element (float32 4)', () => {
      const be = gpu();
      if (!be) return;
      const before = be.memoryStats().liveBytes;
      const x = h(be, 1001, 1);
      expect(be.memoryStats().liveBytes - before).toBe(2002);
      const y = be.cast(x, 'float32');
      expect(be.memoryStats().liveBytes - before).toBe(2002 + 4004);
      be.free(x);
      be.free(y);
    });

    test('every finite and special float16 survives write, cast to float32 and back, and read', async () => {
      const all = new Float32Array(0x10000);
      for (let b = 0; b < 0x10000; b++) {
        const e = (b >> 10) & 0x1f;
        const m = b & 0x3ff;
        const s = b & 0x8000 ? -1 : 1;
        all[b] = e === 31 ? (m ? Number.NaN : s * Infinity) : s * (e ? (1 + m / 1024) * 2 ** (e - 15) : m * 2 ** -24);
      }
      await same((be) => {
        const x = be.fromArray(all, [all.length], 'float16');
        const back = be.cast(be.cast(x, 'float32'), 'float16');
        return be.cast(back, 'float32');
      });
    });

    for (const n of [1, 7, 64, 1023]) {
      test(`elementwise, ${n} elements: add, mul, div, sqrt, neg, maximum, less, and a broadcast row`, async () => {
        for (const op of ['add', 'mul', 'div', 'maximum', 'sub'] as const)
          await same((be) => be.binary(op, h(be, n, 2), h(be, n, 3)));
        await same((be) => be.unary('sqrt', h(be, n, 4)));
        await same((be) => be.unary('neg', h(be, n, 5)));
        await same((be) => be.binary('less', h(be, n, 6), h(be, n, 7)));
        await same((be) => be.binary('add', h(be, 3 * n, 8, [3, n]), h(be, n, 9, [1, n])));
      });
    }

    test('strided reads: a transposed operand, a view at an odd offset', async () => {
      await same((be) => be.binary('mul', be.permute(h(be, 35, 1, [5, 7]), [1, 0]), h(be, 35, 2, [7, 5])));
      await same((be) => be.unary('abs', be.shrink(h(be, 20, 3), [[3, 14]])));
      await same((be) => be.contiguous(be.permute(h(be, 60, 4, [3, 4, 5]), [2, 0, 1])));
    });

    test('matmul into float16 (the kernels round once): odd sizes, a batch, a bias, a transposed operand', async () => {
      const small = (be: ComputeBackend, n: number, seed: number, shape: number[]): NDArray =>
        be.fromArray(
          Float32Array.from(values(n, seed), (v) => (Number.isFinite(v) ? v / 64 : 0.5)),
          shape,
          'float16',
        );
      await same((be) => be.matmul(small(be, 35, 1, [5, 7]), small(be, 21, 2, [7, 3])));
      await same((be) => be.matmul(small(be, 70, 3, [2, 5, 7]), small(be, 42, 4, [2, 7, 3])));
      await same((be) => be.matmul(small(be, 35, 5, [5, 7]), small(be, 21, 6, [7, 3]), small(be, 3, 7, [3])));
      await same((be) => be.matmul(small(be, 35, 8, [5, 7]), be.permute(small(be, 21, 9, [3, 7]), [1, 0])));
    });

    test('writes into part of a word: concat at odd offsets, pad, concat along an inner axis (strided)', async () => {
      await same((be) => be.concat([h(be, 3, 1), h(be, 4, 2), h(be, 5, 3)], 0));
      await same((be) =>
        be.pad(
          h(be, 15, 4, [3, 5]),
          [
            [1, 2],
            [3, 1],
          ],
          0.25,
        ),
      );
      await same((be) => be.concat([h(be, 6, 5, [2, 3]), h(be, 2, 6, [2, 1]), h(be, 10, 7, [2, 5])], 1));
    });

    test('float32-only kernels through float32 copies: sum, max, where, gather, scatterAdd', async () => {
      await same((be) => be.reduce('sum', h(be, 35, 1, [5, 7]), 1));
      await same((be) => be.reduce('max', h(be, 35, 2, [5, 7]), 0));
      await same((be) => be.where(be.binary('less', h(be, 9, 3), h(be, 9, 4)), h(be, 9, 5), h(be, 9, 6)));
      await same((be) => be.gather(h(be, 12, 7, [4, 3]), be.fromArray(Int32Array.of(3, 0, 3, 1), [4]), 0));
      await same((be) =>
        be.scatterAdd(h(be, 10, 8, [5, 2]), be.fromArray(Int32Array.of(1, 1, 4), [3]), h(be, 6, 9, [3, 2]), 0),
      );
    });
  });
