/**
 * Pool of storage buffers by size class (powers of two from 256 bytes; exact sizes above 64 MiB).
 * A released buffer may still be read by work that is encoded but not yet submitted, so it becomes
 * available again only after the next submission (`flushed()`); later uses are encoded after it.
 */
export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly quarantine: [number, GPUBuffer][] = [];
  private pooledBytes = 0;
  private created = 0;
  private reused = 0;

  constructor(private readonly device: GPUDevice, private readonly usage: number, private readonly maxPooledBytes = 512 * 2 ** 20) {}

  static sizeClass(bytes: number): number {
    if (bytes > 64 * 2 ** 20) return Math.ceil(bytes / 4096) * 4096;
    let s = 256;
    while (s < bytes) s *= 2;
    return s;
  }

  acquire(bytes: number): GPUBuffer {
    const size = BufferPool.sizeClass(bytes);
    const list = this.free.get(size);
    if (list && list.length > 0) {
      this.pooledBytes -= size;
      this.reused++;
      return list.pop()!;
    }
    this.created++;
    return this.device.createBuffer({ size, usage: this.usage });
  }

  release(buffer: GPUBuffer, bytes: number): void {
    this.quarantine.push([BufferPool.sizeClass(bytes), buffer]);
  }

  /** Called after each submission: quarantined buffers become reusable (or are destroyed past the cap). */
  flushed(): void {
    for (const [size, b] of this.quarantine.splice(0)) {
      if (this.pooledBytes + size > this.maxPooledBytes) {
        b.destroy();
        continue;
      }
      let list = this.free.get(size);
      if (!list) this.free.set(size, (list = []));
      list.push(b);
      this.pooledBytes += size;
    }
  }

  destroyAll(): void {
    this.flushed();
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
    this.pooledBytes = 0;
  }

  stats(): { pooledBuffers: number; pooledBytes: number; created: number; reused: number } {
    let n = 0;
    for (const l of this.free.values()) n += l.length;
    return { pooledBuffers: n, pooledBytes: this.pooledBytes, created: this.created, reused: this.reused };
  }
}
