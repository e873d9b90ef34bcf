/**
 * Strided operands of the CPU kernels: a typed array plus a view (shape, strides, offset in elements).
 * Iteration is planned by the HAL's `planRows`.
 */
import type { HostArray } from '@polyhal/hal';

export { planRows, type RowPlan } from '@polyhal/hal';

export interface Strided<T extends HostArray = HostArray> {
  data: T;
  shape: readonly number[];
  strides: readonly number[];
  offset: number;
}

/** Row-major strides of a contiguous array of `shape`. */
export { contiguousStrides as rowMajor } from '@polyhal/hal';

/** True when the view is contiguous row-major (size-1 dims ignored). */
export function isDense(x: Strided): boolean {
  let expected = 1;
  for (let i = x.shape.length - 1; i >= 0; i--) {
    if (x.shape[i] === 1) continue;
    if (x.strides[i] !== expected) return false;
    expected *= x.shape[i]!;
  }
  return true;
}
