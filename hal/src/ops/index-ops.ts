/**
 * Table entries of the index ops (hal/src/families/indexing/indexing.ts, indexing-nd.ts): gather (NumPy take, ONNX
 * Gather), its adjoint scatterAdd, scatter, the N-dimensional gatherND, scatterND and scatterElements,
 * oneHot, argmax and argmin. They join ARRAY_OP_DEFS (array-ops.ts) as kind 'indexing'. The index rule
 * is JAX's fill mode: negative indices count from the end, indices out of range read a fill value
 * (gather) or are dropped (scatterAdd) — never silently clamped to a neighbour's data.
 */
import type { ArrayOpDef } from './types.js';
import { EXACT } from './types.js';

const INDEX_RULE =
  'indices are int32 of any shape; an index i into a dim of size n reads position i + n when −n ≤ i < 0; ' +
  'an index outside [−n, n) is out of range';

const IN_ORDER =
  'Updates apply in index order (row-major over the indices) on every backend: reduction none keeps the ' +
  'last one at each position, add sums after the target’s value, mul multiplies, rounding (float32) or ' +
  'wrapping (int32) after each step — deterministic from run to run and across backends.';
const SCATTER_GRAD =
  "autograd indexing-nd.ts: 'none': g with the written positions zeroed to target, g gathered to the " +
  "update that wins each position (0 to the overwritten and dropped ones); 'add': g to target, g " +
  "gathered to updates (0 to dropped ones); 'mul': none (InvalidArgumentError when an input requires grad)";
const SCATTER_ND_GRAD =
  "autograd indexing-nd.ts (scatter's rules on the flat form: 'none' and 'add' as there; 'mul': none, " +
  'InvalidArgumentError when an input requires grad)';

