import {
  type ComputeBackend, DeviceMismatchError, type DType, type HostArray, InvalidArgumentError, isWholeBuffer, type NDArray, ShapeMismatchError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { type Disposable, keep, leakRegistry, track } from './scope.js';

/** A device buffer shared by a tensor and the views taken of it; freed when the last one is disposed. */
export class Storage {
  private refs = 0;
  constructor(readonly backend: ComputeBackend, readonly array: NDArray) {}
  retain(): void {
    this.refs++;
  }
  /** Returns true when this call freed the buffer. */
  release(): boolean {
    if (--this.refs === 0) {
      try {
        this.backend.free(this.array);
      } catch (e) {
        if (!(e instanceof UseAfterFreeError)) throw e; // the backend itself was disposed
      }
      return true;
    }
    return false;
  }
}

/** One recorded op of the graph: its inputs and its gradient rule (see ops.ts). */
export interface GradNode {
  op: string;
  inputs: Tensor[];
  /** d(loss)/d(inputs) given d(loss)/d(output); null where an input needs no gradient. */
  backward: (g: NDArray) => (NDArray | null)[];
}

let gradEnabled = true;

/** Runs `fn` without recording gradients (evaluation, optimizer updates). */
export function noGrad<T>(fn: () => T): T {
  const prev = gradEnabled;
  gradEnabled = false;
  try {
    const r = fn();
    if (r instanceof Promise) return r.finally(() => (gradEnabled = prev)) as T;
    gradEnabled = prev;
    return r;
  } catch (e) {
    gradEnabled = prev;
    throw e;
  }
}

export function isGradEnabled(): boolean {
  return gradEnabled;
}

let nextTensorId = 1;

/**
 * An n-dimensional array on a backend, with PyTorch/tfjs naming: `shape`, `dtype`, `backend` (the
 * device), `requiresGrad`, `grad`, `backward()`, `dispose()`, `to(backend)`. Ops live in ops.ts and as
 * methods here. Every tensor must be disposed (directly, or by a `scope`); a tensor that the garbage
 * collector finds undisposed is reported as a leak.
 */
export class Tensor implements Disposable {
  readonly id = nextTensorId++;
  readonly backend: ComputeBackend;
  readonly value: NDArray;
  requiresGrad: boolean;
  grad: Tensor | null = null;
  /** The op that produced this tensor, while its graph is alive. */
  node: GradNode | null;
  private readonly storage: Storage;
  private disposed = false;

  constructor(backend: ComputeBackend, value: NDArray, opts: { requiresGrad?: boolean; storage?: Storage; node?: GradNode | null } = {}) {
    this.backend = backend;
    this.value = value;
    this.requiresGrad = opts.requiresGrad ?? false;
    this.node = opts.node ?? null;
    this.storage = opts.storage ?? new Storage(backend, value);
    this.storage.retain();
    const storage = this.storage;
    let released = false;
    leakRegistry.register(this, {
      description: `tensor [${value.shape.join(', ')}] ${value.dtype} on ${backend.name}`,
      release: () => !released && ((released = true), storage.release()),
    }, this);
    this.releaseOnce = () => {
      if (released) return;
      released = true;
      storage.release();
    };
    track(this);
  }
  private readonly releaseOnce: () => void;

  /** Uploads host data: `data` must have exactly prod(shape) values. */
  static fromArray(backend: ComputeBackend, data: ArrayLike<number>, shape: readonly number[], opts: { dtype?: DType; requiresGrad?: boolean } = {}): Tensor {
    return new Tensor(backend, backend.fromArray(data, shape, opts.dtype), { requiresGrad: opts.requiresGrad });
  }

  static full(backend: ComputeBackend, shape: readonly number[], value: number, opts: { dtype?: DType; requiresGrad?: boolean } = {}): Tensor {
    return new Tensor(backend, backend.full(shape, value, opts.dtype), { requiresGrad: opts.requiresGrad });
  }

  get shape(): readonly number[] { return this.value.shape; }
  get dtype(): DType { return this.value.dtype; }
  get rank(): number { return this.value.shape.length; }
  get size(): number { return this.value.shape.reduce((p, d) => p * d, 1); }
  get isDisposed(): boolean { return this.disposed; }

  /** The storage shared with views of this tensor (for view ops). */
  sharedStorage(): Storage {
    this.assertLive('view');
    return this.storage;
  }

  /** True when the value is a contiguous array covering its whole buffer (what optimizers update in place). */
  get isWhole(): boolean {
    return isWholeBuffer(this.value);
  }

  assertLive(op: string): void {
    if (this.disposed) throw new UseAfterFreeError(`${op}: tensor ${this.id} [${this.shape.join(', ')}] was already disposed`);
  }

  /** Frees the tensor (its buffer, once no view uses it) and its gradient. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    leakRegistry.unregister(this);
    this.releaseOnce();
    this.grad?.dispose();
    this.grad = null;
    this.node = null;
  }

  /** Reads the values (row-major) once queued work is done. */
  async data(): Promise<HostArray> {
    this.assertLive('data');
    return this.backend.read(this.value);
  }

  /** Synchronous read where the backend allows it (CPU, WASM); throws otherwise. */
  dataSync(): HostArray {
    this.assertLive('dataSync');
    if (!this.backend.readSync) throw new InvalidArgumentError(`dataSync: backend ${this.backend.name} reads asynchronously; use await tensor.data()`);
    return this.backend.readSync(this.value);
  }

  /** The single value of a one-element tensor. */
  async item(): Promise<number> {
    if (this.size !== 1) throw new ShapeMismatchError(`item() needs a one-element tensor, got shape [${this.shape.join(', ')}]`, [this.shape]);
    return (await this.data())[0]!;
  }

  /** A copy on another backend (or the same one); gradients do not flow through it. */
  async to(backend: ComputeBackend): Promise<Tensor> {
    const host = await this.data();
    return Tensor.fromArray(backend, host, this.shape, { dtype: this.dtype, requiresGrad: this.requiresGrad });
  }

  /** The same data without a graph (shares the buffer). */
  detach(): Tensor {
    this.assertLive('detach');
    return new Tensor(this.backend, this.value, { storage: this.storage });
  }

  /**
   * Back-propagates from this tensor: fills `.grad` of every leaf with `requiresGrad`, accumulating.
   * A non-scalar tensor needs `gradOutput` of its shape. The graph is released afterwards.
   */
  backward(gradOutput?: Tensor): void {
    backward(this, gradOutput);
  }
}

/** Checks that every tensor is live and on one backend instance; returns it. Throws DeviceMismatchError naming both. */
export function commonBackend(op: string, tensors: readonly Tensor[]): ComputeBackend {
  const be = tensors[0]!.backend;
  for (const t of tensors) {
    t.assertLive(op);
    if (t.backend !== be) {
      throw new DeviceMismatchError(`${op}: tensors are on different backends: ${be.name} (${be.deviceName}) and ${t.backend.name} (${t.backend.deviceName}); move one with await tensor.to(backend)`);
    }
  }
  return be;
}

function backward(root: Tensor, gradOutput?: Tensor): void {
  const be = root.backend;
  if (!root.requiresGrad) throw new InvalidArgumentError('backward: the tensor does not require grad (no input had requiresGrad)');
  if (!gradOutput && root.size !== 1) {
    throw new ShapeMismatchError(`backward: a gradient can be created implicitly only for one-element outputs, got [${root.shape.join(', ')}]; pass gradOutput`, [root.shape]);
  }
  // Topological order of the nodes that need a gradient.
  const order: Tensor[] = [];
  const seen = new Set<Tensor>();
  const visit = (t: Tensor): void => {
    if (seen.has(t) || !t.requiresGrad) return;
    seen.add(t);
    for (const i of t.node?.inputs ?? []) visit(i);
    order.push(t);
  };
  visit(root);
  const grads = new Map<Tensor, NDArray>();
  grads.set(root, gradOutput ? be.contiguous(gradOutput.value) : be.full(root.shape, 1));
  const accumulate = (t: Tensor, g: NDArray): void => {
    const prev = grads.get(t);
    if (!prev) {
      grads.set(t, g);
      return;
    }
    grads.set(t, be.add(prev, g));
    be.free(prev);
    be.free(g);
  };
  try {
    for (let i = order.length - 1; i >= 0; i--) {
      const t = order[i]!;
      const g = grads.get(t);
      if (!g) continue;
      grads.delete(t);
      if (!t.node) {
        // A leaf: accumulate into .grad.
        if (t.grad) {
          const sum = be.add(t.grad.value, g);
          be.free(g);
          t.grad.dispose();
          t.grad = new Tensor(be, sum);
        } else t.grad = new Tensor(be, g);
        keep(t.grad); // gradients outlive the scope that ran backward
        continue;
      }
      const inputGrads = t.node.backward(g);
      const handed = new Set<DeviceBufferLike>([g.buffer]);
      t.node.inputs.forEach((inp, k) => {
        let gi = inputGrads[k];
        if (!gi || !inp.requiresGrad) {
          if (gi && !handed.has(gi.buffer)) be.free(gi);
          return;
        }
        if (handed.has(gi.buffer)) gi = be.contiguous(gi); // a view of g or of another input's gradient
        handed.add(gi.buffer);
        accumulate(inp, gi);
      });
      be.free(g);
      t.node = null; // release the graph as we go
    }
  } finally {
    for (const g of grads.values()) be.free(g);
  }
}

type DeviceBufferLike = NDArray['buffer'];
