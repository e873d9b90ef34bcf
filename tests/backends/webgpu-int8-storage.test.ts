// int8 and uint8 on webgpu in 1 byte per element (the packedInt8 hook, option int8Storage; backends/webgpu/src/
// dispatch-int8.ts, kernels/int8-storage.ts): the storage size, round trips at odd lengths, views starting
// mid-word through every op family against the cpu backend (int8 in int32 storage) and, for the arithmetic, a
// float64 oracle wrapped modulo 2^8 here; writes into part of a word (concat, pad, strided destinations) that
// must keep the neighbouring bytes; the casts between int8, uint8, int32, float32, float16 and bool; matmulInteger
// at K % 4 ≠ 0, offsets and batches against an exact oracle; capture and replay; the option 'int32'. (cumsum, topk
// and argmax take float32, int32 and float64 only.)
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { ComputeBackend, DType, NDArray } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
let packedAlways: WebGpuBackend | undefined;
let int32: WebGpuBackend | undefined;
beforeAll(async () => {
  if (!fixture.backends['webgpu']) return;
  packedAlways = await createWebGpuBackend({ int8Packing: 'always' });
  int32 = await createWebGpuBackend({ int8Storage: 'int32' });
});
afterAll(() => {
  packedAlways?.dispose();
  int32?.dispose();
});
const gpu = (): ComputeBackend | undefined => fixture.backends['webgpu'];

type Q = (be: ComputeBackend) => NDArray;
/** wrap modulo 2^8 into int8 or uint8: the oracle's narrowing. */
const wrap = (v: number, dtype: 'int8' | 'uint8'): number => {
  const b = ((v % 256) + 256) % 256;
  return dtype === 'int8' && b > 127 ? b - 256 : b;
};
/** Deterministic values covering the dtype's range and its ends. */
const vals = (n: number, seed: number, dtype: 'int8' | 'uint8'): number[] =>
  Array.from({ length: n }, (_, i) =>
    wrap(i % 7 === 3 ? (dtype === 'int8' ? -128 : 255) : (i * 37 + seed * 11) % 256, dtype),
  );

/** Runs `program` on cpu and on `be` (default: the packed webgpu backend) and compares what it reads. */
async function same(program: (be: ComputeBackend) => NDArray, be: ComputeBackend | undefined = gpu()): Promise<void> {
  if (!be) return;
  const run = async (b: ComputeBackend): Promise<{ dtype: DType; shape: readonly number[]; data: number[] }> => {
    const x = program(b);
    const data = Array.from(await b.read(x));
    b.free(x);
    return { dtype: x.dtype, shape: x.shape, data };
  };
  const [want, got] = [await run(fixture.cpu), await run(be)];
  const nan = (v: number): number | string => (Number.isNaN(v) ? 'NaN' : v);
  expect({ ...got, data: got.data.map(nan) }).toEqual({ ...want, data: want.data.map(nan) });
}

/** A view of `len` elements from `off` of a 1-D `dtype` array of 40 elements. */
const view = (be: ComputeBackend, dtype: 'int8' | 'uint8', off: number, len: number, seed = 1): NDArray =>
  be.shrink(be.fromArray(vals(40, seed, dtype), [40], dtype), [[off, off + len]]);

describe('storage', () => {
  test('byteLength is one byte per element (a quarter of int32 storage), the GPU storage whole words', () => {
    const be = gpu();
    if (!be || !int32) return;
    for (const n of [1, 3, 5, 8, 13]) {
      for (const dtype of ['int8', 'uint8'] as const) {
        const b = be.allocate(n, dtype);
        const w = int32.allocate(n, dtype);
        expect([b.byteLength, w.byteLength]).toEqual([n, 4 * n]);
        be.deallocate(b);
        int32.deallocate(w);
      }
    }
    expect((be as WebGpuBackend).deviceName).not.toMatch(/int8 storage/);
    expect(int32.deviceName).toMatch(/; int8 storage: int32/);
  });

  test('round trips at odd lengths, values wrapped as the dtype does', async () => {
    const be = gpu();
    if (!be) return;
    for (const dtype of ['int8', 'uint8'] as const) {
      for (const n of [0, 1, 2, 3, 5, 7, 13, 1023]) {
        const raw = Array.from({ length: n }, (_, i) => ((i * 97) % 700) - 350);
        const x = be.fromArray(raw, [n], dtype);
        expect(Array.from(await be.read(x))).toEqual(raw.map((v) => wrap(v, dtype)));
        be.free(x);
      }
    }
  });
});

