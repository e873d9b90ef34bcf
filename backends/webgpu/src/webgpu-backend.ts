import {
  contiguousStrides,
  type AdamStepParams,
  type BackendCapabilities,
  BackendUnavailableError,
  BaseBackend,
  type BinaryOp,
  type DeviceBuffer,
  type HostArray,
  type NDArray,
  OutOfMemoryError,
  PolyHalError,
  type ReduceOp,
  type SgdStepParams,
  ShapeMismatchError,
  type UnaryOp,
  UnsupportedOpError,
  padPlacement,
} from '@polyhal/hal';
import type { AcquiredDevice, WebGpuOptions } from './device.js';
import type { GpuDeviceLike } from './gpu-types.js';
import { copyWgsl, copyWords, fillWgsl } from './kernels/copy.js';
import { binaryExpr, binaryWgsl, elementwiseWords, unaryExpr, unaryWgsl } from './kernels/elementwise.js';
import { adamWgsl, sgdWgsl, softmaxCrossEntropyWgsl } from './kernels/fused.js';
import { canLoadVec4, chooseSplitK, chooseTile, matmulWgsl, matmulWords, type Tile, TILES } from './kernels/matmul.js';
import { splitKSumWgsl } from './kernels/splitk.js';
import { gemvWgsl } from './kernels/gemv.js';
import { reduceWgsl, reduceWords } from './kernels/reduce.js';
import { coalesce, floatBits, grid, rankSlots } from './layout.js';
import { BufferPool } from './pool.js';
import { PipelineCache } from './pipelines.js';
import { GpuError } from './gpu-error.js';
import { type Submission, SubmissionTracker } from './submissions.js';

export { GpuError } from './gpu-error.js';

const STORAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST
const UNIFORM_ARENA = 1 << 16;
// Encoded matmul work that triggers a submission: 2^30 FLOP is ~25 µs of an H200 at 40 TFLOP/s, about
// the CPU cost of encoding one op plus a submit, so a 1024² matmul goes to the GPU at once while
// streams of small ops are still batched. On the H200, matmul 1024 repeated 50 times measured
// ~19-20 TFLOP/s with every tile while the 50 were encoded before one submission.
const SUBMIT_FLOPS = 2 ** 30;

const rowMajor = contiguousStrides;

