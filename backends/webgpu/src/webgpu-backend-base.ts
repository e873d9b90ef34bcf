/**
 * The device side of the WebGPU backend, under WebGpuBackend (webgpu-backend.ts, the kernel hooks): the device and
 * the storage of its arrays (float16 as binary16 in 2-byte storage, int8 and uint8 in bytes), the command batch,
 * buffer pool and reads, synchronize and dispose, captures (beginCapture … endCapture, capture.ts) and the kernel
 * contexts of the dispatch-*.ts files (webgpu-contexts.ts).
 */
import {
  type BackendCapabilities,
  BackendUnavailableError,
  type CaptureResult,
  type DeviceBuffer,
  type DType,
  type LiveValues,
} from '@polyhal/hal';
import { BaseBackend, type StorageArray } from '@polyhal/hal/internal';
import { Captures, type Slot } from './capture.js';
import { CaptureFusion } from './capture-fusion.js';
import type { AcquiredDevice, WebGpuOptions } from './device.js';
import { decodeHalf, encodeHalf, type HalfArithmetic } from './dispatch-half.js';
import { type ByteDType, decodeBytes, encodeBytes } from './dispatch-int8.js';
import { CommandBatch } from './encoder.js';
import type { GpuDeviceLike } from './gpu-types.js';
import type { HalfConversions } from './kernels/half.js';
import { LoopWatch } from './loop-watch.js';
import type { PlanMergeContext } from './plan-merge.js';
import { BufferPool } from './pool.js';
import { StagingReader } from './reads.js';
import type { ReplayPlan } from './replay-plan.js';
import type { KernelTime } from './replay-timing.js';
import { adapterSetup, type KernelContexts, kernelContexts } from './webgpu-contexts.js';

const STORAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

/** WebGpuBackend less its kernel hooks (see the module's comment and WebGpuBackend's). */
export abstract class WebGpuBackendBase extends BaseBackend {
  readonly name = 'webgpu';
  /** The adapter and the kernels of its paths (int8 matmul, float16 matmul and arithmetic where not the defaults). */
  deviceName: string;
  /** The kind of device the backend computes on. */
  readonly deviceType = 'gpu' as const;
  /** WGSL's accuracy rules: GPUs may divide through a reciprocal, fuse multiply-adds and flush subnormals. */
  override readonly capabilities: BackendCapabilities = Object.freeze({
    arithmetic: 'wgsl',
    fusedMultiplyAdd: true,
    flushesSubnormals: true,
  });
  /** Whether the adapter is a software one (lavapipe, SwiftShader); auto selection ranks it below wasm. */
  readonly isSoftware: boolean;
  /** The kernel int8 matmul runs on this device: 'subgroup matrices (tensor cores)' or 'dot4I8Packed'. */
  readonly int8MatmulPath: string;
  /** The GPUDevice it runs on (given in the options, or requested from the adapter). */
  readonly device: GpuDeviceLike;
  private readonly gpuBuffers = new Map<number, GPUBuffer>();
  /** Ids of the float16 buffers: 2 bytes per element (dispatch-half.ts). */
  private readonly half = new Set<number>();
  /** Ids of the int8 and uint8 buffers in 1 byte per element, with their dtype (dispatch-int8.ts). */
  private readonly bytes = new Map<number, ByteDType>();
  /** Whether int8 and uint8 take 1 byte per element (option int8Storage, default 'packed'). */
  private readonly int8Packed: boolean;
  private halfConversions: HalfConversions = 'integer';
  private halfArithmetic: HalfArithmetic = 'emulated';
  private readonly pool: BufferPool;
  /** @internal The open command encoder, uniform params, submissions and their error scopes (encoder.ts). */
  protected readonly batch: CommandBatch;
  /** @internal The contexts of the dispatch-*.ts files (webgpu-contexts.ts). */
  protected readonly contexts: KernelContexts;
  /** Kernels the plans of captures folded into others (plan-fusion.ts). */
  private readonly planFusion = { fused: 0 };
  /** Dispatches the plans of captures saved by merging independent kernels (plan-merge.ts). */
  private readonly planMerge = { merged: 0 };
  private readonly reader: StagingReader;
  /** @internal A 16-byte storage buffer bound where a kernel's optional operand is absent. */
  protected readonly dummy: GPUBuffer;
  private lostReason: string | null = null;
  /** Whether dispose() destroys the device: it was requested here, not injected (`device` option). */
  private readonly ownsDevice: boolean;
  private released = false;
  /** The capture running (beginCapture … endCapture) and the plans made and not released. */
  private readonly captures: Captures;
  /** @internal Elementwise ops deferred and fused while a capture runs (capture-fusion.ts; option fuseInCapture). */
  protected readonly fusion: CaptureFusion;
  /** The plan replayed last (replayKernelTimes). */
  private lastReplay: ReplayPlan | null = null;