describe('views starting mid-word, odd lengths, every op family against cpu', () => {
  const cases: [string, Q][] = [
    ['neg', (b) => b.unary('neg', view(b, 'int8', 1, 7))],
    ['abs', (b) => b.unary('abs', view(b, 'int8', 3, 9))],
    ['add (wraps)', (b) => b.binary('add', view(b, 'int8', 1, 9), view(b, 'int8', 2, 9, 5))],
    ['mul uint8', (b) => b.binary('mul', view(b, 'uint8', 3, 11), view(b, 'uint8', 1, 11, 3))],
    ['add a number', (b) => b.binary('add', view(b, 'uint8', 2, 5), 200)],
    ['cmplt', (b) => b.binary('cmplt', view(b, 'int8', 1, 7), view(b, 'int8', 2, 7, 2))],
    ['sum', (b) => b.reduce('sum', view(b, 'int8', 3, 13))],
    ['max rows', (b) => b.reduce('max', b.reshape(b.contiguous(view(b, 'uint8', 1, 12)), [3, 4]), 1)],
    ['gather', (b) => b.gather(view(b, 'int8', 1, 7), b.fromArray([6, 0, 3, 3], [4], 'int32'))],
    ['where', (b) => b.where(b.cast(b.binary('cmplt', view(b, 'int8', 1, 5), 0), 'bool'), view(b, 'int8', 2, 5), 9)],
    [
      'scatterAdd',
      (b) => b.scatterAdd(view(b, 'int8', 3, 5), b.fromArray([4, 0], [2], 'int32'), view(b, 'int8', 1, 2)),
    ],
    ['strided read', (b) => b.contiguous(b.stride(view(b, 'int8', 1, 13), [3]))],
    ['transpose', (b) => b.contiguous(b.permute(b.reshape(b.contiguous(view(b, 'uint8', 3, 15)), [3, 5]), [1, 0]))],
    ['broadcast', (b) => b.binary('sub', b.reshape(view(b, 'int8', 1, 3), [3, 1]), view(b, 'int8', 2, 5))],
    ['full', (b) => b.full([7], -3, 'int8')],
  ];
  test.each(cases)('%s', async (_, program) => same(program));

  test('int8 add and mul wrap modulo 2^8 (float64 oracle)', async () => {
    const be = gpu();
    if (!be) return;
    const [a, c] = [vals(40, 1, 'int8').slice(1, 10), vals(40, 5, 'int8').slice(2, 11)];
    const add = be.binary('add', view(be, 'int8', 1, 9), view(be, 'int8', 2, 9, 5));
    const mul = be.binary('mul', view(be, 'int8', 1, 9), view(be, 'int8', 2, 9, 5));
    expect(Array.from(await be.read(add))).toEqual(a.map((v, i) => wrap(v + c[i]!, 'int8')));
    expect(Array.from(await be.read(mul))).toEqual(a.map((v, i) => wrap(v * c[i]!, 'int8')));
  });
});

