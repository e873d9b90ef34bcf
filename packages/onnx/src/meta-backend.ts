/**
 * A backend that computes nothing: every kernel hook is a no-op, so its ops do only what BaseBackend
 * does before a kernel — validate arguments, broadcast, compute output shapes and dtypes, throw the
 * HAL's typed errors. InferenceSession's check at `create` runs the graph on it (the dry planning
 * pass): each node is planned and lowered with real shapes at no cost in time or memory.
 */
import { BaseBackend, type DeviceBuffer, type DType, type StorageArray, storageDType } from '@polyhal/hal';

/** Buffers hold no storage: the limit only bounds the bookkeeping (2^52 bytes). */
const UNBOUNDED = 2 ** 52;

export class MetaBackend extends BaseBackend {
  readonly name: string;
  readonly deviceName = 'shape-only dry run (no kernels)';
  readonly deviceType = 'cpu' as const;

  /** `like`: the backend whose dtypes it accepts (float64 only where `like` has it). */
  constructor(private readonly like: { name: string; supportsDType?(dtype: DType): boolean }) {
    super({ memoryLimit: UNBOUNDED }, UNBOUNDED);
    this.name = `meta(${like.name})`;
  }

  override supportsDType(dtype: DType): boolean {
    return super.supportsDType(dtype) && (this.like.supportsDType?.(dtype) ?? dtype !== 'float64');
  }

  protected createStorage(): void {}
  protected destroyStorage(): void {}
  protected writeStorage(): void {}
  /** Zeros: a dry run never depends on device data (a read is only the place where it would). */
  protected async readStorage(buffer: DeviceBuffer): Promise<StorageArray> {
    const t = storageDType(buffer.dtype);
    return t === 'float64'
      ? new Float64Array(buffer.size)
      : t === 'float32'
        ? new Float32Array(buffer.size)
        : new Int32Array(buffer.size);
  }
  protected unaryKernel(): void {}
  protected binaryKernel(): void {}
  protected reduceKernel(): void {}
  protected copyKernel(): void {}
  protected copyIntoKernel(): void {}
  protected fillKernel(): void {}
  protected gatherKernel(): void {}
  protected scatterAddKernel(): void {}
  protected matmulKernel(): void {}
  protected whereKernel(): void {}
  /** float64 arrays exist where `like` has them; their host kernels read this (zeros). */
  protected override hostStorage(buffer: DeviceBuffer): StorageArray {
    return new Float64Array(buffer.size);
  }
}
