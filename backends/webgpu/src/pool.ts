/**
 * Pool of storage buffers by size class (powers of two from 256 bytes; 4 KiB multiples above 64 MiB).
 * A released buffer can be handed out again at once: GPU commands that use it run in encoding order,
 * and the backend submits pending work before any queue.writeBuffer. Buffers past the pool's cap are
 * destroyed after the next submission, since encoded work may still use them.
 *
 * A size class hands out its oldest free buffer (the first created), not the last released: a training
 * step that allocates and frees the same way each time then gets the same buffers each time, whatever the
 * order its arrays were freed in, so its bind groups (cached per buffer set, pipelines.ts) are reused
 * instead of created anew. Handing out the last released permuted the buffers from step to step: the
 * main job's ViT step created 45–57 bind groups per step that way, none now.
 *
 * The cap is a number of bytes, or a function giving it at each release (the backend's default: what its
 * memoryLimit leaves above the live buffers, so that a step's arrays, freed at its end, are all there for the
 * next step). A fixed 4 GiB cap made an H200's ViT-S-like step (batch 64, 12 blocks) create and clear 194 GPU
 * buffers per step: 294 ms a step against 140 ms with every freed buffer kept.
 */
export class BufferPool {
  /** Free buffers per size class, newest first (pop() gives the oldest). */
  private readonly free = new Map<number, GPUBuffer[]>();
  /** Creation order of every buffer the pool made. */
  private readonly serial = new WeakMap<GPUBuffer, number>();
  private serials = 0;
  // Pooled buffers in release order (least recently released first) with their size classes.
  private readonly lru = new Map<GPUBuffer, number>();
  private readonly doomed: GPUBuffer[] = [];
  private pooledBytes = 0;
  /**
   * While a capture runs (capture.ts): the buffers its recording touched. They are never destroyed for the
   * cap (its replay will use them); a freed one can still be handed out again within the capture.
   */
  protect: ReadonlySet<GPUBuffer> | null = null;
  /** While a capture runs: hears of every buffer returned (its recorder notes where: plan-fusion.ts). */
  onRelease: ((buffer: GPUBuffer) => void) | null = null;
  /** Buffers recordings hold, with the number of recordings that hold each. */
  private readonly reserved = new Map<GPUBuffer, number>();
  /** Reserved buffers that nothing else holds (freed by their owner, or taken from the free lists), by size class. */
  private readonly parked = new Map<GPUBuffer, number>();
  private created = 0;
  private reused = 0;

  /** `onDestroy` hears of every buffer the pool destroys (so that caches holding it can drop it). */
  constructor(
    private readonly device: GPUDevice,
    private readonly usage: number,
    private readonly maxPooledBytes: number | (() => number) = 512 * 2 ** 20,
    private readonly onDestroy: (b: GPUBuffer) => void = () => {},
  ) {}

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
      const b = list.pop()!;
      this.lru.delete(b);
      return b;
    }
    this.created++;
    const b = this.device.createBuffer({ size, usage: this.usage });
    this.serial.set(b, this.serials++);
    return b;
  }

  /**
   * Returns a buffer to the pool. Past the cap, the least recently released buffers are destroyed
   * (after the next submission) instead, so a workload that repeats large ops keeps its buffers.
   */
  release(buffer: GPUBuffer, bytes: number): void {
    this.onRelease?.(buffer);
    const size = BufferPool.sizeClass(bytes);
    if (this.reserved.has(buffer)) {
      this.parked.set(buffer, size); // a recording replays into it: kept until the recording is released
      return;
    }
    const cap = typeof this.maxPooledBytes === 'number' ? this.maxPooledBytes : this.maxPooledBytes();
    if (size > cap && !this.protect?.has(buffer)) {
      this.doomed.push(buffer);
      return;
    }
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    // Newest first: insert before the first older buffer (lists are short: the arrays of one step).
    const n = this.serial.get(buffer) ?? -1;
    let at = list.length;
    while (at > 0 && (this.serial.get(list[at - 1]!) ?? -1) < n) at--;
    list.splice(at, 0, buffer);
    this.lru.set(buffer, size);
    this.pooledBytes += size;
    for (const [old, oldSize] of this.lru) {
      if (this.pooledBytes <= cap) break;
      if (this.protect?.has(old)) continue;
      const l = this.free.get(oldSize)!;
      l.splice(l.indexOf(old), 1);
      this.lru.delete(old);
      this.pooledBytes -= oldSize;
      this.doomed.push(old);
    }
  }

  /**
   * Reserves `buffers` for a recording (capture.ts): the free ones leave the free lists, and any freed later
   * is parked instead of pooled, until as many unreserve() calls as reserve() calls have named it.
   */
  reserve(buffers: Iterable<GPUBuffer>): void {
    for (const b of buffers) {
      this.reserved.set(b, (this.reserved.get(b) ?? 0) + 1);
      const size = this.lru.get(b);
      if (size === undefined) continue; // in use, or not the pool's (a backend's own buffer)
      const list = this.free.get(size)!;
      list.splice(list.indexOf(b), 1);
      this.lru.delete(b);
      this.pooledBytes -= size;
      this.parked.set(b, size);
    }
  }

  /** Ends one reservation of each of `buffers`; a parked buffer no recording holds any more is pooled again. */
  unreserve(buffers: Iterable<GPUBuffer>): void {
    for (const b of buffers) {
      const n = (this.reserved.get(b) ?? 1) - 1;
      if (n > 0) {
        this.reserved.set(b, n);
        continue;
      }
      this.reserved.delete(b);
      const size = this.parked.get(b);
      if (size === undefined) continue;
      this.parked.delete(b);
      this.release(b, size);
    }
  }

  /** Called after each submission: buffers released past the cap can now be destroyed. */
  flushed(): void {
    for (const b of this.doomed.splice(0)) {
      this.onDestroy(b);
      b.destroy();
    }
  }

  destroyAll(): void {
    this.flushed();
    for (const list of this.free.values()) {
      for (const b of list) {
        this.onDestroy(b);
        b.destroy();
      }
    }
    for (const b of this.parked.keys()) {
      this.onDestroy(b);
      b.destroy();
    }
    this.parked.clear();
    this.reserved.clear();
    this.free.clear();
    this.lru.clear();
    this.pooledBytes = 0;
  }

  stats(): { pooledBuffers: number; pooledBytes: number; created: number; reused: number } {
    let n = 0;
    for (const l of this.free.values()) n += l.length;
    return { pooledBuffers: n, pooledBytes: this.pooledBytes, created: this.created, reused: this.reused };
  }
}
