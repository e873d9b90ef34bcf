/**
 * The one routing step between BaseBackend and a backend's kernel hooks. Every op of the HAL calls its
 * kernels through `this.route` (a KernelRouter), never the hooks directly; the router looks up the route of
 * the dtype involved in its descriptor (DTYPE_DESCRIPTORS, core/dtype.ts) and
 *
 * - `native` (float32, int32, bool): calls the backend's hook with the arguments as they are;
 * - `narrow` (int8, uint8, float16): hands the hook every array and buffer as a view of the same storage
 *   typed as its storage dtype (`storageView`, `storageBuffer`, narrow.ts: the same buffer id, so every
 *   backend finds its storage); a kernel that computes (unary, binary, reduce, scatterAdd, scatter, cumsum,
 *   matmul, matmulBias) with a narrow `out` writes a temporary buffer of the storage dtype, which copyKernel then
 *   narrows into `out` (int8 and uint8 wrap modulo 2^8, float16 rounds to nearest even); kernels that only
 *   move values (copyInto, where, topk's values) write `out` directly; fill stores its value as the dtype
 *   holds it (hostValue); gather's out-of-range fill is the descriptor's `gatherFill` where the storage
 *   kernel's (int32's −2^31) is no value of the dtype (int8 −128, uint8 255, as JAX fills);
 * - `host` (float64): runs the host kernels of host-float64.ts on the backend's optional `hostStorage` hook
 *   instead of the backend's own, which never see the dtype (without the hook no such array exists:
 *   StorageBackend.allocate refuses it).
 *
 * Results of a narrow dtype are thus those of the op computed in the storage dtype (int32 arithmetic
 * wrapping modulo 2^32, float32 correctly rounded or within the op's float32 accuracy) and narrowed once:
 * int8/uint8 wrap as NumPy's and PyTorch's integer arithmetic does (2^8 divides 2^32, so wrapping after the
 * int32 result is wrapping the exact result); float16 add, sub, mul, div and sqrt are correctly rounded (a
 * float32 result rounded again to float16 is the correctly rounded float16: 24 ≥ 2·11 + 2), other ops are
 * within their float32 accuracy plus one float16 rounding. Reductions and cumsum accumulate in the storage
 * dtype and round once at the end, as NumPy and PyTorch accumulate float16 in float32.
 *
 * A backend with the optional packedFloat16 hook stores float16 in 2 bytes per element; its kernels get
 * those buffers as the same float32 aliases and read binary16 there, and its unary, binary, matmul and
 * matmulBias kernels write float16 results directly (rounding them as copyKernel would) rather than through a
 * temporary.
 *
 * A backend with the optional packedInt8 hook stores int8 and uint8 in 1 byte per element; its kernels get those
 * buffers as the same int32 aliases and read and write bytes there (or widen and narrow them themselves), so the
 * routes above are unchanged: a computed narrow result still reaches `out` through copyKernel's wrap.
 *
 * A backend's own code may call its hooks directly (`this.fillKernel(...)` inside a kernel): only the HAL's
 * ops go through the router, so a hook is never routed twice.
 */
import {
  DTYPE_DESCRIPTORS,
  type DType,
  type DTypeRoute,
  dtypeDescriptor,
  hostValue,
  isNarrow,
  storageDType,
} from '../core/dtype.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../core/ndarray.js';
import { contiguousStrides } from '../core/shape.js';
import type { BinaryOp, ReduceOp, UnaryOp } from '../ops/index.js';
import type { BackendHooks, HookArgs, OptionalBackendHooks } from './hooks.js';
import { float64Kernels } from './host-float64.js';
import { storageBuffer as b, storageView as v } from './narrow.js';

/**
 * What the router uses of a BaseBackend: its hooks (protected there, seen here through their interfaces;
 * scatterKernel always exists: BaseBackend has a default) and the buffer bookkeeping and two public ops
 * that gather's narrow fill needs.
 */
export type RoutedBackend = BackendHooks &
  Pick<
    OptionalBackendHooks,
    'cumsumKernel' | 'topkKernel' | 'hostStorage' | 'matmulBiasKernel' | 'copyIntoManyKernel'
  > &
  Required<Pick<OptionalBackendHooks, 'scatterKernel'>> & {
    allocate(size: number, dtype: DType): DeviceBuffer;
    deallocate(buffer: DeviceBuffer): void;
    free(x: NDArray): void;
    binary(op: 'equal', a: NDArray, b: number): NDArray;
    where(cond: NDArray, x: number, y: NDArray): NDArray;
    hasPackedFloat16(): boolean;
  };

