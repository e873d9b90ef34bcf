/**
 * Buffer bookkeeping of the HAL, the base of BaseBackend (base.ts): the live-buffer table, memory
 * limit and statistics, allocation and freeing, host writes and reads, fromArray and full, dispose,
 * and the checks that every entry point runs on its arrays and buffers. The required hooks (BackendHooks,
 * hooks.ts) are declared here, abstract, with their interface's types, as is the routing step every op
 * calls them through (`route`, kernel-router.ts); the ops themselves are BaseBackend's.
 */
import type { ReadHandle } from '../backend.js';
import {
  bytesPerElement,
  type DType,
  DTYPE_LIST,
  type HostArray,
  hostToStorage,
  hostValue,
  inferDType,
  isDType,
  type StorageArray,
  storageToHost,
} from '../core/dtype.js';
import {
  BackendHookError,
  DeviceMismatchError,
  DTypeError,
  InvalidArgumentError,
  OutOfMemoryError,
  ShapeMismatchError,
  UnsupportedOpError,
  UseAfterFreeError,
} from '../core/errors.js';
import { type HookArgs, type HookResult, missingHooks } from './hooks.js';
import { KernelRouter, type RoutedBackend, routeOf } from './kernel-router.js';
import { type DeviceBuffer, isWholeBuffer, type NDArray, viewOf } from '../core/ndarray.js';
import { isStorageAlias, storageBuffer } from './narrow.js';
import { assertShape, sizeOf } from '../core/shape.js';
import { checkHostData, checkNumber, checkView, checkWriteData, describeValue } from './validate.js';
import type { BaseBackendOptions } from '../runtime/options.js';

let instanceCounter = 0;

/** The options every backend takes (`memoryLimit`), derived from BASE_OPTION_SPECS (runtime/options.ts). */
export type { BaseBackendOptions } from '../runtime/options.js';

/**
 * Storage and buffer bookkeeping shared by every backend: BaseBackend extends it (a backend extends
 * BaseBackend, not this class). Buffers are frozen DeviceBuffer records owned by one instance; every
 * entry point checks that its arrays are live, belong to this instance and lie inside their buffers.
 * The constructor throws BackendHookError naming every required hook (REQUIRED_HOOKS) the subclass
 * lacks (a plain-JS subclass is checked the same way).
 */
export abstract class StorageBackend {
  /** {@inheritDoc @polyhal/hal!ComputeBackend.name} */
  abstract readonly name: string;
  /** {@inheritDoc @polyhal/hal!ComputeBackend.id} */
  readonly id: string;

  private readonly live = new Map<number, DeviceBuffer>();
  private nextBufferId = 1;
  private liveBytes = 0;
  private peakBytes = 0;
  private disposed = false;
  /** Bytes that live buffers may hold in all (the `memoryLimit` option; each backend has its default). */
  protected memoryLimit: number;

  /** Throws BackendHookError listing every required hook (REQUIRED_HOOKS) that the subclass lacks. */
  constructor(options: BaseBackendOptions = {}, defaultLimit = 2 ** 31) {
    const missing = missingHooks(this);
    if (missing.length)
      throw new BackendHookError(
        new.target.name || 'an anonymous BaseBackend subclass',
        missing.map((h) => h.name),
        missing.map((h) => h.signature),
      );
    this.id = `backend#${++instanceCounter}`;
    this.memoryLimit = options.memoryLimit ?? defaultLimit;
  }

  /**
   * The routing step between the ops and the kernel hooks (kernel-router.ts): every op calls its kernels
   * as `this.route.unary(...)`, `this.route.gather(...)`, ..., which hand each hook the dtypes it takes.
   */
  protected readonly route: KernelRouter = new KernelRouter(this as unknown as RoutedBackend);

