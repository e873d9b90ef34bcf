import {
  type AdamStepParams,
  type BackendCapabilities,
  BackendUnavailableError,
  type BinaryOp,
  type CaptureResult,
  type LiveValues,
  type ConvOptions,
  type ConvTransposeOptions,
  type DeviceBuffer,
  type DType,
  type ElementwiseStep,
  type NDArray,
  type ReduceOp,
  type ResizeOptions,
  type ScatterReduction,
  type SgdStepParams,
  type UnaryOp,
  expandView,
  shrinkView,
  viewOf,
} from '@polyhal/hal';
import { BaseBackend, GATHER_FILL, isContiguous, type StorageArray } from '@polyhal/hal/internal';
import type { PhiloxStream } from '@polyhal/hal/internal';
import type { AcquiredDevice, WebGpuOptions } from './device.js';
import { AdamGroups, MAX_ADAM_SLOTS } from './dispatch-adam.js';
import { dispatchUnscale } from './dispatch-unscale.js';
import { Captures, type Slot } from './capture.js';
import { CaptureFusion } from './capture-fusion.js';
import { dispatchPhilox, type RandomContext } from './dispatch-random.js';
import { dispatchSgd, type SgdContext } from './dispatch-sgd.js';
import {
  dispatchBinary,
  dispatchBinaryScalar,
  dispatchCopy,
  dispatchFill,
  dispatchReduce,
  dispatchUnary,
  type ElementwiseContext,
} from './dispatch-elementwise.js';
import { dispatchFused } from './dispatch-fused.js';
import { dispatchOneHot, dispatchQuantize, dispatchScatter, dispatchTuplePositions } from './dispatch-index.js';
import { dispatchArgReduce, dispatchTopk, type SelectContext } from './dispatch-select.js';
import { dispatchMatmul, type MatmulContext } from './dispatch-matmul.js';
import { dispatchIntMatmul, type IntMatmulContext, int8Setup } from './dispatch-matmul-int.js';
import {
  dispatchHalfMatmul,
  type HalfMatmulContext,
  halfMatmulSetup,
  takesHalfSubgroupMatrix,
} from './dispatch-matmul-f16.js';
import {
  decodeHalf,
  encodeHalf,
  type HalfArithmetic,
  type HalfContext,
  narrowedInto,
  widened,
} from './dispatch-half.js';
import type { HalfConversions } from './kernels/half.js';
import { type ConvContext, convOnWebGpu, convTransposeOnWebGpu, resizeOnWebGpu } from './dispatch-conv.js';
import { dispatchLayerNorm, dispatchLayerNormBackward, type NormContext } from './dispatch-norm.js';
import { type SoftmaxContext, softmaxOnGpu } from './dispatch-softmax.js';
import { SUBGROUP_MATRIX } from './device.js';
import { CommandBatch } from './encoder.js';
import { LoopWatch } from './loop-watch.js';
import type { GpuDeviceLike } from './gpu-types.js';
import { softmaxCrossEntropyWgsl } from './kernels/fused.js';
import { TILES } from './kernels/matmul.js';
import { GATHER_WORDS, gatherWgsl } from './kernels/gather.js';
import { whereWgsl, whereWords } from './kernels/where.js';
import { flat, rowMajor, stridedParams } from './kernel-params.js';
import { floatBits } from './layout.js';
import { BufferPool } from './pool.js';
import { StagingReader } from './reads.js';

export { GpuError } from './gpu-error.js';

const STORAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

/**
 * WebGPU backend: WGSL compute shaders on buffers of the device. Ops only encode work; command buffers
 * are submitted in batches (and before any read, write or synchronize); `read` maps a staging buffer
 * asynchronously; there is no readSync. Pipelines are cached per kernel specialization; freed buffers
 * return to a pool keyed by size class. Validation and out-of-memory errors (error scopes) fail the
 * submission they occur in (submissions.ts): every array it wrote, and every array computed from
 * those, rejects on read with a GpuError naming the op, for as long as it holds that result; the
 * next synchronize() rejects with it once. A lost device makes every later call fail.
 */