  constructor(acquired: AcquiredDevice, options: WebGpuOptions = {}) {
    const limits = acquired.device.limits;
    super(options, Math.min(2 ** 31, limits.maxBufferSize * 4));
    this.device = acquired.device;
    this.ownsDevice = acquired.owned;
    this.isSoftware = acquired.info.isFallbackAdapter;
    const setup = adapterSetup(acquired, options);
    this.int8MatmulPath = setup.int8.description;
    this.int8Packed = (options.int8Storage ?? 'packed') === 'packed';
    this.deviceName = setup.deviceName;
    this.batch = new CommandBatch(this.device, {
      batchSize: options.batchSize ?? 64,
      opScopes: options.errorScopes !== 'batch',
      assertUsable: (op) => this.assertUsable(op),
      submitted: () => this.pool.flushed(),
      loopWatch: new LoopWatch(this.name),
    });
    // freed buffers are kept while the live ones leave room under memoryLimit (pool.ts), unless capped
    const poolCap = options.maxPooledBytes ?? (() => this.memoryAvailable());
    this.pool = new BufferPool(this.device, STORAGE, poolCap, (b) => this.batch.pipelines.forget(b));
    this.dummy = this.device.createBuffer({ size: 16, usage: STORAGE });
    this.contexts = kernelContexts(
      {
        name: this.name,
        device: this.device,
        batch: this.batch,
        pool: this.pool,
        dummy: this.dummy,
        software: this.isSoftware,
        half: this.half,
        bytes: this.bytes,
        gpu: (buffer, half, bytes) => this.gpu(buffer, half, bytes),
        fill: (out, value) => this.fillKernel(out, value),
        contiguous: (x) => this.contiguous(x),
        free: (x) => this.free(x),
        allocate: (size, dtype) => this.allocate(size, dtype),
        deallocate: (buffer) => this.deallocate(buffer),
        conversions: () => this.halfConversions,
        arithmetic: () => this.halfArithmetic,
        live: () => this.captures.liveContext(),
      },
      options,
      setup,
    );
    this.reader = new StagingReader(
      this.device,
      this.batch,
      (buffer) => this.gpu(buffer, true, true),
      () => this.lostReason,
    );
    this.captures = new Captures({
      device: this.device,
      batch: this.batch,
      pool: this.pool,
      assertUsable: (op) => this.assertUsable(op),
      lostReason: () => this.lostReason,
      gpuOf: (buffer) => this.gpu(buffer, true, true),
      allocate: (size, dtype) => this.allocate(size, dtype),
      deallocate: (buffer) => this.deallocate(buffer),
      reader: this.reader,
      fusion:
        (options.fuseInCapture ?? true)
          ? {
              pipelines: this.batch.pipelines,
              align: Math.max(16, this.device.limits.minUniformBufferOffsetAlignment),
              elementwise: this.contexts.elementwise,
              matmul: this.contexts.matmul,
              maxStorageBuffers: this.device.limits.maxStorageBuffersPerShaderStage,
              stats: this.planFusion,
            }
          : undefined,
      merge: (options.mergeInCapture ?? true) ? this.mergeContext() : undefined,
      readAhead: options.readAheadInReplay ?? true,
      timestamps: (options.kernelTimestamps ?? false) && this.device.features.has('timestamp-query'),
      replayed: (plan) => {
        this.lastReplay = plan;
      },
    });
    this.fusion = new CaptureFusion(
      {
        batch: this.batch,
        elementwise: this.contexts.elementwise,
        capturing: () => this.batch.recorder !== null,
        isHalf: (b) => this.half.has(b.id),
      },
      options.fuseInCapture ?? true,
    );
    void this.device.lost.then((info) => {
      this.lostReason = `${info.reason}: ${info.message}`;
    });
  }

