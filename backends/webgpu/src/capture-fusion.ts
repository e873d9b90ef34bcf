/**
 * Elementwise fusion inside a capture (option `fuseInCapture`, default true): while the backend captures
 * (compile's trace, an ONNX session's recorded run), its float32 elementwise kernels — unary, binary with a
 * number, binary with an array of the output's shape (broadcast views included), fusedElementwise — are not
 * encoded when called. Each result gets its buffer at once and becomes a pending node: its root (an array that is
 * not pending) and the chain of steps from it. An op on a pending result extends that chain; the pending work is
 * encoded when anything else is (the command batch's held work: before the next kernel, copy, upload, read or
 * submission, at endCapture and abortCapture), as one fusedElementwise kernel per live result, the chain from
 * the nearest live result it extends (or from its root), so every step is computed once per result kept.
 *
 * The rules that keep the results those of the separate ops:
 * - any other kernel, copy, upload or read encodes the pending work first (it may read a pending result or write
 *   a buffer a chain reads: in-place updates, a buffer freed and handed out again by the pool);
 * - a pending result read by a second elementwise op, through another view than its whole buffer, or as an array
 *   operand, is encoded (with everything pending) before that op: a result used twice is computed once;
 * - a pending result freed before the encoding is never computed; the buffers a pending chain reads stay out of
 *   the pool until it is encoded, even when freed (`retain`);
 * - nothing is deferred outside a capture, inside `uncaptured` or a live section (`captureLive`), or on float16
 *   storage.
 * Each fused step rounds to float32 as its separate op does; a GPU compiler may contract a multiply and an add of
 * consecutive steps into a fused multiply-add, as the backend's arithmetic class allows.
 */
import type { BinaryOp, DeviceBuffer, ElementwiseStep, NDArray } from '@polyhal/hal';
import { contiguousStrides } from '@polyhal/hal';
import {
  dispatchBinary,
  dispatchBinaryScalar,
  dispatchUnary,
  type ElementwiseContext,
} from './dispatch-elementwise.js';
import { dispatchFused, MAX_FUSED_ARRAYS } from './dispatch-fused.js';
import type { CommandBatch } from './encoder.js';
import { binaryExpr, unaryExpr } from './kernels/elementwise.js';

/** What the fusion needs of the backend. */
export interface FusionContext {
  readonly batch: CommandBatch;
  readonly elementwise: ElementwiseContext;
  /** Whether work now is recorded by a capture (and not inside uncaptured or a live section). */
  capturing(): boolean;
  /** Whether the buffer is float16 storage. */
  isHalf(buffer: DeviceBuffer): boolean;
}

/** A deferred result: `out` = `steps` applied to `root`, elementwise over `shape`. */
interface Pending {
  readonly out: DeviceBuffer;
  readonly root: NDArray;
  readonly steps: readonly ElementwiseStep[];
  readonly shape: readonly number[];
  /** The pending node this one extends (its steps are a prefix of these). */
  readonly parent: Pending | null;
  /** Elementwise ops that extended it. */
  consumers: number;
  /** Freed before the encoding: never computed. */
  dead: boolean;
  /** Encoded (in the current encoding). */
  done: boolean;
}

const arraysOf = (steps: readonly ElementwiseStep[]): number => steps.filter((s) => 'array' in s).length;

export class CaptureFusion {
  /** Pending nodes by their output buffer's id, and in the order they were made. */
  private readonly pending = new Map<number, Pending>();
  private order: Pending[] = [];
  /** The GPU buffers the pending chains read (roots and arrays), by buffer id: valid even once freed. */
  private readonly reads = new Map<number, GPUBuffer>();
  /** Releases of freed buffers that a pending chain still reads, run once it is encoded. */
  private deferred: (() => void)[] = [];
  /** Elementwise ops deferred, and kernels encoded for them (for tests and reports). */
  readonly stats = { deferred: 0, kernels: 0 };
  /** The held-work callback (one function, so that the batch keeps holding it as nodes are added). */
  private readonly encode = (): void => this.encodeAll();

  constructor(
    private readonly ctx: FusionContext,
    private readonly enabled: boolean,
  ) {}

  /** unaryKernel: deferred (true) or to be dispatched now (false). */
  unary(op: string, x: NDArray, out: DeviceBuffer): boolean {
    if (!this.can(x, out) || !this.known(() => unaryExpr(op as never, 'float32'))) return false;
    return this.defer(x, [{ op } as ElementwiseStep], out);
  }

  /** binaryScalarKernel. */
  binaryScalar(op: BinaryOp, x: NDArray, value: number, scalarFirst: boolean, out: DeviceBuffer): boolean {
    if (!this.can(x, out) || !this.known(() => binaryExpr(op, 'float32'))) return false;
    return this.defer(x, [{ op, scalar: value, scalarFirst }], out);
  }

  /** binaryKernel: a and b already have out's shape; the chain runs through a pending one, else through a. */
  binary(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): boolean {
    if (!this.can(a, out) || !this.can(b, out) || !this.known(() => binaryExpr(op, 'float32'))) return false;
    if (this.pending.has(b.buffer.id) && !this.pending.has(a.buffer.id))
      return this.defer(b, [{ op, array: a, arrayFirst: true }], out);
    return this.defer(a, [{ op, array: b }], out);
  }