/** Coalesced dims as kernel params: the shape, then each operand's strides, right-aligned in R slots (padding: size 1, stride 0). */
function packDims(c: { shape: readonly number[]; strides: readonly (readonly number[])[] }, R: number): number[] {
  const pad = (v: readonly number[], fill: number): number[] => [...new Array<number>(R - v.length).fill(fill), ...v];
  return [...pad(c.shape, 1), ...c.strides.flatMap((s) => pad(s, 0))];
}

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
  readonly deviceName: string;
  readonly deviceType = 'gpu' as const;
  /** WGSL's accuracy rules: GPUs may divide through a reciprocal, fuse multiply-adds and flush subnormals. */
  override readonly capabilities: BackendCapabilities = Object.freeze({
    arithmetic: 'wgsl',
    fusedMultiplyAdd: true,
    flushesSubnormals: true,
  });
  readonly isSoftware: boolean;
  readonly device: GpuDeviceLike;
  private readonly gpuBuffers = new Map<number, GPUBuffer>();
  private readonly pool: BufferPool;
  private readonly pipelines: PipelineCache;
  private encoder: GPUCommandEncoder | null = null;
  private pending = 0;
  /** Floating-point operations encoded since the last submission (matmuls only; others are small). */
  private pendingFlops = 0;
  private readonly opScopes: boolean;
  /** The open submission and the outcome of every submitted one (which arrays a failure poisons). */
  private readonly tracker = new SubmissionTracker();
  /** Tracker key of each GPU buffer in use: the HAL buffer id, or a negative key for scratch buffers. */
  private readonly keys = new Map<GPUBuffer, number>();
  private scratchKeys = 0;
  private readonly batchSize: number;
  private readonly forcedSplitK: number | null;
  private readonly forcedTile: Tile | null;
  private readonly arena: GPUBuffer;
  private readonly arenaHost = new ArrayBuffer(UNIFORM_ARENA);
  private arenaUsed = 0;
  private readonly align: number;
  private readonly dummy: GPUBuffer;
  private lostReason: string | null = null;
  /** Mappable staging buffers for reads, by size class, reused across reads. */
  private readonly staging = new Map<number, GPUBuffer[]>();

  constructor(acquired: AcquiredDevice, options: WebGpuOptions = {}) {
    const limits = acquired.device.limits;
    super(options, Math.min(2 ** 31, limits.maxBufferSize * 4));
    this.device = acquired.device;
    const i = acquired.info;
    this.isSoftware = i.isFallbackAdapter;
    this.deviceName =
      [i.description || i.device, i.vendor && `vendor ${i.vendor}`, i.architecture && `arch ${i.architecture}`]
        .filter(Boolean)
        .join(', ') || 'WebGPU device';
    this.batchSize = options.batchSize ?? 64;
    this.forcedTile = options.matmulTile && options.matmulTile !== 'auto' ? TILES[options.matmulTile] : null;
    this.opScopes = options.errorScopes !== 'batch';
    this.forcedSplitK = typeof options.matmulSplitK === 'number' ? Math.max(1, Math.floor(options.matmulSplitK)) : null;
    this.align = Math.max(16, limits.minUniformBufferOffsetAlignment);
    this.arena = this.device.createBuffer({ size: UNIFORM_ARENA, usage: 0x40 | 0x8 }); // UNIFORM | COPY_DST
    this.pipelines = new PipelineCache(this.device, this.arena);
    this.pool = new BufferPool(this.device, STORAGE, options.maxPooledBytes ?? 512 * 2 ** 20, (b) =>
      this.pipelines.forget(b),
    );
    this.dummy = this.device.createBuffer({ size: 16, usage: STORAGE });
    void this.device.lost.then((info) => {
      this.lostReason = `${info.reason}: ${info.message}`;
    });
  }

  // ---- storage ----
  protected createStorage(buffer: DeviceBuffer): void {
    this.assertUsable('allocate');
    const max = this.device.limits.maxStorageBufferBindingSize;
    if (buffer.byteLength > max) {
      throw new OutOfMemoryError(buffer.byteLength, max, `${this.name} (maxStorageBufferBindingSize of this adapter)`);
    }
    const b = this.pool.acquire(Math.max(4, buffer.byteLength));
    this.gpuBuffers.set(buffer.id, b);
    this.keys.set(b, buffer.id);
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    const b = this.gpuBuffers.get(buffer.id)!;
    this.gpuBuffers.delete(buffer.id);
    this.keys.delete(b);
    this.tracker.forget(buffer.id);
    // Queued work may still read it; later work on a reused buffer is encoded after it (see writeStorage).
    this.pool.release(b, Math.max(4, buffer.byteLength));
  }

  protected writeStorage(buffer: DeviceBuffer, data: HostArray): void {
    this.assertUsable('write');
    this.flush(); // queued work that used a recycled buffer runs before this write
    if (data.byteLength > 0)
      this.device.queue.writeBuffer(this.gpu(buffer), 0, data.buffer, data.byteOffset, data.byteLength);
    this.tracker.forget(buffer.id); // it holds the host's data now, whatever earlier work did
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<HostArray> {
    this.assertUsable('read');
    const bytes = Math.max(4, buffer.byteLength);
    const size = BufferPool.sizeClass(bytes);
    const staging = this.staging.get(size)?.pop() ?? this.device.createBuffer({ size, usage: 0x1 | 0x8 }); // MAP_READ | COPY_DST
    let reusable = false;
    try {
      const writer = this.tracker.writer(buffer.id);
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
      if (this.lostReason)
        throw new BackendUnavailableError('webgpu', `device lost (${this.lostReason}); results are not available`);
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
    await this.tracker.settleAll();
    if (this.lostReason) throw new BackendUnavailableError('webgpu', `device lost (${this.lostReason})`);
    const e = this.tracker.takeUnreported();
    if (e) throw e;
  }

  override dispose(): void {
    super.dispose();
    this.flush();
    this.pool.destroyAll();
    for (const list of this.staging.values()) for (const b of list) b.destroy();
    this.staging.clear();
    this.arena.destroy();
    this.dummy.destroy();
  }

  /** Statistics of the buffer pool (for benchmarks and tests). */
  poolStats(): { pooledBuffers: number; pooledBytes: number; created: number; reused: number } {
    return this.pool.stats();
  }

  private gpu(buffer: DeviceBuffer): GPUBuffer {
    const b = this.gpuBuffers.get(buffer.id);
    if (!b) this.checkBuffer(buffer, 'webgpu');
    return b!;
  }

  private assertUsable(op: string): void {
    if (this.lostReason)
      throw new BackendUnavailableError('webgpu', `device lost (${this.lostReason}); ${op} cannot run`);
  }

  /**
   * The open submission (with its command encoder), started on first use: one error-scope pair per
   * submission catches what only surfaces at encoder.finish()/submit (pass and dispatch validation).
   */
  private begin(): Submission {
    if (!this.tracker.open) {
      this.device.pushErrorScope('out-of-memory');
      this.device.pushErrorScope('validation');
      this.encoder = this.device.createCommandEncoder();
    }
    return this.tracker.begin();
  }

  /** Encodes a copy of `buffer` into `staging` and submits it with the open work; returns that submission. */
  private copyOut(buffer: DeviceBuffer, staging: GPUBuffer, bytes: number): Submission {
    this.begin().ops.push('read');
    this.tracker.read(buffer.id);
    this.encoder!.copyBufferToBuffer(this.gpu(buffer), 0, staging, 0, bytes);
    return this.submit();
  }

  // ---- encoding ----
  /**
   * Encodes one kernel: uniform params (i32 words) at binding 0, then the storage buffers. Work is submitted every `batchSize` ops, or as soon as the encoded matmuls
   * reach SUBMIT_FLOPS (`flops`), so that the GPU starts on large work while the caller is still
   * encoding instead of idling until the batch fills or a read.
   */
  private dispatch(
    op: string,
    key: string,
    source: () => string,
    words: number,
    params: number[],
    buffers: GPUBuffer[],
    groups: [number, number, number],
    flops = 0,
  ): void {
    this.assertUsable(op);
    const bytes = Math.ceil(Math.max(words, 4) / 4) * 16;
    if (bytes > UNIFORM_ARENA)
      throw new ShapeMismatchError(
        `webgpu ${op}: views of this many non-mergeable dimensions need ${bytes} bytes of kernel parameters, more than the ${UNIFORM_ARENA} of a uniform binding`,
      );
    if (this.arenaUsed + bytes > UNIFORM_ARENA) this.flush();
    const offset = this.arenaUsed;
    const view = new Int32Array(this.arenaHost, offset, bytes / 4);
    view.fill(0);
    view.set(params);
    this.arenaUsed = Math.ceil((offset + bytes) / this.align) * this.align;
    // With errorScopes 'op' a scope pair per op also names the op of errors raised at once.
    const sub = this.begin();
    sub.ops.push(op);
    if (this.opScopes) {
      this.device.pushErrorScope('out-of-memory');
      this.device.pushErrorScope('validation');
    }
    const { pipe, layout, writes } = this.pipelines.pipeline(key, source);
    const bind = this.pipelines.bindGroup(key, layout, bytes, buffers);
    for (let i = 0; i < buffers.length; i++) {
      const k = this.keys.get(buffers[i]!);
      if (k === undefined) continue;
      if (writes[i]) this.tracker.write(k);
      else this.tracker.read(k);
    }
    const pass = this.encoder!.beginComputePass();
    pass.setPipeline(pipe);
    pass.setBindGroup(0, bind, [offset]);
    pass.dispatchWorkgroups(groups[0], groups[1], groups[2]);
    pass.end();
    if (this.opScopes) {
      sub.watch(op, 'validation', this.device.popErrorScope());
      sub.watch(op, 'out-of-memory', this.device.popErrorScope());
    }
    this.pendingFlops += flops;
    if (++this.pending >= this.batchSize || this.pendingFlops >= SUBMIT_FLOPS) this.flush();
  }

  /** Submits the open submission (there must be one), pops its error scopes and seals it. */
  private submit(): Submission {
    const enc = this.encoder!;
    this.encoder = null;
    if (this.arenaUsed > 0) this.device.queue.writeBuffer(this.arena, 0, this.arenaHost, 0, this.arenaUsed);
    this.arenaUsed = 0;
    this.device.queue.submit([enc.finish()]);
    this.pending = 0;
    this.pendingFlops = 0;
    const sub = this.tracker.open!;
    const ops = [...new Set(sub.ops)];
    const label = ops.length === 1 ? ops[0]! : `one of ${ops.slice(0, 6).join(', ')}${ops.length > 6 ? ', …' : ''}`;
    sub.watch(label, 'validation', this.device.popErrorScope());
    sub.watch(label, 'out-of-memory', this.device.popErrorScope());
    this.tracker.seal();
    this.pool.flushed();
    return sub;
  }

  /** Submits the encoded work (if any). */
  flush(): void {
    if (this.encoder) this.submit();
  }

  /**
   * Shape and strides of coalesced operands as params, right-aligned in R = rankSlots(rank) slots
   * (any rank: ranks past MIN_RANK_SLOTS get kernels specialized for them).
   */
  private stridedParams(
    shape: readonly number[],
    operands: { strides: readonly number[] }[],
  ): { R: number; words: number[] } {
    const c = coalesce(
      shape,
      operands.map((o) => o.strides),
    );
    const R = rankSlots(c.shape.length);
    return { R, words: packDims(c, R) };
  }

  private isContig(x: NDArray): boolean {
    const c = coalesce(x.shape, [x.strides, rowMajor(x.shape)]);
    return c.shape.length <= 1 && (c.strides[0]?.[0] ?? 1) === 1;
  }

  private flat(n: number): [number, number, number] {
    const [x, y] = grid(Math.ceil(n / 256));
    return [x, y, 1];
  }

  // ---- kernels ----
  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    unaryExpr(op, x.dtype); // throws UnsupportedOpError before anything is encoded
    const n = out.size;
    if (n === 0) return;
    const contig = this.isContig(x);
    const { R, words } = this.stridedParams(x.shape, [x]);
    this.dispatch(
      op,
      `unary/${op}/${x.dtype}/${contig}/${R}`,
      () => unaryWgsl(op, x.dtype, contig, R),
      elementwiseWords(R),
      [n, 0, x.offset, 0, ...words],
      [this.gpu(x.buffer), this.gpu(out)],
      this.flat(n),
    );
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    binaryExpr(op, a.dtype); // throws UnsupportedOpError before anything is encoded
    const n = out.size;
    if (n === 0) return;
    const contig = this.isContig(a) && this.isContig(b);
    const { R, words } = this.stridedParams(a.shape, [a, b]);
    this.dispatch(
      op,
      `binary/${op}/${a.dtype}/${contig}/${R}`,
      () => binaryWgsl(op, a.dtype, contig, R),
      elementwiseWords(R),
      [n, 0, a.offset, b.offset, ...words],
      [this.gpu(a.buffer), this.gpu(b.buffer), this.gpu(out)],
      this.flat(n),
    );
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    if (op !== 'sum' && op !== 'max') throw new UnsupportedOpError(String(op), x.dtype, this.name);
    const outputs = out.size;
    if (outputs === 0) return;
    const kept = { shape: [] as number[], strides: [] as number[] };
    const red = { shape: [] as number[], strides: [] as number[] };
    x.shape.forEach((d, i) => {
      const t = axes.includes(i) ? red : kept;
      t.shape.push(d);
      t.strides.push(x.strides[i]!);
    });
    const count = red.shape.reduce((p, d) => p * d, 1);
    // The kernels count reduced elements and unravel their indices in 32-bit integers (i32 params):
    // 2^31 or more (a broadcast view can be that large) would wrap and give a wrong number.
    if (count >= 2 ** 31) {
      throw new UnsupportedOpError(
        op,
        x.dtype,
        this.name,
        `reductions over 2^31 or more elements per output (here ${count}); reduce over fewer axes first`,
      );
    }
    const perThread = count <= 64;
    const ck = coalesce(kept.shape, [kept.strides]);
    const cr = coalesce(red.shape, [red.strides]);
    const R = rankSlots(Math.max(ck.shape.length, cr.shape.length));
    const params = [outputs, count, x.offset, floatBits(-Infinity), ...packDims(ck, R), ...packDims(cr, R)];
    const groups: [number, number, number] = perThread ? this.flat(outputs) : [...grid(outputs), 1];
    this.dispatch(
      op,
      `reduce/${op}/${x.dtype}/${perThread}/${R}`,
      () => reduceWgsl(op, x.dtype, perThread, R),
      reduceWords(R),
      params,
      [this.gpu(x.buffer), this.gpu(out)],
      groups,
    );
  }

  private copyInto(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    const n = x.shape.reduce((p, d) => p * d, 1);
    if (n === 0) return;
    const { R, words } = this.stridedParams(x.shape, [x, { strides }]);
    this.dispatch(
      'copy',
      `copy/${x.dtype}/${out.dtype}/${R}`,
      () => copyWgsl(x.dtype, out.dtype, R),
      copyWords(R),
      [n, 0, x.offset, offset, ...words],
      [this.gpu(x.buffer), this.gpu(out)],
      this.flat(n),
    );
  }

  protected copyKernel(x: NDArray, out: DeviceBuffer): void {
    this.copyInto(x, out, rowMajor(x.shape), 0);
  }

  protected padKernel(
    x: NDArray,
    pads: readonly (readonly [number, number])[],
    value: number,
    out: DeviceBuffer,
  ): void {
    const { strides, offset } = padPlacement(x.shape, pads);
    this.fillKernel(out, value);
    this.copyInto(x, out, strides, offset);
  }

  protected fillKernel(out: DeviceBuffer, value: number): void {
    if (out.size === 0) return;
    const bits = out.dtype === 'float32' ? floatBits(value) : value | 0;
    this.dispatch(
      'fill',
      `fill/${out.dtype}`,
      () => fillWgsl(out.dtype),
      4,
      [out.size, bits],
      [this.gpu(out)],
      this.flat(out.size),
    );
  }

  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const r = a.shape.length;
    const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
    const batchShape = a.shape.slice(0, -2);
    const batch = batchShape.reduce((p, d) => p * d, 1);
    if (M === 0 || N === 0 || batch === 0) return;
    if (K === 0) {
      this.fillKernel(out, 0);
      return;
    }
    if (batch > 65535) throw new ShapeMismatchError(`webgpu matmul: at most 65535 batch items, got ${batch}`);
    const { R, words } = this.stridedParams(batchShape, [
      { strides: a.strides.slice(0, -2) },
      { strides: b.strides.slice(0, -2) },
    ]);
    const params = [
      M,
      N,
      K,
      batch,
      a.offset,
      b.offset,
      a.strides[r - 2]!,
      a.strides[r - 1]!,
      b.strides[r - 2]!,
      b.strides[r - 1]!,
      ...words,
    ];
    const flops = 2 * M * N * K * batch;
    // Matrix-vector shapes (N ≤ 4 or M ≤ 4 against ≥ 64) run without tiles (see kernels/gemv.ts).
    const gemv = this.forcedTile ? null : N <= 4 && M >= 64 ? 'rows' : M <= 4 && N >= 64 ? 'cols' : null;
    if (gemv) {
      const [width, count] = gemv === 'rows' ? [N, M] : [M, N];
      const [x, y] = this.flat(count);
      this.dispatch(
        'matmul',
        `matmul/gemv/${gemv}${width}/${R}`,
        () => gemvWgsl(gemv, width, R),
        matmulWords(R),
        [...params, 1],
        [this.gpu(a.buffer), this.gpu(b.buffer), this.gpu(out)],
        [x, y, batch],
        flops,
      );
      return;
    }
    const t = this.forcedTile ?? chooseTile(M, N, batch);
    const vec =
      t.bm % 64 === 0 &&
      t.bn % 64 === 0 &&
      canLoadVec4(
        K,
        N,
        a.offset,
        b.offset,
        a.strides[r - 2]!,
        a.strides[r - 1]!,
        b.strides[r - 2]!,
        b.strides[r - 1]!,
      ) &&
      (batch === 1 || [...a.strides.slice(0, -2), ...b.strides.slice(0, -2)].every((x) => x % 4 === 0));
    // Split-K within the 65535 workgroups of z, and with partial products [batch, S, M, N] that fit in
    // one storage binding (a forced count is lowered: 16 partial 2048² slices are 256 MiB, twice
    // lavapipe's 128 MiB maxStorageBufferBindingSize).
    const maxBinding = this.device.limits.maxStorageBufferBindingSize;
    const splitK = Math.max(
      1,
      Math.min(
        this.forcedSplitK ?? chooseSplitK(M, N, K, batch, t),
        Math.floor(65535 / batch),
        Math.floor(maxBinding / (batch * M * N * 4)),
      ),
    );
    const key = `matmul/${t.bm}x${t.bn}x${t.bk}/${t.tm}x${t.tn}/${vec ? 'vec4' : 'scalar'}/${R}`;
    const ab = [this.gpu(a.buffer), this.gpu(b.buffer)];
    const groups: [number, number, number] = [Math.ceil(N / t.bn), Math.ceil(M / t.bm), batch * splitK];
    if (groups[0] > 65535 || groups[1] > 65535)
      throw new ShapeMismatchError(
        `webgpu matmul: [${M}, ${N}] outputs need more than 65535 workgroups along one dimension of tile ${t.bm}×${t.bn}`,
        [a.shape, b.shape],
      );
    if (splitK === 1) {
      this.dispatch(
        'matmul',
        key,
        () => matmulWgsl(t, vec, R),
        matmulWords(R),
        [...params, 1],
        [...ab, this.gpu(out)],
        groups,
        flops,
      );
      return;
    }
    const partialBytes = batch * splitK * M * N * 4;
    const partial = this.pool.acquire(partialBytes);
    const scratch = --this.scratchKeys;
    this.keys.set(partial, scratch);
    try {
      this.dispatch(
        'matmul',
        key,
        () => matmulWgsl(t, vec, R),
        matmulWords(R),
        [...params, splitK],
        [...ab, partial],
        groups,
      );
      const v4 = (M * N) % 4 === 0;
      const total = (batch * M * N) / (v4 ? 4 : 1);
      this.dispatch(
        'matmul',
        `matmul/splitk-sum/${v4 ? 'vec4' : 'scalar'}`,
        () => splitKSumWgsl(v4),
        4,
        [total, (M * N) / (v4 ? 4 : 1), splitK],
        [partial, this.gpu(out)],
        this.flat(total),
        flops,
      );
    } finally {
      // Later commands run after these in queue order, so the buffer may be handed out again at once.
      this.keys.delete(partial);
      this.tracker.forget(scratch);
      this.pool.release(partial, partialBytes);
    }
  }

  // ---- fused ----

  /** Fused Adam/AdamW: one dispatch per parameter, in place. Operands validated by adamStep. */
  protected override adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    if (param.size === 0) return;
    const g = this.whole(grad);
    try {
      const words = [
        param.size,
        p.lr,
        p.beta1,
        p.beta2,
        p.eps,
        1 - p.lr * p.weightDecay,
        1 / (1 - p.beta1 ** p.step),
        1 / (1 - p.beta2 ** p.step),
      ];
      this.dispatch(
        'adamStep',
        'adam',
        adamWgsl,
        8,
        [words[0]!, ...words.slice(1).map(floatBits)],
        [this.gpu(param), this.gpu(g.view.buffer), this.gpu(m), this.gpu(v)],
        this.flat(param.size),
      );
    } finally {
      if (g.temp) this.free(g.view);
    }
  }

  protected override sgdStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    velocity: DeviceBuffer | null,
    p: SgdStepParams,
  ): void {
    if (param.size === 0) return;
    const g = this.whole(grad);
    try {
      const useMomentum = velocity !== null && p.momentum > 0;
      this.dispatch(
        'sgdStep',
        'sgd',
        sgdWgsl,
        5,
        [param.size, floatBits(p.lr), floatBits(p.momentum), floatBits(p.weightDecay), useMomentum ? 1 : 0],
        [this.gpu(param), this.gpu(g.view.buffer), useMomentum ? this.gpu(velocity) : this.dummy],
        this.flat(param.size),
      );
    } finally {
      if (g.temp) this.free(g.view);
    }
  }

  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return this.fusedSoftmaxCrossEntropy(logits, labels, withGrad, (z, y, loss, grad) => {
      const [n, c] = z.shape as [number, number];
      if (n === 0) return;
      this.dispatch(
        'softmaxCrossEntropy',
        'softmaxCrossEntropy',
        softmaxCrossEntropyWgsl,
        4,
        [n, c, grad ? 1 : 0, floatBits(-Infinity)],
        [this.gpu(z.buffer), this.gpu(y.buffer), this.gpu(loss), grad ? this.gpu(grad) : this.dummy],
        this.flat(n),
      );
    });
  }
}
