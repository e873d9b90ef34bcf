/**
 * float64 kernels on host memory. A backend whose storage the host can address implements the optional
 * hook `hostStorage(buffer)` (cpu, wasm, reference); on it BaseBackend runs every kernel that touches a
 * float64 array here (kernel-router.ts routes them), so one implementation serves every such backend and no
 * backend kernel ever meets float64. webgpu has no such hook (WGSL has no f64): creating a float64
 * array there throws UnsupportedOpError.
 *
 * The elementwise ops and reductions evaluate the op table's float64 definitions (hal/src/ops/: the
 * same `f64` references the conformance oracle is built from) on every element, in index order for
 * reductions; results are stored by the output's dtype (`storeAs`), whatever typed array holds it, so
 * a float32 output is rounded to float32 even in a Float64Array (the reference backend's storage).
 * Casts follow `cast`'s rules (base.ts): from float64, to an integer truncate and saturate (NaN → 0),
 * to float32 and float16 round once to nearest even; to float64 every dtype converts exactly.
 */
import { type DType, dtypeDescriptor, hostValue, isFloatDType, type StorageArray } from '../core/dtype.js';
import { hostCumsum, hostTopk } from '../host/host-scan.js';
import type { DeviceBuffer, NDArray } from '../core/ndarray.js';
import { BINARY_OP_DEFS, REDUCE_OP_DEFS, UNARY_OP_DEFS } from '../ops/index.js';
import type { BinaryOpDef, ReduceOpDef, UnaryOpDef } from '../ops/types.js';
import { contiguousStrides } from '../core/shape.js';
import { planRows } from '../core/strided.js';

/** What these kernels use of a backend: its storage of a buffer as a host typed array (no copy). */
export type HostStorage = (buffer: DeviceBuffer) => StorageArray;

/**
 * `v` as an element of `dtype` holds it, for results computed in float64: the dtype's `hostValue` (ints wrap,
 * as int32 arithmetic; floats round once).
 */
export function storeAs(dtype: DType, v: number): number {
  return hostValue(dtype, v);
}

/**
 * `v` of dtype `from` cast to `to` by `cast`'s rules (base.ts): float → integer truncates and saturates at
 * the integer dtype's range (NaN → 0); every other pair converts as a host number does (hostValue).
 */
export function castValue(from: DType, to: DType, v: number): number {
  const range = dtypeDescriptor(to).range;
  if (!range || !isFloatDType(from)) return hostValue(to, v);
  const [lo, hi] = range;
  return v !== v ? 0 : v <= lo ? lo : v >= hi ? hi : Math.trunc(v);
}

interface Op {
  x: NDArray;
  data: StorageArray;
}

/** Calls `f(i, p0, p1, ...)` for every element i (row-major over `shape`) with each view's position. */
function each(shape: readonly number[], views: readonly Op[], f: (i: number, pos: number[]) => void): void {
  const { n, rows, step, starts } = planRows(
    shape,
    views.map((v) => v.x.strides),
    views.map((v) => v.x.offset),
  );
  const pos = views.map(() => 0);
  let i = 0;
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < views.length; k++) pos[k] = starts[k]![r]!;
    for (let j = 0; j < n; j++, i++) {
      f(i, pos);
      for (let k = 0; k < views.length; k++) pos[k]! += step[k]!;
    }
  }
}