const INT32_MIN = -2147483648;

/** The route of `dtype` (its descriptor's). */
export function routeOf(dtype: DType): DTypeRoute {
  return DTYPE_DESCRIPTORS[dtype].route;
}

/**
 * The kernel calls of BaseBackend's ops, each routed by dtype to the backend's hook, the hook on storage
 * views with a narrowing copy, or the host's float64 kernel (see the file's comment). Same arguments and
 * contracts as the hooks of the same name (hooks.ts).
 */
export class KernelRouter {
  private host?: ReturnType<typeof float64Kernels>;

  /** `be`: the backend whose hooks it calls (its BaseBackend, through RoutedBackend). */
  constructor(private readonly be: RoutedBackend) {}

  /** The float64 host kernels over the backend's hostStorage (reached only where it exists: allocate checks). */
  private get f64(): ReturnType<typeof float64Kernels> {
    this.host ??= float64Kernels((buffer) => this.be.hostStorage!(buffer));
    return this.host;
  }

  /** Runs `kernel` into a storage-dtype temporary when `out` is narrow, then narrows it into `out` (copyKernel). */
  private computed(out: DeviceBuffer, kernel: (o: DeviceBuffer) => void): void {
    if (!isNarrow(out.dtype)) {
      kernel(out);
      return;
    }
    const wide = this.be.allocate(out.size, storageDType(out.dtype));
    try {
      kernel(wide);
      this.be.copyKernel(viewOf(wide), out);
    } finally {
      this.be.deallocate(wide);
    }
  }

  /** With packedFloat16 (hooks.ts) the unary and binary kernels round and store float16 results themselves. */
  private direct(out: DeviceBuffer): boolean {
    return out.dtype === 'float16' && this.be.hasPackedFloat16();
  }

  /** unaryKernel, routed by x's dtype. */
  unary(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    const r = routeOf(x.dtype);
    if (r === 'native') this.be.unaryKernel(op, x, out);
    else if (r === 'host') this.f64.unary(op, x, out);
    else if (this.direct(out)) this.be.unaryKernel(op, v(x), b(out));
    else this.computed(out, (o) => this.be.unaryKernel(op, v(x), o));
  }

  /** binaryKernel, routed by the operands' dtype (out may be bool: the comparisons). */
  binary(op: BinaryOp, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    const r = routeOf(x.dtype);
    if (r === 'native') this.be.binaryKernel(op, x, y, out);
    else if (r === 'host') this.f64.binary(op, x, y, out);
    else if (this.direct(out)) this.be.binaryKernel(op, v(x), v(y), b(out));
    else this.computed(out, (o) => this.be.binaryKernel(op, v(x), v(y), o));
  }

  /** reduceKernel, routed by x's dtype (narrow: accumulated in the storage dtype, narrowed once). */
  reduce(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    const r = routeOf(x.dtype);
    if (r === 'native') this.be.reduceKernel(op, x, axes, out);
    else if (r === 'host') this.f64.reduce(op, x, axes, out);
    else this.computed(out, (o) => this.be.reduceKernel(op, v(x), axes, o));
  }

  /** copyKernel (a cast): on the host when either side is float64; into a narrow `out` the backend narrows. */
  copy(x: NDArray, out: DeviceBuffer): void {
    const xs = v(x);
    if (routeOf(x.dtype) === 'host' || routeOf(out.dtype) === 'host') this.f64.copy(x, out);
    else if (isNarrow(out.dtype) || xs.dtype !== out.dtype) this.be.copyKernel(xs, out);
    // int8/uint8 → int32, float16 → float32: the storage is already the result
    else if (out.size > 0) this.be.copyIntoKernel(xs, out, contiguousStrides(x.shape), 0);
  }

  /** copyIntoKernel, routed by x's dtype (out has the same). */
  copyInto(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    if (routeOf(x.dtype) === 'host') this.f64.copyInto(x, out, strides, offset);
    else this.be.copyIntoKernel(v(x), b(out), strides, offset);
  }

  /**
   * copyIntoManyKernel where the backend has it: the views as copyInto hands them over (storage views of a
   * narrow dtype); false where it has none, the dtype is float64 or the kernel declined (nothing written).
   */
  copyIntoMany(
    xs: readonly NDArray[],
    out: DeviceBuffer,
    strides: readonly number[],
    offsets: readonly number[],
  ): boolean {
    if (!this.be.copyIntoManyKernel || routeOf(out.dtype) === 'host') return false;
    return this.be.copyIntoManyKernel(xs.map(v), b(out), strides, offsets) !== false;
  }

