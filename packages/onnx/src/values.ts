/**
 * The values a graph run binds to names, and who owns their device buffers. A value has an ONNX type
 * and dims and lives on the host (small shape tensors and scalars), on a device, or both (a host value
 * uploaded for a device consumer keeps its upload). Several values may share one buffer (views:
 * Reshape, Squeeze, Identity return views of their input), so buffers are counted: a buffer is freed
 * when the last value holding it is unbound. Constants, initializers and caller-owned arrays are pinned:
 * a run never frees them.
 */
import { type ComputeBackend, type DeviceBuffer, DTypeError, type NDArray } from '@polyhal/hal';
import { OnnxInt64RangeError } from './errors.js';
import type { ConstantDef } from './graph.js';
import type { HostTensor } from './host-eval.js';
import { deviceDType } from './types.js';

export class Value {
  /** Names bound to this value in live scopes. */
  refs = 0;
  constructor(
    /** ONNX element type ('float32', 'int64', 'bool', ...). */
    readonly type: string,
    readonly dims: readonly number[],
    /** Host data (one float64 per element), where the value is on the host. */
    public host?: Float64Array,
    /** The device array, where the value is on a device. */
    public dev?: NDArray,
    /** Owned by the session (constants, initializers) or the caller: never freed by a run. */
    readonly pinned = false,
  ) {}

  static fromHost(t: HostTensor, pinned = false): Value {
    return new Value(t.type, t.dims, t.data, undefined, pinned);
  }

  /** The host view of the value (its data must be on the host). */
  hostTensor(): HostTensor {
    return { type: this.type, dims: this.dims, data: this.host! };
  }

  get size(): number {
    return this.dims.reduce((p, d) => p * d, 1);
  }
}

/**
 * Device buffers a run holds, counted per buffer; `pinned(b)` says which buffers are not the run's to free.
 * `liveBytes` and `peakBytes` count the run's own buffers (not constants, not the caller's arrays).
 */
export class Heap {
  private readonly counts = new Map<DeviceBuffer, number>();
  liveBytes = 0;
  peakBytes = 0;
  constructor(
    private readonly be: ComputeBackend,
    /** Buffers the session owns (constants: uploaded once, freed by release()). */
    readonly sessionPinned: Set<DeviceBuffer>,
    /** Buffers the caller owns (tensors fed as they are). */
    readonly callerPinned: Set<DeviceBuffer> = new Set(),
  ) {}

  isPinned(b: DeviceBuffer): boolean {
    return this.sessionPinned.has(b) || this.callerPinned.has(b);
  }
  /** Held by the run or pinned: not a temporary of the node being run. */
  isHeld(b: DeviceBuffer): boolean {
    return this.isPinned(b) || this.counts.has(b);
  }

  bind(v: Value): void {
    if (v.pinned) return;
    if (v.refs++ === 0 && v.dev) this.hold(v.dev.buffer);
  }

  unbind(v: Value): void {
    if (v.pinned) return;
    if (--v.refs === 0 && v.dev) this.drop(v.dev.buffer);
  }

  /** Gives `v` its device array (an upload of its host data): pinned values keep it for the session. */
  attach(v: Value, dev: NDArray): void {
    v.dev = dev;
    if (v.pinned) this.sessionPinned.add(dev.buffer);
    else if (v.refs > 0) this.hold(dev.buffer);
  }

  private hold(b: DeviceBuffer): void {
    if (this.isPinned(b)) return;
    const c = this.counts.get(b) ?? 0;
    if (c === 0) {
      this.liveBytes += b.byteLength;
      this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    }
    this.counts.set(b, c + 1);
  }

  private drop(b: DeviceBuffer): void {
    if (this.isPinned(b)) return;
    const c = this.counts.get(b)!;
    if (c > 1) {
      this.counts.set(b, c - 1);
      return;
    }
    this.counts.delete(b);
    this.liveBytes -= b.byteLength;
    this.be.deallocate(b);
  }