export class WebGpuBackend extends BaseBackend {
  readonly name = 'webgpu';
  /** The adapter and the kernels of its paths (int8 matmul, float16 matmul and arithmetic where not the defaults). */
  deviceName: string;
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
  private readonly halfContext: HalfContext;
  private readonly elementwiseContext: ElementwiseContext;
  private halfConversions: HalfConversions = 'integer';
  private halfArithmetic: HalfArithmetic = 'emulated';
  private readonly pool: BufferPool;
  /** The open command encoder, uniform params, submissions and their error scopes (encoder.ts). */
  private readonly batch: CommandBatch;
  private readonly matmulContext: MatmulContext;
  /** Kernels the plans of captures folded into others (plan-fusion.ts). */
  private readonly planFusion = { fused: 0 };
  /** float16 products on tensor cores (dispatch-matmul-f16.ts). */
  private readonly halfMatmulContext: HalfMatmulContext;
  private readonly intMatmulContext: IntMatmulContext;
  private readonly normContext: NormContext;
  /** softmax's one-kernel form (dispatch-softmax.ts), made at the first softmax. */
  private softmaxContext?: SoftmaxContext;
  private readonly selectContext: SelectContext;
  private readonly adam: AdamGroups;
  /** The context of the kernels whose params a capture's live sections recompute (dispatch-sgd, dispatch-random). */
  private readonly liveDispatch: SgdContext & RandomContext;
  private readonly reader: StagingReader;
  private readonly dummy: GPUBuffer;
  private lostReason: string | null = null;
  /** Whether dispose() destroys the device: it was requested here, not injected (`device` option). */
  private readonly ownsDevice: boolean;
  private released = false;
  /** The capture running (beginCapture … endCapture) and the plans made and not released. */
  private readonly captures: Captures;
  /** Elementwise ops deferred and fused while a capture runs (capture-fusion.ts; option fuseInCapture). */
  private readonly fusion: CaptureFusion;

