/**
 * WebGPU dispose(): a device the backend requested itself is destroyed with it (its memory, pipelines and
 * driver threads go at once, not at garbage collection: many backends created in one process otherwise
 * pile up), while a device given in the options is left to its owner.
 */
import { describe, expect, test } from '@jest/globals';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';

describe('webgpu dispose', () => {
  test('destroys the device it requested: device.lost resolves with reason "destroyed"', async () => {
    const be = await createWebGpuBackend();
    const device = be.device as GPUDevice;
    const x = be.fromArray([1, 2, 3], [3]);
    expect(Array.from(await be.read(be.add(x, x)))).toEqual([2, 4, 6]);
    be.dispose();
    const info = await device.lost;
    expect(info.reason).toBe('destroyed');
  });

  test('leaves an injected device working', async () => {
    const owner = await createWebGpuBackend();
    const device = owner.device as GPUDevice;
    const guest = await createWebGpuBackend({ device });
    guest.dispose();
    let lost = false;
    void device.lost.then(() => {
      lost = true;
    });
    const x = owner.fromArray([1, 2], [2]);
    expect(Array.from(await owner.read(owner.mul(x, x)))).toEqual([1, 4]);
    expect(lost).toBe(false);
    owner.dispose();
    await device.lost;
    expect(lost).toBe(true);
  });
});