  /** Notes `extraBytes` held on top of the live ones (a node's temporaries and outputs) for the peak. */
  notePeak(extraBytes: number): void {
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes + extraBytes);
  }

  /** Buffers still held (0 after a run that unbound everything). */
  get held(): number {
    return this.counts.size;
  }

  /** Frees every buffer the run still holds (the way out of a failed run). */
  freeAll(): void {
    for (const b of this.counts.keys()) this.be.deallocate(b);
    this.counts.clear();
    this.liveBytes = 0;
  }
}

/**
 * Names bound to values: a graph's scope. Lookups try the names bound here, then the graph's constants,
 * then the enclosing graph's scope (outer-scope values of a subgraph).
 */
export class Scope {
  private readonly map = new Map<string, Value>();
  constructor(
    readonly heap: Heap,
    readonly parent?: Scope,
    readonly constants?: ReadonlyMap<string, Value>,
  ) {}

  get(name: string): Value | undefined {
    return this.map.get(name) ?? this.constants?.get(name) ?? this.parent?.get(name);
  }

  has(name: string): boolean {
    return this.map.has(name);
  }

  set(name: string, v: Value): void {
    this.heap.bind(v);
    const old = this.map.get(name);
    this.map.set(name, v);
    if (old) this.heap.unbind(old);
  }

  /** Unbinds a name of this scope (never the parent's). */
  drop(name: string): void {
    const v = this.map.get(name);
    if (!v) return;
    this.map.delete(name);
    this.heap.unbind(v);
  }

  clear(): void {
    for (const name of [...this.map.keys()]) this.drop(name);
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * Uploads `v`'s host data to `be` in the HAL dtype of its type (int64 as int32: a value outside int32's
 * range is an OnnxInt64RangeError naming `name`, never wrapped).
 */
export function uploadHost(be: ComputeBackend, v: Value, name: string): NDArray {
  const dtype = deviceDType(v.type);
  if (!dtype) throw new DTypeError(`'${name}': the HAL has no dtype for ONNX type ${v.type}`);
  const data = v.host!;
  if (v.type === 'int64')
    for (const x of data) if (x < INT32_MIN || x > INT32_MAX) throw new OnnxInt64RangeError(name, x);
  return be.fromArray(data, v.dims, dtype);
}

/** Reads a device array back as one float64 per element. */
export async function readHost(be: ComputeBackend, x: NDArray): Promise<Float64Array> {
  return Float64Array.from(await be.read(x));
}

/**
 * A constant (initializer, Constant node, folded shape computation) as a pinned value on `be`: uploaded
 * now when `eager` or when it has no host values (a large one), else on the first device op that reads it.
 */
export function constantValue(be: ComputeBackend, c: ConstantDef, name: string, eager: boolean): Value {
  const v = new Value(c.type, c.dims, c.host, undefined, true);
  if (eager || !c.host) v.dev = uploadConstant(be, c, name);
  return v;
}

function uploadConstant(be: ComputeBackend, c: ConstantDef, name: string): NDArray {
  const dtype = deviceDType(c.type);
  if (!dtype) throw new DTypeError(`'${name}': the HAL has no dtype for ONNX type ${c.type}`);
  const data = c.data ?? c.host!;
  if (data instanceof BigInt64Array) {
    const out = new Int32Array(data.length);
    for (let i = 0; i < data.length; i++) {
      const x = data[i]!;
      if (x < BigInt(INT32_MIN) || x > BigInt(INT32_MAX)) throw new OnnxInt64RangeError(name, x);
      out[i] = Number(x);
    }
    return be.fromArray(out, c.dims, dtype);
  }
  if (c.type === 'int64')
    for (const x of data) if (x < INT32_MIN || x > INT32_MAX) throw new OnnxInt64RangeError(name, x);
  return be.fromArray(data, c.dims, dtype);
}
