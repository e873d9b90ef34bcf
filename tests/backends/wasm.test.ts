import { describe, expect, test } from '@jest/globals';
import { BackendUnavailableError, mulberry32, transposeView } from '@polyhal/hal';
import { createWasmBackend, hasRelaxedSimd, relaxedMaddIsFused } from '@polyhal/backend-wasm';
import { KERNELS_RELAXED_WASM_BASE64 } from '../../backends/wasm/src/generated/kernels.js';

describe('wasm backend', () => {
  test('matmul split across worker threads on shared memory is bit-identical to one thread', async () => {
    const mt = await createWasmBackend({ threads: 2, threadThreshold: 1 });
    const st = await createWasmBackend({ threads: 1 });
    try {
      expect(mt.threads).toBe(2);
      expect(mt.deviceName).toMatch(/2 threads on shared memory/);
      expect(st.deviceName).toMatch(/1 thread/);
      const rng = mulberry32(11);
      const a = Array.from({ length: 3 * 150 * 70 }, () => rng() * 2 - 1);
      const b = Array.from({ length: 90 * 70 }, () => rng() * 2 - 1);
      const run = async (be: typeof mt): Promise<Float32Array> => {
        const x = be.fromArray(a, [3, 150, 70]);
        const y = be.fromArray(b, [90, 70]);
        const z = be.matmul(x, transposeView(y));
        const out = (await be.read(z)) as Float32Array;
        for (const t of [x, y, z]) be.free(t);
        return out;
      };
      expect(Array.from(await run(mt))).toEqual(Array.from(await run(st)));
    } finally {
      mt.dispose();
      st.dispose();
    }
  });

  test(
    'elementwise ops and strided copies split across worker threads match one thread and an ' + 'f64 oracle',
    async () => {
      const mt = await createWasmBackend({ threads: 2, elementwiseThreadThreshold: 1 });
      const st = await createWasmBackend({ threads: 1 });
      try {
        const rng = mulberry32(5);
        const n = 100_003; // one long row, not a multiple of the vector width
        const a = Array.from({ length: n }, () => rng() * 4 - 2);
        const b = Array.from({ length: n }, () => rng() * 4 - 2);
        const ints = Array.from({ length: 3 * 1001 }, () => Math.floor(rng() * 200) - 100);
        const run = async (be: typeof mt): Promise<number[][]> => {
          const x = be.fromArray(a, [n]);
          const y = be.fromArray(b, [n]);
          const m = be.fromArray(a.slice(0, 300 * 301), [300, 301]);
          const row = be.fromArray(b.slice(0, 301), [301]);
          const xi = be.fromArray(ints, [3, 1001], 'int32');
          const outs = [
            be.add(x, y),
            be.mul(x, y),
            be.relu(x),
            be.sqrt(be.relu(y)),
            be.sub(m, row), // broadcast: 300 rows
            be.neg(transposeView(m)), // strided: 301 rows of 300
            be.maximum(xi, be.neg(xi)), // int32
            be.contiguous(be.permute(be.reshape(m, [300, 7, 43]), [2, 0, 1])), // strided copy split by its outer dim
            be.pad(
              be.reshape(m, [30, 10, 301]),
              [
                [1, 2],
                [0, 1],
                [3, 0],
              ],
              -1,
            ), // pad: fill, then strided copy
            be.cast(be.permute(xi, [1, 0]), 'float32'), // int32 → float32 copy
          ];
          const got = await Promise.all(outs.map(async (t) => Array.from(await be.read(t))));
          return got;
        };
        const [p, q] = [await run(mt), await run(st)];
        expect(p).toEqual(q);
        const f = Math.fround;
        expect(p[0]!.every((v, i) => v === f(f(a[i]!) + f(b[i]!)))).toBe(true);
        expect(p[2]!.every((v, i) => v === Math.max(f(a[i]!), 0))).toBe(true);
        expect(p[4]!.every((v, i) => v === f(f(a[i]!) - f(b[i % 301]!)))).toBe(true);
        expect(p[6]!.every((v, i) => v === Math.abs(ints[i]!))).toBe(true);
        // permute [2,0,1] of a [300,7,43] row-major view: out[c][a][b] = m[a][b][c]
        expect(
          p[7]!.every(
            (v, i) => v === f(a[Math.floor(i / 2100) + 43 * ((i % 2100) % 7) + 301 * Math.floor((i % 2100) / 7)]!),
          ),
        ).toBe(true);
      } finally {
        mt.dispose();
        st.dispose();
      }
    },
  );

  test('matmul with N <= 16 (A read in place) is bit-identical to the packed path on the same columns', async () => {
    const be = await createWasmBackend({ threads: 1 });
    try {
      const rng = mulberry32(21);
      const [M, K] = [97, 300]; // M not a multiple of the micro-kernel's rows, K over one 256-deep block
      const a = be.fromArray(
        Array.from({ length: K * M }, () => rng() * 2 - 1),
        [K, M],
      );
      const b = be.fromArray(
        Array.from({ length: K * 40 }, () => rng() * 2 - 1),
        [K, 40],
      );
      for (const at of [transposeView(a), be.contiguous(transposeView(a))]) {
        // strided and contiguous A
        const wide = Array.from(await be.read(be.matmul(at, b))); // 40 columns: packed A panels
        for (const n of [16, 9, 1]) {
          const narrow = Array.from(
            await be.read(
              be.matmul(
                at,
                be.shrink(b, [
                  [0, K],
                  [0, n],
                ]),
              ),
            ),
          );
          expect(narrow).toEqual(Array.from({ length: M * n }, (_, i) => wide[Math.floor(i / n) * 40 + (i % n)]));
        }
      }
    } finally {
      be.dispose();
    }
  });

  test('threads: 1 is a clean single-thread backend that says so', async () => {
    const be = await createWasmBackend({ threads: 1 });
    expect(be.threads).toBe(1);
    be.dispose();
  });

  test('linear memory grows past its initial size and old arrays stay intact', async () => {
    const be = await createWasmBackend({ threads: 1 });
    const first = be.fromArray([1, 2, 3], [3]);
    const big = be.full([8 * 2 ** 20], 2); // 32 MiB: forces memory.grow
    expect(Array.from(await be.read(first))).toEqual([1, 2, 3]);
    const s = be.sum(big);
    expect((await be.read(s))[0]).toBe(16 * 2 ** 20);
    be.dispose();
  });

  test("the relaxed-SIMD probe agrees with the runtime's verdict on the embedded relaxed build", () => {
    const bytes = Uint8Array.from(atob(KERNELS_RELAXED_WASM_BASE64), (c) => c.charCodeAt(0));
    expect(hasRelaxedSimd()).toBe(WebAssembly.validate(bytes));
  });

  test(
    "relaxedMaddIsFused agrees with how the relaxed build's matmul rounds (-1 + " +
      '(1+2^-23)(1-2^-23) is -2^-46 only when fused)',
    async () => {
      if (!hasRelaxedSimd()) {
        expect(relaxedMaddIsFused()).toBe(false);
        return;
      }
      const be = await createWasmBackend({ threads: 1, relaxedSimd: true });
      const c = await be.read(
        be.matmul(be.fromArray([-1, 1 + 2 ** -23], [1, 2]), be.fromArray([1, 1 - 2 ** -23], [2, 1])),
      );
      expect(c[0] === -(2 ** -46)).toBe(relaxedMaddIsFused());
      expect(be.fusedMultiplyAdd).toBe(relaxedMaddIsFused());
      be.dispose();
    },
  );

  test('relaxedSimd: false keeps plain SIMD; true fails clearly where the runtime lacks relaxed SIMD', async () => {
    const plain = await createWasmBackend({ threads: 1, relaxedSimd: false });
    expect(plain.relaxedSimd).toBe(false);
    expect(plain.deviceName).not.toMatch(/relaxed/);
    plain.dispose();
    const auto = await createWasmBackend({ threads: 1 });
    expect(auto.relaxedSimd).toBe(hasRelaxedSimd());
    auto.dispose();
    if (hasRelaxedSimd()) {
      const fma = await createWasmBackend({ threads: 1, relaxedSimd: true });
      expect(fma.deviceName).toMatch(/relaxed SIMD \(FMA\)/);
      fma.dispose();
    } else {
      await expect(createWasmBackend({ threads: 1, relaxedSimd: true })).rejects.toThrow(BackendUnavailableError);
    }
  });
});
