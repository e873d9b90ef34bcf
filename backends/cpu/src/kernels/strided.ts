/**
 * Strided operands of the CPU kernels: a typed array plus a view (shape, strides, offset in elements).
 * Iteration is planned by the HAL's `planRows`.
 */
import type { StorageArray } from '@polyhal/hal/internal';

export { planRows, type RowPlan } from '@polyhal/hal';

export interface Strided<T extends StorageArray = StorageArray> {
  data: T;
  shape: readonly number[];
  strides: readonly number[];
  offset: number;
}

/** Row-major strides of a contiguous array of `shape`. */
export { contiguousStrides as rowMajor } from '@polyhal/hal';