/** The host kernels over a backend's storage accessor. */
export function float64Kernels(storage: HostStorage) {
  const op = (x: NDArray): Op => ({ x, data: storage(x.buffer) });
  return {
    unary(name: string, x: NDArray, out: DeviceBuffer): void {
      const f = (UNARY_OP_DEFS as Record<string, UnaryOpDef>)[name]!.f64;
      const o = storage(out);
      const X = op(x);
      each(x.shape, [X], (i, [p]) => {
        o[i] = storeAs(out.dtype, f(X.data[p!]!));
      });
    },
    binary(name: string, a: NDArray, b: NDArray, out: DeviceBuffer): void {
      const f = (BINARY_OP_DEFS as Record<string, BinaryOpDef>)[name]!.f64;
      const o = storage(out);
      const A = op(a);
      const B = op(b);
      each(a.shape, [A, B], (i, [p, q]) => {
        o[i] = storeAs(out.dtype, f(A.data[p!]!, B.data[q!]!));
      });
    },
    /** The table's float64 fold over `axes` (sorted), in index order from the identity. */
    reduce(name: string, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
      const d = (REDUCE_OP_DEFS as Record<string, ReduceOpDef>)[name]!;
      const o = storage(out);
      const acc = new Float64Array(out.size).fill(d.identity.float32);
      const kept = x.shape.map((s, k) => (axes.includes(k) ? 1 : s));
      const keptStrides = contiguousStrides(kept).map((s, k) => (axes.includes(k) ? 0 : s));
      const X = op(x);
      each(x.shape, [X, { x: { ...x, strides: keptStrides, offset: 0 }, data: o }], (_i, [p, q]) => {
        acc[q!] = d.f64(acc[q!]!, X.data[p!]!);
      });
      for (let k = 0; k < acc.length; k++) o[k] = storeAs(out.dtype, acc[k]!);
    },
    /** cast: x (any dtype) row-major into out (another dtype; one of them float64). */
    copy(x: NDArray, out: DeviceBuffer): void {
      const o = storage(out);
      const X = op(x);
      each(x.shape, [X], (i, [p]) => {
        o[i] = castValue(x.dtype, out.dtype, X.data[p!]!);
      });
    },
    copyInto(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
      const o = storage(out);
      const X = op(x);
      each(x.shape, [X, { x: { ...x, strides, offset }, data: o }], (_i, [p, q]) => {
        o[q!] = X.data[p!]!;
      });
    },
    fill(out: DeviceBuffer, value: number): void {
      storage(out).fill(value);
    },
    /** x [O, D, I], indices int32 [K] → out [O, K, I]; NaN where an index is outside [−D, D). */
    gather(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
      const [O, D, I] = x.shape as [number, number, number];
      const K = indices.shape[0]!;
      const xs = storage(x.buffer);
      const is = storage(indices.buffer);
      const o = storage(out);
      let w = 0;
      for (let a = 0; a < O; a++)
        for (let k = 0; k < K; k++) {
          const j = position(is[indices.offset + k * indices.strides[0]!]!, D);
          for (let c = 0; c < I; c++)
            o[w++] = j < 0 ? Number.NaN : xs[x.offset + a * x.strides[0]! + j * x.strides[1]! + c * x.strides[2]!]!;
        }
    },
    /** out [O, D, I] = target, then each update combined at its index in index order (out of range: dropped). */
    scatter(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer, reduction: string): void {
      const [O, D, I] = target.shape as [number, number, number];
      const K = indices.shape[0]!;
      const o = storage(out);
      const T = op(target);
      each(target.shape, [T], (i, [p]) => {
        o[i] = T.data[p!]!;
      });
      const is = storage(indices.buffer);
      const us = storage(updates.buffer);
      for (let a = 0; a < O; a++)
        for (let k = 0; k < K; k++) {
          const j = position(is[indices.offset + k * indices.strides[0]!]!, D);
          if (j < 0) continue;
          for (let c = 0; c < I; c++) {
            const u = us[updates.offset + a * updates.strides[0]! + k * updates.strides[1]! + c * updates.strides[2]!]!;
            const at = (a * D + j) * I + c;
            o[at] = reduction === 'none' ? u : reduction === 'add' ? o[at]! + u : o[at]! * u;
          }
        }
    },
    where(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
      const o = storage(out);
      const C = op(cond);
      const X = op(x);
      const Y = op(y);
      each(cond.shape, [C, X, Y], (i, [c, p, q]) => {
        o[i] = C.data[c!] !== 0 ? X.data[p!]! : Y.data[q!]!;
      });
    },
    cumsum(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void {
      hostCumsum({ ...op(x).x, data: storage(x.buffer) }, storage(out), exclusive, reverse);
    },
    topk(x: NDArray, k: number, largest: boolean, values: DeviceBuffer, indices: DeviceBuffer): void {
      hostTopk({ ...x, data: storage(x.buffer) }, k, largest, storage(values), storage(indices) as Int32Array);
    },
  };
}

/** The position index `i` reads in a dim of `d` (i + d when negative), or −1 outside [−d, d). */
function position(i: number, d: number): number {
  const j = i < 0 ? i + d : i;
  return j >= 0 && j < d ? j : -1;
}
