import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { UseAfterFreeError } from '@polyhal/hal';
import { createWebGpuBackend, GpuError, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { requiredBackends } from './backends.js';

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
    if (!gpu && requiredBackends().includes('webgpu')) throw new Error(`webgpu is required here but unavailable: ${unavailable}`);
    expect(gpu ? 'adapter' : `no adapter: ${unavailable}`).toBe('adapter');
    return gpu!;
  };
  const outcome = (p: Promise<unknown>): Promise<unknown> => p.then((v) => Array.from(v as Float32Array), (e: unknown) => e);

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

  /** A backend whose next submission fails: the buffer behind `x` is destroyed behind its back. */
  const breakBuffer = (be: WebGpuBackend, x: { buffer: { id: number } }): void => {
    (be as unknown as { gpuBuffers: Map<number, GPUBuffer> }).gpuBuffers.get(x.buffer.id)!.destroy();
  };

  test.each(['op', 'batch'] as const)('every array written by a failed submission rejects on every read, and only those (errorScopes %s)', async (errorScopes) => {
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
  });

  test('synchronize() after dispose() throws UseAfterFreeError', async () => {
    need();
    const be = await createWebGpuBackend();
    be.add(be.full([4], 1), 1);
    be.dispose();
    await expect(be.synchronize()).rejects.toBeInstanceOf(UseAfterFreeError);
  });
});
