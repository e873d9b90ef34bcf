import { describe, expect, test } from '@jest/globals';
import { BufferPool } from '../../backends/webgpu/src/pool.js';

// The buffer pool alone, on a stand-in device: size classes, reuse, and the cap (least recently
// released buffers go first, destroyed only after the next submission).
interface FakeBuffer {
  size: number;
  destroyed: boolean;
  destroy(): void;
}
const fakeDevice = (): { device: GPUDevice; made: FakeBuffer[] } => {
  const made: FakeBuffer[] = [];
  const device = {
    createBuffer: ({ size }: { size: number }) => {
      const b: FakeBuffer = {
        size,
        destroyed: false,
        destroy() {
          this.destroyed = true;
        },
      };
      made.push(b);
      return b;
    },
  } as unknown as GPUDevice;
  return { device, made };
};

describe('webgpu buffer pool', () => {
  test('size classes are powers of two from 256 bytes, 4 KiB multiples above 64 MiB', () => {
    expect(BufferPool.sizeClass(1)).toBe(256);
    expect(BufferPool.sizeClass(257)).toBe(512);
    expect(BufferPool.sizeClass(64 * 2 ** 20)).toBe(64 * 2 ** 20);
    expect(BufferPool.sizeClass(64 * 2 ** 20 + 1)).toBe(64 * 2 ** 20 + 4096);
  });

  test('past the cap the least recently released buffers are destroyed after the next submission', () => {
    const { device, made } = fakeDevice();
    const destroyed: unknown[] = [];
    const pool = new BufferPool(device, 0, 1024, (b) => destroyed.push(b));
    const [a, b, c] = [pool.acquire(512), pool.acquire(512), pool.acquire(512)];
    expect(made.length).toBe(3);
    pool.release(a, 512);
    pool.release(b, 512);
    pool.release(c, 512); // 1536 > 1024: a (released first) must go
    expect(made[0]!.destroyed).toBe(false); // not before the next submission
    pool.flushed();
    expect(made.map((x) => x.destroyed)).toEqual([true, false, false]);
    expect(destroyed).toEqual([a]);
    expect(pool.acquire(512)).toBe(b); // the oldest free buffer first
    expect(pool.acquire(512)).toBe(c);
    expect(pool.stats()).toMatchObject({ created: 3, reused: 2, pooledBuffers: 0, pooledBytes: 0 });
  });

  test('a size class hands out its oldest free buffer, whatever the order they were released in', () => {
    // A step that frees its arrays in another order each time still gets the same buffers (and so the same
    // cached bind groups) next time.
    const { device } = fakeDevice();
    const pool = new BufferPool(device, 0, 1 << 20);
    const bufs = [0, 1, 2, 3].map(() => pool.acquire(300));
    for (const order of [
      [2, 0, 3, 1],
      [3, 2, 1, 0],
      [0, 1, 2, 3],
    ]) {
      for (const i of order) pool.release(bufs[i]!, 300);
      expect([0, 1, 2, 3].map(() => bufs.indexOf(pool.acquire(300)))).toEqual([0, 1, 2, 3]);
    }
    expect(pool.stats()).toMatchObject({ created: 4 });
  });

  test('a buffer larger than the cap is never pooled; a repeated large op keeps its buffer', () => {
    const { device, made } = fakeDevice();
    const pool = new BufferPool(device, 0, 4096);
    const small = [pool.acquire(1024), pool.acquire(1024), pool.acquire(1024)];
    for (const s of small) pool.release(s, 1024);
    // A 2 KiB buffer released now evicts older small ones instead of being destroyed itself.
    for (let i = 0; i < 5; i++) pool.release(pool.acquire(2048), 2048);
    pool.flushed();
    expect(made.filter((x) => x.size === 2048).length).toBe(1);
    const huge = pool.acquire(8192);
    pool.release(huge, 8192);
    pool.flushed();
    expect((huge as unknown as FakeBuffer).destroyed).toBe(true);
  });
});
