import {
  type ComputeBackend, DeviceMismatchError, type DType, DTypeError, type HostArray, InvalidArgumentError, isWholeBuffer, type NDArray, ShapeMismatchError,
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
  /**
   * d(loss)/d(inputs) given d(loss)/d(output); null where an input needs no gradient. Runs its HAL
   * calls on `be` when given (the engine passes a view of the backend that frees, on a throw, what the
   * rule had allocated). Must leave the node's saved state intact (a retained graph runs it again);
   * `release` frees that state.
   */
  backward: (g: NDArray, be?: ComputeBackend) => (NDArray | null)[];
  /** Frees what the op saved for its gradient (called once, when the graph drops the node). */
  release?: () => void;
}

/** Options of `Tensor.backward`. */
export interface BackwardOptions {
  /**
   * Keep the graph (and what its ops saved) after this backward, so that it can run backward again
   * (gradients then accumulate). Default false: the graph is freed as backward goes, and a second
   * backward through it throws UseAfterFreeError (PyTorch's `retain_graph`).
   */
  retainGraph?: boolean;
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
  requiresGrad: boolean;
  grad: Tensor | null = null;
  /** The op that produced this tensor, while its graph is alive. */
  node: GradNode | null;
  /**
   * The op that produced this tensor with a graph (`null` for a leaf: created by the user, by a
   * layer, or by an op that recorded no graph). Stays set after the graph is freed.
   */
  readonly gradFn: string | null;
  private _backend: ComputeBackend;
  private _value: NDArray;
  private disposed = false;
  /** Shared with the leak registry: the storage this tensor holds, while it holds it. */
  private readonly hold: { storage: Storage; released: boolean; description: string; release: () => boolean };

  constructor(backend: ComputeBackend, value: NDArray, opts: { requiresGrad?: boolean; storage?: Storage; node?: GradNode | null } = {}) {
    this._backend = backend;
    this._value = value;
    this.requiresGrad = opts.requiresGrad ?? false;
    this.node = opts.node ?? null;
    this.gradFn = this.node?.op ?? null;
    const storage = opts.storage ?? new Storage(backend, value);
    storage.retain();
    const hold = {
      storage,
      released: false,
      description: `tensor [${value.shape.join(', ')}] ${value.dtype} on ${backend.name}`,
      release: () => !hold.released && ((hold.released = true), hold.storage.release()),
    };
    this.hold = hold;
    leakRegistry.register(this, hold, this);
    track(this);
  }

  get backend(): ComputeBackend { return this._backend; }
  get value(): NDArray { return this._value; }
  private get storage(): Storage { return this.hold.storage; }

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

  /** Frees the tensor (its buffer, once no view uses it), its gradient and what its op saved. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    leakRegistry.unregister(this);
    this.hold.release();
    this.grad?.dispose();
    this.grad = null;
    releaseNode(this);
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

  /**
   * Moves this leaf tensor's data (and its gradient) to `backend` in place: the same object, so
   * references to it — an optimizer's parameter list — stay valid (what `Module.to` does, as PyTorch's
   * `module.to` does). The old buffer is released (freed once no view of it is left). Views taken
   * earlier keep the old data. Throws InvalidArgumentError for a tensor with a graph (an op result
   * that requires grad), UseAfterFreeError for a disposed one.
   */
  async moveTo(backend: ComputeBackend): Promise<this> {
    this.assertLive('moveTo');
    if (this.node) throw new InvalidArgumentError(`moveTo: tensor ${this.id} is the result of '${this.node.op}' in a live graph; only leaf tensors move in place (use to() for a copy)`);
    if (backend === this._backend) return this;
    const host = await this.data();
    this.assertLive('moveTo'); // disposed while reading
    const value = backend.fromArray(host, this.shape, this.dtype);
    const fresh = new Storage(backend, value);
    fresh.retain();
    const old = this.hold.storage;
    this.hold.storage = fresh;
    this.hold.description = `tensor [${value.shape.join(', ')}] ${value.dtype} on ${backend.name}`;
    this._backend = backend;
    this._value = value;
    old.release();
    await this.grad?.moveTo(backend);
    return this;
  }

