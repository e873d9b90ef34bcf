/**
 * The bool methods of every backend (BaseBackend's): `where` on the whereKernel hook, `any` and `all`
 * on the reduction kernel (max and min of bool's int32 0/1 storage), and the predicates and negations
 * composed from the binary table's comparisons and logical ops (ops/binary-logic.ts): isnan is
 * x ≠ x, isinf |x| = Inf, isfinite |x| < Inf, logicalNot x XOR true, bitwiseNot x XOR −1 — one or
 * two kernels each. Table entries: ops/logic-ops.ts.
 */
import type { KernelRouter } from '../../contract/kernel-router.js';
import type { FamilyTable } from '../../contract/family-table.js';
import type { Operand } from '../../backend.js';
import { type DType, isFloatDType, isIntDType } from '../../core/dtype.js';
import { DTypeError, InvalidArgumentError, UnsupportedOpError } from '../../core/errors.js';
import type { DeviceBuffer, NDArray } from '../../core/ndarray.js';
import { expandView, viewOf } from '../../core/ndarray.js';
import type { BinaryOp, UnaryOp } from '../../ops/index.js';
import { broadcastShapes, normalizeAxes, sizeOf } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { checkAxesArg, checkBoolean, describeValue } from '../../contract/validate.js';

/** What the bool methods use of a BaseBackend (its protected members included). */
interface LogicHost {
  readonly name: string;
  check(x: NDArray, op: string, arg?: string): void;
  allocate(size: number, dtype: DType): DeviceBuffer;
  free(x: NDArray): void;
  guard(out: DeviceBuffer, run: () => void): void;
  full(shape: readonly number[], value: number, dtype?: DType): NDArray;
  unary(op: UnaryOp, x: NDArray): NDArray;
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray;
  /** The kernels, routed by dtype (kernel-router.ts): where and reduce here. */
  readonly route: KernelRouter;
}

