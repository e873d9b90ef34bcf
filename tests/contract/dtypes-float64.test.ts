import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { loadSafetensors, saveSafetensors, Tensor } from '@polyhal/autograd';
import { type ComputeBackend, type DType, type HostArray, roundFloat16, UnsupportedOpError } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

// float64 (hal/src/contract/host-float64.ts): on cpu, wasm and reference — the backends with the hostStorage hook
// — every kernel that touches float64 runs on the host in float64; webgpu refuses to create one. Values
// beyond float32's precision survive upload, arithmetic, reductions, casts and movement bit for bit.

const fx = crossBackends();
const withF64 = (): [string, ComputeBackend][] =>
  [['cpu', fx.cpu] as [string, ComputeBackend], ...Object.entries(fx.backends)].filter(([, be]) =>
    be.supportsDType!('float64'),
  );

async function run(be: ComputeBackend, f: (keep: <T extends { buffer: unknown }>(x: T) => T) => unknown) {
  const live = be.liveBufferCount();
  const kept: { buffer: unknown }[] = [];
  try {
    return await f((x) => {
      kept.push(x);
      return x;
    });
  } finally {
    for (const x of kept) be.free(x as never);
    expect(be.liveBufferCount()).toBe(live);
  }
}

describe('float64', () => {
  test('cpu, wasm and reference have it; webgpu throws UnsupportedOpError naming float64', () => {
    expect(fx.cpu.supportsDType('float64')).toBe(true);
    for (const name of ['wasm', 'reference'])
      if (fx.backends[name]) expect(fx.backends[name]!.supportsDType!('float64')).toBe(true);
    const gpu = fx.backends['webgpu'];
    if (gpu) {
      expect(gpu.supportsDType!('float64')).toBe(false);
      expect(() => gpu.fromArray([1], [1], 'float64')).toThrow(UnsupportedOpError);
      expect(() => gpu.full([2], 0, 'float64')).toThrow(/float64/);
      const x = gpu.fromArray([1], [1]);
      expect(() => gpu.cast(x, 'float64')).toThrow(UnsupportedOpError);
      gpu.free(x);
    }
  });

  test('values past float32 precision survive: upload, read, add, mul, div, sqrt, exp, sum, max, cumsum', async () => {
    const a = [0.1, 1 / 3, 1e300, -2.5e-310, Math.PI, 1 + 2 ** -52, Number.NaN, -Infinity];
    const b = [0.2, 3, 1e-300, 7, -Math.E, 1 - 2 ** -53, 1, 2];
    for (const [name, be] of withF64()) {
      await run(be, async (k) => {
        const A = k(be.fromArray(Float64Array.from(a), [8], 'float64'));
        const B = k(be.fromArray(b, [8], 'float64'));
        const read = async (x: { buffer: unknown }) => Array.from((await be.read(k(x as never))) as Float64Array);
        const got = await be.read(A);
        expect(got).toBeInstanceOf(Float64Array);
        expect(Array.from(got)).toEqual(a);
        expect(await read(be.add(A, B))).toEqual(a.map((x, i) => x + b[i]!));
        expect(await read(be.mul(A, B))).toEqual(a.map((x, i) => x * b[i]!));
        expect(await read(be.div(A, B))).toEqual(a.map((x, i) => x / b[i]!));
        expect(await read(be.sqrt(k(be.abs(B))))).toEqual(b.map((x) => Math.sqrt(Math.abs(x))));
        expect(await read(be.exp(B))).toEqual(b.map(Math.exp));
        const c = k(be.fromArray(b.slice(0, 6), [2, 3], 'float64'));
        expect(await read(be.sum(c, 1))).toEqual([0.2 + 3 + 1e-300, 7 + -Math.E + (1 - 2 ** -53)]);
        expect(await read(be.max(c, 0))).toEqual([7, 3, 1 - 2 ** -53]);
        expect(await read(be.cumsum(c, 1))).toEqual([
          0.2,
          0.2 + 3,
          0.2 + 3 + 1e-300,
          7,
          7 - Math.E,
          7 - Math.E + (1 - 2 ** -53),
        ]);
        expect(await read(be.less(A, B))).toEqual(a.map((x, i) => (x < b[i]! ? 1 : 0)));
        expect((await be.read(k(be.less(A, B)))).constructor).toBe(Uint8Array);
      }).catch((e) => {
        throw new Error(`${name}: ${(e as Error).message}`);
      });
    }
  });

  test('casts from float64 round once (float32, float16) or saturate (integers); to float64 are exact', async () => {
    // 1 + 2^-11 + 2^-40 rounds to float16 1 + 2^-10 directly, but to 1 through float32 (double rounding)
    const v = [1 + 2 ** -11 + 2 ** -40, 0.1, 65519.99999999999, 1e300, -1e300, Number.NaN, -0, 2 ** 31 - 0.5, -129.9];
    const want: Record<string, number[]> = {
      float32: v.map(Math.fround),
      float16: v.map(roundFloat16),
      int32: [1, 0, 65519, 2147483647, -2147483648, 0, 0, 2147483647, -129],
      int8: [1, 0, 127, 127, -128, 0, 0, 127, -128],
      uint8: [1, 0, 255, 255, 0, 0, 0, 255, 0],
      bool: [1, 1, 1, 1, 1, 1, 0, 1, 1],
    };
    expect(roundFloat16(v[0]!)).toBe(1 + 2 ** -10);
    for (const [name, be] of withF64()) {
      await run(be, async (k) => {
        const x = k(be.fromArray(v, [v.length], 'float64'));
        for (const [to, w] of Object.entries(want)) {
          const got = Array.from(await be.read(k(be.cast(x, to as DType))));
          expect([to, got]).toEqual([to, w]);
        }
        const sources: [DType, HostArray][] = [
          ['float32', Float32Array.of(0.1, -3)],
          ['float16', Float32Array.of(0.0999755859375, 65504)],
          ['int32', Int32Array.of(-2147483648, 7)],
          ['int8', Int8Array.of(-128, 127)],
          ['uint8', Uint8Array.of(255, 0)],
        ];
        for (const [from, data] of sources) {
          const y = k(be.cast(k(be.fromArray(data, [2], from)), 'float64'));
          expect(Array.from(await be.read(y))).toEqual(Array.from(data));
        }
      }).catch((e) => {
        throw new Error(`${name}: ${(e as Error).message}`);
      });
    }
  });

  test('movement, layout and index ops move float64 bits: pad, concat, flip, gather, where, scatter', async () => {
    const a = [0.1, 0.2, 0.30000000000000004, 1e-320];
    for (const [name, be] of withF64()) {
      await run(be, async (k) => {
        const x = k(be.fromArray(a, [2, 2], 'float64'));
        const read = async (y: { buffer: unknown }) => Array.from(await be.read(k(y as never)));
        expect(
          await read(
            be.pad(
              x,
              [
                [0, 0],
                [1, 0],
              ],
              1 / 3,
            ),
          ),
        ).toEqual([1 / 3, 0.1, 0.2, 1 / 3, 0.30000000000000004, 1e-320]);
        expect(await read(be.concat([x, x], 0))).toEqual([...a, ...a]);
        expect(await read(be.contiguous(be.flip(x, [1])))).toEqual([0.2, 0.1, 1e-320, 0.30000000000000004]);
        const idx = k(be.fromArray(Int32Array.of(1, 5, -2), [3]));
        expect(await read(be.gather(x, idx, 1))).toEqual([
          0.2,
          Number.NaN,
          0.1,
          1e-320,
          Number.NaN,
          0.30000000000000004,
        ]);
        const cond = k(be.greater(x, 0.15));
        expect(await read(be.where(cond, x, -1e-300))).toEqual([-1e-300, 0.2, 0.30000000000000004, -1e-300]);
        const upd = k(be.fromArray([1e-17, 2e-17], [1, 2], 'float64'));
        const at = k(be.fromArray(Int32Array.of(0), [1]));
        expect(await read(be.scatterAdd(x, at, upd, 0))).toEqual([
          0.1 + 1e-17,
          0.2 + 2e-17,
          0.30000000000000004,
          1e-320,
        ]);
        expect(await read(be.logsumexp(x, 1))).toEqual([
          expect.closeTo(Math.log(Math.exp(0.1) + Math.exp(0.2)), 15),
          expect.closeTo(Math.log(Math.exp(0.30000000000000004) + 1), 15),
        ]);
      }).catch((e) => {
        throw new Error(`${name}: ${(e as Error).message}`);
      });
    }
  });
});