  // ---- the required hooks (BackendHooks, hooks.ts: signatures and contracts there) ----
  // Buffers reach them typed as their storage dtype (narrow.ts: storageBuffer), never int8, uint8 or float16.
  /** The required hook `createStorage`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract createStorage(...args: HookArgs<'createStorage'>): HookResult<'createStorage'>;
  /** The required hook `destroyStorage`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract destroyStorage(...args: HookArgs<'destroyStorage'>): HookResult<'destroyStorage'>;
  /** The required hook `writeStorage`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract writeStorage(...args: HookArgs<'writeStorage'>): HookResult<'writeStorage'>;
  /** The required hook `readStorage`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract readStorage(...args: HookArgs<'readStorage'>): HookResult<'readStorage'>;
  /** The required hook `unaryKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract unaryKernel(...args: HookArgs<'unaryKernel'>): HookResult<'unaryKernel'>;
  /** The required hook `binaryKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract binaryKernel(...args: HookArgs<'binaryKernel'>): HookResult<'binaryKernel'>;
  /** The required hook `reduceKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract reduceKernel(...args: HookArgs<'reduceKernel'>): HookResult<'reduceKernel'>;
  /** The required hook `copyKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract copyKernel(...args: HookArgs<'copyKernel'>): HookResult<'copyKernel'>;
  /** The required hook `copyIntoKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract copyIntoKernel(...args: HookArgs<'copyIntoKernel'>): HookResult<'copyIntoKernel'>;
  /** The required hook `fillKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract fillKernel(...args: HookArgs<'fillKernel'>): HookResult<'fillKernel'>;
  /** The required hook `gatherKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract gatherKernel(...args: HookArgs<'gatherKernel'>): HookResult<'gatherKernel'>;
  /** The required hook `scatterAddKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract scatterAddKernel(...args: HookArgs<'scatterAddKernel'>): HookResult<'scatterAddKernel'>;
  /** The required hook `matmulKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract matmulKernel(...args: HookArgs<'matmulKernel'>): HookResult<'matmulKernel'>;
  /** The required hook `whereKernel`: its contract is its docstring in BackendHooks (hooks.ts). */
  protected abstract whereKernel(...args: HookArgs<'whereKernel'>): HookResult<'whereKernel'>;
  /** A contiguous copy of `x` (BaseBackend's op, through copyIntoKernel); `read` uses it for strided views. */
  abstract contiguous(x: NDArray): NDArray;

  // ---- memory ----
  /** {@inheritDoc @polyhal/hal!ComputeBackend.memoryAvailable} */
  memoryAvailable(): number {
    return Math.max(0, this.memoryLimit - this.liveBytes);
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.liveBufferCount} */
  liveBufferCount(): number {
    return this.live.size;
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.memoryStats} */
  memoryStats(): { liveBytes: number; peakBytes: number; liveBuffers: number } {
    return { liveBytes: this.liveBytes, peakBytes: this.peakBytes, liveBuffers: this.live.size };
  }

  // ---- out-of-memory messages: each names the limit that was hit, and memoryLimit only when it was that ----

  /** An OutOfMemoryError whose message is `<name>: cannot allocate <requestedBytes> bytes: <detail>`. */
  protected outOfMemory(requestedBytes: number, availableBytes: number, detail: string): OutOfMemoryError {
    return new OutOfMemoryError(requestedBytes, availableBytes, this.name, detail);
  }

  /**
   * Where memoryAvailable() is below what memoryLimit leaves, what bounds it, completing "only N available …"
   * (a backend whose memoryAvailable() has a bound of its own overrides this: wasm, its memory's maximum).
   */
  protected memoryCeiling(): string {
    return 'on this device';
  }

  /** The OutOfMemoryError of `requestedBytes` over memoryAvailable(): memoryLimit's, or memoryCeiling()'s. */
  protected overAvailable(requestedBytes: number): OutOfMemoryError {
    const available = this.memoryAvailable();
    if (available < this.memoryLimit - this.liveBytes)
      return this.outOfMemory(
        requestedBytes,
        available,
        `only ${available} available ${this.memoryCeiling()}; ` +
          `memoryLimit (${this.memoryLimit} bytes) was not the limit`,
      );
    return this.outOfMemory(
      requestedBytes,
      available,
      `only ${available} available under memoryLimit (${this.memoryLimit} bytes, ${this.liveBytes} live; ` +
        'free buffers with deallocate()/dispose() or raise memoryLimit)',
    );
  }