export const INDEX_OP_DEFS = {
  gather: {
    kind: 'indexing',
    signature: 'gather(x, indices: int32, axis = 0) → x.shape[:axis] + indices.shape + x.shape[axis+1:]',
    semantics:
      `x's slices along axis at the indices (NumPy take, ONNX Gather); ${INDEX_RULE} and gives NaN in a ` +
      'float32 result, INT32_MIN (−2^31) in an int32 one, true in a bool one (JAX’s fill mode: a kernel ' +
      'cannot throw on data it reads, and a clamped index would give a neighbour’s data silently). Values are ' +
      'copied bit for bit. ' +
      'DTypeError for non-int32 indices, InvalidArgumentError for a 0-d x or an axis out of range.',
    dtypes: ['float32', 'int32', 'bool', 'int8', 'uint8', 'float16', 'float64'],
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
    dtypes: ['float32', 'int32', 'int8', 'uint8', 'float16', 'float64'],
    accuracy: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT },
    grad: "autograd indexing-nd.ts (scatter's 'add' rule: g to target, g gathered to updates, 0 to dropped ones)",
  },
  scatter: {
    kind: 'indexing',
    signature:
      "scatter(target, indices: int32, updates, axis = 0, reduction: 'none' | 'add' | 'mul' = 'none') → " +
      'target.shape; updates: target.shape[:axis] + indices.shape + target.shape[axis+1:]',
    semantics:
      'A new array: target with each slice of updates written where gather would have read it (PyTorch ' +
      'index_copy and index_reduce, ONNX ScatterElements along one axis with slice indices); ' +
      `${INDEX_RULE} and its update is dropped. ${IN_ORDER} ` +
      'DTypeError unless indices are int32 and updates have the target’s dtype; ShapeMismatchError for ' +
      'updates of another shape; InvalidArgumentError for another reduction, a 0-d target or an axis out ' +
      'of range. Kernel: the optional scatterKernel hook (hooks.ts; without one, BaseBackend composes ' +
      "'none' from gather and 'add' from scatterAdd).",
    dtypes: ['float32', 'int32', 'int8', 'uint8', 'float16', 'float64'],
    accuracy: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT },
    grad: SCATTER_GRAD,
  },
  gatherND: {
    kind: 'indexing',
    signature:
      'gatherND(x, indices: int32 [...B, ...M, q], batchDims = 0) → [...B, ...M, ...x.shape[batchDims+q:]]; ' +
      'x.shape[:batchDims] = B',
    semantics:
      'x’s slices at index tuples (ONNX GatherND, tf.gatherND): each tuple of q indices addresses dims ' +
      `batchDims..batchDims+q−1 of x within its batch; per component, ${INDEX_RULE}: a tuple with one ` +
      'component out of range reads the fill of gather (NaN, INT32_MIN) for its whole slice. Composed: ' +
      'flat int32 positions computed on the device (one tuplePositionsKernel on cpu, wasm and webgpu), then ' +
      'gather along axis 0 of x reshaped to ' +
      '[B·Q, ...slice]. Values copied bit for bit. DTypeError for non-int32 indices; InvalidArgumentError ' +
      'for 0-d indices or batchDims outside [0, rank(indices)); ShapeMismatchError when batchDims + q > ' +
      'rank(x) or the batch dims differ.',
    dtypes: ['float32', 'int32', 'int8', 'uint8', 'float16', 'float64'],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: 'autograd indexing-nd.ts (the gradient of its gather: scatterAdd of g at the flat positions)',
  },
  scatterND: {
    kind: 'indexing',
    signature:
      "scatterND(target, indices: int32 [...M, q], updates: [...M, ...target.shape[q:]], reduction = 'none') " +
      '→ target.shape',
    semantics:
      'A new array: target with each slice of updates written at the slice its index tuple addresses in the ' +
      'first q dims (ONNX ScatterND, tf.tensorScatterUpdate / tensorScatterAdd, reduction none, add or mul); ' +
      `per component, ${INDEX_RULE}: a tuple with one component out of range drops its update. ${IN_ORDER} ` +
      'Composed: flat int32 positions on the device (one tuplePositionsKernel on cpu, wasm and webgpu), then ' +
      'scatter along axis 0. DTypeError unless indices ' +
      'are int32 and updates have the target’s dtype; InvalidArgumentError for 0-d indices or another ' +
      'reduction; ShapeMismatchError for q > rank(target) or updates of another shape.',
    dtypes: ['float32', 'int32', 'int8', 'uint8', 'float16', 'float64'],
    accuracy: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT },
    grad: SCATTER_ND_GRAD,
  },
  scatterElements: {
    kind: 'indexing',
    signature:
      "scatterElements(target, indices: int32, updates, axis = 0, reduction = 'none') → target.shape; " +
      'indices and updates of one shape, the target’s rank, dims off axis ≤ the target’s',
    semantics:
      'A new array: each element of updates written at its own position with the axis coordinate replaced ' +
      `by its index (ONNX ScatterElements and Scatter, PyTorch scatter_ and scatter_reduce); ${INDEX_RULE} ` +
      `and its update is dropped. ${IN_ORDER} Composed: flat int32 positions on the device, then scatter ` +
      'of the flattened target. DTypeError unless indices are int32 and updates have the target’s dtype; ' +
      'InvalidArgumentError for a 0-d target, an axis out of range or another reduction; ' +
      'ShapeMismatchError for indices of another rank, wider than the target off axis, or updates of ' +
      'another shape.',
    dtypes: ['float32', 'int32', 'int8', 'uint8', 'float16', 'float64'],
    accuracy: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT },
    grad: SCATTER_ND_GRAD,
  },
  oneHot: {
    kind: 'indexing',
    signature: 'oneHot(indices: int32, depth) → float32 [...indices.shape, depth]',
    semantics:
      '1 at position i (i + depth when negative) of the last dim, 0 elsewhere; an index outside ' +
      '[−depth, depth) gives a row of zeros (ONNX OneHot, TensorFlow and JAX one_hot). One oneHotKernel on ' +
      'cpu, wasm and webgpu; composed elsewhere: gather of the depth × depth identity, then 0.5 < row (NaN ' +
      'rows → 0). InvalidArgumentError unless depth ' +
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
      'mask of the elements that reach it, the smallest masked position (int32: exact below 2^31); cpu, ' +
      'wasm and webgpu override it (argReduceKernel): one pass per row, long rows on webgpu in chunks. ' +
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
