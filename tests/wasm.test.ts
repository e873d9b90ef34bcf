import { describe, expect, test } from '@jest/globals';
import { BackendUnavailableError, mulberry32, transposeView } from '@polyhal/hal';
import { createWasmBackend, hasRelaxedSimd } from '@polyhal/backend-wasm';
import { KERNELS_RELAXED_WASM_BASE64 } from '../backends/wasm/src/generated/kernels.js';

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

  test('the relaxed-SIMD probe agrees with the runtime\'s verdict on the embedded relaxed build', () => {
    const bytes = Uint8Array.from(atob(KERNELS_RELAXED_WASM_BASE64), (c) => c.charCodeAt(0));
    expect(hasRelaxedSimd()).toBe(WebAssembly.validate(bytes));
  });

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
