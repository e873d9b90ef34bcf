import {
  type AdamStepParams,
  type BackendCapabilities,
  type BinaryOp,
  type ConvOptions,
  type ConvTransposeOptions,
  contiguousStrides,
  sizeOf,
  type DeviceBuffer,
  type ElementwiseStep,
  type HostArray,
  INT32_UNARY_OPS,
  type NDArray,
  type ReduceOp,
  type ResizeOptions,
  type ScatterReduction,
  type SgdStepParams,
  type UnaryOp,
  REDUCE_OP_DEFS,
  UnsupportedOpError,
} from '@polyhal/hal';
import {
  BaseBackend,
  batchOffsets,
  GATHER_FILL,
  type HostView,
  hostCumsum,
  hostTopk,
  hostOneHot,
  isWholeBuffer,
  planRows,
  type RowPlan,
  splitReduceAxes,
  type StorageArray,
  storageDType,
  storageToHost,
} from '@polyhal/hal/internal';
import type { PhiloxStream } from '@polyhal/hal/internal';
import { type WasmContext, type WorkerPool, withPlan } from './context.js';
import { convOnWasm } from './dispatch-conv.js';
import { convTransposeOnWasm } from './dispatch-conv-transpose.js';
import { copyInto } from './dispatch-copy.js';
import { BINARY_CODES, dispatchBinary, dispatchUnary, dispatchWhere, UNARY_CODES } from './dispatch-elementwise.js';
import { dispatchAdam, dispatchSgd, dispatchSoftmaxCrossEntropy } from './dispatch-fused.js';
import { dispatchFusedElementwise } from './dispatch-fused-elementwise.js';
import { dispatchMatmul } from './dispatch-matmul.js';
import { dispatchPhilox } from './dispatch-random.js';
import { resizeOnWasm } from './dispatch-resize.js';
import { softmaxOnWasm } from './dispatch-softmax.js';
import { REDUCE_CODES, SCATTER_CODES } from './generated/op-codes.js';
import { WasmHeap } from './memory.js';
import type { KernelExports } from './module.js';
import type { WasmBackendOptions } from './options.js';

const rowMajor = contiguousStrides;

/**
 * WASM-SIMD backend: buffers live in one WebAssembly linear memory, kernels are AssemblyScript
 * compiled with SIMD (f32x4) and embedded in the bundle. Synchronous under the hood, with `readSync`.
 * Default memory limit: 2 GiB of live buffers (option `memoryLimit`; wasm32 cannot exceed 4 GiB).
 */
export class WasmBackend extends BaseBackend {
  readonly name = 'wasm';
  readonly deviceName: string;
  readonly deviceType = 'cpu' as const;
  private readonly heap: WasmHeap;
  private readonly ptrs = new Map<number, number>();
  /** What the dispatches (dispatch-*.ts) use of this backend. */
  private readonly ctx: WasmContext;

  /** Whether the kernels are the relaxed-SIMD build (matmul uses f32x4.relaxed_madd). */
  readonly relaxedSimd: boolean;
  /** Whether that relaxed_madd is a fused multiply-add in this runtime (see relaxedMaddIsFused). */
  readonly fusedMultiplyAdd: boolean;
  /**
   * IEEE float32 arithmetic (WebAssembly requires correct rounding and keeps subnormals); FMA only in
   * relaxed-SIMD matmul.
   */
  override readonly capabilities: BackendCapabilities;

  /** `pool`: worker threads on the same shared memory; `threadNote` says why there are none when asked for. */
  constructor(
    private readonly k: KernelExports,
    options: WasmBackendOptions = {},
    private readonly pool: WorkerPool | null = null,
    threadNote = '',
    relaxedSimd = false,
    fusedMultiplyAdd = false,
  ) {
    super(options);
    this.heap = new WasmHeap(k.memory, k.heapBase() >>> 0, 'wasm', k.memoryMaxBytes);
    this.ctx = {
      k,
      heap: this.heap,
      pool,
      threadThreshold: options.threadThreshold ?? 2 ** 21,
      elementwiseThreadThreshold: options.elementwiseThreadThreshold ?? 2 ** 16,
      ptr: (buffer) => this.ptr(buffer),
    };
    const threads = pool ? `${pool.size} threads on shared memory` : `1 thread${threadNote ? ` (${threadNote})` : ''}`;
    this.relaxedSimd = relaxedSimd;
    this.fusedMultiplyAdd = relaxedSimd && fusedMultiplyAdd;
    this.capabilities = Object.freeze({
      arithmetic: 'ieee-correctly-rounded',
      fusedMultiplyAdd: this.fusedMultiplyAdd,
      flushesSubnormals: false,
    });
    const relaxed = relaxedSimd ? ` + relaxed SIMD (${this.fusedMultiplyAdd ? 'FMA' : 'multiply-add not fused'})` : '';
    this.deviceName = `WebAssembly SIMD128${relaxed}, ${threads}`;
  }

