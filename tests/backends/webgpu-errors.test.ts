import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { type ComputeBackend, OutOfMemoryError, UnsupportedOpError, UseAfterFreeError } from '@polyhal/hal';
import { createWebGpuBackend, GpuError, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';

// "Correct or a typed error, never silent": what the webgpu backend does after a GPU error, and
// the limits (binding sizes, ranks, element counts) that once gave wrong numbers instead.
describe('webgpu errors and limits', () => {
  let gpu: WebGpuBackend | undefined;
  let unavailable = '';
  beforeAll(async () => {
    try {
      gpu = await createWebGpuBackend();
    } catch (e) {
      unavailable = (e as Error).message;
    }
  });
  afterAll(() => gpu?.dispose());
  const need = (): WebGpuBackend => {
    if (!gpu && requiredBackends().includes('webgpu'))
      throw new Error(`webgpu is required here but unavailable: ${unavailable}`);
    expect(gpu ? 'adapter' : `no adapter: ${unavailable}`).toBe('adapter');
    return gpu!;
  };
  const outcome = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      (v) => Array.from(v as Float32Array),
      (e: unknown) => e,
    );

  test('a forced split-K whose partial products exceed the binding limit still computes the right matmul', async () => {
    need();
    const be = await createWebGpuBackend({ matmulSplitK: 16 }); // 16 × 2048² × 4 B = 256 MiB of partials
    try {
      const good = be.fromArray([1, 2, 3], [3]);
      const a = be.full([2048, 64], 1);
      const b = be.full([64, 2048], 0.5);
      const c = be.matmul(a, b);
      const [g, r] = await Promise.all([be.read(good), be.read(c)]);
      expect(Array.from(g)).toEqual([1, 2, 3]);
      expect(r.length).toBe(2048 * 2048);
      expect(r.every((v) => v === 32)).toBe(true);
      await be.synchronize();
    } finally {
      be.dispose();
    }
  });

  test("an array over the device's maxStorageBufferBindingSize is an OutOfMemoryError naming that limit", async () => {
    need();
    const be = await createWebGpuBackend({ memoryLimit: 2 ** 40 }); // so that memoryLimit is not what refuses
    try {
      const max = be.device.limits.maxStorageBufferBindingSize;
      const size = Math.floor(max / 4) + 1; // float32 elements: nothing is allocated, the check refuses first
      let err: unknown;
      try {
        be.allocate(size);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OutOfMemoryError);
      expect((err as Error).message).toBe(
        `webgpu: cannot allocate ${size * 4} bytes: one buffer is too large for this device: its ` +
          `maxStorageBufferBindingSize is ${max} bytes; memoryLimit was not the limit (split the array)`,
      );
      expect((err as OutOfMemoryError).availableBytes).toBe(Math.min(max, be.device.limits.maxBufferSize));
      expect(be.memoryStats().liveBuffers).toBe(0);
    } finally {
      be.dispose();
    }
  });

  /** A backend whose next submission fails: the buffer behind `x` is destroyed behind its back. */
  const breakBuffer = (be: WebGpuBackend, x: { buffer: { id: number } }): void => {
    (be as unknown as { gpuBuffers: Map<number, GPUBuffer> }).gpuBuffers.get(x.buffer.id)!.destroy();
  };

  test.each(['op', 'batch'] as const)(
    'every array written by a failed submission rejects on every read, and only those (errorScopes %s)',
    async (errorScopes) => {
      need();
      const be = await createWebGpuBackend({ errorScopes });
      try {
        const good = be.fromArray([1, 2, 3], [3]);
        const earlier = be.add(good, 1);
        expect(Array.from(await be.read(earlier))).toEqual([2, 3, 4]); // its submission succeeded
        const x = be.fromArray([1, 2, 3], [3]);
        breakBuffer(be, x);
        const bad = be.mul(x, 2);
        const alsoLost = be.add(good, 5); // same submission: never ran
        const results = await Promise.all([good, bad, earlier, alsoLost].map((a) => outcome(be.read(a))));
        expect(results[0]).toEqual([1, 2, 3]);
        expect(results[1]).toBeInstanceOf(GpuError);
        expect((results[1] as GpuError).op).toMatch(/mul/);
        expect(results[2]).toEqual([2, 3, 4]);
        expect(results[3]).toBeInstanceOf(GpuError);
        const derived = be.add(bad, 1); // a later submission computed from lost data
        await expect(be.synchronize()).rejects.toBeInstanceOf(GpuError);
        await be.synchronize(); // reported once
        // Not consumed: the poisoned arrays keep rejecting, the others keep reading.
        for (let i = 0; i < 2; i++) {
          await expect(be.read(bad)).rejects.toBeInstanceOf(GpuError);
          await expect(be.read(derived)).rejects.toBeInstanceOf(GpuError);
          expect(Array.from(await be.read(earlier))).toEqual([2, 3, 4]);
          expect(Array.from(await be.read(good))).toEqual([1, 2, 3]);
        }
        // New work on good arrays computes normally; a host write replaces a poisoned array's contents.
        expect(Array.from(await be.read(be.mul(good, 3)))).toEqual([3, 6, 9]);
        be.write(bad.buffer, new Float32Array([7, 8, 9]));
        expect(Array.from(await be.read(bad))).toEqual([7, 8, 9]);
      } finally {
        be.dispose();
      }
    },
  );

  test('synchronize() after dispose() throws UseAfterFreeError', async () => {
    need();
    const be = await createWebGpuBackend();
    be.add(be.full([4], 1), 1);
    be.dispose();
    await expect(be.synchronize()).rejects.toBeInstanceOf(UseAfterFreeError);
  });

  // mod is exact (hal/src/ops/index.ts): the float remainder is representable, so every backend must give
  // the same bits, including the sign of a zero result (x's sign) — compared with Object.is, which
  // the conformance comparison (|got − want|) cannot see.
  test('mod: exact remainders for |x/y| in 2^20..2^24 and signed zeros, bit for bit on every backend', async () => {
    need();
    const xs: number[] = [-0, 0, -6, 6, -0, 0, 6, -6, 0, -0, -0, 1e-30];
    const ys: number[] = [3, 3, -3, -3, -3, -3, 3, 3, Infinity, Infinity, -Infinity, -Infinity];
    for (let k = 20; k <= 24; k++) {
      for (const y of [3, -3, 0.7, -1.3, 1e-3]) {
        for (const t of [0.04, 0.5, 0.96]) {
          for (const sign of [1, -1]) {
            xs.push(Math.fround(sign * (2 ** k + t) * Math.fround(y)));
            ys.push(Math.fround(y));
          }
        }
      }
    }
    // Expected: fmod in float64 is exact, and so is r + y here (r is a nonzero multiple of ulp(x) ≥
    // 2^-4·|y|), so rounding it to float32 rounds once.
    const want = xs.map((x, i) => {
      const y = ys[i]!;
      if (!Number.isFinite(y)) return x === 0 || Math.sign(x) === Math.sign(y) ? x : y;
      const r = x % y;
      return Math.fround(r !== 0 && r < 0 !== y < 0 ? r + y : r);
    });
    expect(Object.is(want[0], -0) && Object.is(want[5], 0) && Object.is(want[2], -0)).toBe(true);
    for (const [name, create] of Object.entries(REPO_BACKENDS)) {
      let be: ComputeBackend;
      try {
        be = await create();
      } catch (e) {
        if (requiredBackends().includes(name)) throw e;
        continue;
      }
      try {
        const got = Array.from(await be.read(be.mod(be.fromArray(xs, [xs.length]), be.fromArray(ys, [ys.length]))));
        const wrong = got.flatMap((g, i) =>
          Object.is(g, want[i])
            ? []
            : [
                `${xs[i]} mod ${ys[i]}: got ${Object.is(g, -0) ? '-0' : g}, want ` +
                  `${Object.is(want[i], -0) ? '-0' : want[i]}`,
              ],
        );
        expect({ backend: name, wrong: wrong.slice(0, 5) }).toEqual({ backend: name, wrong: [] });
      } finally {
        be.dispose();
      }
    }
  });

  // A broadcast view can hold 2^31 or more elements without memory behind them; the kernels count in
  // 32-bit integers, so such a reduction is a typed error, never a wrapped count (it summed to 0).
  test(
    'a reduction over 2^31 or more elements of a broadcast view is a typed error, never a ' + 'wrong number',
    async () => {
      const be = need();
      const one = be.full([1, 1], 1);
      const big = be.expand(one, [65536, 65536]);
      const live = be.liveBufferCount();
      expect(() => be.sum(big)).toThrow(UnsupportedOpError);
      expect(() => be.max(big, [0, 1])).toThrow(UnsupportedOpError);
      expect(be.liveBufferCount()).toBe(live); // nothing allocated is left behind
      const rows = be.sum(be.expand(one, [64, 32768]), [1]); // 2^15 per output: fine
      const r = await be.read(rows);
      expect(r.length).toBe(64);
      expect(r.every((v) => v === 32768)).toBe(true);
      be.free(rows);
      be.free(one);
    },
  );
});