describe('float64 in autograd', () => {
  test('cast float32 → float64 → float32 passes the gradient; safetensors F64 keeps every bit; printing', async () => {
    const be = fx.cpu;
    const x = Tensor.fromArray(be, [0.5, -2], [2], { requiresGrad: true });
    const y = ag.sum(ag.mul(x.cast('float64'), Tensor.fromArray(be, [0.1, 3], [2], { dtype: 'float64' })));
    expect(y.dtype).toBe('float64');
    y.backward();
    expect(Array.from(x.grad!.dataSync())).toEqual([Math.fround(0.1), 3]);
    const values = [0.1, 1e300, -5e-324, Number.NaN, -0];
    const bytes = await saveSafetensors({ d: Tensor.fromArray(be, values, [5], { dtype: 'float64' }) });
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)))).toEqual({
      d: { dtype: 'F64', shape: [5], data_offsets: [0, 40] },
    });
    const back = loadSafetensors(bytes, be).tensors['d']!;
    expect(back.dtype).toBe('float64');
    expect(Array.from(back.dataSync())).toEqual(values);
    expect(Tensor.fromArray(be, [0.1, 2], [2], { dtype: 'float64' }).toString()).toBe(
      'tensor([0.1000, 2.0000], shape=[2], dtype=float64, backend=cpu)',
    );
    const gpu = fx.backends['webgpu'];
    if (gpu) expect(() => loadSafetensors(bytes, gpu)).toThrow(UnsupportedOpError);
  });
});