  /** Number of threads that split a large matmul (1 without workers). */
  get threads(): number {
    return this.pool?.size ?? 1;
  }

  override dispose(): void {
    super.dispose();
    this.pool?.terminate();
  }

  /** Reads an array (any view) or a whole buffer synchronously: wasm memory is host memory. Errors as `read`. */
  readonly readSync = (x: NDArray | DeviceBuffer): HostArray => {
    const view = this.readView(x, 'readSync');
    const n = view.shape.reduce((p, d) => p * d, 1);
    const tmp = isWholeBuffer(view) ? null : this.contiguous(view);
    try {
      const b = (tmp ?? view).buffer;
      return storageToHost(b.dtype, this.hostStorage(b).slice(0, n));
    } finally {
      if (tmp) this.free(tmp);
    }
  };

  /** Bytes of linear memory below the allocator's top (live buffers and free blocks below them). */
  get reservedBytes(): number {
    return this.heap.reserved;
  }

  /**
   * The largest single allocation that succeeds now, in bytes: the memory limit minus live bytes,
   * bounded by what the heap can still give in one block (its largest free block, or the rest of the
   * memory up to its maximum: 4 GiB, or 2 GiB for a shared memory where 4 GiB could not be reserved).
   */
  override memoryAvailable(): number {
    return this.heap.largestAllocatable(super.memoryAvailable());
  }

  /** What bounds memoryAvailable() below memoryLimit, for OutOfMemoryError messages: the memory's maximum. */
  protected override memoryCeiling(): string {
    const max = this.heap.maxBytes;
    const size = max === 2 ** 32 ? '4 GiB, all that wasm32 addresses' : `${+(max / 2 ** 30).toFixed(3)} GiB`;
    return `in one block of the WebAssembly memory, whose maximum is ${max} bytes (${size})`;
  }

  protected createStorage(buffer: DeviceBuffer): void {
    this.ptrs.set(buffer.id, this.heap.alloc(buffer.byteLength));
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    this.heap.release(this.ptrs.get(buffer.id)!, buffer.byteLength);
    this.ptrs.delete(buffer.id);
  }

