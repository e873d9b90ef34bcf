import {
  contiguousStrides,
  type AdamStepParams,
  type BackendCapabilities,
  BaseBackend,
  coalesce,
  type BaseBackendOptions,
  type BinaryOp,
  type DeviceBuffer,
  type HostArray,
  type NDArray,
  InvalidArgumentError,
  OutOfMemoryError,
  planRows,
  type ReduceOp,
  type RowPlan,
  type SgdStepParams,
  type UnaryOp,
  UNARY_OPS,
  UnsupportedOpError,
  padPlacement,
} from '@polyhal/hal';
import { WasmHeap } from './memory.js';
import type { KernelExports } from './module.js';
import type { JobKernel } from './threads.js';

/** What the backend uses of its ThreadPool (structural: the pool's WebAssembly types stay out of the declarations). */
interface WorkerPool {
  readonly size: number;
  run(kernel: JobKernel, parts: number[][], local: (part: number[]) => void): void;
  terminate(): void;
}

export interface WasmBackendOptions extends BaseBackendOptions {
  /** Worker threads for matmul (the calling thread counts): a number, or 'auto' (cores, at most 8). Default 'auto'. */
  threads?: number | 'auto';
  /** Multiply-adds (M·N·K) from which a matmul is split across threads (default 2^21). */
  threadThreshold?: number;
  /**
   * Output elements from which an elementwise op (unary or binary, any strides or broadcast) is split
   * across threads by rows or element ranges (default 2^18).
   */
  elementwiseThreadThreshold?: number;
  /**
   * Relaxed SIMD (fused multiply-add in matmul): 'auto' (default) uses it where the runtime has it;
   * false keeps plain SIMD (bit-identical matmul results on every CPU); true requires it.
   */
  relaxedSimd?: boolean | 'auto';
}

