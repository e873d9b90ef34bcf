/**
 * The rows a one-kernel softmax takes (wasm's and webgpu's fused forms): a float32 softmax over the last axis of an
 * array whose elements lie row-major from its offset. Other axes, dtypes, layouts and empty arrays are left to the
 * composite (composites.ts).
 */
import type { NDArray } from '../../core/ndarray.js';
import { contiguousStrides } from '../../core/shape.js';

/** { rows, n: the row length } where a fused softmax over `axis` of x applies, else null. */
export function softmaxRows(x: NDArray, axis: number): { rows: number; n: number } | null {
  const r = x.shape.length;
  if (x.dtype !== 'float32' || r === 0 || (axis < 0 ? axis + r : axis) !== r - 1) return null;
  const strides = contiguousStrides(x.shape);
  if (!x.shape.every((d, i) => d === 1 || x.strides[i] === strides[i])) return null;
  const n = x.shape[r - 1]!;
  const size = x.shape.reduce((p, d) => p * d, 1);
  return size === 0 ? null : { rows: size / n, n };
}