  constructor(acquired: AcquiredDevice, options: WebGpuOptions = {}) {
    const limits = acquired.device.limits;
    super(options, Math.min(2 ** 31, limits.maxBufferSize * 4));
    this.device = acquired.device;
    this.ownsDevice = acquired.owned;
    const i = acquired.info;
    this.isSoftware = i.isFallbackAdapter;
    const adapterName =
      [i.description || i.device, i.vendor && `vendor ${i.vendor}`, i.architecture && `arch ${i.architecture}`]
        .filter(Boolean)
        .join(', ') || 'WebGPU device';
    const int8 = int8Setup(
      options,
      acquired.device.features.has(SUBGROUP_MATRIX),
      limits.maxComputeWorkgroupStorageSize,
    );
    this.int8MatmulPath = int8.description;
    // f16 subgroup-matrix configurations (device.ts halfSubgroupMatrix); shader-f16 is requested wherever offered
    const features = acquired.device.features;
    const halfMatrices = (acquired.halfMatrices ?? true) && features.has(SUBGROUP_MATRIX);
    const half = halfMatmulSetup(options, halfMatrices && features.has('shader-f16'));
    this.deviceName =
      `${adapterName}; int8 matmul: ${this.int8MatmulPath}` +
      (half.mode === 'off' ? '' : `; float16 matmul: ${half.description}`);
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
    this.matmulContext = {
      device: this.device,
      batch: this.batch,
      pool: this.pool,
      forcedTile: options.matmulTile && options.matmulTile !== 'auto' ? TILES[options.matmulTile] : null,
      forcedSplitK: typeof options.matmulSplitK === 'number' ? Math.max(1, Math.floor(options.matmulSplitK)) : null,
      software: this.isSoftware,
      gpu: (buffer) => this.gpu(buffer),
      fill: (out, value) => this.fillKernel(out, value),
      // a copy of the distinct elements (a broadcast dim's one), viewed with x's shape: dispatch-matmul.ts
      packed: (x) => {
        const base = shrinkView(
          x,
          x.shape.map((d, i) => [0, x.strides[i] === 0 ? Math.min(d, 1) : d] as const),
        );
        return expandView(this.contiguous(base), x.shape);
      },
      release: (x) => this.free(x),
    };
    this.halfMatmulContext = {
      batch: this.batch,
      pool: this.pool,
      mode: half.mode,
      workgroupStorage: limits.maxComputeWorkgroupStorageSize,
      forcedTile: half.tile,
      gpu: (buffer) => this.gpu(buffer, true),
    };
    this.intMatmulContext = {
      batch: this.batch,
      pool: this.pool,
      ...int8,
      gpu: (buffer) => this.gpu(buffer),
      fill: (out, value) => this.fillKernel(out, value),
    };
    this.normContext = { batch: this.batch, gpu: (buffer) => this.gpu(buffer), dummy: this.dummy, pool: this.pool };
    this.adam = new AdamGroups({
      batch: this.batch,
      gpu: (buffer) => this.gpu(buffer),
      free: (x) => this.free(x),
      slots: Math.max(1, Math.min(MAX_ADAM_SLOTS, Math.floor(limits.maxStorageBuffersPerShaderStage / 4))),
      live: () => this.captures.liveContext(),
    });
    this.liveDispatch = {
      batch: this.batch,
      gpu: (buffer) => this.gpu(buffer),
      dummy: this.dummy,
      live: () => this.captures.liveContext(),
    };
    this.selectContext = {
      batch: this.batch,
      gpu: (buffer) => this.gpu(buffer),
      allocate: (size, dtype) => this.allocate(size, dtype),
      deallocate: (buffer) => this.deallocate(buffer),
    };
    this.halfContext = {
      batch: this.batch,
      half: this.half,
      gpu: (buffer) => this.gpu(buffer, true),
      allocate: (size, dtype) => this.allocate(size, dtype),
      deallocate: (buffer) => this.deallocate(buffer),
      conversions: () => this.halfConversions,
      arithmetic: () => this.halfArithmetic,
    };
    this.elementwiseContext = {
      batch: this.batch,
      half: this.halfContext,
      software: this.isSoftware,
      name: this.name,
      gpu: (buffer) => this.gpu(buffer),
    };
    this.reader = new StagingReader(
      this.device,
      this.batch,
      (buffer) => this.gpu(buffer, true),
      () => this.lostReason,
    );
    this.captures = new Captures({
      device: this.device,
      batch: this.batch,
      pool: this.pool,
      assertUsable: (op) => this.assertUsable(op),
      lostReason: () => this.lostReason,
      gpuOf: (buffer) => this.gpu(buffer, true),
      allocate: (size, dtype) => this.allocate(size, dtype),
      fusion:
        (options.fuseInCapture ?? true)
          ? {
              pipelines: this.batch.pipelines,
              align: Math.max(16, this.device.limits.minUniformBufferOffsetAlignment),
              elementwise: this.elementwiseContext,
              matmul: this.matmulContext,
              maxStorageBuffers: this.device.limits.maxStorageBuffersPerShaderStage,
              stats: this.planFusion,
            }
          : undefined,
    });
    this.fusion = new CaptureFusion(
      {
        batch: this.batch,
        elementwise: this.elementwiseContext,
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
    const pooled = BufferPool.sizeClass(WebGpuBackend.storageBytes(buffer));
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
    const b = this.pool.acquire(WebGpuBackend.storageBytes(buffer));
    this.gpuBuffers.set(buffer.id, b);
    if (dtype === 'float16') this.half.add(buffer.id);
    this.batch.keys.set(b, buffer.id);
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    const b = this.gpuBuffers.get(buffer.id)!;
    this.gpuBuffers.delete(buffer.id);
    this.half.delete(buffer.id);
    this.batch.keys.delete(b);
    this.batch.tracker.forget(buffer.id);
    // Queued work may still read it; later work on a reused buffer is encoded after it (see writeStorage).
    const release = (): void => this.pool.release(b, WebGpuBackend.storageBytes(buffer));
    if (!this.fusion.retain(buffer, release)) release(); // a pending fused chain may still read it
  }

  /** A Float32Array for float32 (float16: exact float16 values, stored as binary16), an Int32Array otherwise. */
  protected writeStorage(buffer: DeviceBuffer, data: StorageArray): void {
    this.assertUsable('write');
    this.flush(); // queued work that used a recycled buffer runs before this write
    const bytes = this.half.has(buffer.id) ? encodeHalf(data as Float32Array) : data;
    if (bytes.byteLength > 0)
      this.device.queue.writeBuffer(this.gpu(buffer, true), 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.captures.recorder?.upload(this.gpu(buffer, true), bytes);
    this.batch.tracker.forget(buffer.id); // it holds the host's data now, whatever earlier work did
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<StorageArray> {
    this.assertUsable('read');
    this.captures.recorder?.breakWith(`a read of buffer #${buffer.id} during the capture (the work depends on it)`);
    if (!this.half.has(buffer.id)) return this.reader.read(buffer);
    const words = await this.reader.read({ ...buffer, byteLength: WebGpuBackend.storageBytes(buffer) });
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
   * capture deferred; `fusedKernels`: the kernels encoded for them (capture-fusion.ts; counted in `dispatches`).
   */
  kernelStats(): { dispatches: number; submissions: number; fusedOps: number; fusedKernels: number } {
    return { ...this.batch.stats, fusedOps: this.fusion.stats.deferred, fusedKernels: this.fusion.stats.kernels };
  }

  /** The GPU buffer of `buffer`; float16 storage only for the kernels that read binary16 (`half`). */
  private gpu(buffer: DeviceBuffer, half = false): GPUBuffer {
    const b = this.gpuBuffers.get(buffer.id);
    if (!b) this.checkBuffer(buffer, 'webgpu');
    if (!half && this.half.has(buffer.id))
      throw new Error(`webgpu: a float16 buffer (#${buffer.id}) reached a kernel that reads float32 only`);
    return b!;
  }

  /** Whether any of `buffers` holds float16 in 2-byte storage. */
  private anyHalf(...buffers: DeviceBuffer[]): boolean {
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
    return { gpu: this.gpu(b, true), size: b.size, byteLength: b.byteLength, dtype: b.dtype, half };
  }

  // ---- kernels ----
  /** A chain of elementwise steps on float32 in one generated kernel (dispatch-fused.ts). */
  protected override fusedElementwiseKernel(x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): void {
    if (this.fusion.fused(x, steps, out)) return;
    dispatchFused(this.elementwiseContext, x, steps, out, {
      allocate: (size) => this.allocate(size, 'float32'),
      free: (b) => this.deallocate(b),
    });
  }

  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    if (this.fusion.unary(op, x, out)) return;
    dispatchUnary(this.elementwiseContext, op, x, out);
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    if (this.fusion.binary(op, a, b, out)) return;
    dispatchBinary(this.elementwiseContext, op, a, b, out);
  }

  /** A number operand as a kernel parameter (dispatch-elementwise.ts): no 0-d array and no fill kernel. */
  protected override binaryScalarKernel(
    op: BinaryOp,
    x: NDArray,
    value: number,
    scalarFirst: boolean,
    out: DeviceBuffer,
  ): void {
    if (this.fusion.binaryScalar(op, x, value, scalarFirst, out)) return;
    dispatchBinaryScalar(this.elementwiseContext, op, x, value, scalarFirst, out);
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    dispatchReduce(this.elementwiseContext, op, x, axes, out);
  }

  protected copyKernel(x: NDArray, out: DeviceBuffer): void {
    dispatchCopy(this.elementwiseContext, x, out, rowMajor(x.shape), 0);
  }

  protected copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    dispatchCopy(this.elementwiseContext, x, out, strides, offset);
  }

  protected fillKernel(out: DeviceBuffer, value: number): void {
    dispatchFill(this.elementwiseContext, out, value);
  }

  /**
   * float32 product (dispatch-matmul.ts); float16 operands in 2-byte storage on tensor cores where the device has
   * them (dispatch-matmul-f16.ts), else read as float32 copies.
   */
  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const r = a.shape.length;
    if (
      this.anyHalf(a.buffer) &&
      this.anyHalf(b.buffer) &&
      takesHalfSubgroupMatrix(this.halfMatmulContext, a.shape[r - 2]!, b.shape[r - 1]!, a.shape[r - 1]!)
    ) {
      narrowedInto(this.halfContext, out, (o) => dispatchHalfMatmul(this.halfMatmulContext, a, b, o));
      return;
    }
    if (this.anyHalf(a.buffer, b.buffer, out)) {
      widened(this.halfContext, [a, b], ([wa, wb]) =>
        narrowedInto(this.halfContext, out, (o) => dispatchMatmul(this.matmulContext, wa!, wb!, o)),
      );
      return;
    }
    dispatchMatmul(this.matmulContext, a, b, out);
  }

  /** a @ b + bias: added in the GEMM's store (dispatch-matmul.ts), else the product then an add kernel. */
  protected override matmulBiasKernel(a: NDArray, b: NDArray, bias: NDArray, out: DeviceBuffer): void {
    if (this.anyHalf(a.buffer, b.buffer, bias.buffer, out)) {
      widened(this.halfContext, [a, b, bias], ([wa, wb, wbias]) =>
        narrowedInto(this.halfContext, out, (o) => this.matmulBiasKernel(wa!, wb!, wbias!, o)),
      );
      return;
    }
    if (dispatchMatmul(this.matmulContext, a, b, out, bias)) return;
    const product = this.allocate(out.size, 'float32');
    try {
      dispatchMatmul(this.matmulContext, a, b, product);
      this.binaryKernel('add', viewOf(product, bias.shape), bias, out);
    } finally {
      this.deallocate(product);
    }
  }

  /** Integer matmul (dispatch-matmul-int.ts): int8 packed on tensor cores or dot4I8Packed, else int32 tiles. */
  protected override integerMatmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    dispatchIntMatmul(this.intMatmulContext, a, b, out);
  }

  /** int8 product whose stores rescale and add the bias (hooks.ts; dispatch-matmul-int.ts): 3 kernels fewer. */
  protected override integerMatmulToFloatKernel(
    a: NDArray,
    b: NDArray,
    aScale: NDArray,
    bScale: NDArray,
    bias: NDArray | null,
    out: DeviceBuffer,
  ): void {
    dispatchIntMatmul(this.intMatmulContext, a, b, out, { aScale, bScale, bias });
  }

  /** gather: one invocation per output element (kernels/gather.ts); operands [O, D, I], [K] → [O, K, I]. */
  protected gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
    if (this.anyHalf(x.buffer, out)) {
      widened(this.halfContext, [x], ([w]) =>
        narrowedInto(this.halfContext, out, (o) => this.gatherKernel(w!, indices, o)),
      );
      return;
    }
    const fill = x.dtype === 'float32' ? 0x7fc00000 : GATHER_FILL[x.dtype]; // NaN's bits, INT32_MIN, 1 (bool)
    const [, dim, n] = x.shape as [number, number, number];
    const params = [out.size, indices.shape[0]!, n, dim, x.offset, ...x.strides];
    params.push(indices.offset, indices.strides[0]!, fill);
    const buffers = [this.gpu(x.buffer), this.gpu(indices.buffer), this.gpu(out)];
    this.batch.dispatch('gather', 'gather', gatherWgsl, GATHER_WORDS, params, buffers, flat(out.size));
  }

