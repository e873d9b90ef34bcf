/**
 * The narrow dtypes (int8, uint8, float16; dtype.ts) on every backend, in one place. A narrow buffer
 * lives in its storage dtype (int32 or float32) and holds only values its dtype represents. Backends
 * never see a narrow dtype except as the `out` of copyKernel (the narrowing cast): BaseBackend's
 * constructor wraps the kernel hooks of the instance (installNarrowKernels) so that
 *
 * - every array and buffer a kernel receives is a view of the same storage typed as its storage dtype
 *   (`storageView`, `storageBuffer`: the same buffer id, so every backend finds its storage);
 * - a kernel that computes (unary, binary, reduce, scatterAdd, scatter, cumsum, matmul) with a narrow
 *   `out` writes a temporary buffer of the storage dtype, which copyKernel then narrows into `out`:
 *   int8 and uint8 wrap modulo 2^8, float16 rounds to nearest even (overflow to ±Inf, NaN kept);
 * - kernels that only move values (copyInto, where, topk's values) write `out` directly; fill stores
 *   its value as the dtype holds it (hostValue); gather's out-of-range fill for int8 and uint8 is the
 *   dtype's minimum and maximum as JAX fills (−128, 255), float16's NaN.
 *
 * Results are thus those of the op computed in the storage dtype (int32 arithmetic wrapping modulo 2^32,
 * float32 correctly rounded or within the op's float32 accuracy) and narrowed once: int8/uint8 wrap as
 * NumPy's and PyTorch's integer arithmetic does (2^8 divides 2^32, so wrapping after the int32 result is
 * wrapping the exact result); float16 add, sub, mul, div and sqrt are correctly rounded (a float32
 * result rounded again to float16 is the correctly rounded float16: 24 ≥ 2·11 + 2), other ops are
 * within their float32 accuracy plus one float16 rounding. Reductions and cumsum accumulate in the
 * storage dtype and round once at the end, as NumPy and PyTorch accumulate float16 in float32.
 *
 * A backend with the optional packedFloat16 hook stores float16 in 2 bytes per element; its kernels get
 * those buffers as the same float32 aliases and read binary16 there, and its unary and binary kernels
 * write float16 results directly (rounding them as copyKernel would) rather than through a temporary.
 *
 * float64 is routed here too: on a backend with the optional `hostStorage` hook every kernel whose
 * operands or output include a float64 array runs the host kernels of host-float64.ts instead of the
 * backend's own (which never see float64); without the hook no float64 array can exist (allocate throws).
 */
import { hostValue, isNarrow, type StorageArray, storageDType } from '../core/dtype.js';
import { float64Kernels } from './host-float64.js';
import type { DeviceBuffer, NDArray } from '../core/ndarray.js';
import { viewOf } from '../core/ndarray.js';
import { contiguousStrides } from '../core/shape.js';

const aliases = new WeakMap<DeviceBuffer, DeviceBuffer>();

/** `b` typed as its storage dtype: `b` itself unless narrow, else one frozen alias per buffer (same id). */
export function storageBuffer(b: DeviceBuffer): DeviceBuffer {
  if (!isNarrow(b.dtype)) return b;
  let a = aliases.get(b);
  if (!a) {
    a = Object.freeze({ ...b, dtype: storageDType(b.dtype) });
    aliases.set(b, a);
  }
  return a;
}

/** Whether `b` is the storage alias of the live buffer `of` (checkBuffer accepts it). */
export function isStorageAlias(of: DeviceBuffer, b: DeviceBuffer): boolean {
  return aliases.get(of) === b;
}

/** `x` viewing the same elements typed as its storage dtype (`x` itself unless narrow). */
export function storageView(x: NDArray): NDArray {
  if (!isNarrow(x.dtype)) return x;
  const buffer = storageBuffer(x.buffer);
  return { buffer, dtype: buffer.dtype, shape: x.shape, strides: x.strides, offset: x.offset };
}