  /**
   * The OutOfMemoryError of a host typed array that the JavaScript engine refused (RangeError `e`) after
   * memoryLimit allowed it (createStorage of host backends): the engine's largest typed array, or the
   * host's memory. `availableBytes` is 0: the engine gives no figure.
   */
  protected hostArrayRefused(buffer: DeviceBuffer, e: RangeError): OutOfMemoryError {
    const limit = `memoryLimit (${this.memoryLimit} bytes) was not the limit`;
    const detail = /invalid .*length/i.test(e.message)
      ? `${buffer.size} ${buffer.dtype} elements are longer than the JavaScript engine's largest typed array ` +
        `(RangeError: ${e.message}); ${limit}`
      : `the JavaScript engine could not get that much memory from the host (RangeError: ${e.message}); ` +
        `${limit}: lower it to what this machine can hold`;
    return this.outOfMemory(buffer.byteLength, 0, detail);
  }

  /**
   * Whether arrays of `dtype` can be created here: every dtype, those of route `host` (float64) only with the
   * optional hostStorage hook (their kernels run on the host: host-float64.ts).
   */
  supportsDType(dtype: DType): boolean {
    return (
      isDType(dtype) &&
      (routeOf(dtype) !== 'host' || typeof (this as { hostStorage?: unknown }).hostStorage === 'function')
    );
  }

  /** Whether float16 arrays take 2 bytes per element here (the optional packedFloat16 hook, hooks.ts). */
  hasPackedFloat16(): boolean {
    const hook = (this as { packedFloat16?: () => boolean }).packedFloat16;
    return typeof hook === 'function' && hook.call(this) === true;
  }

  /** Whether int8 and uint8 arrays take 1 byte per element here (the optional packedInt8 hook, hooks.ts). */
  hasPackedInt8(): boolean {
    const hook = (this as { packedInt8?: () => boolean }).packedInt8;
    return typeof hook === 'function' && hook.call(this) === true;
  }

  /** Bytes per element of `dtype` here: float16 2 with packedFloat16, int8 and uint8 1 with packedInt8. */
  private storedBytes(dtype: DType): number {
    if (dtype === 'float16' && this.hasPackedFloat16()) return 2;
    if ((dtype === 'int8' || dtype === 'uint8') && this.hasPackedInt8()) return 1;
    return bytesPerElement(dtype);
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.allocate} */
  allocate(size: number, dtype: DType = 'float32'): DeviceBuffer {
    this.assertOpen();
    if (!Number.isInteger(size) || size < 0)
      throw new InvalidArgumentError(`allocation size must be a non-negative integer, got ${size}`);
    if (!isDType(dtype)) throw new DTypeError(`unknown dtype '${String(dtype)}' (expected ${DTYPE_LIST})`);
    if (!this.supportsDType(dtype))
      throw new UnsupportedOpError(
        'allocate',
        dtype,
        this.name,
        `${dtype} needs storage the host addresses (the hostStorage hook: cpu, wasm, reference); cast to float32`,
      );
    const byteLength = size * this.storedBytes(dtype);
    const available = this.memoryAvailable();
    if (byteLength > available) throw this.overAvailable(byteLength);
    const buffer: DeviceBuffer = Object.freeze({ id: this.nextBufferId++, dtype, size, byteLength, owner: this.id });
    this.createStorage(storageBuffer(buffer), dtype);
    this.live.set(buffer.id, buffer);
    this.liveBytes += byteLength;
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    return buffer;
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.deallocate} */
  deallocate(buffer: DeviceBuffer): void {
    this.release(this.checkBuffer(buffer, 'deallocate'));
  }