  /** A Float32Array for float32, an Int32Array for int32 and bool (0/1), a Float64Array for float64. */
  protected writeStorage(buffer: DeviceBuffer, data: StorageArray): void {
    this.hostStorage(buffer).set(data);
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<StorageArray> {
    return this.hostStorage(buffer).slice();
  }

  /**
   * The hostStorage hook: a buffer's elements in linear memory as a typed array of its storage dtype
   * (a view: fetch it again after anything that may grow the memory). float64 buffers (8 bytes per
   * element, 16-byte aligned) are served by the HAL's host kernels through it; the wasm kernels are
   * float32 and int32 only.
   */
  protected override hostStorage(buffer: DeviceBuffer): StorageArray {
    const p = this.ptr(buffer);
    const s = storageDType(buffer.dtype);
    if (s === 'float64') return new Float64Array(this.heap.f32().buffer, p, buffer.size);
    return s === 'float32'
      ? this.heap.f32().subarray(p >>> 2, (p >>> 2) + buffer.size)
      : this.heap.i32().subarray(p >>> 2, (p >>> 2) + buffer.size);
  }

  /**
   * Integer matmul, exact modulo 2^32 (assembly/matmul-int.ts), one call per batch item: where every value
   * fits int16 (int8/uint8 operands, zero-point-shifted ones included) A and Bᵀ are packed as int16 and
   * multiplied with i32x4.dot_i16x8_s (gemmI16); otherwise, or where M or N is below 8, i32x4
   * multiply-adds (gemmI32). Both give the same bits.
   */
  protected override integerMatmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const r = a.shape.length;
    const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
    const [pa, pb, pc] = [this.ptr(a.buffer), this.ptr(b.buffer), this.ptr(out)];
    const [sam, sak, sbk, sbn] = [a.strides[r - 2]!, a.strides[r - 1]!, b.strides[r - 2]!, b.strides[r - 1]!];
    const Kp = Math.ceil(K / 8) * 8;
    // Packing costs (M + N)·K: worth it when both M and N are at least 8 (batch-1 products stay on gemmI32,
    // which also skips zero elements of A).
    const packed = Math.min(M, N) >= 8 && K >= 8 ? this.allocate(((M + N) * Kp) / 2, 'int32') : null;
    // The offsets whose values the packed A and Bᵀ hold (−1: none yet; −2: a value did not fit int16).
    const packedAt = [-1, -1];
    try {
      for (const [item, [offA, offB]] of batchOffsets(a, b).entries()) {
        if (packed) {
          const [qa, qb] = [this.ptr(packed), this.ptr(packed) + M * Kp * 2];
          // A broadcast operand (the same offset as the last item's) is packed once.
          if (offA !== packedAt[0]) packedAt[0] = this.k.packI16(pa + offA * 4, M, K, sam, sak, qa, Kp) ? offA : -2;
          if (offB !== packedAt[1]) packedAt[1] = this.k.packI16(pb + offB * 4, N, K, sbn, sbk, qb, Kp) ? offB : -2;
          if (packedAt[0] === offA && packedAt[1] === offB) {
            this.gemmI16(qa, qb, pc + item * M * N * 4, M, N, Kp);
            continue;
          }
        }
        this.k.gemmI32(pa + offA * 4, sam, sak, pb + offB * 4, sbk, sbn, pc + item * M * N * 4, M, K, N);
      }
    } finally {
      if (packed) this.deallocate(packed);
    }
  }

  /** gemmI16 of packed operands, its rows split across the worker pool (pairs of rows) for large products. */
  private gemmI16(qa: number, qb: number, c: number, M: number, N: number, Kp: number): void {
    const parts = this.pool && M * N * Kp >= this.ctx.threadThreshold ? Math.min(this.pool.size, Math.ceil(M / 8)) : 1;
    if (parts === 1) {
      this.k.gemmI16(qa, qb, c, M, N, Kp);
      return;
    }
    const rows = Math.ceil(M / parts / 2) * 2;
    const jobs: number[][] = [];
    for (let r0 = 0; r0 < M; r0 += rows)
      jobs.push([qa + r0 * Kp * 2, qb, c + r0 * N * 4, Math.min(rows, M - r0), N, Kp]);
    this.pool!.run('gemmI16', jobs, (j) => this.k.gemmI16(j[0]!, j[1]!, j[2]!, j[3]!, j[4]!, j[5]!));
  }