type Fn = (...args: never[]) => void;
/** What the wrappers use of a BaseBackend: buffer bookkeeping and two public ops (gather's fill). */
interface NarrowHost {
  allocate(size: number, dtype: DeviceBuffer['dtype']): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
  free(x: NDArray): void;
  binary(op: 'equal', a: NDArray, b: number): NDArray;
  where(cond: NDArray, x: number, y: NDArray): NDArray;
  hasPackedFloat16(): boolean;
}

const INT32_MIN = -2147483648;
/** gather's fill for an index out of range in the narrow integer dtypes (JAX's fill values). */
const NARROW_INT_FILL = { int8: -128, uint8: 255 } as const;

const f64 = (x: { dtype: string }): boolean => x.dtype === 'float64';

/**
 * Wraps the kernel hooks of backend instance `be` (own properties over its class's methods) so that
 * narrow dtypes and float64 reach them as described above. Called once by BaseBackend's constructor.
 */
export function installNarrowKernels(be: object): void {
  const self = be as Record<string, Fn | undefined>;
  const host = be as NarrowHost;
  const raw = <F extends Fn>(name: string): F | undefined => {
    const f = self[name];
    return typeof f === 'function' ? (f.bind(be) as F) : undefined;
  };
  const install = (name: string, f: Fn): void => {
    Object.defineProperty(be, name, { value: f, writable: true, configurable: true, enumerable: false });
  };
  const hostStorage = raw<(buffer: DeviceBuffer) => StorageArray>('hostStorage');
  // Without hostStorage no float64 array exists (StorageBackend.allocate), so these are never called.
  const h = float64Kernels(hostStorage ?? (() => new Float64Array(0)));
  type Copy = (x: NDArray, out: DeviceBuffer) => void;
  type CopyInto = (x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number) => void;
  const copy = raw<Copy>('copyKernel')!;
  const copyInto = raw<CopyInto>('copyIntoKernel')!;

  /** Runs `kernel` into a storage-dtype temporary when `out` is narrow, then narrows it into `out`. */
  const computed = (out: DeviceBuffer, kernel: (o: DeviceBuffer) => void): void => {
    if (!isNarrow(out.dtype)) {
      kernel(out);
      return;
    }
    const wide = host.allocate(out.size, storageDType(out.dtype));
    try {
      kernel(wide);
      copy(viewOf(wide), out);
    } finally {
      host.deallocate(wide);
    }
  };
  const v = storageView;
  const b = storageBuffer;
  /** With packedFloat16 (hooks.ts) the unary and binary kernels round and store float16 results themselves. */
  const direct = (out: DeviceBuffer): boolean => out.dtype === 'float16' && host.hasPackedFloat16();

  install('copyKernel', (x: NDArray, out: DeviceBuffer) => {
    if (f64(x) || f64(out)) return h.copy(x, out);
    const xs = v(x);
    if (isNarrow(out.dtype) || xs.dtype !== out.dtype) copy(xs, out);
    // int8/uint8 → int32, float16 → float32: the storage is already the result
    else if (out.size > 0) copyInto(xs, out, contiguousStrides(x.shape), 0);
  });
  install('copyIntoKernel', (x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number) =>
    f64(x) ? h.copyInto(x, out, strides, offset) : copyInto(v(x), b(out), strides, offset),
  );
  const fill = raw<(out: DeviceBuffer, value: number) => void>('fillKernel')!;
  install('fillKernel', (out: DeviceBuffer, value: number) =>
    f64(out) ? h.fill(out, value) : fill(b(out), isNarrow(out.dtype) ? hostValue(out.dtype, value) : value),
  );
  // the hot kernels skip the wrapping altogether when nothing is narrow or float64
  const unary = raw<(op: string, x: NDArray, out: DeviceBuffer) => void>('unaryKernel')!;
  install('unaryKernel', (op: string, x: NDArray, out: DeviceBuffer) =>
    f64(x)
      ? h.unary(op, x, out)
      : isNarrow(x.dtype)
        ? direct(out)
          ? unary(op, v(x), b(out))
          : computed(out, (o) => unary(op, v(x), o))
        : unary(op, x, out),
  );
  const binary = raw<(op: string, a: NDArray, c: NDArray, out: DeviceBuffer) => void>('binaryKernel')!;
  install('binaryKernel', (op: string, a: NDArray, c: NDArray, out: DeviceBuffer) =>
    f64(a)
      ? h.binary(op, a, c, out)
      : isNarrow(a.dtype)
        ? direct(out)
          ? binary(op, v(a), v(c), b(out))
          : computed(out, (o) => binary(op, v(a), v(c), o))
        : binary(op, a, c, out),
  );
  const reduce = raw<(op: string, x: NDArray, axes: readonly number[], out: DeviceBuffer) => void>('reduceKernel')!;
  install('reduceKernel', (op: string, x: NDArray, axes: readonly number[], out: DeviceBuffer) =>
    f64(x)
      ? h.reduce(op, x, axes, out)
      : isNarrow(x.dtype)
        ? computed(out, (o) => reduce(op, v(x), axes, o))
        : reduce(op, x, axes, out),
  );
  const matmul = raw<(a: NDArray, c: NDArray, out: DeviceBuffer) => void>('matmulKernel')!;
  install('matmulKernel', (a: NDArray, c: NDArray, out: DeviceBuffer) => computed(out, (o) => matmul(v(a), v(c), o)));
  const where = raw<(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer) => void>('whereKernel')!;
  install('whereKernel', (cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer) =>
    f64(x) ? h.where(cond, x, y, out) : where(cond, v(x), v(y), b(out)),
  );
  const scatterAdd = raw<(t: NDArray, i: NDArray, u: NDArray, out: DeviceBuffer) => void>('scatterAddKernel')!;
  install('scatterAddKernel', (t: NDArray, i: NDArray, u: NDArray, out: DeviceBuffer) =>
    f64(t) ? h.scatter(t, i, u, out, 'add') : computed(out, (o) => scatterAdd(v(t), i, v(u), o)),
  );
  const scatter = raw<(t: NDArray, i: NDArray, u: NDArray, out: DeviceBuffer, r: string) => void>('scatterKernel');
  if (scatter)
    install('scatterKernel', (t: NDArray, i: NDArray, u: NDArray, out: DeviceBuffer, r: string) =>
      f64(t) ? h.scatter(t, i, u, out, r) : computed(out, (o) => scatter(v(t), i, v(u), o, r)),
    );
  const cumsum = raw<(x: NDArray, out: DeviceBuffer, e: boolean, r: boolean) => void>('cumsumKernel');
  if (cumsum)
    install('cumsumKernel', (x: NDArray, out: DeviceBuffer, e: boolean, r: boolean) =>
      f64(x) ? h.cumsum(x, out, e, r) : computed(out, (o) => cumsum(v(x), o, e, r)),
    );
  const topk = raw<(x: NDArray, k: number, l: boolean, vals: DeviceBuffer, idx: DeviceBuffer) => void>('topkKernel');
  if (topk)
    install('topkKernel', (x: NDArray, k: number, l: boolean, vals: DeviceBuffer, idx: DeviceBuffer) =>
      f64(x) ? h.topk(x, k, l, vals, idx) : topk(v(x), k, l, b(vals), idx),
    );
  const gather = raw<(x: NDArray, i: NDArray, out: DeviceBuffer) => void>('gatherKernel')!;
  install('gatherKernel', (x: NDArray, i: NDArray, out: DeviceBuffer) => {
    if (f64(x)) return h.gather(x, i, out);
    if (out.dtype !== 'int8' && out.dtype !== 'uint8') return gather(v(x), i, b(out));
    // The kernel fills INT32_MIN where an index is out of range, a value no int8 or uint8 element has.
    const wide = host.allocate(out.size, 'int32');
    try {
      gather(v(x), i, wide);
      const w = viewOf(wide);
      const miss = host.binary('equal', w, INT32_MIN);
      try {
        const fixed = host.where(miss, NARROW_INT_FILL[out.dtype], w);
        try {
          if (out.size > 0) copyInto(fixed, b(out), contiguousStrides(fixed.shape), 0);
        } finally {
          host.free(fixed);
        }
      } finally {
        host.free(miss);
      }
    } finally {
      host.deallocate(wide);
    }
  });
}