const BINARY_CODES: Record<BinaryOp, number> = { add: 0, sub: 1, mul: 2, div: 3, maximum: 4, mod: 5, cmplt: 6 };
const UNARY_CODES = Object.fromEntries(UNARY_OPS.map((op, i) => [op, i])) as Record<UnaryOp, number>;
const COPY = 0;
const F32_TO_I32 = 1;
const I32_TO_F32 = 2;

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

  private readonly threadThreshold: number;
  private readonly elementwiseThreadThreshold: number;

  /** Whether the kernels are the relaxed-SIMD build (matmul uses f32x4.relaxed_madd). */
  readonly relaxedSimd: boolean;
  /** Whether that relaxed_madd is a fused multiply-add in this runtime (see relaxedMaddIsFused). */
  readonly fusedMultiplyAdd: boolean;
  /** IEEE float32 arithmetic (WebAssembly requires correct rounding and keeps subnormals); FMA only in relaxed-SIMD matmul. */
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
    this.threadThreshold = options.threadThreshold ?? 2 ** 21;
    this.elementwiseThreadThreshold = options.elementwiseThreadThreshold ?? 2 ** 18;
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

  readonly readSync = (x: NDArray | DeviceBuffer): HostArray => {
    const view = this.readView(x, 'readSync');
    const n = view.shape.reduce((p, d) => p * d, 1);
    const tmp =
      view.offset === 0 &&
      n === view.buffer.size &&
      rowMajor(view.shape).every((s, i) => s === view.strides[i] || view.shape[i] === 1)
        ? null
        : this.contiguous(view);
    try {
      const b = (tmp ?? view).buffer;
      const ptr = this.ptr(b) >>> 2;
      return b.dtype === 'float32' ? this.heap.f32().slice(ptr, ptr + n) : this.heap.i32().slice(ptr, ptr + n);
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

  protected createStorage(buffer: DeviceBuffer): void {
    this.ptrs.set(buffer.id, this.heap.alloc(buffer.byteLength));
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    this.heap.release(this.ptrs.get(buffer.id)!, buffer.byteLength);
    this.ptrs.delete(buffer.id);
  }

  protected writeStorage(buffer: DeviceBuffer, data: HostArray): void {
    const ptr = this.ptr(buffer) >>> 2;
    if (data instanceof Float32Array) this.heap.f32().set(data, ptr);
    else this.heap.i32().set(data, ptr);
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<HostArray> {
    return this.readSync(buffer);
  }

  private ptr(buffer: DeviceBuffer): number {
    const p = this.ptrs.get(buffer.id);
    if (p === undefined) this.checkBuffer(buffer, 'wasm');
    return p!;
  }

  /** Copies the row starts of each operand into temporary wasm blocks; returns their pointers. */
  private withPlan<T>(plan: RowPlan, count: number, fn: (starts: number[]) => T): T {
    const bytes = Math.max(plan.rows, 1) * 4;
    const ptrs: number[] = [];
    try {
      for (let o = 0; o < count; o++) {
        const p = this.heap.alloc(bytes);
        ptrs.push(p);
        this.heap.i32().set(plan.starts[o]!, p >>> 2);
      }
      return fn(ptrs);
    } finally {
      for (const p of ptrs) this.heap.release(p, bytes);
    }
  }

  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    const code = UNARY_CODES[op];
    if (typeof code !== 'number' || !Object.hasOwn(UNARY_CODES, op) || (x.dtype === 'int32' && op !== 'neg'))
      throw new UnsupportedOpError(String(op), x.dtype, this.name);
    const plan = planRows(x.shape, [x.strides, rowMajor(x.shape)], [x.offset, 0]);
    if (plan.rows === 0) return;
    this.withPlan(plan, 1, ([xs]) => {
      const xp = { ptr: this.ptr(x.buffer), starts: xs!, step: plan.step[0]! };
      if (x.dtype === 'int32') this.elementwise('negI32', [], plan, [xp], this.ptr(out));
      else this.elementwise('unaryF32', [code], plan, [xp], this.ptr(out));
    });
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const code = BINARY_CODES[op];
    if (typeof code !== 'number' || !Object.hasOwn(BINARY_CODES, op) || (a.dtype === 'int32' && op === 'div'))
      throw new UnsupportedOpError(String(op), a.dtype, this.name);
    const plan = planRows(a.shape, [a.strides, b.strides, rowMajor(a.shape)], [a.offset, b.offset, 0]);
    if (plan.rows === 0) return;
    this.withPlan(plan, 2, ([as, bs]) =>
      this.elementwise(
        a.dtype === 'int32' ? 'binaryI32' : 'binaryF32',
        [code],
        plan,
        [
          { ptr: this.ptr(a.buffer), starts: as!, step: plan.step[0]! },
          { ptr: this.ptr(b.buffer), starts: bs!, step: plan.step[1]! },
        ],
        this.ptr(out),
      ),
    );
  }

  /**
   * Runs an elementwise kernel (arguments: `lead`, n, rows, then per operand pointer, row starts,
   * step, then out) on the calling thread, or split across the thread pool when the output has at
   * least `elementwiseThreadThreshold` elements: by rows when there are enough of them, else one row
   * by element ranges (operand pointers advanced by range start × step). Parts write disjoint output.
   */
  private elementwise(
    kernel: JobKernel,
    lead: number[],
    plan: RowPlan,
    operands: { ptr: number; starts: number; step: number }[],
    out: number,
  ): void {
    const args = (n: number, r0: number, r1: number, i0: number): number[] => [
      ...lead,
      n,
      r1 - r0,
      ...operands.flatMap((o) => [o.ptr + i0 * o.step * 4, o.starts + r0 * 4, o.step]),
      out + (r0 * plan.n + i0) * 4,
    ];
    const size = plan.n * plan.rows;
    const parts = this.pool && size >= this.elementwiseThreadThreshold ? this.pool.size : 1;
    const call = (a: number[]): void => (this.k[kernel] as (...x: number[]) => void)(...a);
    if (parts === 1) {
      call(args(plan.n, 0, plan.rows, 0));
      return;
    }
    const jobs: number[][] = [];
    if (plan.rows >= parts) {
      const per = Math.ceil(plan.rows / parts);
      for (let r0 = 0; r0 < plan.rows; r0 += per) jobs.push(args(plan.n, r0, Math.min(plan.rows, r0 + per), 0));
    } else {
      // Few long rows: split each row's elements (in multiples of 8, the kernels' vector width).
      const per = Math.ceil(plan.n / parts / 8) * 8;
      for (let r = 0; r < plan.rows; r++)
        for (let i0 = 0; i0 < plan.n; i0 += per) jobs.push(args(Math.min(per, plan.n - i0), r, r + 1, i0));
    }
    // One job per thread at a time: run them in waves of pool.size.
    for (let w = 0; w < jobs.length; w += parts) this.pool!.run(kernel, jobs.slice(w, w + parts), call);
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    if (op !== 'sum' && op !== 'max') throw new UnsupportedOpError(String(op), x.dtype, this.name);
    if (out.size === 0) return;
    const kept = { shape: [] as number[], strides: [] as number[] };
    const red = { shape: [] as number[], strides: [] as number[] };
    // A broadcast (stride-0) reduced axis of size d repeats every value d times: sum × d, max unchanged.
    // Folding those axes into `reps` keeps every count the kernel sees below 2^31, however many
    // elements a broadcast view has (2^32 for expand([1, 1] → [65536, 65536])).
    let reps = 1;
    let repsI32 = 1; // reps modulo 2^32: int32 sums wrap
    let empty = false;
    x.shape.forEach((d, i) => {
      const s = x.strides[i]!;
      if (axes.includes(i) && d === 0) empty = true;
      if (axes.includes(i) && s === 0) {
        reps *= d;
        repsI32 = Math.imul(repsI32, (d % 2 ** 32) | 0);
        return;
      }
      const t = axes.includes(i) ? red : kept;
      t.shape.push(d);
      t.strides.push(s);
    });
    const isMax = op === 'max' ? 1 : 0;
    if (empty) {
      this.fillKernel(out, isMax ? (out.dtype === 'int32' ? -2147483648 : -Infinity) : 0);
      return;
    }
    // Every reduced row's start is listed (i32) in linear memory: refuse a list that cannot fit.
    const rowBytes = (red.shape.reduce((p, d) => p * d, 1) / (red.shape.at(-1) ?? 1)) * 4;
    if (rowBytes > this.memoryAvailable()) throw new OutOfMemoryError(rowBytes, this.memoryAvailable(), this.name);
    const kp = planRows(kept.shape, [kept.strides], [x.offset]);
    const rp = planRows(red.shape, [red.strides], [0]);
    const inner = (p: RowPlan): number => (p.n > 1 ? Math.abs(p.step[0]!) : Infinity);
    const outer = inner(kp) !== 0 && inner(kp) < inner(rp) ? 1 : 0;
    this.withPlan(kp, 1, ([ks]) =>
      this.withPlan(rp, 1, ([rs]) => {
        if (x.dtype === 'int32') {
          this.k.reduceI32(
            isMax,
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
            isMax,
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

  /** Strided copy from view x into (ptr, shape, strides, offset) of `out`. */
  private copyInto(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    const mode = x.dtype === out.dtype ? COPY : x.dtype === 'float32' ? F32_TO_I32 : I32_TO_F32;
    const c = coalesce(x.shape, [x.strides, strides]);
    if (c.shape.includes(0)) return;
    if (c.shape.length >= 2) {
      // Many short rows (im2col windows): let the kernel walk the dims instead of listing every row;
      // large copies are split across the threads along the outermost dim (one meta/idx block each).
      const rank = c.shape.length;
      const [sx, so] = [c.strides[0]!, c.strides[1]!];
      const size = c.shape.reduce((p, d) => p * d, 1);
      const parts = this.pool && size >= this.elementwiseThreadThreshold ? Math.min(this.pool.size, c.shape[0]!) : 1;
      const per = Math.ceil(c.shape[0]! / parts);
      const blocks: number[] = [];
      try {
        const jobs: number[][] = [];
        for (let d0 = 0; d0 < c.shape[0]!; d0 += per) {
          const meta = this.heap.alloc(rank * 16); // shape, strides ×2, then rank i32 of odometer scratch
          blocks.push(meta);
          this.heap.i32().set([Math.min(per, c.shape[0]! - d0), ...c.shape.slice(1), ...sx, ...so], meta >>> 2);
          jobs.push([
            mode,
            rank,
            meta,
            meta + rank * 12,
            this.ptr(x.buffer),
            x.offset + d0 * sx[0]!,
            this.ptr(out),
            offset + d0 * so[0]!,
          ]);
        }
        const call = (j: number[]): void => this.k.copyNd(...(j as Parameters<KernelExports['copyNd']>));
        if (jobs.length === 1) call(jobs[0]!);
        else this.pool!.run('copyNd', jobs, call);
      } finally {
        for (const b of blocks) this.heap.release(b, rank * 16);
      }
      return;
    }
    const plan = planRows(x.shape, [x.strides, strides], [x.offset, offset]);
    if (plan.rows === 0) return;
    this.withPlan(plan, 2, ([xs, os]) =>
      this.k.copyRows(
        mode,
        plan.n,
        plan.rows,
        this.ptr(x.buffer),
        xs!,
        plan.step[0]!,
        this.ptr(out),
        os!,
        plan.step[1]!,
      ),
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
    if (out.dtype === 'float32') this.k.fillF32(this.ptr(out), out.size, value);
    else this.k.fillI32(this.ptr(out), out.size, value | 0);
  }

  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const r = a.shape.length;
    const [M, K] = [a.shape[r - 2]!, a.shape[r - 1]!];
    const N = b.shape[r - 1]!;
    if (M === 0 || N === 0) return;
    // K ≥ 2^31 only arises from broadcast (stride-0) operands; the kernel counts K in an i32.
    if (K > 2 ** 31 - 1)
      throw new InvalidArgumentError(`matmul: inner dimension K = ${K} exceeds the wasm kernels' limit of 2^31 − 1`);
    const batch = planRows(
      a.shape.slice(0, -2),
      [a.strides.slice(0, -2), b.strides.slice(0, -2)],
      [a.offset, b.offset],
    );
    // Split rows across threads when the product is large enough (in whole micro-kernel panels).
    const mr = this.k.gemmRowBlock();
    const parts =
      this.pool && M * N * K >= this.threadThreshold ? Math.min(this.pool.size, Math.ceil(M / (4 * mr))) : 1;
    // packBytesB(1) is one 8-column panel; computed here in doubles, so a huge N gives OutOfMemoryError.
    const scratchBytes = (this.k.packBytesA() >>> 0) + Math.ceil(N / 8) * (this.k.packBytesB(1) >>> 0) + 256;
    const scratch = Array.from({ length: parts }, () => this.heap.alloc(scratchBytes));
    try {
      const [pa, pb, pc] = [this.ptr(a.buffer), this.ptr(b.buffer), this.ptr(out)];
      let t = 0;
      for (let row = 0; row < batch.rows; row++) {
        for (let i = 0; i < batch.n; i++, t++) {
          const ao = batch.starts[0]![row]! + i * batch.step[0]!;
          const bo = batch.starts[1]![row]! + i * batch.step[1]!;
          const job = (s: number, r0: number, r1: number): number[] => [
            M,
            N,
            K,
            pa + ao * 4,
            a.strides[r - 2]!,
            a.strides[r - 1]!,
            pb + bo * 4,
            b.strides[r - 2]!,
            b.strides[r - 1]!,
            pc + t * M * N * 4,
            s,
            r0,
            r1,
          ];
          if (parts === 1) {
            this.k.gemm(...(job(scratch[0]!, 0, M) as Parameters<KernelExports['gemm']>));
            continue;
          }
          const rows = Math.ceil(M / parts / mr) * mr;
          const jobs = scratch
            .map((s, p) => job(s, Math.min(M, p * rows), Math.min(M, (p + 1) * rows)))
            .filter((j) => j[11]! < j[12]!);
          this.pool!.run('gemm', jobs, (j) => this.k.gemm(...(j as Parameters<KernelExports['gemm']>)));
        }
      }
    } finally {
      for (const s of scratch) this.heap.release(s, scratchBytes);
    }
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
      this.k.adamF32(
        param.size,
        this.ptr(param),
        this.ptr(g.view.buffer),
        this.ptr(m),
        this.ptr(v),
        p.lr,
        p.beta1,
        p.beta2,
        p.eps,
        1 - p.lr * p.weightDecay,
        1 / (1 - p.beta1 ** p.step),
        1 / (1 - p.beta2 ** p.step),
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
    const g = this.whole(grad);
    try {
      const vel = velocity && p.momentum > 0 ? this.ptr(velocity) : 0;
      this.k.sgdF32(param.size, this.ptr(param), this.ptr(g.view.buffer), vel, p.lr, p.momentum, p.weightDecay);
    } finally {
      if (g.temp) this.free(g.view);
    }
  }

  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return this.fusedSoftmaxCrossEntropy(logits, labels, withGrad, (z, y, loss, grad) => {
      const [n, c] = z.shape as [number, number];
      this.k.softmaxCrossEntropyF32(
        n,
        c,
        this.ptr(z.buffer),
        this.ptr(y.buffer),
        this.ptr(loss),
        grad ? this.ptr(grad) : 0,
      );
    });
  }
}
