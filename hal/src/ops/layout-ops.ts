/**
 * Table entries of the layout ops (hal/src/families/layout/layout.ts): joins, splits, repeats, reversals and masks of
 * arrays, all exact and on float32 and int32. They join ARRAY_OP_DEFS (array-ops.ts) as movement ops.
 */
import type { ArrayOpDef } from './types.js';
import { EXACT } from './types.js';

const ALL_DTYPES = ['float32', 'int32', 'bool', 'int8', 'uint8', 'float16', 'float64'] as const;
const EXACT_BOTH = { float32: EXACT, int32: EXACT };

export const LAYOUT_OP_DEFS = {
  concat: {
    kind: 'movement',
    signature: 'concat(xs: NDArray[], axis = 0) → the dims of xs[0], Σ dims along axis',
    semantics:
      'A new array: the arrays one after another along axis (NumPy concatenate, ONNX Concat); empty ' +
      'arrays contribute nothing. InvalidArgumentError for an empty list or an axis out of range, ' +
      'DTypeError for mixed dtypes, ShapeMismatchError when ranks or the other dims differ.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: 'autograd layout.ts (g split back along axis)',
  },
  stack: {
    kind: 'movement',
    signature: 'stack(xs: NDArray[], axis = 0) → shape with len(xs) inserted at axis',
    semantics:
      'A new array joining arrays of one shape along a new axis in [−rank − 1, rank] (NumPy stack). ' +
      'Errors as concat; ShapeMismatchError unless all shapes are equal.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: 'autograd layout.ts (g split along axis, that axis dropped)',
  },
  split: {
    kind: 'movement',
    signature: 'split(x, sections | sizes, axis = 0) → NDArray[]',
    semantics:
      'Views of x (no copy, nothing to free): `sections` equal parts (InvalidArgumentError unless it ' +
      'divides the dim, as NumPy split) or parts of the given non-negative sizes summing to the dim (ONNX Split).',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: 'autograd layout.ts (the parts’ gradients concatenated; zeros for unused parts)',
  },
  tile: {
    kind: 'movement',
    signature: 'tile(x, reps) → dims × reps',
    semantics:
      'A new array with x repeated reps[i] times along dim i (NumPy tile, ONNX Tile): a reps shorter ' +
      'than the rank is padded with leading 1s, a longer one adds leading dims. reps non-negative ' +
      'integers (InvalidArgumentError); 0 gives an empty dim.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: 'autograd layout.ts (g summed over the repetitions)',
  },
  flip: {
    kind: 'movement',
    signature: 'flip(x, axes = all) → x.shape',
    semantics: 'A view with the given axes reversed (negative strides; NumPy flip). Axes as for reductions.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: 'autograd layout.ts (flip of g)',
  },
  trilu: {
    kind: 'movement',
    signature: 'trilu(x: [..., M, N], k = 0, upper = true) → x.shape',
    semantics:
      'ONNX Trilu (NumPy triu / tril): element (i, j) of the last two dims kept where j − i ≥ k ' +
      '(upper) or j − i ≤ k (lower), 0 elsewhere; kept values are copied, so NaN and ±Inf stay as ' +
      'they are. InvalidArgumentError for rank < 2 or a non-integer k.',
    dtypes: ALL_DTYPES,
    accuracy: EXACT_BOTH,
    grad: 'autograd layout.ts (trilu of g)',
  },
} as const satisfies Record<string, ArrayOpDef>;
