/**
 * Differentiable index ops (hal/src/families/indexing/indexing.ts): gather, whose gradient scatters g back
 * into zeros of x's shape (scatterAdd: duplicate indices add up, out-of-range ones contribute nothing — the
 * adjoint of the fill), and oneHot (no gradient: its input is integer). Indices are int32 tensors and never
 * receive a gradient.
 */
import type { ArgReduceOptions } from '@polyhal/hal';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** x's slices along `axis` at the int32 `indices` (NumPy take). Gradient: scatterAdd of g into zeros. */
export function gather(x: Tensor, indices: Tensor, axis = 0): Tensor {
  return record(
    'gather',
    [x, indices],
    (be, [v, i]) => be.gather(v!, i!, axis),
    (be, g, [v, i], _out, needs) => {
      if (!needs[0]) return [null, null];
      const zero = be.full([], 0, v!.dtype);
      try {
        return [be.scatterAdd(be.expand(zero, v!.shape), i!, g, axis), null];
      } finally {
        be.free(zero);
      }
    },
  );
}

/** float32 [...indices.shape, depth]: 1 at each in-range index (negative ones count from the end). */
export function oneHot(indices: Tensor, depth: number): Tensor {
  return record('oneHot', [indices], (be, [i]) => be.oneHot(i!, depth), null);
}

/** int32 index of the largest element along `axis` (the flattened tensor when absent); no gradient. */
export function argmax(x: Tensor, axis?: number, keepdims = false, options: ArgReduceOptions = {}): Tensor {
  return record('argmax', [x], (be, [v]) => be.argmax(v!, axis, keepdims, options), null);
}

/** int32 index of the smallest element along `axis` (the flattened tensor when absent); no gradient. */
export function argmin(x: Tensor, axis?: number, keepdims = false, options: ArgReduceOptions = {}): Tensor {
  return record('argmin', [x], (be, [v]) => be.argmin(v!, axis, keepdims, options), null);
}