  private release(buffer: DeviceBuffer): void {
    this.live.delete(buffer.id);
    this.liveBytes -= buffer.byteLength;
    this.destroyStorage(storageBuffer(buffer));
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.free} */
  free(x: NDArray): void {
    if (x === null || typeof x !== 'object' || !('buffer' in x) || x.buffer === null || typeof x.buffer !== 'object') {
      throw new InvalidArgumentError(
        `free: x must be an NDArray, got ${describeValue(x)}${x && typeof x === 'object' ? ' without a buffer' : ''}`,
      );
    }
    this.checkBuffer(x.buffer, 'free', 'x');
    // Through deallocate, so that a wrapper of the backend (checked(), a recorder) sees every free.
    this.deallocate(x.buffer);
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.write} */
  write(buffer: DeviceBuffer, data: HostArray): void {
    this.checkBuffer(buffer, 'write', 'buffer');
    checkWriteData(data, 'write', buffer.dtype);
    if (data.length !== buffer.size) {
      throw new ShapeMismatchError(`write: data has ${data.length} elements but the buffer holds ${buffer.size}`);
    }
    // bool: nonzero is true; float16: rounded to float16 (roundFloat16); int8, uint8: wrapped (hostValue)
    this.writeStorage(storageBuffer(buffer), hostToStorage(buffer.dtype, data));
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.copyToDevice} */
  copyToDevice(buffer: DeviceBuffer, data: HostArray): void {
    this.write(buffer, data);
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.read} */
  async read(x: NDArray | DeviceBuffer): Promise<HostArray> {
    const view = this.readView(x, 'read');
    const host = (data: StorageArray): HostArray => storageToHost(view.dtype, data);
    if (isWholeBuffer(view)) return host(await this.readStorage(storageBuffer(view.buffer)));
    const tmp = this.contiguous(view);
    try {
      return host(await this.readStorage(storageBuffer(tmp.buffer)));
    } finally {
      this.free(tmp);
    }
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.copyFromDevice} */
  copyFromDevice(x: NDArray | DeviceBuffer): Promise<HostArray> {
    return this.read(x);
  }

  /** Bad arguments throw at once (not through the handle); failures of the read itself come through it. */
  readHandle(x: NDArray | DeviceBuffer): ReadHandle<HostArray> {
    this.readView(x, 'readHandle');
    let done = false;
    let value: HostArray | undefined;
    let error: unknown;
    const p = this.read(x).then(
      (v) => {
        done = true;
        value = v;
        return v;
      },
      (e: unknown) => {
        done = true;
        error = e;
        throw e;
      },
    );
    p.catch(() => undefined); // observed through wait()/tryRecv()
    return {
      wait: () => p,
      tryRecv: () => {
        if (error !== undefined) throw error;
        return value;
      },
      poll: () => done,
    };
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.synchronize} */
  async synchronize(): Promise<void> {
    this.assertOpen();
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.dispose} */
  dispose(): void {
    if (this.disposed) return;
    for (const b of [...this.live.values()]) this.deallocate(b);
    this.disposed = true;
  }

  // ---- construction ----
  /** {@inheritDoc @polyhal/hal!ComputeBackend.fromArray} */
  fromArray(data: ArrayLike<number>, shape: readonly number[], dtype?: DType): NDArray {
    this.assertOpen();
    checkHostData(data, 'fromArray', dtype);
    assertShape(shape, 'fromArray: shape');
    if (dtype !== undefined && !isDType(dtype))
      throw new DTypeError(`fromArray: unknown dtype ${describeValue(dtype)} (expected ${DTYPE_LIST})`);
    const dt: DType = dtype ?? inferDType(data);
    if (data.length !== sizeOf(shape)) {
      throw new ShapeMismatchError(
        `fromArray: ${data.length} values do not fill shape [${shape.join(', ')}] (${sizeOf(shape)} elements)`,
        [shape],
      );
    }
    const buffer = this.allocate(data.length, dt); // OutOfMemoryError before any host copy
    let host: StorageArray;
    try {
      // As the typed arrays convert (hostValue): bool any nonzero value (NaN included, as NumPy's
      // bool(nan)) is true; int8/uint8 wrap; float16 rounds to nearest even.
      // writeStorage copies (its contract), so an array already of the storage type goes as it is: no host copy
      // (a 640×640×3 Float32Array took 2.6 ms through Float32Array.from)
      host =
        dt === 'float32'
          ? data instanceof Float32Array
            ? data
            : Float32Array.from(data)
          : dt === 'int32'
            ? data instanceof Int32Array
              ? data
              : Int32Array.from(data)
            : hostToStorage(dt, Float64Array.from(data));
    } catch (e) {
      this.release(buffer);
      throw new InvalidArgumentError(
        `fromArray: data has a value that does not convert to a number (${(e as Error).message})`,
      );
    }
    this.writeStorage(storageBuffer(buffer), host);
    return viewOf(buffer, shape);
  }

