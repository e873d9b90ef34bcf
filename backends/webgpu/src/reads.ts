/**
 * Reads of the WebGPU backend: a copy into a mappable staging buffer (reused across reads, by size
 * class), submitted with the open work. A read of an array that holds the result of failed work
 * rejects with that work's GpuError; a copy lost with other work of its submission is retried alone.
 * Work that knows a read will likely follow (a replay's small outputs: replay-plan.ts) encodes the copy into
 * a staging buffer itself (`acquire`, then `adopt`): a read of the array while that work is still its last writer
 * maps the staging buffer, with no copy or submission of its own.
 */
import { BackendUnavailableError, type DeviceBuffer, PolyHalError } from '@polyhal/hal';
import type { StorageArray } from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { GpuError } from './gpu-error.js';
import { BufferPool } from './pool.js';
import type { Submission } from './submissions.js';

/** Staging copies adopted and not yet read: beyond this many the oldest is dropped (its array was never read). */
const MAX_PREFETCHED = 16;

/** A staging buffer holding the first `bytes` of an array as submission `sub` wrote it. */
interface Prefetched {
  readonly staging: GPUBuffer;
  readonly bytes: number;
  readonly sub: Submission;
}

export class StagingReader {
  /** Mappable staging buffers for reads, by size class, reused across reads. */
  private readonly staging = new Map<number, GPUBuffer[]>();
  /** Copies already encoded into staging buffers (adopt), by tracker key. */
  private readonly prefetched = new Map<number, Prefetched>();

  /** `lostReason`: why the device was lost, or null. */
  constructor(
    private readonly device: GPUDevice,
    private readonly batch: CommandBatch,
    private readonly gpu: (buffer: DeviceBuffer) => GPUBuffer,
    private readonly lostReason: () => string | null,
  ) {}

  /** The readStorage hook: a copy of the whole buffer once the work before it is done (Int32Array: int32, bool). */
  async read(buffer: DeviceBuffer): Promise<StorageArray> {
    const p = this.prefetched.get(buffer.id);
    if (p) {
      this.prefetched.delete(buffer.id);
      const done = await this.readPrefetched(p, buffer);
      if (done) return done;
    }
    const bytes = Math.max(4, buffer.byteLength);
    const staging = this.acquire(bytes);
    let reusable = false;
    try {
      const writer = this.batch.tracker.writer(buffer.id);
      let sub = this.copyOut(buffer, staging, bytes);
      await staging.mapAsync(1);
      await sub.settled;
      if (sub.error) {
        await writer?.settled;
        if (writer?.error) throw writer.error; // the array holds the result of failed work
        // The copy was lost with other work of its submission: copy again on its own.
        staging.unmap();
        sub = this.copyOut(buffer, staging, bytes);
        await staging.mapAsync(1);
        await sub.settled;
        if (sub.error) throw sub.error;
      }
      const copy = staging.getMappedRange(0, bytes).slice(0, buffer.byteLength);
      staging.unmap();
      reusable = true;
      return buffer.dtype === 'float32' ? new Float32Array(copy) : new Int32Array(copy);
    } catch (e) {
      const lost = this.lostReason();
      if (lost) throw new BackendUnavailableError('webgpu', `device lost (${lost}); results are not available`);
      if (e instanceof PolyHalError) throw e;
      throw new GpuError('read', 'internal', e instanceof Error ? e.message : String(e));
    } finally {
      if (reusable) this.recycle(staging);
      else staging.destroy();
    }
  }

  /** A mappable staging buffer of at least `bytes` (MAP_READ | COPY_DST), from the pool where one is free. */
  acquire(bytes: number): GPUBuffer {
    const size = BufferPool.sizeClass(Math.max(4, bytes));
    return this.staging.get(size)?.pop() ?? this.device.createBuffer({ size, usage: 0x1 | 0x8 });
  }

  /**
   * `staging` (from `acquire`) holds the first `bytes` of buffer `key` as submission `sub` wrote it: `sub`, now
   * submitted, encoded that copy after its last write of `key`. A read of `key` while `sub` is still its last writer
   * maps `staging`; any other read copies as usual (the staging buffer goes back to the pool).
   */
  adopt(key: number, staging: GPUBuffer, bytes: number, sub: Submission): void {
    this.drop(key);
    this.prefetched.set(key, { staging, bytes, sub });
    if (this.prefetched.size > MAX_PREFETCHED) this.drop(this.prefetched.keys().next().value!);
  }

  /** Destroys the pooled staging buffers. */
  destroy(): void {
    for (const list of this.staging.values()) for (const b of list) b.destroy();
    this.staging.clear();
    for (const p of this.prefetched.values()) p.staging.destroy();
    this.prefetched.clear();
  }

  /**
   * The contents of `buffer` from an adopted copy, or null where it cannot serve (written since, too short, or its
   * submission failed: the usual read then reports why).
   */
  private async readPrefetched(p: Prefetched, buffer: DeviceBuffer): Promise<StorageArray | null> {
    if (p.bytes < buffer.byteLength || this.batch.tracker.writer(buffer.id) !== p.sub) {
      this.recycle(p.staging);
      return null;
    }
    try {
      await p.staging.mapAsync(1);
    } catch {
      p.staging.destroy(); // device lost or destroyed: the usual read says so
      return null;
    }
    await p.sub.settled;
    const copy = p.sub.error ? null : p.staging.getMappedRange(0, p.bytes).slice(0, buffer.byteLength);
    p.staging.unmap();
    this.recycle(p.staging);
    if (!copy) return null;
    return buffer.dtype === 'float32' ? new Float32Array(copy) : new Int32Array(copy);
  }

  /** Drops the adopted copy of `key`, if any. */
  private drop(key: number): void {
    const p = this.prefetched.get(key);
    if (!p) return;
    this.prefetched.delete(key);
    this.recycle(p.staging);
  }

  /** Puts an unmapped staging buffer back in the pool (at most 4 per size class up to 16 MiB), else destroys it. */
  private recycle(staging: GPUBuffer): void {
    const size = staging.size;
    const list = this.staging.get(size) ?? [];
    if (size <= 16 * 2 ** 20 && list.length < 4) {
      list.push(staging);
      this.staging.set(size, list);
    } else staging.destroy();
  }

  /** Encodes a copy of `buffer` into `staging` and submits it with the open work; returns that submission. */
  private copyOut(buffer: DeviceBuffer, staging: GPUBuffer, bytes: number): Submission {
    this.batch.begin().ops.push('read');
    this.batch.tracker.read(buffer.id);
    this.batch.copyBufferToBuffer(this.gpu(buffer), staging, bytes);
    return this.batch.submit();
  }
}