/** The bool methods of every backend. Semantics: ops/logic-ops.ts. */
export interface LogicMethods {
  /**
   * cond: bool, x and y arrays or numbers of one dtype (numbers take the array's dtype; float32 when
   * both are numbers) → the broadcast shape of the three: x where cond, else y (NumPy where, ONNX Where,
   * PyTorch where). DTypeError unless cond is bool and x and y share a dtype; ShapeMismatchError when
   * the shapes do not broadcast.
   */
  where(cond: NDArray, x: Operand, y: Operand): NDArray;
  /** bool x → bool: whether any element along the axes (all when absent) is true; false over none. */
  any(x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  /** bool x → bool: whether every element along the axes (all when absent) is true; true over none. */
  all(x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  /** x → bool of x's shape: true where x is NaN (false everywhere for the integer dtypes and bool). */
  isnan(x: NDArray): NDArray;
  /** x → bool of x's shape: true where x is +Inf or −Inf (false everywhere for the integer dtypes and bool). */
  isinf(x: NDArray): NDArray;
  /** x → bool of x's shape: true where x is neither NaN nor ±Inf (true everywhere for integers and bool). */
  isfinite(x: NDArray): NDArray;
  /** bool x → bool: NOT x (NumPy logical_not, ONNX Not). UnsupportedOpError for other dtypes. */
  logicalNot(x: NDArray): NDArray;
  /** int32, int8 or uint8 x → x's dtype: ~x, every bit flipped (NumPy invert). UnsupportedOpError otherwise. */
  bitwiseNot(x: NDArray): NDArray;
}

function where(be: LogicHost, cond: NDArray, x: Operand, y: Operand): NDArray {
  be.check(cond, 'where', 'cond');
  if (cond.dtype !== 'bool') throw new DTypeError(`where: cond must be bool, got ${cond.dtype}; compare or cast it`);
  for (const [v, arg] of [
    [x, 'x'],
    [y, 'y'],
  ] as const) {
    if (typeof v === 'number') continue;
    if (v === null || typeof v !== 'object') {
      throw new InvalidArgumentError(`where: ${arg} must be an NDArray or a number, got ${describeValue(v)}`);
    }
    be.check(v, 'where', arg);
  }
  if (typeof x !== 'number' && typeof y !== 'number' && x.dtype !== y.dtype)
    throw new DTypeError(`where: x and y have dtypes ${x.dtype} and ${y.dtype}; cast one explicitly`);
  const dtype: DType = typeof x !== 'number' ? x.dtype : typeof y !== 'number' ? y.dtype : 'float32';
  return withTemps(be, (t) => {
    const vx = typeof x === 'number' ? t(be.full([], x, dtype)) : x;
    const vy = typeof y === 'number' ? t(be.full([], y, dtype)) : y;
    const shape = broadcastShapes(broadcastShapes(cond.shape, vx.shape), vy.shape);
    const out = be.allocate(sizeOf(shape), dtype);
    be.guard(out, () => be.route.where(expandView(cond, shape), expandView(vx, shape), expandView(vy, shape), out));
    return viewOf(out, shape);
  });
}

/** any (max of 0/1) or all (min of 0/1) over the axes; an empty reduction gives false or true. */
function anyAll(be: LogicHost, op: 'any' | 'all', x: NDArray, axes?: number | readonly number[], keepdims = false) {
  be.check(x, op);
  if (x.dtype !== 'bool') throw new DTypeError(`${op}: x must be bool, got ${x.dtype}; compare or cast it`);
  checkAxesArg(axes, op, x);
  checkBoolean(keepdims, op, 'keepdims');
  const ax = normalizeAxes(axes, x.shape.length);
  const kept = x.shape.filter((_, i) => !ax.includes(i));
  const shape = keepdims ? x.shape.map((d, i) => (ax.includes(i) ? 1 : d)) : kept;
  if (ax.some((a) => x.shape[a] === 0)) return be.full(shape, op === 'any' ? 0 : 1, 'bool');
  const out = be.allocate(sizeOf(kept), 'bool');
  be.guard(out, () => be.route.reduce(op === 'any' ? 'max' : 'min', x, ax, out));
  return viewOf(out, shape);
}

/** x → bool of x's shape, `value` everywhere (the predicates on int32 and bool). */
function constant(be: LogicHost, x: NDArray, value: number): NDArray {
  return be.full(x.shape, value, 'bool');
}

/** The bool methods (LogicMethods) as BaseBackend has them (FAMILIES, base.ts). */
export const LOGIC_METHODS: FamilyTable<LogicMethods> = {
  where(cond: NDArray, x: Operand, y: Operand) {
    return where(this, cond, x, y);
  },
  any(x: NDArray, axes?: number | readonly number[], keepdims?: boolean) {
    return anyAll(this, 'any', x, axes, keepdims);
  },
  all(x: NDArray, axes?: number | readonly number[], keepdims?: boolean) {
    return anyAll(this, 'all', x, axes, keepdims);
  },
  isnan(x: NDArray) {
    this.check(x, 'isnan');
    return isFloatDType(x.dtype) ? this.binary('notEqual', x, x) : constant(this, x, 0);
  },
  isinf(x: NDArray) {
    this.check(x, 'isinf');
    if (!isFloatDType(x.dtype)) return constant(this, x, 0);
    return withTemps(this, (t) => this.binary('equal', t(this.unary('abs', x)), Infinity));
  },
  isfinite(x: NDArray) {
    this.check(x, 'isfinite');
    if (!isFloatDType(x.dtype)) return constant(this, x, 1);
    return withTemps(this, (t) => this.binary('less', t(this.unary('abs', x)), Infinity));
  },
  logicalNot(x: NDArray) {
    this.check(x, 'logicalNot');
    if (x.dtype !== 'bool') throw new UnsupportedOpError('logicalNot', x.dtype, this.name);
    return this.binary('logicalXor', x, 1);
  },
  bitwiseNot(x: NDArray) {
    this.check(x, 'bitwiseNot');
    if (!isIntDType(x.dtype)) throw new UnsupportedOpError('bitwiseNot', x.dtype, this.name);
    return this.binary('bitwiseXor', x, -1);
  },
} satisfies FamilyTable<LogicMethods, LogicHost>;