  /** argmax/argmin: one pass per row, long rows in chunks (dispatch-select.ts). */
  protected override argReduceKernel(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void {
    dispatchArgReduce(this.selectContext, op, x, lastIndex, out);
  }

  /** topk for k ≤ 64: a sorted buffer of k per row (dispatch-select.ts); larger k declines to the composite. */
  protected override topkKernel(
    x: NDArray,
    k: number,
    largest: boolean,
    values: DeviceBuffer,
    indices: DeviceBuffer,
  ): boolean {
    return dispatchTopk(this.selectContext, x, k, largest, values, indices);
  }

  /** where: one invocation per output element copying x's or y's 32-bit word (kernels/where.ts). */
  protected whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    const n = out.size;
    if (n === 0) return;
    if (this.anyHalf(x.buffer, y.buffer, out)) {
      widened(this.halfContext, [x, y], ([wx, wy]) =>
        narrowedInto(this.halfContext, out, (o) => this.whereKernel(cond, wx!, wy!, o)),
      );
      return;
    }
    const contig = isContiguous(cond) && isContiguous(x) && isContiguous(y);
    const { R, words } = stridedParams(cond.shape, [cond, x, y]);
    this.batch.dispatch(
      'where',
      `where/${contig}/${R}`,
      () => whereWgsl(contig, R),
      whereWords(R),
      [n, cond.offset, x.offset, y.offset, ...words],
      [this.gpu(cond.buffer), this.gpu(x.buffer), this.gpu(y.buffer), this.gpu(out)],
      flat(n),
    );
  }

