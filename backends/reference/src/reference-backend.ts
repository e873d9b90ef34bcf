/**
 * The reference backend: BaseBackend's hook set (hal/src/contract/hooks.ts) and nothing else, in plain
 * JavaScript arithmetic. It is the worked example of docs/WRITING-A-BACKEND.md — every excerpt there
 * is taken from this file and kernels.ts — and it passes the whole conformance suite in the strict
 * class. Storage: a Float64Array per float32 or float64 buffer, an Int32Array per int32 or bool (0/1)
 * buffer. Every op computes in float64 and rounds once to float32 per op, so it meets the float32
 * contract (float64 arrays run on the HAL's host kernels: hostStorage). Clarity over speed: use
 * @polyhal/backend-cpu or @polyhal/backend-wasm to compute.
 */
import type {
  BackendCapabilities,
  BaseBackendOptions,
  BinaryOp,
  DeviceBuffer,
  NDArray,
  ReduceOp,
  ScatterReduction,
  UnaryOp,
} from '@polyhal/hal';
import { BaseBackend, type StorageArray } from '@polyhal/hal/internal';
import { binary, copy, copyInto, gather, matmul, reduce, scatter, type Storage, unary, where } from './kernels.js';
import { bitsToUniform, type PhiloxStream, philox4x32 } from '@polyhal/hal/internal';
import { store } from './scalar.js';

/** Options of ReferenceBackend: those every backend takes (memoryLimit), nothing of its own. */
export type ReferenceBackendOptions = BaseBackendOptions;

/** Default limit on live bytes (as the HAL counts them, 4 per element): 1 GiB, 2 GiB of float64 storage. */
export const REFERENCE_DEFAULT_MEMORY_LIMIT = 2 ** 30;

/**
 * A float64 JavaScript backend written only against BaseBackend's hooks: every kernel computes in float64 and
 * rounds once to the dtype, so float32 results are correctly rounded. The worked example of
 * docs/WRITING-A-BACKEND.md.
 */
export class ReferenceBackend extends BaseBackend {
  readonly name = 'reference';
  readonly deviceName = 'JavaScript float64 reference kernels (host CPU)';
  readonly deviceType = 'cpu' as const;
  /** Correctly rounded arithmetic: computed in float64, rounded once to float32; no FMA in float32, no flushing. */
  override readonly capabilities: BackendCapabilities = Object.freeze({
    arithmetic: 'ieee-correctly-rounded',
    fusedMultiplyAdd: false,
    flushesSubnormals: false,
  });

  /** Buffer id → its storage. */
  private readonly storage = new Map<number, Storage>();

  /** Options: `memoryLimit` (bytes of live buffers, default REFERENCE_DEFAULT_MEMORY_LIMIT). */
  constructor(options: ReferenceBackendOptions = {}) {
    super(options, REFERENCE_DEFAULT_MEMORY_LIMIT);
  }

  // ---- storage hooks ----

  protected createStorage(buffer: DeviceBuffer): void {
    try {
      this.storage.set(
        buffer.id,
        buffer.dtype === 'float32' || buffer.dtype === 'float64'
          ? new Float64Array(buffer.size)
          : new Int32Array(buffer.size),
      );
    } catch (e) {
      // The HAL checked its own limit; the JavaScript engine may still refuse a large array.
      if (e instanceof RangeError) throw this.hostArrayRefused(buffer, e);
      throw e;
    }
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    this.storage.delete(buffer.id);
  }

  protected writeStorage(buffer: DeviceBuffer, data: StorageArray): void {
    const s = this.data(buffer);
    for (let i = 0; i < data.length; i++) s[i] = data[i]!; // float32 → float64 is exact
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<StorageArray> {
    const s = this.data(buffer);
    return buffer.dtype === 'float32'
      ? Float32Array.from(s)
      : buffer.dtype === 'float64'
        ? Float64Array.from(s)
        : Int32Array.from(s);
  }

  /**
   * The hostStorage hook: float64 buffers (a Float64Array each) run on the HAL's host kernels, which
   * store every result by its dtype — a float32 one rounded — whatever array holds it.
   */
  protected override hostStorage(buffer: DeviceBuffer): StorageArray {
    return this.data(buffer);
  }

  // ---- kernels ----

  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    unary(op, x, this.data(x.buffer), this.data(out));
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    binary(op, a, this.data(a.buffer), b, this.data(b.buffer), this.data(out));
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    reduce(op, x, this.data(x.buffer), axes, this.data(out));
  }

  protected copyKernel(x: NDArray, out: DeviceBuffer): void {
    copy(x, this.data(x.buffer), this.data(out), out.dtype);
  }

  protected copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    copyInto(x, this.data(x.buffer), this.data(out), { strides, offset });
  }

  protected fillKernel(out: DeviceBuffer, value: number): void {
    this.data(out).fill(store(out.dtype, value));
  }

  protected gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
    gather(x, this.data(x.buffer), indices, this.data(indices.buffer), this.data(out));
  }

  protected scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void {
    const [t, i, u] = [target, indices, updates].map((a) => this.data(a.buffer)) as [Storage, Storage, Storage];
    scatter('add', target, t, indices, i, updates, u, this.data(out));
  }

  protected override scatterKernel(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    const [t, i, u] = [target, indices, updates].map((a) => this.data(a.buffer)) as [Storage, Storage, Storage];
    scatter(reduction, target, t, indices, i, updates, u, this.data(out));
  }

  protected whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    where(cond, this.data(cond.buffer), x, this.data(x.buffer), y, this.data(y.buffer), this.data(out));
  }

  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    matmul(a, this.data(a.buffer), b, this.data(b.buffer), this.data(out));
  }

  /**
   * Uniforms of a Philox stream, one element at a time: element i is word (skip + i) mod 4 of block
   * block + floor((skip + i) / 4) (a 64-bit counter in two words), key s.key (hal/src/core/philox.ts).
   */
  protected override randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    const data = this.data(out);
    for (let i = 0; i < out.size; i++) {
      const t = s.skip + i;
      const lo = s.block[0] + Math.floor(t / 4);
      const counter = [lo % 2 ** 32, s.block[1] + Math.floor(lo / 2 ** 32), 0, 0] as const;
      data[i] = bitsToUniform(philox4x32(counter, s.key)[t % 4]!);
    }
  }

  /** The storage of a live buffer (BaseBackend only passes live buffers of this instance). */
  private data(buffer: DeviceBuffer): Storage {
    return this.storage.get(buffer.id)!;
  }
}