  // ---- storage ----
  /** float16 takes 2 bytes per element here: binary16 bits, two to a 32-bit word (dispatch-half.ts). */
  override packedFloat16(): boolean {
    return true;
  }

  /** int8 and uint8 take 1 byte per element here unless the option int8Storage is 'int32' (dispatch-int8.ts). */
  override packedInt8(): boolean {
    return this.int8Packed;
  }

  /**
   * How float16 kernels convert between binary16 and f32: 'integer' (operations on the bits, every
   * adapter) or 'hardware' (pack2x16float/unpack2x16float, where half-check.ts found them exact).
   * Either way the results are the same bits.
   */
  get float16Conversions(): HalfConversions {
    return this.halfConversions;
  }

  /** Sets float16Conversions (createWebGpuBackend, after the check of `float16Conversions: 'auto'`). */
  useFloat16Conversions(conversions: HalfConversions): void {
    this.halfConversions = conversions;
  }

  /**
   * How float16 elementwise ops and reductions run: 'native' (f16 arrays on `shader-f16`: dispatch-half-native.ts)
   * or 'emulated' (binary16 words decoded with float16Conversions). The same results either way.
   */
  get float16Arithmetic(): HalfArithmetic {
    return this.halfArithmetic;
  }

  /**
   * Sets float16Arithmetic (createWebGpuBackend, after the check of `float16Arithmetic: 'auto'`); 'native' is
   * named in deviceName. BackendUnavailableError for 'native' on a device without `shader-f16`.
   */
  useFloat16Arithmetic(arithmetic: HalfArithmetic): void {
    if (arithmetic === 'native' && !this.device.features.has('shader-f16'))
      throw new BackendUnavailableError(
        'webgpu',
        "float16Arithmetic 'native' needs shader-f16, which this device lacks",
      );
    const tag = '; float16 arithmetic: native (shader-f16)';
    this.deviceName = this.deviceName.replace(tag, '') + (arithmetic === 'native' ? tag : '');
    this.halfArithmetic = arithmetic;
  }

  /** Bytes of a buffer's GPU storage: whole 4-byte words, at least one. */
  private static storageBytes(buffer: DeviceBuffer): number {
    return Math.max(4, Math.ceil(buffer.byteLength / 4) * 4);
  }

  protected createStorage(buffer: DeviceBuffer, dtype: DType): void {
    this.assertUsable('allocate');
    const { maxStorageBufferBindingSize: binding, maxBufferSize } = this.device.limits;
    const pooled = BufferPool.sizeClass(WebGpuBackendBase.storageBytes(buffer));
    if (buffer.byteLength > binding || pooled > maxBufferSize) {
      // One buffer's limits of this device, not memoryLimit: say which and its value.
      const limit =
        buffer.byteLength > binding
          ? `maxStorageBufferBindingSize is ${binding} bytes`
          : `maxBufferSize is ${maxBufferSize} bytes (this buffer takes ${pooled} in the buffer pool's size class)`;
      throw this.outOfMemory(
        buffer.byteLength,
        Math.min(binding, maxBufferSize),
        `one buffer is too large for this device: its ${limit}; memoryLimit was not the limit (split the array)`,
      );
    }
    const b = this.pool.acquire(WebGpuBackendBase.storageBytes(buffer));
    this.gpuBuffers.set(buffer.id, b);
    if (dtype === 'float16') this.half.add(buffer.id);
    if ((dtype === 'int8' || dtype === 'uint8') && this.int8Packed) this.bytes.set(buffer.id, dtype);
    this.batch.keys.set(b, buffer.id);
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    const b = this.gpuBuffers.get(buffer.id)!;
    this.gpuBuffers.delete(buffer.id);
    this.half.delete(buffer.id);
    this.bytes.delete(buffer.id);
    this.batch.keys.delete(b);
    this.batch.tracker.forget(buffer.id);
    // Queued work may still read it; later work on a reused buffer is encoded after it (see writeStorage).
    const release = (): void => this.pool.release(b, WebGpuBackendBase.storageBytes(buffer));
    if (!this.fusion.retain(buffer, release)) release(); // a pending fused chain may still read it
  }