  protected scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void {
    this.runScatter(target, indices, updates, out, 'add');
  }

  /** scatter: the updates chained per position, then one invocation per output element (dispatch-index.ts). */
  protected override scatterKernel(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    this.runScatter(target, indices, updates, out, reduction);
  }

  private runScatter(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    if (this.anyHalf(target.buffer, updates.buffer, out)) {
      widened(this.halfContext, [target, updates], ([t, u]) =>
        narrowedInto(this.halfContext, out, (o) => this.runScatter(t!, indices, u!, o, reduction)),
      );
      return;
    }
    dispatchScatter(this.selectContext, target, indices, updates, out, reduction);
  }

  /** oneHot: one invocation per output element (dispatch-index.ts). */
  protected override oneHotKernel(indices: NDArray, depth: number, out: DeviceBuffer): void {
    dispatchOneHot(this.selectContext, indices, depth, out);
  }

  /** Per-tensor quantizeLinear in one kernel (dispatch-index.ts, kernels/quantize.ts). */
  protected override quantizeKernel(x: NDArray, scale: NDArray, zeroPoint: NDArray | null, out: DeviceBuffer): void {
    dispatchQuantize(this.selectContext, x, scale, zeroPoint, out);
  }

  /** gatherND/scatterND positions: one invocation per tuple (dispatch-index.ts). */
  protected override tuplePositionsKernel(
    indices: NDArray,
    dims: readonly number[],
    batch: number,
    out: DeviceBuffer,
  ): void {
    dispatchTuplePositions(this.selectContext, indices, dims, batch, out);
  }

