import {
  type ComputeBackend,
  DeviceMismatchError,
  type DType,
  type HostArray,
  InvalidArgumentError,
  isWholeBuffer,
  type NDArray,
  ShapeMismatchError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { runBackward } from './backward.js';
import {
  arange as arangeFn,
  eye as eyeFn,
  linspace as linspaceFn,
  ones as onesFn,
  tensor as tensorFn,
  zeros as zerosFn,
} from './creation.js';
import { formatValues } from './format.js';
import { rand as randFn, randint as randintFn, randn as randnFn } from './random.js';
import type { MultiMethods, OpMethods, TableMethods } from './methods.js';
import { type Disposable, leakRegistry, track } from './scope.js';

/** A device buffer shared by a tensor and the views taken of it; freed when the last one is disposed. */
export class Storage {
  private refs = 0;
  constructor(
    /** The backend that owns the buffer. */
    readonly backend: ComputeBackend,
    /** The array whose buffer is shared (freed with `backend.free` at the last release). */
    readonly array: NDArray,
  ) {}
  /** Counts one more holder (a tensor or a view of it). */
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
  /** The op's name (`matmul`, `add`, ...): what `gradFn` shows. */
  op: string;
  /** The op's tensor inputs, in order: backward sends one gradient to each that requires one. */
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

/** Whether ops record a graph now: false inside `noGrad`, true otherwise. */
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
// The chainable op methods (x.add(y).relu()), defined on the prototype in methods.ts.
export interface Tensor extends TableMethods, OpMethods, MultiMethods {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: methods.ts defines them on the prototype
export class Tensor implements Disposable {
  /** Unique per process, in creation order (messages and leak reports name tensors by it). */
  readonly id = nextTensorId++;
  /** Whether backward computes a gradient for this tensor (and ops on it record a graph). */
  requiresGrad: boolean;
  /** The gradient accumulated by backward() (same shape), or null; the optimizer's zeroGrad frees it. */
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

  constructor(
    backend: ComputeBackend,
    value: NDArray,
    opts: { requiresGrad?: boolean; storage?: Storage; node?: GradNode | null } = {},
  ) {
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
      release: (): boolean => {
        if (hold.released) return false;
        hold.released = true;
        return hold.storage.release();
      },
    };
    this.hold = hold;
    leakRegistry.register(this, hold, this);
    track(this);
  }

  /** The backend holding the tensor's data (changed by moveTo/to). */
  get backend(): ComputeBackend {
    return this._backend;
  }
  /** The HAL array behind the tensor (a view of the shared storage), for calls on `backend` directly. */
  get value(): NDArray {
    return this._value;
  }
  private get storage(): Storage {
    return this.hold.storage;
  }

  /** Uploads host data: `data` must have exactly prod(shape) values. */
  static fromArray(
    backend: ComputeBackend,
    data: ArrayLike<number>,
    shape: readonly number[],
    opts: { dtype?: DType; requiresGrad?: boolean } = {},
  ): Tensor {
    return new Tensor(backend, backend.fromArray(data, shape, opts.dtype), { requiresGrad: opts.requiresGrad });
  }

  /** A tensor of `shape` filled with `value` (dtype float32 unless given; int32 truncates). */
  static full(
    backend: ComputeBackend,
    shape: readonly number[],
    value: number,
    opts: { dtype?: DType; requiresGrad?: boolean } = {},
  ): Tensor {
    return new Tensor(backend, backend.full(shape, value, opts.dtype), { requiresGrad: opts.requiresGrad });
  }

  // The creation functions as statics (PyTorch's `torch.zeros` as `Tensor.zeros`): the same functions, so the
  // same arguments, options and errors as creation.ts and random.ts (function declarations, hoisted, so the
  // import cycle with those modules is safe).
  /** `tensor(be, data, opts)`: a tensor from nested arrays, shape and dtype inferred (creation.ts). */
  static readonly from: typeof tensorFn = tensorFn;
  /** `zeros(be, shape, opts)` (creation.ts). */
  static readonly zeros: typeof zerosFn = zerosFn;
  /** `ones(be, shape, opts)` (creation.ts). */
  static readonly ones: typeof onesFn = onesFn;
  /** `arange(be, [start,] end[, step], opts)` (creation.ts). */
  static readonly arange: typeof arangeFn = arangeFn;
  /** `linspace(be, start, stop, num, opts)` (creation.ts). */
  static readonly linspace: typeof linspaceFn = linspaceFn;
  /** `eye(be, n, m, opts)` (creation.ts). */
  static readonly eye: typeof eyeFn = eyeFn;
  /** `rand(be, shape, opts)`: uniform in [low, high) from the Philox stream (random.ts). */
  static readonly rand: typeof randFn = randFn;
  /** `randn(be, shape, opts)`: normal from the Philox stream (random.ts). */
  static readonly randn: typeof randnFn = randnFn;
  /** `randint(be, low, high, shape, opts)`: int32 in [low, high) from the Philox stream (random.ts). */
  static readonly randint: typeof randintFn = randintFn;

  /** Size of each dimension. */
  get shape(): readonly number[] {
    return this.value.shape;
  }
  /** The element type. */
  get dtype(): DType {
    return this.value.dtype;
  }
  /** Number of dimensions (0 for a scalar). */
  get rank(): number {
    return this.value.shape.length;
  }
  /** Number of elements (the product of the shape). */
  get size(): number {
    return this.value.shape.reduce((p, d) => p * d, 1);
  }
  /** Whether dispose() has run (any op on the tensor then throws UseAfterFreeError). */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** The storage shared with views of this tensor (for view ops). */
  sharedStorage(): Storage {
    this.assertLive('view');
    return this.storage;
  }

  /** True when the value is a contiguous array covering its whole buffer (what optimizers update in place). */
  get isWhole(): boolean {
    return isWholeBuffer(this.value);
  }

  /** Throws UseAfterFreeError naming `op` and this tensor when it was disposed. */
  assertLive(op: string): void {
    if (this.disposed)
      throw new UseAfterFreeError(`${op}: tensor ${this.id} [${this.shape.join(', ')}] was already disposed`);
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
    if (!this.backend.readSync)
      throw new InvalidArgumentError(
        `dataSync: backend ${this.backend.name} reads asynchronously; use await tensor.data()`,
      );
    return this.backend.readSync(this.value);
  }

  /**
   * A readable summary, as PyTorch prints one: `tensor([[1.0000, 2.5000], [3.0000, 4.0000]], shape=[2, 2],
   * dtype=float32, backend=cpu)`, then `gradFn=<op>` or `requiresGrad=true` where they apply. Values as
   * NumPy prints them (more than 1,000 elements summarized by the first and last 3 along each dim);
   * they appear when the backend reads synchronously (cpu, wasm) — elsewhere use `await format()`.
   */
  toString(): string {
    if (this.disposed) return `tensor(<disposed>, ${this.describe(false)})`;
    if (!this.backend.readSync) return `tensor(<on ${this.backend.name}: await format() to read>, ${this.describe()})`;
    return `tensor(${formatValues(this.backend.readSync(this.value), this.shape, this.dtype, 7)}, ${this.describe()})`;
  }

  /** toString() with the values read from any backend (waits for queued work). */
  async format(): Promise<string> {
    this.assertLive('format');
    return `tensor(${formatValues(await this.data(), this.shape, this.dtype, 7)}, ${this.describe()})`;
  }

  /** console.log and util.inspect in Node.js print toString(). */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  private describe(withGrad = true): string {
    const grad = !withGrad
      ? ''
      : this.node
        ? `, gradFn=${this.node.op}`
        : this.requiresGrad
          ? ', requiresGrad=true'
          : '';
    return `shape=[${this.shape.join(', ')}], dtype=${this.dtype}, backend=${this.backend.name}${grad}`;
  }

  /** The single value of a one-element tensor. */
  async item(): Promise<number> {
    if (this.size !== 1)
      throw new ShapeMismatchError(`item() needs a one-element tensor, got shape [${this.shape.join(', ')}]`, [
        this.shape,
      ]);
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
    if (this.node)
      throw new InvalidArgumentError(
        `moveTo: tensor ${this.id} is the result of '${this.node.op}' in a live graph; only leaf ` +
          `tensors move in place (use to() for a copy)`,
      );
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
    runBackward(this, gradOutput, options);
  }
}

/** Drops a tensor's graph node and frees what its op saved. */
export function releaseNode(t: Tensor): void {
  const node = t.node;
  t.node = null;
  node?.release?.();
}

/** Checks that every tensor is live and on one backend instance; returns it. Throws DeviceMismatchError naming both. */
export function commonBackend(op: string, tensors: readonly Tensor[]): ComputeBackend {
  const be = tensors[0]!.backend;
  for (const t of tensors) {
    t.assertLive(op);
    if (t.backend !== be) {
      throw new DeviceMismatchError(
        `${op}: tensors are on different backends: ${be.name} (${be.deviceName}) and ` +
          `${t.backend.name} (${t.backend.deviceName}); move one with await tensor.to(backend)`,
      );
    }
  }
  return be;
}