  /** fusedElementwiseKernel (steps checked by the HAL). */
  fused(x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): boolean {
    if (!this.can(x, out) || steps.some((s) => 'array' in s && !this.can(s.array, out))) return false;
    return this.defer(x, steps, out);
  }

  /**
   * destroyStorage: true when a pending chain still reads the buffer, whose `release` then runs once the chain
   * is encoded; a pending result freed is never computed.
   */
  retain(buffer: DeviceBuffer, release: () => void): boolean {
    const node = this.pending.get(buffer.id);
    if (node) {
      node.dead = true;
      this.pending.delete(buffer.id);
      if (node.parent) node.parent.consumers--; // a reader that is never computed reads nothing
    }
    if (!this.reads.has(buffer.id)) return false;
    this.deferred.push(release);
    return true;
  }

  /** Encodes every pending result now (the batch's held work). */
  flush(): void {
    if (this.order.length) this.ctx.batch.releaseHeld();
  }

  private can(x: NDArray, out: DeviceBuffer): boolean {
    return (
      this.enabled &&
      out.dtype === 'float32' &&
      x.dtype === 'float32' &&
      out.size > 0 &&
      this.ctx.capturing() &&
      !this.ctx.isHalf(x.buffer) &&
      !this.ctx.isHalf(out)
    );
  }

  private known(expr: () => unknown): boolean {
    try {
      expr();
      return true;
    } catch {
      return false;
    }
  }

  /** Whether x is the whole buffer of pending node `n`, as it was made (contiguous, from 0, its shape). */
  private static whole(x: NDArray, n: Pending): boolean {
    if (x.offset !== 0 || x.shape.length !== n.shape.length || x.shape.some((d, i) => d !== n.shape[i])) return false;
    const c = contiguousStrides(x.shape);
    return x.strides.every((s, i) => s === c[i] || x.shape[i] === 1);
  }

  private defer(x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): boolean {
    let parent = this.pending.get(x.buffer.id) ?? null;
    const readsPending = steps.some((s) => 'array' in s && this.pending.has(s.array.buffer.id));
    const tooMany = (parent ? arraysOf(parent.steps) : 0) + arraysOf(steps) > MAX_FUSED_ARRAYS;
    if (parent && (parent.consumers > 0 || readsPending || tooMany || !CaptureFusion.whole(x, parent))) {
      this.flush(); // the result is used again, or another way: computed once, now
      parent = null;
    } else if (readsPending) {
      this.flush();
    }
    if (arraysOf(steps) > MAX_FUSED_ARRAYS) return false;
    const node: Pending = parent
      ? { out, root: parent.root, steps: [...parent.steps, ...steps], shape: parent.shape, parent, ...fresh() }
      : { out, root: x, steps: [...steps], shape: [...x.shape], parent: null, ...fresh() };
    if (parent) parent.consumers++;
    const gpu = (b: DeviceBuffer): void => void this.reads.set(b.id, this.ctx.elementwise.gpu(b));
    if (!parent) gpu(x.buffer); // an extension's root is in `reads` already (it may be freed by now)
    for (const s of steps) if ('array' in s) gpu(s.array.buffer);
    this.pending.set(out.id, node);
    this.order.push(node);
    this.stats.deferred++;
    this.ctx.batch.hold(this.encode);
    return true;
  }

  /** The held work: each live pending result, from the nearest live result it extends, in the order made. */
  private encodeAll(): void {
    const order = this.order;
    const reads = this.reads;
    this.order = [];
    this.pending.clear();
    const base = this.ctx.elementwise;
    const ctx: ElementwiseContext = {
      ...base,
      batch: base.batch,
      gpu: (b) => reads.get(b.id) ?? base.gpu(b),
    };
    try {
      for (const n of order) {
        if (n.dead) continue;
        let from = n.parent;
        while (from && !from.done) from = from.parent;
        const root: NDArray = from
          ? { buffer: from.out, shape: n.shape, strides: contiguousStrides(n.shape), offset: 0, dtype: 'float32' }
          : n.root;
        const steps = n.steps.slice(from ? from.steps.length : 0);
        encodeChain(ctx, root, steps, n.out);
        this.stats.kernels++;
        n.done = true;
      }
    } finally {
      this.reads.clear();
      const deferred = this.deferred;
      this.deferred = [];
      for (const release of deferred) release();
    }
  }
}

const fresh = (): { consumers: number; dead: boolean; done: boolean } => ({ consumers: 0, dead: false, done: false });

/** One result: a single step as its own op's kernel (the same pipelines and bits as eager), else one fused kernel. */
function encodeChain(ctx: ElementwiseContext, x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): void {
  if (steps.length > 1) {
    dispatchFused(ctx, x, steps, out);
    return;
  }
  const s = steps[0]!;
  if ('array' in s) {
    if (s.arrayFirst) dispatchBinary(ctx, s.op, s.array, x, out);
    else dispatchBinary(ctx, s.op, x, s.array, out);
  } else if ('scalar' in s) dispatchBinaryScalar(ctx, s.op, x, s.scalar, s.scalarFirst ?? false, out);
  else dispatchUnary(ctx, s.op, x, out);
}
