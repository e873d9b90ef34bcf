/**
 * Table entries of the index ops (hal/src/indexing.ts): gather (NumPy take, ONNX Gather), its adjoint
 * scatterAdd, and oneHot. They join ARRAY_OP_DEFS (array-ops.ts) as kind 'indexing'. The index rule
 * is JAX's fill mode: negative indices count from the end, indices out of range read a fill value
 * (gather) or are dropped (scatterAdd) — never silently clamped to a neighbour's data.
 */
import type { ArrayOpDef } from './array-ops.js';
import { EXACT } from './types.js';

const INDEX_RULE =
  'indices are int32 of any shape; an index i into a dim of size n reads position i + n when −n ≤ i < 0; ' +
  'an index outside [−n, n) is out of range';

export const INDEX_OP_DEFS = {
  gather: {
    kind: 'indexing',
    signature: 'gather(x, indices: int32, axis = 0) → x.shape[:axis] + indices.shape + x.shape[axis+1:]',
    semantics:
      `x's slices along axis at the indices (NumPy take, ONNX Gather); ${INDEX_RULE} and gives NaN in a ` +
      'float32 result, INT32_MIN (−2^31) in an int32 one, true in a bool one (JAX’s fill mode: a kernel cannot throw on data ' +
      'it reads, and a clamped index would give a neighbour’s data silently). Values are copied bit for bit. ' +
      'DTypeError for non-int32 indices, InvalidArgumentError for a 0-d x or an axis out of range.',
    dtypes: ['float32', 'int32', 'bool'],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: 'autograd indexing.ts (scatterAdd of g into zeros of x; none to indices)',
  },
  scatterAdd: {
    kind: 'indexing',
    signature:
      'scatterAdd(target, indices: int32, updates, axis = 0) → target.shape; ' +
      'updates: target.shape[:axis] + indices.shape + target.shape[axis+1:]',
    semantics:
      'A new array: target with each slice of updates added where gather would have read it (gather’s ' +
      'adjoint; PyTorch index_add, ONNX ScatterElements with reduction add along one axis); ' +
      `${INDEX_RULE} and its update is dropped. Duplicate indices add up in index order (row-major over ` +
      'indices), after the target’s value, on every backend: deterministic from run to run and across ' +
      'backends. int32 wraps modulo 2^32. DTypeError unless indices are int32 and updates have the ' +
      'target’s dtype; ShapeMismatchError for updates of another shape.',
    dtypes: ['float32', 'int32'],
    accuracy: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT },
    grad: null,
  },
  oneHot: {
    kind: 'indexing',
    signature: 'oneHot(indices: int32, depth) → float32 [...indices.shape, depth]',
    semantics:
      '1 at position i (i + depth when negative) of the last dim, 0 elsewhere; an index outside ' +
      '[−depth, depth) gives a row of zeros (ONNX OneHot, TensorFlow and JAX one_hot). Composed: gather ' +
      'of the depth × depth identity, then 0.5 < row (NaN rows → 0). InvalidArgumentError unless depth ' +
      'is an integer ≥ 0; DTypeError for non-int32 indices.',
    dtypes: ['float32'],
    accuracy: { float32: EXACT },
    grad: 'none (integer input)',
  },
  argmax: {
    kind: 'indexing',
    signature: 'argmax(x, axis?, keepdims = false, {lastIndex}) → int32, x.shape without axis (flattened when absent)',
    semantics:
      'The position of the largest element along axis (NumPy, PyTorch, ONNX ArgMax): the first among ties ' +
      '(the last with lastIndex, ONNX select_last_index); a NaN counts as the largest, so a row with NaNs ' +
      'gives its first NaN (NumPy). Without an axis, the index into the flattened array. Composed: max, a ' +
      'mask of the elements that reach it, the smallest masked position (int32: exact below 2^31). ' +
      'InvalidArgumentError for an empty axis or array, an axis out of range or a non-boolean keepdims.',
    dtypes: ['float32', 'int32'],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: 'none (an integer result)',
  },
  argmin: {
    kind: 'indexing',
    signature: 'argmin(x, axis?, keepdims = false, {lastIndex}) → int32, x.shape without axis (flattened when absent)',
    semantics:
      'The position of the smallest element along axis (NumPy, PyTorch, ONNX ArgMin): the first among ties ' +
      '(the last with lastIndex); a NaN counts as the smallest, so a row with NaNs gives its first NaN ' +
      '(NumPy). Composed as argmax with min. Errors as argmax.',
    dtypes: ['float32', 'int32'],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: 'none (an integer result)',
  },
} as const satisfies Record<string, ArrayOpDef>;