  /**
   * A Float32Array for float32 (float16: exact float16 values, stored as binary16), an Int32Array otherwise (int8
   * and uint8: their values, stored as bytes).
   */
  protected writeStorage(buffer: DeviceBuffer, data: StorageArray): void {
    this.assertUsable('write');
    this.flush(); // queued work that used a recycled buffer runs before this write
    const bytes = this.half.has(buffer.id)
      ? encodeHalf(data as Float32Array)
      : this.bytes.has(buffer.id)
        ? encodeBytes(data as Int32Array)
        : data;
    if (bytes.byteLength > 0)
      this.device.queue.writeBuffer(this.gpu(buffer, true, true), 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.captures.recorder?.upload(this.gpu(buffer, true, true), bytes);
    this.batch.tracker.forget(buffer.id); // it holds the host's data now, whatever earlier work did
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<StorageArray> {
    this.assertUsable('read');
    this.captures.recorder?.breakWith(`a read of buffer #${buffer.id} during the capture (the work depends on it)`);
    const packed = this.bytes.get(buffer.id);
    if (!this.half.has(buffer.id) && !packed) return this.reader.read(buffer);
    const words = await this.reader.read({ ...buffer, byteLength: WebGpuBackendBase.storageBytes(buffer) });
    if (packed) return decodeBytes(words, buffer.size, packed);
    return decodeHalf(new Uint16Array(words.buffer, words.byteOffset, words.byteLength / 2), buffer.size);
  }

  /**
   * Waits for all queued work. Rejects with UseAfterFreeError after dispose(), BackendUnavailableError
   * when the device is lost, and with the GpuError of a submission that failed since the last
   * synchronize() (reported once here; reads of the arrays it wrote keep rejecting).
   */
  override async synchronize(): Promise<void> {
    await super.synchronize(); // UseAfterFreeError once disposed
    this.assertUsable('synchronize');
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    await this.batch.tracker.settleAll();
    if (this.lostReason) throw new BackendUnavailableError('webgpu', `device lost (${this.lostReason})`);
    const e = this.batch.tracker.takeUnreported();
    if (e) throw e;
  }

  /**
   * Frees every array and pooled buffer; a device this backend requested itself is destroyed too (its
   * memory, pipelines and driver threads go at once instead of at garbage collection), an injected
   * `device` is left to its owner.
   */
  override dispose(): void {
    if (this.released) return;
    this.released = true;
    this.captures.releaseAll();
    super.dispose();
    this.flush();
    this.pool.destroyAll();
    this.reader.destroy();
    this.batch.destroy();
    this.dummy.destroy();
    if (this.ownsDevice) (this.device as GPUDevice).destroy();
  }

  /** Statistics of the buffer pool (for benchmarks and tests). */
  poolStats(): { pooledBuffers: number; pooledBytes: number; created: number; reused: number } {
    return this.pool.stats();
  }

  /**
   * Kernels dispatched and command buffers submitted since creation, held work (multi-tensor Adam) once
   * encoded: for benchmarks and tests of how many kernels a stretch of work costs. `fusedOps`: elementwise ops a
   * capture deferred; `fusedKernels`: the kernels encoded for them (capture-fusion.ts; counted in `dispatches`);
   * `planFused`: kernels the plans of captures folded into others when they ended (plan-fusion.ts);
   * `planMerged`: kernels the plans run inside another kernel's dispatch (merged horizontally: plan-merge.ts).
   */
  kernelStats(): {
    dispatches: number;
    submissions: number;
    fusedOps: number;
    fusedKernels: number;
    planFused: number;
    planMerged: number;
  } {
    return {
      ...this.batch.stats,
      fusedOps: this.fusion.stats.deferred,
      fusedKernels: this.fusion.stats.kernels,
      planFused: this.planFusion.fused,
      planMerged: this.planMerge.merged,
    };
  }

  /**
   * The GPU time of each kernel of the last replay of a capture (`compile`d steps, ONNX sessions), in replay order:
   * its pipeline key (merged kernels: `merge[...]` of their parts) and nanoseconds (replay-timing.ts). Needs the
   * option `kernelTimestamps` on a device with `timestamp-query`; null otherwise, or before a replay. It waits for
   * that replay's work.
   */
  async replayKernelTimes(): Promise<KernelTime[] | null> {
    return (await this.lastReplay?.kernelTimes()) ?? null;
  }

  /** What the plans' merging needs (plan-merge.ts): the pipeline cache and the device's limits. */
  private mergeContext(): PlanMergeContext {
    const l = this.device.limits;
    const limits = {
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
      maxUniformBuffers: Math.min(l.maxUniformBuffersPerShaderStage, l.maxDynamicUniformBuffersPerPipelineLayout),
      maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
    };
    return { pipelines: this.batch.pipelines, limits, stats: this.planMerge };
  }

  /**
   * @internal The GPU buffer of `buffer`; float16 storage only for the kernels that read binary16 (`half`), int8
   * and uint8 in 1-byte storage only for those that read bytes (`bytes`: dispatch-int8.ts).
   */
  protected gpu(buffer: DeviceBuffer, half = false, bytes = false): GPUBuffer {
    const b = this.gpuBuffers.get(buffer.id);
    if (!b) this.checkBuffer(buffer, 'webgpu');
    if (!half && this.half.has(buffer.id))
      throw new Error(`webgpu: a float16 buffer (#${buffer.id}) reached a kernel that reads float32 only`);
    if (!bytes && this.bytes.has(buffer.id))
      throw new Error(`webgpu: an int8/uint8 buffer in bytes (#${buffer.id}) reached a kernel that reads int32 only`);
    return b!;
  }

  /** Whether any of `buffers` holds int8 or uint8 in 1-byte storage. */
  protected anyBytes(...buffers: DeviceBuffer[]): boolean {
    return this.bytes.size > 0 && buffers.some((b) => this.bytes.has(b.id));
  }

  /** Whether any of `buffers` holds float16 in 2-byte storage. */
  protected anyHalf(...buffers: DeviceBuffer[]): boolean {
    return this.half.size > 0 && buffers.some((b) => this.half.has(b.id));
  }

  private assertUsable(op: string): void {
    if (this.lostReason)
      throw new BackendUnavailableError('webgpu', `device lost (${this.lostReason}); ${op} cannot run`);
  }

  /** Submits the encoded work (if any). */
  flush(): void {
    this.batch.flush();
  }

  // ---- capture (hal/src/capture.ts; capture.ts) ----
  /**
   * Starts recording the work encoded from now on (pending work is submitted first); `inputs`: the buffers
   * that `CapturedWork.replay` writes. InvalidArgumentError if a capture is running; UseAfterFreeError for a
   * freed input.
   */
  beginCapture(inputs: readonly DeviceBuffer[]): void {
    this.assertUsable('beginCapture');
    this.captures.begin(inputs.map((b) => this.slot(b, 'beginCapture')));
  }

  /**
   * Stops recording and returns a ReplayPlan (one submission per replay, its buffers reserved until released)
   * or why the capture cannot be replayed (a read during it). InvalidArgumentError if no capture is running.
   */
  endCapture(outputs: readonly DeviceBuffer[]): CaptureResult {
    return this.captures.end(() => outputs.map((b) => this.slot(b, 'endCapture')));
  }

  /** Stops a running capture and drops its recording (the work itself was done); nothing if none is running. */
  abortCapture(): void {
    this.captures.abort();
  }

  /** Runs `run`; during a capture its optimizer and random kernels take their params from `live` at each replay. */
  captureLive<T>(live: LiveValues, run: () => T): T {
    return this.captures.runLive(live, run);
  }

  /** Runs `run`; during a capture its work is done now and not recorded (one-time work: an optimizer's state). */
  uncaptured<T>(run: () => T): T {
    return this.captures.runUncaptured(run);
  }

  private slot(b: DeviceBuffer, op: string): Slot {
    this.checkBuffer(b, op);
    const half = this.half.has(b.id);
    const bytes = this.bytes.has(b.id);
    return { gpu: this.gpu(b, true, true), size: b.size, byteLength: b.byteLength, dtype: b.dtype, half, bytes };
  }
}