  /** The same data without a graph (shares the buffer). */
  detach(): Tensor {
    this.assertLive('detach');
    return new Tensor(this.backend, this.value, { storage: this.storage });
  }

  /**
   * Back-propagates from this tensor: fills `.grad` of every leaf with `requiresGrad`, accumulating
   * into a gradient already there. A non-scalar tensor needs `gradOutput` of exactly its shape (a
   * one-element tensor may omit it: the gradient is 1). The graph is freed as backward goes unless
   * `retainGraph` is set; backward through a freed graph throws.
   *
   * Throws before computing anything: InvalidArgumentError when this tensor does not require grad;
   * ShapeMismatchError when `gradOutput` is missing for a non-scalar or its shape differs; DTypeError
   * when its dtype differs; DeviceMismatchError when it lives on another backend; UseAfterFreeError
   * when `gradOutput`, or a tensor of the graph that requires grad, was disposed (the message names it
   * and the op that used it), or when the graph was freed by an earlier backward (pass
   * `{ retainGraph: true }` to that one). A backward that throws part way (an error from a gradient
   * rule or the backend) frees every buffer it had allocated; leaves it had already reached keep
   * their accumulated `.grad`.
   */
  backward(gradOutput?: Tensor, options: BackwardOptions = {}): void {
    backward(this, gradOutput, options);
  }
}

/** Drops a tensor's graph node and frees what its op saved. */
function releaseNode(t: Tensor): void {
  const node = t.node;
  t.node = null;
  node?.release?.();
}

const describe = (t: Tensor): string => `tensor ${t.id} [${t.shape.join(', ')}]${t.gradFn ? ` (result of '${t.gradFn}')` : ''}`;

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

/**
 * The tensors of root's graph that need a gradient, inputs before the ops that use them. Throws
 * UseAfterFreeError (before anything is allocated) for a disposed tensor or a freed graph on the way.
 */
function graphOrder(root: Tensor): Tensor[] {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>();
  const visit = (t: Tensor, user: Tensor | null): void => {
    if (seen.has(t) || !t.requiresGrad) return;
    seen.add(t);
    if (t.isDisposed) {
      throw new UseAfterFreeError(
        `backward: ${describe(t)} was disposed before backward${user ? `, but '${user.gradFn}' (tensor ${user.id}) needs its gradient` : ''}; ` +
          'keep every tensor of the graph alive until backward has run (dispose it afterwards, or return it from its scope)',
      );
    }
    if (!t.node && t.gradFn) {
      throw new UseAfterFreeError(
        `backward: the graph behind ${describe(t)} was freed by an earlier backward(); to run backward through it again, ` +
          'pass { retainGraph: true } to the earlier backward (gradients then accumulate)',
      );
    }
    for (const i of t.node?.inputs ?? []) visit(i, t);
    order.push(t);
  };
  visit(root, null);
  return order;
}

function checkGradOutput(root: Tensor, gradOutput: Tensor | undefined): void {
  if (!gradOutput) {
    if (root.size !== 1) {
      throw new ShapeMismatchError(`backward: a gradient can be created implicitly only for one-element outputs, got [${root.shape.join(', ')}]; pass gradOutput`, [root.shape]);
    }
    return;
  }
  gradOutput.assertLive('backward (gradOutput)');
  if (gradOutput.backend !== root.backend) {
    throw new DeviceMismatchError(`backward: gradOutput is on ${gradOutput.backend.name} (${gradOutput.backend.deviceName}) but the output is on ${root.backend.name} (${root.backend.deviceName}); move it with await gradOutput.to(backend)`);
  }
  if (gradOutput.shape.length !== root.shape.length || gradOutput.shape.some((d, i) => d !== root.shape[i])) {
    throw new ShapeMismatchError(`backward: gradOutput has shape [${gradOutput.shape.join(', ')}] but the output has shape [${root.shape.join(', ')}]; they must be equal`, [gradOutput.shape, root.shape]);
  }
  if (gradOutput.dtype !== root.dtype) throw new DTypeError(`backward: gradOutput has dtype ${gradOutput.dtype} but the output has dtype ${root.dtype}`);
}

