import {
  type AdamStepParams,
  type BackendCapabilities,
  type ComputeBackend,
  type DeviceType,
  type ElementwiseMethods,
  type Operand,
  type ReadHandle,
  type SgdStepParams,
  STRICT_CAPABILITIES,
} from './backend.js';
import {
  adamStepComposite,
  logSoftmaxComposite,
  sgdStepComposite,
  softmaxComposite,
  softmaxCrossEntropyComposite,
} from './composites.js';
import { bytesPerElement, type DType, type HostArray, isDType } from './dtype.js';
import {
  BackendHookError,
  DeviceMismatchError,
  DTypeError,
  InvalidArgumentError,
  OutOfMemoryError,
  ShapeMismatchError,
  UnsupportedOpError,
  UseAfterFreeError,
} from './errors.js';
import { missingHooks } from './hooks.js';
import {
  type DeviceBuffer,
  expandView,
  isWholeBuffer,
  type NDArray,
  permuteView,
  reshapeView,
  shrinkView,
  strideView,
  viewOf,
} from './ndarray.js';
import {
  BINARY_OPS,
  type BinaryOp,
  INT32_BINARY_OPS,
  INT32_REDUCE_OPS,
  INT32_UNARY_OPS,
  type ReduceOp,
  UNARY_OPS,
  type UnaryOp,
} from './ops.js';
import { assertShape, broadcastShapes, normalizeAxes, normalizeAxis, sizeOf } from './shape.js';
import {
  BINARY_OP_SET,
  checkAdamParams,
  checkAxesArg,
  checkBoolean,
  checkHostData,
  checkIntList,
  checkNumber,
  checkPairs,
  checkSgdParams,
  checkView,
  checkWriteData,
  describeValue,
  REDUCE_OP_SET,
  UNARY_OP_SET,
} from './validate.js';

export { type HookSpec, missingHooks, OPTIONAL_HOOKS, REQUIRED_HOOKS } from './hooks.js';

let instanceCounter = 0;

export interface BaseBackendOptions {
  /** Upper bound on live bytes; allocations past it throw OutOfMemoryError. */
  memoryLimit?: number;
}