  /** fillKernel, routed by out's dtype; a narrow dtype stores `value` as it holds it (hostValue). */
  fill(out: DeviceBuffer, value: number): void {
    const r = routeOf(out.dtype);
    if (r === 'host') this.f64.fill(out, value);
    else this.be.fillKernel(b(out), r === 'narrow' ? hostValue(out.dtype, value) : value);
  }

  /**
   * matmulKernel on storage views (float32 here; narrowed into a narrow `out`, but for packedFloat16, whose kernel
   * writes a float16 `out` itself).
   */
  matmul(x: NDArray, y: NDArray, out: DeviceBuffer): void {
    if (this.direct(out)) this.be.matmulKernel(v(x), v(y), b(out));
    else this.computed(out, (o) => this.be.matmulKernel(v(x), v(y), o));
  }

  /** matmulBiasKernel (call only where the backend has it) on storage views; a narrow `out` as matmul's. */
  matmulBias(x: NDArray, y: NDArray, bias: NDArray, out: DeviceBuffer): void {
    if (this.direct(out)) this.be.matmulBiasKernel!(v(x), v(y), v(bias), b(out));
    else this.computed(out, (o) => this.be.matmulBiasKernel!(v(x), v(y), v(bias), o));
  }

  /** whereKernel, routed by the values' dtype (cond is bool). */
  where(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    if (routeOf(x.dtype) === 'host') this.f64.where(cond, x, y, out);
    else this.be.whereKernel(cond, v(x), v(y), b(out));
  }

  /** scatterAddKernel, routed by target's dtype. */
  scatterAdd(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void {
    if (routeOf(target.dtype) === 'host') this.f64.scatter(target, indices, updates, out, 'add');
    else this.computed(out, (o) => this.be.scatterAddKernel(v(target), indices, v(updates), o));
  }

  /** scatterKernel (the backend's, or BaseBackend's default), routed by target's dtype. */
  scatter(...[target, indices, updates, out, reduction]: HookArgs<'scatterKernel'>): void {
    if (routeOf(target.dtype) === 'host') this.f64.scatter(target, indices, updates, out, reduction);
    else this.computed(out, (o) => this.be.scatterKernel(v(target), indices, v(updates), o, reduction));
  }

  /** cumsumKernel (call only where the backend has it), routed by x's dtype. */
  cumsum(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void {
    if (routeOf(x.dtype) === 'host') this.f64.cumsum(x, out, exclusive, reverse);
    else this.computed(out, (o) => this.be.cumsumKernel!(v(x), o, exclusive, reverse));
  }

  /** topkKernel (call only where the backend has it), routed by x's dtype; false: the kernel declined. */
  topk(...[x, k, largest, values, indices]: HookArgs<'topkKernel'>): boolean {
    if (routeOf(x.dtype) === 'host') {
      this.f64.topk(x, k, largest, values, indices);
      return true;
    }
    return this.be.topkKernel!(v(x), k, largest, b(values), indices) !== false;
  }

  /** gatherKernel, routed by x's dtype; a narrow `out` with a gatherFill gets it where an index is out of range. */
  gather(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
    const be = this.be;
    const fill = dtypeDescriptor(out.dtype).gatherFill;
    if (routeOf(x.dtype) === 'host') this.f64.gather(x, indices, out);
    else if (fill === undefined) be.gatherKernel(v(x), indices, b(out));
    else this.gatherFilled(x, indices, out, fill);
  }

  /** gather into a narrow `out` whose dtype has a gatherFill (int8, uint8). */
  private gatherFilled(x: NDArray, indices: NDArray, out: DeviceBuffer, fill: number): void {
    const be = this.be;
    // The kernel fills INT32_MIN where an index is out of range, a value no element of the dtype has.
    const wide = be.allocate(out.size, 'int32');
    try {
      be.gatherKernel(v(x), indices, wide);
      const w = viewOf(wide);
      const miss = be.binary('equal', w, INT32_MIN);
      try {
        const fixed = be.where(miss, fill, w);
        try {
          if (out.size > 0) be.copyIntoKernel(fixed, b(out), contiguousStrides(fixed.shape), 0);
        } finally {
          be.free(fixed);
        }
      } finally {
        be.free(miss);
      }
    } finally {
      be.deallocate(wide);
    }
  }
}
