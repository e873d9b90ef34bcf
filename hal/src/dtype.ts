import { DTypeError } from './errors.js';

/**
 * Data types of the HAL. `float32` is the working type of every op; `int32` carries labels and
 * indices and supports the subset of ops listed in `ops.ts` (others throw UnsupportedOpError).
 */
export type DType = 'float32' | 'int32';

/** All dtypes the HAL knows, in a stable order (used by conformance reports). */
export const DTYPES: readonly DType[] = ['float32', 'int32'];

/** The typed array that holds host-side data of a dtype. */
export type TypedArrayFor<D extends DType> = D extends 'float32' ? Float32Array : Int32Array;
export type HostArray = Float32Array | Int32Array;

/** Bytes per element: 4 for both dtypes. */
export function bytesPerElement(dtype: DType): number {
  switch (dtype) {
    case 'float32':
    case 'int32':
      return 4;
  }
}

/** Allocates a zero-filled host array of `size` elements of `dtype`. */
export function newHostArray(dtype: DType, size: number): HostArray {
  return dtype === 'float32' ? new Float32Array(size) : new Int32Array(size);
}

/** The dtype of a host typed array; throws DTypeError for any other array type. */
export function dtypeOfArray(data: ArrayLike<number>): DType {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Int32Array) return 'int32';
  throw new DTypeError(
    `expected a Float32Array or an Int32Array, got ${(data as object)?.constructor?.name ?? String(data)}`,
  );
}

export function isDType(value: unknown): value is DType {
  return value === 'float32' || value === 'int32';
}