  // ---- fused ----

  /**
   * Fused Adam/AdamW in place, multi-tensor: consecutive steps with the same hyper-parameters share one
   * dispatch of up to MAX_ADAM_SLOTS parameters (dispatch-adam.ts). Operands validated by adamStep.
   */
  protected override adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    if (param.size === 0) return;
    const g = this.whole(grad);
    this.adam.add(param, g.view, m, v, p, g.temp);
  }

  /** Fused SGD in place, one kernel (dispatch-sgd.ts). Operands validated by sgdStep. */
  protected override sgdStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    velocity: DeviceBuffer | null,
    p: SgdStepParams,
  ): void {
    if (param.size === 0) return;
    const g = this.whole(grad);
    try {
      dispatchSgd(this.liveDispatch, param, g.view, velocity, p);
    } finally {
      if (g.temp) this.free(g.view);
    }
  }

  /** Unscale and overflow check in place, several gradients per kernel (dispatch-unscale.ts). Operands validated. */
  protected override nonFiniteCheckAndUnscaleKernel(
    grads: readonly DeviceBuffer[],
    foundInf: DeviceBuffer,
    invScale: number,
  ): void {
    dispatchUnscale(this.liveDispatch, this.device.limits.maxStorageBuffersPerShaderStage, grads, foundInf, invScale);
  }

  /** layerNorm on [rows, D] views: one invocation per row (dispatch-norm.ts). */
  protected override layerNormKernel(
    x: NDArray,
    weight: NDArray | null,
    bias: NDArray | null,
    eps: number,
    y: DeviceBuffer,
    mean: DeviceBuffer,
    rstd: DeviceBuffer,
  ): void {
    dispatchLayerNorm(this.normContext, x, weight, bias, eps, y, mean, rstd);
  }

  /** layerNormBackward on [rows, D] views: dx per row, dweight and dbias per column (dispatch-norm.ts). */
  protected override layerNormBackwardKernel(
    g: NDArray,
    x: NDArray,
    mean: NDArray,
    rstd: NDArray,
    weight: NDArray | null,
    dx: DeviceBuffer,
    dweight: DeviceBuffer | null,
    dbias: DeviceBuffer | null,
  ): void {
    dispatchLayerNormBackward(this.normContext, g, x, mean, rstd, weight, dx, dweight, dbias);
  }

  /**
   * conv in one kernel (dispatch-conv.ts): depthwise per output element, otherwise an implicit GEMM over the
   * windows (register blocks on a software adapter unless `matmulTile` forces tiles, as for matmul); 3-D windows
   * and empty shapes fall back to the HAL's composite.
   */
  override conv(x: NDArray, w: NDArray, options: ConvOptions = {}): NDArray {
    this.convContext ??= {
      ...this.selectContext,
      software: this.isSoftware && !this.matmulContext.forcedTile,
      dummy: this.dummy,
    };
    return convOnWebGpu(this, this.convContext, x, w, options) ?? super.conv(x, w, options);
  }
  private convContext?: ConvContext;

  /** convTranspose in one kernel gathering each output's taps (dispatch-conv.ts); 3-D falls back to the composite. */
  override convTranspose(x: NDArray, w: NDArray, options: ConvTransposeOptions = {}): NDArray {
    return convTransposeOnWebGpu(this, this.selectContext, x, w, options) ?? super.convTranspose(x, w, options);
  }

  /** Nearest resize in one gather kernel, the composite's indices in its params (dispatch-conv.ts); else composite. */
  override resize(x: NDArray, options: ResizeOptions): NDArray {
    return resizeOnWebGpu(this, this.selectContext, x, options) ?? super.resize(x, options);
  }

  /** Philox4x32-10 uniforms: one dispatch, one invocation per block of four (kernels/random.ts). */
  protected override randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    dispatchPhilox(this.liveDispatch, out, s);
  }

  /** float32 softmax over the last axis of a row-major array in one kernel (dispatch-softmax.ts), else composite. */
  override softmax(x: NDArray, axis = -1): NDArray {
    this.softmaxContext ??= {
      batch: this.batch,
      check: (a, op, arg) => this.check(a, op, arg),
      allocate: (size, dtype) => this.allocate(size, dtype),
      deallocate: (b) => this.deallocate(b),
      gpu: (b) => this.gpu(b),
    };
    return softmaxOnGpu(this.softmaxContext, x, axis) ?? super.softmax(x, axis);
  }

  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return this.fusedSoftmaxCrossEntropy(logits, labels, withGrad, (z, y, loss, grad) => {
      const [n, c] = z.shape as [number, number];
      if (n === 0) return;
      this.batch.dispatch(
        'softmaxCrossEntropy',
        'softmaxCrossEntropy',
        softmaxCrossEntropyWgsl,
        4,
        [n, c, grad ? 1 : 0, floatBits(-Infinity)],
        [this.gpu(z.buffer), this.gpu(y.buffer), this.gpu(loss), grad ? this.gpu(grad) : this.dummy],
        flat(n),
      );
    });
  }
}