  /** {@inheritDoc @polyhal/hal!ComputeBackend.full} */
  full(shape: readonly number[], value: number, dtype: DType = 'float32'): NDArray {
    assertShape(shape, 'full: shape');
    checkNumber(value, 'full', 'value');
    const buffer = this.allocate(sizeOf(shape), dtype);
    // As the typed arrays convert (hostValue): bool any nonzero value (NaN included) is true, stored as 1;
    // int8/uint8 wrap; float16 rounds to nearest even.
    this.route.fill(buffer, dtype === 'bool' ? hostValue(dtype, value) : value);
    return viewOf(buffer, shape);
  }

  // ---- checks ----
  /**
   * Throws unless `x` is a live array of this backend instance with a well-formed view inside its
   * buffer (InvalidArgumentError, DeviceMismatchError, UseAfterFreeError). O(rank).
   */
  check(x: NDArray, op: string, arg = 'x'): void {
    if (x === null || typeof x !== 'object' || !('buffer' in x) || x.buffer === null || typeof x.buffer !== 'object') {
      throw new InvalidArgumentError(
        `${op}: ${arg} must be an NDArray, got ` +
          `${describeValue(x)}${x && typeof x === 'object' ? ' without a buffer' : ''}`,
      );
    }
    this.checkBuffer(x.buffer, op, arg);
    checkView(x, op, arg);
  }

  /** An NDArray or a DeviceBuffer to read, as a view (validated). */
  protected readView(x: NDArray | DeviceBuffer, op: string): NDArray {
    if (x !== null && typeof x === 'object' && 'buffer' in x) {
      this.check(x, op);
      return x;
    }
    return viewOf(this.checkBuffer(x, op, 'x'));
  }

  /**
   * Returns `buffer` if it is a live buffer of this backend instance; else InvalidArgumentError (not a
   * buffer), DeviceMismatchError (another instance's) or UseAfterFreeError (freed), naming `op` and `arg`.
   */
  protected checkBuffer(buffer: DeviceBuffer, op: string, arg = 'buffer'): DeviceBuffer {
    this.assertOpen();
    if (buffer === null || typeof buffer !== 'object' || typeof buffer.owner !== 'string') {
      throw new InvalidArgumentError(
        `${op}: ${arg} must be a DeviceBuffer (or an NDArray where the op takes one), got ${describeValue(buffer)}`,
      );
    }
    if (buffer.owner !== this.id) {
      throw new DeviceMismatchError(
        `${op}: the buffer of ${arg} belongs to backend instance ${buffer.owner}, not to ` +
          `${this.name} (${this.id}); move it with read + fromArray (or tensor.to())`,
      );
    }
    const live = this.live.get(buffer.id);
    if (live !== buffer && !(live && isStorageAlias(live, buffer))) {
      throw new UseAfterFreeError(
        `${op}: ${arg}: buffer ${buffer.id} (${buffer.size} × ${buffer.dtype}) of ${this.name} was already freed`,
      );
    }
    return buffer;
  }

  private assertOpen(): void {
    if (this.disposed) throw new UseAfterFreeError(`backend ${this.name} (${this.id}) was disposed`);
  }

  /** Runs a kernel into a fresh buffer; frees the buffer if the kernel throws, so nothing leaks. */
  protected guard(out: DeviceBuffer, run: () => void): void {
    try {
      run();
    } catch (e) {
      this.deallocate(out);
      throw e;
    }
  }
}
