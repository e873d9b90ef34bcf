/**
 * argmax and argmin (NumPy, PyTorch, ONNX ArgMax/ArgMin), composed from HAL ops: the extreme along the
 * axis (max/min), a 0/1 mask of the elements that reach it — or, where the row holds a NaN, of its NaNs
 * (NumPy's rule: NaN is the extreme) — and the smallest (or, with `lastIndex`, largest) masked position,
 * all in int32 so any axis length below 2^31 is exact. NaN is found without `x != x`, which WGSL
 * compilers may fold: isnan(x) = 1 − [|x| < Inf] − [FLT_MAX < |x|]. A backend with the optional
 * argReduceKernel hook (hooks.ts) replaces the composite with one pass per row.
 */
import { DTypeError, InvalidArgumentError } from '../../core/errors.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import type { BinaryOp, ReduceOp, UnaryOp } from '../../ops/index.js';
import { normalizeAxis, sizeOf } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { describeValue } from '../../contract/validate.js';
import type { DType } from '../../core/dtype.js';

/** Options of argmax and argmin. */
export interface ArgReduceOptions {
  /** The last index among ties (ONNX select_last_index) instead of the first. */
  lastIndex?: boolean;
}

/** The arg-reductions of every backend (BaseBackend's). Semantics: ops/index-ops.ts. */
export interface ArgReduceMethods {
  /** int32 index of the largest element along `axis` (default: of the flattened array); first on ties, NaN wins. */
  argmax(x: NDArray, axis?: number, keepdims?: boolean, options?: ArgReduceOptions): NDArray;
  /** int32 index of the smallest element along `axis` (default: of the flattened array); first on ties, NaN wins. */
  argmin(x: NDArray, axis?: number, keepdims?: boolean, options?: ArgReduceOptions): NDArray;
}

interface ArgHost {
  allocate(size: number, dtype: DType): DeviceBuffer;
  deallocate(b: DeviceBuffer): void;
  guard(out: DeviceBuffer, run: () => void): void;
  argReduceKernel?(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void;
  check(x: NDArray, op: string, arg?: string): void;
  free(x: NDArray): void;
  fromArray(data: ArrayLike<number>, shape: readonly number[], dtype?: DType): NDArray;
  reshape(x: NDArray, shape: readonly number[]): NDArray;
  cast(x: NDArray, dtype: DType): NDArray;
  unary(op: UnaryOp, x: NDArray): NDArray;
  binary(op: BinaryOp, a: NDArray | number, b: NDArray | number): NDArray;
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
}

const FLT_MAX = 3.4028234663852886e38;

function argExtreme(
  be: ArgHost,
  op: 'argmax' | 'argmin',
  x: NDArray,
  axis: number | undefined,
  keepdims: boolean,
  options: ArgReduceOptions,
): NDArray {
  be.check(x, op);
  if (x.dtype !== 'float32' && x.dtype !== 'int32') throw new DTypeError(`${op}: float32 or int32, got ${x.dtype}`);
  if (typeof keepdims !== 'boolean')
    throw new InvalidArgumentError(`${op}: keepdims must be a boolean, got ${describeValue(keepdims)}`);
  const last = options?.lastIndex ?? false;
  if (typeof last !== 'boolean')
    throw new InvalidArgumentError(`${op}: lastIndex must be a boolean, got ${describeValue(last)}`);
  if (axis === undefined) {
    // NumPy and PyTorch: the index into the flattened array.
    if (sizeOf(x.shape) === 0) throw new InvalidArgumentError(`${op}: an empty array has no ${op.slice(3)}`);
    const flat = be.reshape(x, [sizeOf(x.shape)]);
    try {
      const r = argExtreme(be, op, flat, 0, false, options);
      if (!keepdims) return r;
      // a view of the one-element result (freed with it by the caller)
      const v = be.reshape(
        r,
        x.shape.map(() => 1),
      );
      if (v.buffer !== r.buffer) be.free(r);
      return v;
    } finally {
      if (flat.buffer !== x.buffer) be.free(flat);
    }
  }
  if (x.shape.length === 0) throw new InvalidArgumentError(`${op}: a 0-d array has no axis ${axis}`);
  const r = x.shape.length;
  if (!Number.isInteger(axis) || axis < -r || axis >= r)
    throw new InvalidArgumentError(
      `${op}: axis ${describeValue(axis)} is out of range for rank ${r} (valid: ${-r}..${r - 1})`,
    );
  const ax = normalizeAxis(axis, x.shape.length);
  const n = x.shape[ax]!;
  if (n === 0) throw new InvalidArgumentError(`${op}: axis ${axis} has length 0 (an empty axis has no ${op.slice(3)})`);
  if (typeof be.argReduceKernel === 'function') {
    const x3 = be.reshape(x, [sizeOf(x.shape.slice(0, ax)), n, sizeOf(x.shape.slice(ax + 1))]);
    try {
      const out = be.allocate(x3.shape[0]! * x3.shape[2]!, 'int32');
      be.guard(out, () => be.argReduceKernel!(op, x3, last, out));
      return viewOf(out, keepdims ? x.shape.map((d, i) => (i === ax ? 1 : d)) : x.shape.filter((_, i) => i !== ax));
    } finally {
      if (x3.buffer !== x.buffer) be.free(x3);
    }
  }
  return withTemps(be, (t) => {
    const extreme = t(be.reduce(op === 'argmax' ? 'max' : 'min', x, ax, true));
    // [a == b] for ordered values: 1 − [a < b] − [b < a]
    const eq = (a: NDArray, b: NDArray): NDArray =>
      t(be.binary('sub', t(be.binary('sub', 1, t(be.binary('cmplt', a, b)))), t(be.binary('cmplt', b, a))));
    let hit = eq(x, extreme);
    if (x.dtype === 'float32') {
      const isnan = (v: NDArray): NDArray => {
        const abs = t(be.unary('abs', v));
        const finite = t(be.binary('cmplt', abs, Infinity));
        return t(be.binary('sub', t(be.binary('sub', 1, finite)), t(be.binary('cmplt', FLT_MAX, abs))));
      };
      // A row with a NaN has a NaN extreme: its hits are its NaNs (NumPy), not the "equal" elements.
      const ordered = t(be.binary('sub', 1, isnan(extreme)));
      hit = t(be.cast(t(be.binary('add', t(be.binary('mul', hit, ordered)), isnan(x))), 'int32'));
    }
    const iota = t(
      be.fromArray(
        Int32Array.from({ length: n }, (_, i) => i),
        x.shape.map((_, i) => (i === ax ? n : 1)),
        'int32',
      ),
    );
    // masked positions keep their index; the others n (first) or −1 (last), which the reduction skips
    const other = last ? -1 : n;
    const cand = t(be.binary('add', t(be.binary('mul', hit, t(be.binary('sub', iota, other)))), other));
    return be.reduce(last ? 'max' : 'min', cand, ax, keepdims);
  });
}

/** argmax and argmin (ArgReduceMethods) as BaseBackend has them (FAMILIES, base.ts). */
export const ARG_REDUCE_METHODS: FamilyTable<ArgReduceMethods> = {
  argmax(x: NDArray, axis?: number, keepdims = false, options: ArgReduceOptions = {}) {
    return argExtreme(this, 'argmax', x, axis, keepdims, options);
  },
  argmin(x: NDArray, axis?: number, keepdims = false, options: ArgReduceOptions = {}) {
    return argExtreme(this, 'argmin', x, axis, keepdims, options);
  },
} satisfies FamilyTable<ArgReduceMethods, ArgHost>;
