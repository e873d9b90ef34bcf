/**
 * Comparisons, logical ops and selection on tensors (HAL semantics: docs/OPS.md, hal/src/ops/
 * binary-logic.ts and logic-ops.ts). The comparisons and logical ops return bool tensors and carry no
 * gradient; `where` passes the gradient to the operand it chose; fmod's gradient is the table's. Also
 * floorDiv and truncDiv (gradient 0) and the int32 shifts.
 */
import { type DType, InvalidArgumentError, isFloatDType } from '@polyhal/hal';
import { binaryOp, record, type Scalarish, unbroadcast } from './ops.js';
import { Tensor } from './tensor.js';

type Axes = number | readonly number[];

/** a = b → bool (NaN ≠ everything; −0 = +0). float32, int32 or bool operands, broadcast. No gradient. */
export const equal = (a: Scalarish, b: Scalarish): Tensor => binaryOp('equal', a, b);
/** a ≠ b → bool (true where either is NaN). No gradient. */
export const notEqual = (a: Scalarish, b: Scalarish): Tensor => binaryOp('notEqual', a, b);
/** a < b → bool (false with NaN). float32 or int32. No gradient. */
export const less = (a: Scalarish, b: Scalarish): Tensor => binaryOp('less', a, b);
/** a ≤ b → bool (false with NaN). No gradient. */
export const lessEqual = (a: Scalarish, b: Scalarish): Tensor => binaryOp('lessEqual', a, b);
/** a > b → bool (false with NaN). No gradient. */
export const greater = (a: Scalarish, b: Scalarish): Tensor => binaryOp('greater', a, b);
/** a ≥ b → bool (false with NaN). No gradient. */
export const greaterEqual = (a: Scalarish, b: Scalarish): Tensor => binaryOp('greaterEqual', a, b);
/** C's truncated remainder a − b·trunc(a/b) (sign of a); gradients (1, −trunc(a/b)). */
export const fmod = (a: Scalarish, b: Scalarish): Tensor => binaryOp('fmod', a, b);
/** a AND b of bool tensors. */
export const logicalAnd = (a: Scalarish, b: Scalarish): Tensor => binaryOp('logicalAnd', a, b);
/** a OR b of bool tensors. */
export const logicalOr = (a: Scalarish, b: Scalarish): Tensor => binaryOp('logicalOr', a, b);
/** a XOR b of bool tensors. */
export const logicalXor = (a: Scalarish, b: Scalarish): Tensor => binaryOp('logicalXor', a, b);
/** a & b of int32 tensors. */
export const bitwiseAnd = (a: Scalarish, b: Scalarish): Tensor => binaryOp('bitwiseAnd', a, b);
/** a | b of int32 tensors. */
export const bitwiseOr = (a: Scalarish, b: Scalarish): Tensor => binaryOp('bitwiseOr', a, b);
/** a ^ b of int32 tensors. */
export const bitwiseXor = (a: Scalarish, b: Scalarish): Tensor => binaryOp('bitwiseXor', a, b);
/**
 * floor(a/b) (NumPy floor_divide, Python //) of float32 or int32 tensors: float32 exact (the floor of the
 * exact quotient), int32 x // 0 = 0. Gradient 0 (piecewise constant).
 */
export const floorDiv = (a: Scalarish, b: Scalarish): Tensor => binaryOp('floorDiv', a, b);
/** trunc(a/b) (C's integer division, PyTorch div with rounding_mode='trunc'); int32 x / 0 = 0. Gradient 0. */
export const truncDiv = (a: Scalarish, b: Scalarish): Tensor => binaryOp('truncDiv', a, b);
/** a << s of int32 tensors: 0 for counts outside [0, 31]. */
export const bitShiftLeft = (a: Scalarish, s: Scalarish): Tensor => binaryOp('bitShiftLeft', a, s);
/** Arithmetic a >> s of int32 tensors: counts outside [0, 31] give 0 or −1 by a's sign. */
export const bitShiftRight = (a: Scalarish, s: Scalarish): Tensor => binaryOp('bitShiftRight', a, s);

/**
 * cond: bool, x and y tensors (or numbers, which take the other operand's dtype) → x where cond, else y,
 * broadcast over the three (NumPy/PyTorch where). Gradient: g where cond to x, g elsewhere to y (each
 * summed back over its broadcast dims); none to cond. DTypeError unless cond is bool and x, y share a dtype.
 */
export function where(cond: Tensor, x: Scalarish, y: Scalarish): Tensor {
  if (typeof x === 'number' && typeof y === 'number')
    throw new InvalidArgumentError('where: x or y must be a tensor (use full for two numbers)');
  const like = (typeof x === 'number' ? y : x) as Tensor;
  const tx = typeof x === 'number' ? Tensor.full(like.backend, [], x, { dtype: like.dtype }) : x;
  const ty = typeof y === 'number' ? Tensor.full(like.backend, [], y, { dtype: like.dtype }) : y;
  const out = record(
    'where',
    [cond, tx, ty],
    (be, [c, a, b]) => be.where(c!, a!, b!),
    (be, g, [c], _out, needs) => {
      const pick = (k: 1 | 2, shape: readonly number[]) => {
        if (!needs[k]) return null;
        const full = k === 1 ? be.where(c!, g, 0) : be.where(c!, 0, g);
        const r = unbroadcast(be, full, shape);
        if (r !== full) be.free(full);
        return r;
      };
      return [null, pick(1, tx.shape), pick(2, ty.shape)];
    },
  );
  if (typeof x === 'number' && !out.node) tx.dispose();
  if (typeof y === 'number' && !out.node) ty.dispose();
  return out;
}

/** Whether any element of a bool tensor along the axes (all when absent) is true. */
export const any = (x: Tensor, axes?: Axes, keepdims = false): Tensor =>
  record('any', [x], (be, [v]) => be.any(v!, axes, keepdims), null);
/** Whether every element of a bool tensor along the axes (all when absent) is true. */
export const all = (x: Tensor, axes?: Axes, keepdims = false): Tensor =>
  record('all', [x], (be, [v]) => be.all(v!, axes, keepdims), null);
/** bool: true where x is NaN. */
export const isnan = (x: Tensor): Tensor => record('isnan', [x], (be, [v]) => be.isnan(v!), null);
/** bool: true where x is ±Inf. */
export const isinf = (x: Tensor): Tensor => record('isinf', [x], (be, [v]) => be.isinf(v!), null);
/** bool: true where x is finite. */
export const isfinite = (x: Tensor): Tensor => record('isfinite', [x], (be, [v]) => be.isfinite(v!), null);
/** NOT x of a bool tensor. */
export const logicalNot = (x: Tensor): Tensor => record('logicalNot', [x], (be, [v]) => be.logicalNot(v!), null);
/** ~x of an int32 tensor. */
export const bitwiseNot = (x: Tensor): Tensor => record('bitwiseNot', [x], (be, [v]) => be.bitwiseNot(v!), null);
/**
 * x converted to `dtype` (the HAL's cast rules, base.ts: float → integer truncates and saturates, NaN → 0;
 * integer → int8/uint8 wraps; → float16 rounds to nearest even; to bool x ≠ 0; from bool 0 or 1).
 * Gradient between floating dtypes (float32, float16): g cast back to x's dtype (as PyTorch's `to`);
 * none to or from an integer or bool dtype.
 */
export const cast = (x: Tensor, dtype: DType): Tensor =>
  record(
    'cast',
    [x],
    (be, [v]) => be.cast(v!, dtype),
    isFloatDType(x.dtype) && isFloatDType(dtype) ? (be, g, [v]) => [be.cast(g, v!.dtype)] : null,
  );
