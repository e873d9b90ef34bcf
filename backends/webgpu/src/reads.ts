/**
 * Reads of the WebGPU backend: a copy into a mappable staging buffer (reused across reads, by size
 * class), submitted with the open work. A read of an array that holds the result of failed work
 * rejects with that work's GpuError; a copy lost with other work of its submission is retried alone.
 */
import { BackendUnavailableError, type DeviceBuffer, PolyHalError } from '@polyhal/hal';
import type { StorageArray } from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { GpuError } from './gpu-error.js';
import { BufferPool } from './pool.js';
import type { Submission } from './submissions.js';

export class StagingReader {
  /** Mappable staging buffers for reads, by size class, reused across reads. */
  private readonly staging = new Map<number, GPUBuffer[]>();

  /** `lostReason`: why the device was lost, or null. */
  constructor(
    private readonly device: GPUDevice,
    private readonly batch: CommandBatch,
    private readonly gpu: (buffer: DeviceBuffer) => GPUBuffer,
    private readonly lostReason: () => string | null,
  ) {}

  /** The readStorage hook: a copy of the whole buffer once the work before it is done (Int32Array: int32, bool). */
  async read(buffer: DeviceBuffer): Promise<StorageArray> {
    const bytes = Math.max(4, buffer.byteLength);
    const size = BufferPool.sizeClass(bytes);
    // MAP_READ | COPY_DST
    const staging = this.staging.get(size)?.pop() ?? this.device.createBuffer({ size, usage: 0x1 | 0x8 });
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
      const list = this.staging.get(size) ?? [];
      if (reusable && size <= 16 * 2 ** 20 && list.length < 4) {
        list.push(staging);
        this.staging.set(size, list);
      } else staging.destroy();
    }
  }

  /** Destroys the pooled staging buffers. */
  destroy(): void {
    for (const list of this.staging.values()) for (const b of list) b.destroy();
    this.staging.clear();
  }

  /** Encodes a copy of `buffer` into `staging` and submits it with the open work; returns that submission. */
  private copyOut(buffer: DeviceBuffer, staging: GPUBuffer, bytes: number): Submission {
    this.batch.begin().ops.push('read');
    this.batch.tracker.read(buffer.id);
    this.batch.copyBufferToBuffer(this.gpu(buffer), staging, bytes);
    return this.batch.submit();
  }
}