/**
 * The HAL implemented once over a small set of kernels. A backend extends this class and implements
 * the hook set REQUIRED_HOOKS (hal/src/hooks.ts): four storage hooks and seven kernels (unary, binary,
 * reduce, copy, pad, fill, matmul); every user-facing op — validation, broadcasting, typed errors,
 * composites such as softmax — comes from here, so all backends behave alike. Composites and optimizer
 * steps (OPTIONAL_HOOKS) may be overridden with fused kernels. Guide: docs/WRITING-A-BACKEND.md.
 *
 * Kernel contracts: `out` is a fresh contiguous buffer of the output's size (except `assign` and
 * in-place optimizer steps); input views already have the output's shape (broadcast with stride 0)
 * for unary/binary; reduce axes are sorted and unique. The constructor throws BackendHookError naming
 * every required hook the subclass lacks (a plain-JS subclass is checked the same way).
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the elementwise methods are defined on the prototype from the op table (end of file)
export abstract class BaseBackend implements ComputeBackend {
  abstract readonly name: string;
  abstract readonly deviceName: string;
  abstract readonly deviceType: DeviceType;
  /** The strict class unless a backend declares otherwise (see ArithmeticClass). */
  readonly capabilities: BackendCapabilities = STRICT_CAPABILITIES;
  readonly id: string;

  private readonly live = new Map<number, DeviceBuffer>();
  private nextBufferId = 1;
  private liveBytes = 0;
  private peakBytes = 0;
  private disposed = false;
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

  // ---- storage hooks and kernels: what a backend implements (contracts: hooks.ts, REQUIRED_HOOKS) ----
  protected abstract createStorage(buffer: DeviceBuffer): void;
  protected abstract destroyStorage(buffer: DeviceBuffer): void;
  protected abstract writeStorage(buffer: DeviceBuffer, data: HostArray): void;
  /** Reads a whole buffer. */
  protected abstract readStorage(buffer: DeviceBuffer): Promise<HostArray>;
  protected abstract unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void;
  protected abstract binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void;
  protected abstract reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void;
  /** Materializes `x` into `out` (same element count), converting dtype if they differ. */
  protected abstract copyKernel(x: NDArray, out: DeviceBuffer): void;
  protected abstract padKernel(
    x: NDArray,
    pads: readonly (readonly [number, number])[],
    value: number,
    out: DeviceBuffer,
  ): void;
  protected abstract fillKernel(out: DeviceBuffer, value: number): void;
  /** a: [...B, M, K], b: [...B, K, N] with identical batch shapes → out [...B, M, N]. */
  protected abstract matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void;

  // ---- memory ----
  memoryAvailable(): number {
    return Math.max(0, this.memoryLimit - this.liveBytes);
  }

  liveBufferCount(): number {
    return this.live.size;
  }

  memoryStats(): { liveBytes: number; peakBytes: number; liveBuffers: number } {
    return { liveBytes: this.liveBytes, peakBytes: this.peakBytes, liveBuffers: this.live.size };
  }

  allocate(size: number, dtype: DType = 'float32'): DeviceBuffer {
    this.assertOpen();
    if (!Number.isInteger(size) || size < 0)
      throw new InvalidArgumentError(`allocation size must be a non-negative integer, got ${size}`);
    if (!isDType(dtype)) throw new DTypeError(`unknown dtype '${String(dtype)}' (expected float32 or int32)`);
    const byteLength = size * bytesPerElement(dtype);
    const available = this.memoryAvailable();
    if (byteLength > available) throw new OutOfMemoryError(byteLength, available, this.name);
    const buffer: DeviceBuffer = Object.freeze({ id: this.nextBufferId++, dtype, size, byteLength, owner: this.id });
    this.createStorage(buffer);
    this.live.set(buffer.id, buffer);
    this.liveBytes += byteLength;
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    return buffer;
  }

  deallocate(buffer: DeviceBuffer): void {
    this.release(this.checkBuffer(buffer, 'deallocate'));
  }

  private release(buffer: DeviceBuffer): void {
    this.live.delete(buffer.id);
    this.liveBytes -= buffer.byteLength;
    this.destroyStorage(buffer);
  }

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

  write(buffer: DeviceBuffer, data: HostArray): void {
    this.checkBuffer(buffer, 'write', 'buffer');
    checkWriteData(data, 'write', buffer.dtype);
    if (data.length !== buffer.size) {
      throw new ShapeMismatchError(`write: data has ${data.length} elements but the buffer holds ${buffer.size}`);
    }
    this.writeStorage(buffer, data);
  }

  copyToDevice(buffer: DeviceBuffer, data: HostArray): void {
    this.write(buffer, data);
  }

  async read(x: NDArray | DeviceBuffer): Promise<HostArray> {
    const view = this.readView(x, 'read');
    if (isWholeBuffer(view)) return this.readStorage(view.buffer);
    const tmp = this.contiguous(view);
    try {
      return await this.readStorage(tmp.buffer);
    } finally {
      this.free(tmp);
    }
  }

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

  async synchronize(): Promise<void> {
    this.assertOpen();
  }

  dispose(): void {
    if (this.disposed) return;
    for (const b of [...this.live.values()]) this.deallocate(b);
    this.disposed = true;
  }

  // ---- construction ----
  fromArray(data: ArrayLike<number>, shape: readonly number[], dtype?: DType): NDArray {
    this.assertOpen();
    checkHostData(data, 'fromArray', dtype);
    assertShape(shape, 'fromArray: shape');
    if (dtype !== undefined && !isDType(dtype))
      throw new DTypeError(`fromArray: unknown dtype ${describeValue(dtype)} (expected float32 or int32)`);
    const dt: DType = dtype ?? (data instanceof Int32Array ? 'int32' : 'float32');
    if (data.length !== sizeOf(shape)) {
      throw new ShapeMismatchError(
        `fromArray: ${data.length} values do not fill shape [${shape.join(', ')}] (${sizeOf(shape)} elements)`,
        [shape],
      );
    }
    const buffer = this.allocate(data.length, dt); // OutOfMemoryError before any host copy
    let host: HostArray;
    try {
      host = dt === 'float32' ? Float32Array.from(data) : Int32Array.from(data);
    } catch (e) {
      this.release(buffer);
      throw new InvalidArgumentError(
        `fromArray: data has a value that does not convert to a number (${(e as Error).message})`,
      );
    }
    this.writeStorage(buffer, host);
    return viewOf(buffer, shape);
  }

  full(shape: readonly number[], value: number, dtype: DType = 'float32'): NDArray {
    assertShape(shape, 'full: shape');
    checkNumber(value, 'full', 'value');
    const buffer = this.allocate(sizeOf(shape), dtype);
    this.fillKernel(buffer, value);
    return viewOf(buffer, shape);
  }

  // ---- elementwise ----
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray {
    if (typeof a === 'number' && typeof b === 'number')
      throw new InvalidArgumentError(`${op}: at least one operand must be an array`);
    if (typeof a !== 'number') this.check(a, op, 'a');
    if (typeof b !== 'number') this.check(b, op, 'b');
    const dtype = typeof a === 'number' ? (b as NDArray).dtype : a.dtype;
    if (typeof a !== 'number' && typeof b !== 'number' && a.dtype !== b.dtype) {
      throw new DTypeError(`${op}: operands have dtypes ${a.dtype} and ${b.dtype}; cast one explicitly`);
    }
    if (!BINARY_OP_SET.has(op))
      throw new UnsupportedOpError(String(op), dtype, this.name, `binary ops: ${[...BINARY_OP_SET].join(', ')}`);
    if (dtype === 'int32' && !INT32_BINARY_OPS.has(op)) throw new UnsupportedOpError(op, dtype, this.name);
    const temps: NDArray[] = [];
    const arr = (v: Operand): NDArray => {
      if (typeof v !== 'number') return v;
      const s = this.full([], v, dtype);
      temps.push(s);
      return s;
    };
    try {
      const va = arr(a);
      const vb = arr(b);
      const shape = broadcastShapes(va.shape, vb.shape);
      const out = this.allocate(sizeOf(shape), dtype);
      this.guard(out, () => this.binaryKernel(op, expandView(va, shape), expandView(vb, shape), out));
      return viewOf(out, shape);
    } finally {
      for (const t of temps) this.free(t);
    }
  }

  unary(op: UnaryOp, x: NDArray): NDArray {
    this.check(x, op);
    if (!UNARY_OP_SET.has(op))
      throw new UnsupportedOpError(String(op), x.dtype, this.name, `unary ops: ${[...UNARY_OP_SET].join(', ')}`);
    if (x.dtype === 'int32' && !INT32_UNARY_OPS.has(op)) throw new UnsupportedOpError(op, x.dtype, this.name);
    const out = this.allocate(sizeOf(x.shape), x.dtype);
    this.guard(out, () => this.unaryKernel(op, x, out));
    return viewOf(out, x.shape);
  }

  // ---- reductions ----
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    this.check(x, op);
    if (!REDUCE_OP_SET.has(op))
      throw new UnsupportedOpError(
        String(op),
        x.dtype,
        this.name,
        `reductions: ${[...REDUCE_OP_SET].join(', ')}, and mean()`,
      );
    if (x.dtype === 'int32' && !INT32_REDUCE_OPS.has(op)) throw new UnsupportedOpError(op, x.dtype, this.name);
    checkAxesArg(axes, op, x);
    checkBoolean(keepdims, op, 'keepdims');
    const ax = normalizeAxes(axes, x.shape.length);
    const kept = x.shape.filter((_, i) => !ax.includes(i));
    const out = this.allocate(sizeOf(kept), x.dtype);
    this.guard(out, () => this.reduceKernel(op, x, ax, out));
    return viewOf(out, keepdims ? x.shape.map((d, i) => (ax.includes(i) ? 1 : d)) : kept);
  }

  sum(x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    return this.reduce('sum', x, axes, keepdims);
  }
  max(x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    return this.reduce('max', x, axes, keepdims);
  }

  /** Mean over axes: sum × (1/n); the mean over an empty axis is NaN. float32 only. */
  mean(x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    this.check(x, 'mean');
    if (x.dtype !== 'float32') throw new UnsupportedOpError('mean', x.dtype, this.name);
    checkAxesArg(axes, 'mean', x);
    checkBoolean(keepdims, 'mean', 'keepdims');
    const ax = normalizeAxes(axes, x.shape.length);
    const n = ax.reduce((p, a) => p * x.shape[a]!, 1);
    const s = this.sum(x, ax, keepdims);
    try {
      return n === 0 ? this.mul(s, NaN) : this.div(s, n);
    } finally {
      this.free(s);
    }
  }

  // ---- movement ----
  reshape(x: NDArray, shape: readonly number[]): NDArray {
    this.check(x, 'reshape');
    checkIntList(shape, 'reshape', 'shape', x);
    const view = reshapeView(x, shape);
    if (view) return view;
    const c = this.contiguous(x);
    return reshapeView(c, shape)!;
  }

  permute(x: NDArray, perm: readonly number[]): NDArray {
    this.check(x, 'permute');
    checkIntList(perm, 'permute', 'perm', x);
    return permuteView(x, perm);
  }
  expand(x: NDArray, shape: readonly number[]): NDArray {
    this.check(x, 'expand');
    checkIntList(shape, 'expand', 'shape', x);
    return expandView(x, shape);
  }
  shrink(x: NDArray, bounds: readonly (readonly [number, number])[]): NDArray {
    this.check(x, 'shrink');
    checkPairs(bounds, 'shrink', 'bounds', x, '[start, end]');
    return shrinkView(x, bounds);
  }
  stride(x: NDArray, steps: readonly number[]): NDArray {
    this.check(x, 'stride');
    checkIntList(steps, 'stride', 'steps', x);
    return strideView(x, steps);
  }

  pad(x: NDArray, pads: readonly (readonly [number, number])[], value = 0): NDArray {
    this.check(x, 'pad');
    checkPairs(pads, 'pad', 'pads', x, '[before, after]');
    checkNumber(value, 'pad', 'value');
    for (const [b, a] of pads) {
      if (!Number.isInteger(b) || !Number.isInteger(a) || b < 0 || a < 0)
        throw new InvalidArgumentError(`pad widths must be non-negative integers, got [${b}, ${a}]`);
    }
    const shape = x.shape.map((d, i) => d + pads[i]![0] + pads[i]![1]);
    const out = this.allocate(sizeOf(shape), x.dtype);
    this.guard(out, () => this.padKernel(x, pads, value, out));
    return viewOf(out, shape);
  }

  contiguous(x: NDArray): NDArray {
    this.check(x, 'contiguous');
    return this.copyAs(x, x.dtype);
  }

  cast(x: NDArray, dtype: DType): NDArray {
    this.check(x, 'cast');
    if (!isDType(dtype))
      throw new DTypeError(`cast: unknown dtype ${describeValue(dtype)} (expected float32 or int32)`);
    return this.copyAs(x, dtype);
  }

  private copyAs(x: NDArray, dtype: DType): NDArray {
    const out = this.allocate(sizeOf(x.shape), dtype);
    this.guard(out, () => this.copyKernel(x, out));
    return viewOf(out, x.shape);
  }

  assign(target: DeviceBuffer, value: NDArray): void {
    this.checkBuffer(target, 'assign', 'target');
    this.check(value, 'assign', 'value');
    if (sizeOf(value.shape) !== target.size) {
      throw new ShapeMismatchError(
        `assign: value has ${sizeOf(value.shape)} elements, the target holds ${target.size}`,
        [value.shape],
      );
    }
    if (value.dtype !== target.dtype)
      throw new DTypeError(`assign: value is ${value.dtype}, the target is ${target.dtype}`);
    if (value.buffer === target && isWholeBuffer(value)) return;
    if (value.buffer === target) {
      const tmp = this.contiguous(value);
      try {
        this.copyKernel(tmp, target);
      } finally {
        this.free(tmp);
      }
      return;
    }
    this.copyKernel(value, target);
  }

  // ---- matmul ----
  matmul(a: NDArray, b: NDArray): NDArray {
    this.check(a, 'matmul', 'a');
    this.check(b, 'matmul', 'b');
    if (a.dtype !== 'float32' || b.dtype !== 'float32')
      throw new UnsupportedOpError('matmul', a.dtype !== 'float32' ? a.dtype : b.dtype, this.name);
    if (a.shape.length < 2 || b.shape.length < 2) {
      throw new ShapeMismatchError(
        `matmul needs operands of rank ≥ 2, got [${a.shape.join(', ')}] and [${b.shape.join(', ')}]`,
        [a.shape, b.shape],
      );
    }
    const [m, k] = a.shape.slice(-2) as [number, number];
    const [k2, n] = b.shape.slice(-2) as [number, number];
    if (k !== k2) {
      throw new ShapeMismatchError(
        `matmul: inner dimensions differ: a is [${a.shape.join(', ')}] (K=${k}), b is [${b.shape.join(', ')}] (K=${k2})`,
        [a.shape, b.shape],
      );
    }
    const batch = broadcastShapes(a.shape.slice(0, -2), b.shape.slice(0, -2));
    const outShape = [...batch, m, n];
    const out = this.allocate(sizeOf(outShape), 'float32');
    this.guard(out, () => this.matmulKernel(expandView(a, [...batch, m, k]), expandView(b, [...batch, k, n]), out));
    return viewOf(out, outShape);
  }

  // ---- composites (override with fused kernels where it pays) ----
  /** softmax along `axis` (default -1). Throws InvalidArgumentError for an axis out of range. */
  softmax(x: NDArray, axis = -1): NDArray {
    this.checkAxisOf(x, axis, 'softmax');
    return softmaxComposite(this, x, axis);
  }
  /** log-softmax along `axis` (default -1). Throws InvalidArgumentError for an axis out of range. */
  logSoftmax(x: NDArray, axis = -1): NDArray {
    this.checkAxisOf(x, axis, 'logSoftmax');
    return logSoftmaxComposite(this, x, axis);
  }
  /** Validated here; backends with a fused kernel override it and call `fusedSoftmaxCrossEntropy`. */
  softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    this.checkSoftmaxCrossEntropy(logits, labels, withGrad);
    return softmaxCrossEntropyComposite(this, logits, labels, withGrad);
  }
  /**
   * One Adam/AdamW step, in place. Validates hyper-parameters (checkAdamParams: finite, lr ≥ 0,
   * betas in [0, 1), eps ≥ 0, weightDecay ≥ 0, integer step ≥ 1) and operands (live, float32,
   * distinct buffers of the gradient's size) before `adamStepKernel` touches anything.
   */
  adamStep(param: DeviceBuffer, grad: NDArray, m: DeviceBuffer, v: DeviceBuffer, p: AdamStepParams): void {
    checkAdamParams(p);
    this.checkStepOperands('adamStep', param, grad, [m, v]);
    this.adamStepKernel(param, grad, m, v, p);
  }
  /**
   * One SGD step, in place. Validates hyper-parameters (checkSgdParams: finite, lr, momentum and
   * weightDecay ≥ 0) and operands; momentum > 0 needs a velocity buffer (null means no momentum).
   */
  sgdStep(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void {
    checkSgdParams(p);
    const vel = velocity ?? null;
    if (vel === null && p.momentum > 0)
      throw new InvalidArgumentError(
        `sgdStep: momentum ${p.momentum} needs a velocity buffer (pass null only without momentum)`,
      );
    this.checkStepOperands('sgdStep', param, grad, vel ? [vel] : []);
    this.sgdStepKernel(param, grad, vel, p);
  }

  /** The Adam update on validated operands; the default is the composite. Fused backends override it. */
  protected adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    adamStepComposite(this, param, grad, m, v, p);
  }
  /** The SGD update on validated operands; the default is the composite. Fused backends override it. */
  protected sgdStepKernel(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void {
    sgdStepComposite(this, param, grad, velocity, p);
  }

  // ---- helpers shared by fused overrides ----
  /** `x` itself when it is a whole contiguous buffer, else a contiguous copy (`temp`: free it after use). */
  protected whole(x: NDArray): { view: NDArray; temp: boolean } {
    return isWholeBuffer(x) ? { view: x, temp: false } : { view: this.contiguous(x), temp: true };
  }

  /** Validates the operands of an in-place optimizer step (live, float32, distinct, sizes matching the gradient). */
  protected checkStepOperands(op: string, param: DeviceBuffer, grad: NDArray, state: readonly DeviceBuffer[]): void {
    this.check(grad, op, 'grad');
    const names = op === 'adamStep' ? ['param', 'm', 'v'] : ['param', 'velocity'];
    const all = [param, ...state];
    all.forEach((b, i) => {
      this.checkBuffer(b, op, names[i]);
      if (b.dtype !== 'float32' || grad.dtype !== 'float32')
        throw new DTypeError(`${op} takes float32 parameters, gradients and state`);
      if (b.size !== sizeOf(grad.shape))
        throw new ShapeMismatchError(
          `${op}: ${names[i]} holds ${b.size} elements, which does not match the gradient's shape [${grad.shape.join(', ')}]`,
          [grad.shape],
        );
      if (all.indexOf(b) !== i || grad.buffer === b)
        throw new InvalidArgumentError(
          `${op}: ${names[i]} is the same buffer as another operand; ${names.join(', ')} and grad must be distinct`,
        );
    });
  }

  /**
   * Validates softmax cross-entropy operands: live float32 logits and labels of one shape [N, C]
   * (ShapeMismatchError, DTypeError) and a boolean `withGrad`.
   */
  protected checkSoftmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad: unknown): void {
    this.check(logits, 'softmaxCrossEntropy', 'logits');
    this.check(labels, 'softmaxCrossEntropy', 'labels');
    checkBoolean(withGrad, 'softmaxCrossEntropy', 'withGrad');
    if (
      logits.shape.length !== 2 ||
      labels.shape.length !== 2 ||
      logits.shape[0] !== labels.shape[0] ||
      logits.shape[1] !== labels.shape[1]
    ) {
      throw new ShapeMismatchError(
        `softmaxCrossEntropy expects logits and labels of the same shape [N, C], got [${logits.shape.join(', ')}] and [${labels.shape.join(', ')}]`,
        [logits.shape, labels.shape],
      );
    }
    if (logits.dtype !== 'float32' || labels.dtype !== 'float32') {
      throw new DTypeError(
        `softmaxCrossEntropy takes float32 logits and labels, got ${logits.dtype} and ${labels.dtype}`,
      );
    }
  }

  /**
   * The frame of a fused softmax cross-entropy: validates the operands, hands `kernel` contiguous
   * float32 [N, C] logits and labels plus fresh loss [N] and grad [N, C] buffers, and frees
   * temporaries — and the outputs if the kernel throws. `needWhole: false` passes the views as they
   * are (kernels that read strides). Kernels follow the rule of ops.ts (label-0 terms).
   */
  protected fusedSoftmaxCrossEntropy(
    logits: NDArray,
    labels: NDArray,
    withGrad: boolean,
    kernel: (z: NDArray, y: NDArray, loss: DeviceBuffer, grad: DeviceBuffer | null) => void,
    needWhole = true,
  ): { loss: NDArray; grad?: NDArray } {
    this.checkSoftmaxCrossEntropy(logits, labels, withGrad);
    const [n, c] = logits.shape as [number, number];
    const z = needWhole ? this.whole(logits) : { view: logits, temp: false };
    const y = needWhole ? this.whole(labels) : { view: labels, temp: false };
    const outs: DeviceBuffer[] = [];
    try {
      const loss = this.allocate(n);
      outs.push(loss);
      const grad = withGrad ? this.allocate(n * c) : null;
      if (grad) outs.push(grad);
      kernel(z.view, y.view, loss, grad);
      outs.length = 0;
      return grad ? { loss: viewOf(loss, [n]), grad: viewOf(grad, [n, c]) } : { loss: viewOf(loss, [n]) };
    } finally {
      for (const b of outs) this.deallocate(b);
      if (z.temp) this.free(z.view);
      if (y.temp) this.free(y.view);
    }
  }

  // ---- checks ----
  /**
   * Throws unless `x` is a live array of this backend instance with a well-formed view inside its
   * buffer (InvalidArgumentError, DeviceMismatchError, UseAfterFreeError). O(rank).
   */
  check(x: NDArray, op: string, arg = 'x'): void {
    if (x === null || typeof x !== 'object' || !('buffer' in x) || x.buffer === null || typeof x.buffer !== 'object') {
      throw new InvalidArgumentError(
        `${op}: ${arg} must be an NDArray, got ${describeValue(x)}${x && typeof x === 'object' ? ' without a buffer' : ''}`,
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

  private checkAxisOf(x: NDArray, axis: number, op: string): void {
    this.check(x, op);
    if (!Number.isInteger(axis))
      throw new InvalidArgumentError(`${op}: axis must be an integer, got ${describeValue(axis)}`);
    normalizeAxis(axis, x.shape.length);
  }

  protected checkBuffer(buffer: DeviceBuffer, op: string, arg = 'buffer'): DeviceBuffer {
    this.assertOpen();
    if (buffer === null || typeof buffer !== 'object' || typeof buffer.owner !== 'string') {
      throw new InvalidArgumentError(
        `${op}: ${arg} must be a DeviceBuffer (or an NDArray where the op takes one), got ${describeValue(buffer)}`,
      );
    }
    if (buffer.owner !== this.id) {
      throw new DeviceMismatchError(
        `${op}: the buffer of ${arg} belongs to backend instance ${buffer.owner}, not to ${this.name} (${this.id}); move it with read + fromArray (or tensor.to())`,
      );
    }
    if (this.live.get(buffer.id) !== buffer) {
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

// The named elementwise methods (ElementwiseMethods), one per op table entry, all through unary/binary.
export interface BaseBackend extends ElementwiseMethods {}
for (const op of UNARY_OPS) {
  Object.defineProperty(BaseBackend.prototype, op, {
    value: function (this: BaseBackend, x: NDArray): NDArray {
      return this.unary(op, x);
    },
    writable: true,
    configurable: true,
  });
}
for (const op of BINARY_OPS) {
  Object.defineProperty(BaseBackend.prototype, op, {
    value: function (this: BaseBackend, a: Operand, b: Operand): NDArray {
      return this.binary(op, a, b);
    },
    writable: true,
    configurable: true,
  });
}