describe('writes into part of a word keep the neighbouring bytes', () => {
  test('concat of odd pieces (each written mid-word after its neighbours)', () =>
    same((b) =>
      b.concat([view(b, 'int8', 1, 3), view(b, 'int8', 2, 5, 4), view(b, 'int8', 3, 2, 7), view(b, 'int8', 0, 3)]),
    ));
  test('concat along axis 1 (strided destinations)', () =>
    same((b) =>
      b.concat(
        [
          b.reshape(b.contiguous(view(b, 'uint8', 1, 6)), [3, 2]),
          b.reshape(b.contiguous(view(b, 'uint8', 2, 3)), [3, 1]),
        ],
        1,
      ),
    ));
  test('pad (the interior written from an odd offset)', () => same((b) => b.pad(view(b, 'int8', 3, 5), [[3, 2]], -7)));
  test('views of one filled buffer around a piece written mid-word (oracle)', async () => {
    const be = gpu();
    if (!be) return;
    const target = be.full([11], 5, 'uint8');
    const src = be.fromArray([250, 251, 252, 253, 254], [5], 'uint8');
    const out = be.concat([be.shrink(target, [[0, 3]]), src, be.shrink(target, [[8, 11]])]);
    expect(Array.from(await be.read(out))).toEqual([5, 5, 5, 250, 251, 252, 253, 254, 5, 5, 5]);
  });
});

describe('casts', () => {
  const dtypes: DType[] = ['int8', 'uint8', 'int32', 'float32', 'float16', 'bool'];
  const src: Record<string, number[]> = {
    int8: [-128, -1, 0, 1, 127, -77, 5],
    uint8: [0, 1, 127, 128, 255, 200, 3],
    int32: [-300, -129, -1, 0, 255, 256, 70000],
    float32: [-200.5, -1.75, -0, 0.5, 127.9, 300, Number.NaN],
    float16: [-200.5, -1.75, 0, 0.5, 127.875, 300, -65504],
    bool: [1, 0, 1, 1, 0, 0, 1],
  };
  const pairs = dtypes.flatMap((from) =>
    dtypes.filter((to) => to !== from && (from.endsWith('int8') || to.endsWith('int8'))).map((to) => [from, to]),
  );
  test.each(pairs)('%s → %s (from offset 1 of a view)', (from, to) =>
    same((b) => b.cast(b.shrink(b.fromArray([3, ...src[from]!], [8], from as DType), [[1, 8]]), to as DType)),
  );
});