  /**
   * cumsum in index order: float32/int32 in assembly/scan.ts cumsum32, float64 on the host (hostCumsum);
   * a sequential scan per line, float32 in a float64 accumulator.
   */
  protected override cumsumKernel(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void {
    if (x.dtype === 'float64') {
      hostCumsum(this.hostView(x), this.hostOut(out), exclusive, reverse);
      return;
    }
    const [O, n, I] = x.shape as [number, number, number];
    const at = this.ptr(x.buffer) + x.offset * 4;
    const flags = [exclusive ? 1 : 0, reverse ? 1 : 0];
    this.k.cumsum32(x.dtype === 'float32' ? 1 : 0, at, O, n, I, ...x.strides, this.ptr(out), ...flags);
  }

  /** oneHot over linear memory (hostOneHot: zero the output, then one store per index). */
  protected override oneHotKernel(indices: NDArray, depth: number, out: DeviceBuffer): void {
    hostOneHot(this.hostView(indices), depth, this.hostOut(out) as Float32Array);
  }

  /** gatherND/scatterND positions (assembly/gather.ts positions32: one pass over the tuples). */
  protected override tuplePositionsKernel(
    indices: NDArray,
    dims: readonly number[],
    batch: number,
    out: DeviceBuffer,
  ): void {
    const [L, q] = indices.shape as [number, number];
    const inner = sizeOf(dims);
    const table = this.allocate(2 * q, 'int32');
    try {
      const at = this.ptr(table);
      const words = [...dims, ...contiguousStrides(dims)];
      this.heap.i32().set(words, at >>> 2);
      const idx = [this.ptr(indices.buffer), indices.offset, ...indices.strides];
      this.k.positions32(...idx, L, q, L / batch, inner, batch * inner, at, at + 4 * q, this.ptr(out));
    } finally {
      this.deallocate(table);
    }
  }

  /**
   * topk: float32/int32 with k ≤ 64 in assembly/scan.ts topk32 (a sorted buffer of k candidates, four
   * elements tested at a time against the worst kept); float64 and larger k on the host (hostTopk).
   */
  protected override topkKernel(
    x: NDArray,
    k: number,
    largest: boolean,
    values: DeviceBuffer,
    indices: DeviceBuffer,
  ): void {
    if (x.dtype === 'float64' || k > 64) {
      hostTopk(this.hostView(x), k, largest, this.hostOut(values), this.hostOut(indices) as Int32Array);
      return;
    }
    const [O, n, I] = x.shape as [number, number, number];
    const scratch = this.allocate(2 * Math.max(k, 1), 'int32');
    try {
      const s = this.ptr(scratch);
      const [float, most] = [x.dtype === 'float32' ? 1 : 0, largest ? 1 : 0];
      const at = this.ptr(x.buffer) + x.offset * 4;
      this.k.topk32(float, most, at, O, n, I, ...x.strides, k, this.ptr(values), this.ptr(indices), s, s + 4 * k);
    } finally {
      this.deallocate(scratch);
    }
  }

  /**
   * argmax/argmin (assembly/argreduce.ts): per row the extreme (f32x4/i32x4 max or min where the row is
   * contiguous), then its first or last position. x [O, n, I]: rows (o, i), called once per o unless O or
   * I is 1.
   */
  protected override argReduceKernel(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void {
    const [O, n, I] = x.shape as [number, number, number];
    const [s0, s1, s2] = x.strides as [number, number, number];
    const [float, isMax, last] = [x.dtype === 'float32' ? 1 : 0, op === 'argmax' ? 1 : 0, lastIndex ? 1 : 0];
    const at = (o: number) => this.ptr(x.buffer) + (x.offset + o * s0) * 4;
    if (I === 1) this.k.argReduce32(float, isMax, last, at(0), O, s0, n, s1, this.ptr(out));
    else
      for (let o = 0; o < O; o++)
        this.k.argReduce32(float, isMax, last, at(o), I, s2, n, s1, this.ptr(out) + o * I * 4);
  }

  /** x as a strided view of the whole linear memory (fetched after any growth). */
  private hostView(x: NDArray): HostView {
    const data = x.dtype === 'float32' ? this.heap.f32() : this.heap.i32();
    return { data, shape: x.shape, strides: x.strides, offset: (this.ptr(x.buffer) >>> 2) + x.offset };
  }

  private hostOut(b: DeviceBuffer): StorageArray {
    const p = this.ptr(b) >>> 2;
    return b.dtype === 'float32' ? this.heap.f32().subarray(p, p + b.size) : this.heap.i32().subarray(p, p + b.size);
  }

  private ptr(buffer: DeviceBuffer): number {
    const p = this.ptrs.get(buffer.id);
    if (p === undefined) this.checkBuffer(buffer, 'wasm');
    return p!;
  }

  /** Copies the row starts of each operand into temporary wasm blocks; returns their pointers. */
  private withPlan<T>(plan: RowPlan, count: number, fn: (starts: number[]) => T): T {
    return withPlan(this.heap, plan, count, fn);
  }

  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    const code = UNARY_CODES[op];
    if (
      typeof code !== 'number' ||
      !Object.hasOwn(UNARY_CODES, op) ||
      (x.dtype !== 'float32' && !(x.dtype === 'int32' && INT32_UNARY_OPS.has(op)))
    )
      throw new UnsupportedOpError(String(op), x.dtype, this.name);
    dispatchUnary(this.ctx, code, x, out);
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const code = BINARY_CODES[op];
    if (typeof code !== 'number' || !Object.hasOwn(BINARY_CODES, op) || (a.dtype !== 'float32' && op === 'div'))
      throw new UnsupportedOpError(String(op), a.dtype, this.name);
    dispatchBinary(this.ctx, code, a, b, out);
  }

  protected override fusedElementwiseKernel(x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): void {
    dispatchFusedElementwise(this.ctx, x, steps, out, {
      contiguous: (a) => this.contiguous(a),
      free: (a) => this.free(a),
    });
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    if (!Object.hasOwn(REDUCE_OP_DEFS, op)) throw new UnsupportedOpError(String(op), x.dtype, this.name);
    if (out.size === 0) return;
    // A broadcast (stride-0) reduced axis of size d repeats every value d times: sum × d, prod ^ d, max
    // and min unchanged. Folding those axes into `reps` keeps every count the kernel sees below 2^31,
    // however many elements a broadcast view has (2^32 for expand([1, 1] → [65536, 65536])).
    const { kept, reduced } = splitReduceAxes(x.shape, x.strides, axes);
    const red = { shape: [] as number[], strides: [] as number[] };
    let reps = 1;
    let repsI32 = 1; // reps modulo 2^32: int32 sums wrap
    const empty = reduced.shape.includes(0);
    reduced.shape.forEach((d, i) => {
      const s = reduced.strides[i]!;
      if (s === 0) {
        reps *= d;
        repsI32 = Math.imul(repsI32, (d % 2 ** 32) | 0);
        return;
      }
      red.shape.push(d);
      red.strides.push(s);
    });
    const code = REDUCE_CODES[op]; // reduceF32/reduceI32's code (scripts/op-codes.mjs)
    // An int32 product repeats by x^reps modulo 2^32: odd x have order dividing 2^30 and even x reach 0
    // by x^32, so an exponent ≥ 32 congruent to reps modulo 2^30 gives the same result and fits an i32.
    if (op === 'prod' && reps >= 2 ** 31) repsI32 = (reps % 2 ** 30) + 2 ** 30;
    if (empty) {
      const identity = REDUCE_OP_DEFS[op].identity;
      this.fillKernel(out, out.dtype !== 'float32' ? identity.int32! : identity.float32);
      return;
    }
    // Every reduced row's start is listed (i32) in linear memory: refuse a list that cannot fit.
    const rowBytes = (red.shape.reduce((p, d) => p * d, 1) / (red.shape.at(-1) ?? 1)) * 4;
    if (rowBytes > this.memoryAvailable()) throw this.overAvailable(rowBytes);
    const kp = planRows(kept.shape, [kept.strides], [x.offset]);
    const rp = planRows(red.shape, [red.strides], [0]);
    const inner = (p: RowPlan): number => (p.n > 1 ? Math.abs(p.step[0]!) : Infinity);
    const outer = inner(kp) !== 0 && inner(kp) < inner(rp) ? 1 : 0;
    this.withPlan(kp, 1, ([ks]) =>
      this.withPlan(rp, 1, ([rs]) => {
        if (x.dtype !== 'float32') {
          // int32, and bool's 0/1 (any and all are its max and min)
          this.k.reduceI32(
            code,
            this.ptr(x.buffer),
            kp.n,
            kp.rows,
            ks!,
            kp.step[0]!,
            rp.n,
            rp.rows,
            rs!,
            rp.step[0]!,
            this.ptr(out),
            repsI32,
          );
          return;
        }
        const scratchBytes = outer ? out.size * 8 : 16;
        const scratch = this.heap.alloc(scratchBytes);
        try {
          this.k.reduceF32(
            code,
            this.ptr(x.buffer),
            kp.n,
            kp.rows,
            ks!,
            kp.step[0]!,
            rp.n,
            rp.rows,
            rs!,
            rp.step[0]!,
            this.ptr(out),
            outer,
            scratch,
            reps,
          );
        } finally {
          this.heap.release(scratch, scratchBytes);
        }
      }),
    );
  }

  protected copyKernel(x: NDArray, out: DeviceBuffer): void {
    copyInto(this.ctx, x, out, rowMajor(x.shape), 0);
  }

  protected copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    copyInto(this.ctx, x, out, strides, offset);
  }

