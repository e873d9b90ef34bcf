/**
 * Table entries of the bool methods (hal/src/families/logic/logic.ts): where, any, all, the predicates isnan, isinf
 * and isfinite, and the negations logicalNot and bitwiseNot. They join ARRAY_OP_DEFS (array-ops.ts).
 * The comparisons and the binary logical and bitwise ops are binary-table entries (binary-logic.ts).
 */
import type { ArrayOpDef } from './types.js';
import { EXACT } from './types.js';

const EXACT_ALL = { float32: EXACT, int32: EXACT };
/** For the entries that take no int32 (the float32 key is the table's required baseline). */
const EXACT_F = { float32: EXACT };
const ALL = ['float32', 'int32', 'bool', 'int8', 'uint8', 'float16', 'float64'] as const;

export const LOGIC_OP_DEFS = {
  where: {
    kind: 'composite',
    signature: 'where(cond: bool, x, y) → broadcast(cond.shape, x.shape, y.shape), x’s dtype',
    semantics:
      'x where cond is true, else y (NumPy where, ONNX Where, PyTorch where), bit for bit: NaN, −0 and ' +
      'Inf pass through unchanged, and the element not chosen is never read into the result (so where(c, ' +
      'x, 0) does not turn into NaN where x is NaN and c is false). A number for x or y takes the other ' +
      'operand’s dtype (float32 when both are numbers). DTypeError unless cond is bool and x and y share ' +
      'a dtype; ShapeMismatchError when the shapes do not broadcast. The gradient goes to x where cond, to y ' +
      'elsewhere; none to cond.',
    dtypes: ALL,
    accuracy: EXACT_ALL,
    grad: 'autograd logic.ts (where(cond, g, 0), where(cond, 0, g))',
    composition: 'one kernel (whereKernel)',
  },
  any: {
    kind: 'composite',
    signature: 'any(x: bool, axes?, keepdims = false) → bool, the kept dims',
    semantics:
      'Whether any element along the axes (every axis when absent) is true (NumPy any, ONNX ReduceMax on ' +
      'bool, PyTorch any); false over an empty axis. DTypeError unless x is bool.',
    dtypes: ['bool'],
    accuracy: EXACT_F,
    grad: null,
    composition: 'max of the 0/1 storage (the reduction kernel)',
  },
  all: {
    kind: 'composite',
    signature: 'all(x: bool, axes?, keepdims = false) → bool, the kept dims',
    semantics:
      'Whether every element along the axes (every axis when absent) is true (NumPy all, PyTorch all); ' +
      'true over an empty axis. DTypeError unless x is bool.',
    dtypes: ['bool'],
    accuracy: EXACT_F,
    grad: null,
    composition: 'min of the 0/1 storage (the reduction kernel)',
  },
  isnan: {
    kind: 'composite',
    signature: 'isnan(x) → bool, x.shape',
    semantics: 'True where x is NaN (any NaN payload); false everywhere for int32 and bool (NumPy isnan).',
    dtypes: ALL,
    accuracy: EXACT_ALL,
    grad: null,
    composition: 'notEqual(x, x)',
  },
  isinf: {
    kind: 'composite',
    signature: 'isinf(x) → bool, x.shape',
    semantics: 'True where x is +Inf or −Inf; false everywhere for int32 and bool (NumPy isinf, ONNX IsInf).',
    dtypes: ALL,
    accuracy: EXACT_ALL,
    grad: null,
    composition: 'equal(abs(x), Inf)',
  },
  isfinite: {
    kind: 'composite',
    signature: 'isfinite(x) → bool, x.shape',
    semantics: 'True where x is neither NaN nor ±Inf; true everywhere for int32 and bool (NumPy isfinite).',
    dtypes: ALL,
    accuracy: EXACT_ALL,
    grad: null,
    composition: 'less(abs(x), Inf)',
  },
  logicalNot: {
    kind: 'composite',
    signature: 'logicalNot(x: bool) → bool, x.shape',
    semantics: 'NOT x (NumPy logical_not, ONNX Not). UnsupportedOpError for other dtypes (compare first).',
    dtypes: ['bool'],
    accuracy: EXACT_F,
    grad: null,
    composition: 'logicalXor(x, true)',
  },
  bitwiseNot: {
    kind: 'composite',
    signature: 'bitwiseNot(x: int32) → int32, x.shape',
    semantics: "~x: every bit of x's two's complement flipped, −x − 1 (NumPy invert, PyTorch bitwise_not).",
    dtypes: ['int32', 'int8', 'uint8'],
    accuracy: EXACT_ALL,
    grad: null,
    composition: 'bitwiseXor(x, −1)',
  },
} as const satisfies Record<string, ArrayOpDef>;
