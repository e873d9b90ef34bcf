/**
 * Table entries of the scan and selection composites (hal/src/families/scan/scan.ts): cumsum and topk. They join
 * ARRAY_OP_DEFS (array-ops.ts) as kind 'composite'.
 */
import type { ArrayOpDef } from './types.js';
import { EXACT } from './types.js';

export const SCAN_OP_DEFS = {
  cumsum: {
    kind: 'composite',
    signature: 'cumsum(x, axis, {exclusive = false, reverse = false}) → x.shape',
    semantics:
      'Running sums along axis (NumPy cumsum, PyTorch cumsum, ONNX CumSum with its exclusive and reverse ' +
      'attributes): y_j = Σ x_i over i ≤ j (i < j exclusive; i ≥ j and i > j reversed). An empty axis gives an ' +
      'empty result; a 0-d x takes axis 0 or −1 and is one element (PyTorch). NaN, or +Inf with −Inf, in the ' +
      'summed prefix gives NaN. The summation order is not sequential: blocks of 16 are summed by one ' +
      'reduction each, and block offsets added once per level (⌈log16 n⌉ levels), so a float32 result may differ ' +
      'from the sequential sum by a few ulps of Σ|x_i| over the prefix; int32 wraps modulo 2^32 (exact in any ' +
      'order). InvalidArgumentError for an axis out of range or non-boolean options.',
    dtypes: ['float32', 'int32', 'float64'],
    accuracy: {
      float32: { abs: 0, rel: 6e-7 },
      wgsl: { accuracy: { abs: 0, rel: 2.4e-6 }, why: 'WGSL: float32 accumulation of each block of 16' },
      int32: EXACT,
    },
    grad: 'autograd scan.ts (cumsum of g in the other direction, exclusive stays exclusive)',
    composition:
      'per level: pad each block of 16, a strided window view [.., blocks, 16, 16] reduced with sum; the ' +
      'block totals scanned by the next level, shifted by one (pad) and added back. cpu and wasm override it ' +
      '(cumsumKernel): a sequential scan with a float64 accumulator',
  },
  topk: {
    kind: 'composite',
    signature: 'topk(x, k, axis = −1, {largest = true, sorted = true}) → {values: x.dtype, indices: int32}, k at axis',
    semantics:
      'The k largest (smallest with largest false) elements along axis and their positions, best first (ONNX ' +
      'TopK, PyTorch topk): among equal values the lower index comes first (ONNX). NaN counts as larger than ' +
      'every number, in both modes (PyTorch’s order): NaNs come first when largest, last when smallest. ' +
      'sorted false returns the same sorted order (ONNX leaves it unspecified). Values are copied bit for bit. ' +
      'InvalidArgumentError for a 0-d x, an axis out of range, k not an integer in [0, n] or non-boolean options.',
    dtypes: ['float32', 'int32', 'float64'],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: 'autograd scan.ts (values: scatterAdd of g at the indices into zeros of x; none to indices)',
    composition:
      'a tournament: the axis in blocks of b = max(16, 4k), each element ranked in its block by b comparisons ' +
      '(value, then position), the first k of each block gathered; repeated on the candidates until one block ' +
      'remains. Cost O(n·b) elementwise work and memory per row: linear in n for small k, quadratic when k ' +
      'is comparable to n. cpu and wasm override it (topkKernel): a sorted buffer of k candidates per row ' +
      '(a full sort for k > 64); webgpu for k ≤ 64 (one invocation per row; long rows in chunks, whose ' +
      'candidates a second pass merges)',
  },
} as const satisfies Record<string, ArrayOpDef>;