  protected fillKernel(out: DeviceBuffer, value: number): void {
    if (out.dtype === 'float32') this.k.fillF32(this.ptr(out), out.size, value);
    else this.k.fillI32(this.ptr(out), out.size, value | 0);
  }

  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    dispatchMatmul(this.ctx, a, b, out);
  }

  /** gather and scatter on one thread (assembly/gather.ts); operands [O, D, I], [K], [O, K, I]. */
  protected gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
    const fill = x.dtype === 'float32' ? 0x7fc00000 : GATHER_FILL[x.dtype]; // NaN's bits, INT32_MIN, 1 (bool)
    const idx = [this.ptr(indices.buffer), indices.offset, indices.strides[0]!, indices.shape[0]!];
    this.k.gather32(...this.view3(x), ...idx, this.ptr(out), fill);
  }

  protected scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void {
    this.runScatter(target, indices, updates, out, 'add');
  }

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
    const [u, uOff, uo, uk, ui] = this.view3(updates);
    const idx = [this.ptr(indices.buffer), indices.offset, indices.strides[0]!, indices.shape[0]!];
    const isInt = target.dtype !== 'float32' ? 1 : 0;
    const red = SCATTER_CODES[reduction];
    this.k.scatter32(red, isInt, ...this.view3(target), ...idx, u!, uOff!, uo!, uk!, ui!, this.ptr(out));
  }

  /** out = cond ? x : y, bit for bit (assembly/logic.ts where32), split over the threads like the elementwise ops. */
  protected whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    dispatchWhere(this.ctx, cond, x, y, out);
  }

  /** A three-dim view as kernel arguments: pointer, offset, three strides, then its three dims. */
  private view3(x: NDArray): number[] {
    return [this.ptr(x.buffer), x.offset, ...x.strides, ...x.shape];
  }

  /** Fused Adam/AdamW in one pass (SIMD-free scalar loop in wasm; memory-bound). Operands validated by adamStep. */
  protected override adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    const g = this.whole(grad);
    try {
      dispatchAdam(this.ctx, param, g.view.buffer, m, v, p);
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
    const g = this.whole(grad);
    try {
      dispatchSgd(this.ctx, param, g.view.buffer, velocity, p);
    } finally {
      if (g.temp) this.free(g.view);
    }
  }

  /**
   * Unscale and overflow check: one in-place f32x4 pass per gradient (assembly/unscale.ts), the flag set from the
   * host. Operands validated by nonFiniteCheckAndUnscale.
   */
  protected override nonFiniteCheckAndUnscaleKernel(
    grads: readonly DeviceBuffer[],
    foundInf: DeviceBuffer,
    invScale: number,
  ): void {
    let found = 0;
    for (const g of grads) if (g.size > 0) found |= this.k.unscaleF32(g.size, this.ptr(g), invScale);
    if (found) this.k.fillF32(this.ptr(foundInf), 1, 1);
  }

  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return this.fusedSoftmaxCrossEntropy(logits, labels, withGrad, (z, y, loss, grad) =>
      dispatchSoftmaxCrossEntropy(this.ctx, z, y, loss, grad),
    );
  }

  /** float32 softmax over the last axis of a row-major array as one fused kernel (dispatch-softmax.ts). */
  override softmax(x: NDArray, axis = -1): NDArray {
    return softmaxOnWasm(this, this.ctx, x, axis) ?? super.softmax(x, axis);
  }

  /**
   * conv on the kernels of assembly/conv.ts (dispatch-conv.ts: depthwise planes, or a GEMM whose im2col
   * columns are packed straight from the image) for 1 and 2 spatial axes; 3-D windows run the composite.
   */
  override conv(x: NDArray, w: NDArray, options: ConvOptions = {}): NDArray {
    return convOnWasm(this, this.ctx, x, w, options) ?? super.conv(x, w, options);
  }

  /** convTranspose on assembly/conv-transpose.ts (dispatch-conv-transpose.ts) for 1 and 2 spatial axes. */
  override convTranspose(x: NDArray, w: NDArray, options: ConvTransposeOptions = {}): NDArray {
    return convTransposeOnWasm(this, this.ctx, x, w, options) ?? super.convTranspose(x, w, options);
  }

  /** Nearest resize as one gather kernel (dispatch-resize.ts, assembly/resize.ts); other modes the composite. */
  override resize(x: NDArray, options: ResizeOptions): NDArray {
    return resizeOnWasm(this, this.ctx, x, options) ?? super.resize(x, options);
  }

  /** Philox4x32-10 uniforms, four blocks per SIMD step, split over the threads for large buffers. */
  protected override randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    dispatchPhilox(this.ctx, out, s);
  }
}