function backward(root: Tensor, gradOutput: Tensor | undefined, options: BackwardOptions): void {
  root.assertLive('backward');
  const be = root.backend;
  if (!root.requiresGrad) throw new InvalidArgumentError('backward: the tensor does not require grad (no input had requiresGrad)');
  checkGradOutput(root, gradOutput);
  const order = graphOrder(root);
  const retain = options.retainGraph === true;
  // Every array the engine owns is in `grads` (pending gradients) or `loose` (in hand during one
  // node); whatever is left in either when something throws is freed.
  const grads = new Map<Tensor, NDArray>();
  const loose = new Map<DeviceBufferLike, NDArray>();
  const own = (a: NDArray): NDArray => (loose.set(a.buffer, a), a);
  const drop = (a: NDArray): void => {
    loose.delete(a.buffer);
    be.free(a);
  };
  const accumulate = (t: Tensor, g: NDArray): void => {
    const prev = grads.get(t);
    if (!prev) {
      grads.set(t, g);
      loose.delete(g.buffer);
      return;
    }
    const sum = be.add(prev, g);
    grads.set(t, sum);
    be.free(prev);
    drop(g);
  };
  try {
    grads.set(root, gradOutput ? be.contiguous(gradOutput.value) : be.full(root.shape, 1));
    for (let i = order.length - 1; i >= 0; i--) {
      const t = order[i]!;
      const g = grads.get(t);
      if (!g) continue;
      grads.delete(t);
      own(g);
      if (!t.node) {
        // A leaf: accumulate into .grad.
        if (t.grad) {
          const sum = own(be.add(t.grad.value, g));
          drop(g);
          t.grad.dispose();
          t.grad = new Tensor(be, sum);
          loose.delete(sum.buffer);
        } else {
          t.grad = new Tensor(be, g);
          loose.delete(g.buffer);
        }
        keep(t.grad); // gradients outlive the scope that ran backward
        continue;
      }
      const node = t.node;
      const inputGrads = freeOnThrow(be, (tracked) => node.backward(g, tracked));
      for (const gi of inputGrads) if (gi) own(gi);
      const handed = new Set<DeviceBufferLike>([g.buffer]);
      node.inputs.forEach((inp, k) => {
        let gi = inputGrads[k];
        if (!gi || !inp.requiresGrad) {
          if (gi && !handed.has(gi.buffer) && loose.has(gi.buffer)) drop(gi);
          return;
        }
        if (handed.has(gi.buffer)) gi = own(be.contiguous(gi)); // a view of g or of another input's gradient
        handed.add(gi.buffer);
        accumulate(inp, gi);
      });
      drop(g);
      if (!retain) releaseNode(t); // free the graph as we go
    }
  } finally {
    for (const g of grads.values()) loose.set(g.buffer, g);
    for (const a of loose.values()) {
      try {
        be.free(a);
      } catch {
        /* the error that brought us here is the one to report */
      }
    }
  }
}

/**
 * Runs a gradient rule with a view of `be` that notes every array it creates and frees: when the
 * rule throws, the arrays it made and still held are freed before the error goes on.
 */
function freeOnThrow<T>(be: ComputeBackend, fn: (tracked: ComputeBackend) => T): T {
  const made = new Map<DeviceBufferLike, NDArray>();
  const isArray = (v: unknown): v is NDArray => typeof v === 'object' && v !== null && 'buffer' in v && 'shape' in v && 'strides' in v;
  const note = (r: unknown, args: unknown[]): void => {
    if (isArray(r)) {
      if (!args.some((a) => isArray(a) && a.buffer === r.buffer)) made.set(r.buffer, r);
    } else if (r && typeof r === 'object' && Object.getPrototypeOf(r) === Object.prototype) {
      for (const v of Object.values(r)) note(v, args);
    }
  };
  const tracked = new Proxy(be, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'free') return (x: NDArray) => (made.delete(x.buffer), target.free(x));
      if (prop === 'deallocate') return (b: DeviceBufferLike) => (made.delete(b), target.deallocate(b));
      return (...args: unknown[]) => {
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        note(r, args);
        return r;
      };
    },
  });
  try {
    return fn(tracked);
  } catch (e) {
    for (const a of made.values()) {
      try {
        be.free(a);
      } catch {
        /* already gone */
      }
    }
    throw e;
  }
}

type DeviceBufferLike = NDArray['buffer'];