describe('matmulInteger', () => {
  /** a [..., M, K] · b [..., K, N] exactly (float64 sums of integer products, exact at these sizes). */
  function oracle(a: number[], b: number[], batch: number, M: number, K: number, N: number): number[] {
    const out: number[] = [];
    for (let z = 0; z < batch; z++)
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++) {
          let s = 0;
          for (let k = 0; k < K; k++) s += a[z * M * K + i * K + k]! * b[z * K * N + k * N + j]!;
          out.push(s);
        }
    return out;
  }
  const shapes: [number, number, number, number, number][] = [
    // batch, M, K, N, offset of a's view
    [1, 5, 7, 3, 1],
    [2, 17, 6, 9, 2],
    [3, 16, 13, 5, 3],
    [1, 33, 64, 17, 0],
    [2, 20, 36, 24, 1],
    [2, 18, 12, 7, 4],
    [2, 64, 64, 9, 0],
  ];
  test.each(shapes)(
    'batch %i, %i×%i·×%i from offset %i against the oracle (auto and always packed)',
    async (B, M, K, N, off) => {
      for (const be of [gpu(), packedAlways, int32]) {
        if (!be) continue;
        for (const [ta, tb] of [
          ['int8', 'int8'],
          ['uint8', 'int8'],
        ] as const) {
          const av = vals(off + B * M * K, 3, ta);
          const bv = vals(B * K * N, 4, tb);
          const a = be.reshape(be.shrink(be.fromArray(av, [av.length], ta), [[off, av.length]]), [B, M, K]);
          const b = be.fromArray(bv, [B, K, N], tb);
          const y = be.matmulInteger(a, b);
          expect(Array.from(await be.read(y))).toEqual(oracle(av.slice(off), bv, B, M, K, N));
          for (const x of [a, b, y]) be.free(x);
        }
      }
    },
  );
  test.each([
    [33, 3],
    [64, 2],
  ])('packed products read int8 in bytes as stored (M = %i: %i kernels, no widening)', async (M, count) => {
    // M = 33: A copied word for word into its padded rows, Bᵀ packed from bytes, the product; M = 64: A read in place
    const be = packedAlways;
    if (!be) return;
    const [K, N] = [64, 17];
    const av = vals(M * K, 6, 'int8');
    const bv = vals(K * N, 7, 'int8');
    const a = be.fromArray(av, [M, K], 'int8');
    // B transposed twice: a strided view whose bytes the transposing pack gathers one by one
    const bt = be.fromArray(
      Array.from({ length: K * N }, (_, i) => bv[(i % K) * N + Math.floor(i / K)]!),
      [N, K],
      'int8',
    );
    const b = be.permute(bt, [1, 0]);
    await be.synchronize();
    const before = be.kernelStats().dispatches;
    const y = be.matmulInteger(a, b);
    const kernels = be.kernelStats().dispatches - before;
    expect({ kernels, y: Array.from(await be.read(y)) }).toEqual({ kernels: count, y: oracle(av, bv, 1, M, K, N) });
    for (const x of [a, bt, y]) be.free(x);
  });
  test('matmulIntegerToFloat on int8 operands against cpu', () =>
    same((b) => {
      const a = b.reshape(b.contiguous(view(b, 'int8', 1, 32)), [4, 8]);
      const w = b.reshape(b.contiguous(view(b, 'int8', 2, 24, 3)), [8, 3]);
      return b.matmulIntegerToFloat(a, w, b.fromArray([0.5], [], 'float32'), b.fromArray([0.25], [], 'float32'));
    }));
  test('matmulIntegerToFloat on packed kernels (int8Packing always) against cpu', () =>
    same((b) => {
      const a = b.reshape(b.contiguous(b.shrink(b.fromArray(vals(80, 2, 'int8'), [80], 'int8'), [[1, 73]])), [18, 4]);
      const w = b.reshape(b.shrink(b.fromArray(vals(40, 3, 'int8'), [40], 'int8'), [[3, 23]]), [4, 5]);
      const s = b.fromArray([0.5, 1, 2, 0.25, 4], [5], 'float32');
      return b.matmulIntegerToFloat(
        a,
        w,
        b.fromArray([0.5], [], 'float32'),
        s,
        undefined,
        undefined,
        b.fromArray([1, 2, 3, 4, 5], [5], 'float32'),
      );
    }, packedAlways));
});

describe('capture and replay', () => {
  test('a captured int8 add replays on new inputs (bytes in, bytes out)', async () => {
    const be = gpu() as WebGpuBackend | undefined;
    if (!be) return;
    const x = be.fromArray([1, 2, 3, 4, 5], [5], 'int8');
    be.beginCapture([x.buffer]);
    const y = be.binary('mul', be.binary('add', x, x), x);
    const r = be.endCapture([y.buffer]);
    if (!('work' in r)) throw new Error(r.broken);
    const input = [100, -128, 7, -3, 127];
    r.work.replay([Int8Array.from(input)]);
    expect(Array.from(await r.work.read(0))).toEqual(input.map((v) => wrap(2 * v * v, 'int8')));
    r.work.release();
    be.free(x);
    be.free(y);
  });
});

describe("int8Storage 'int32'", () => {
  const cases: [string, Q][] = [
    ['add', (b) => b.binary('add', view(b, 'int8', 1, 9), view(b, 'int8', 2, 9, 5))],
    ['concat', (b) => b.concat([view(b, 'uint8', 1, 3), view(b, 'uint8', 2, 5, 4)])],
    ['cast', (b) => b.cast(view(b, 'int8', 3, 7), 'uint8')],
  ];
  test.each(cases)('%s', async (_, program) => same(program, int32));
});
