import { DTypeError } from './errors.js';

/**
 * Data types of the HAL. `float32` is the working type of every op; `int32` carries labels and
 * indices and supports the subset of ops listed in `ops.ts` (others throw UnsupportedOpError);
 * `bool` is the result of the comparisons, the operand of the logical ops, `where`'s condition and
 * `any`/`all`'s input. On a device a bool element is stored as an int32 holding 0 or 1 (4 bytes, so
 * every copy, gather and layout kernel moves it as an int32); on the host it is a Uint8Array of 0/1.
 */
export type DType = 'float32' | 'int32' | 'bool';

/** All dtypes the HAL knows, in a stable order (used by conformance reports). */
export const DTYPES: readonly DType[] = ['float32', 'int32', 'bool'];

/** The typed array that holds host-side data of a dtype: Float32Array, Int32Array, Uint8Array (bool). */
export type TypedArrayFor<D extends DType> = D extends 'float32'
  ? Float32Array
  : D extends 'int32'
    ? Int32Array
    : Uint8Array;
/** Host-side data of any dtype (what `read` resolves with). */
export type HostArray = Float32Array | Int32Array | Uint8Array;
/**
 * What a backend's storage hooks exchange: a Float32Array for float32, an Int32Array for int32 and
 * for bool (0 or 1 per element). The HAL converts bool's Uint8Array on the way in and out.
 */
export type StorageArray = Float32Array | Int32Array;

/** Bytes per element on a device: 4 for every dtype (bool is stored as an int32 0/1). */
export function bytesPerElement(dtype: DType): number {
  switch (dtype) {
    case 'float32':
    case 'int32':
    case 'bool':
      return 4;
  }
}

/** The dtype a bool's storage has (int32); float32 and int32 are their own. */
export function storageDType(dtype: DType): 'float32' | 'int32' {
  return dtype === 'float32' ? 'float32' : 'int32';
}

/** Allocates a zero-filled host array of `size` elements of `dtype` (Uint8Array for bool). */
export function newHostArray(dtype: DType, size: number): HostArray {
  return dtype === 'float32' ? new Float32Array(size) : dtype === 'int32' ? new Int32Array(size) : new Uint8Array(size);
}

/** Allocates zero-filled storage for `size` elements of `dtype` (Int32Array for bool): for backends. */
export function newStorageArray(dtype: DType, size: number): StorageArray {
  return dtype === 'float32' ? new Float32Array(size) : new Int32Array(size);
}

/** bool host data (any nonzero value, NaN included, is true) as its storage: an Int32Array of 0/1. */
export function boolToStorage(data: ArrayLike<number>): Int32Array {
  const out = new Int32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i] !== 0 ? 1 : 0;
  return out;
}

/** bool storage (int32, nonzero is true) as host data: a Uint8Array of 0/1. */
export function storageToBool(data: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i] !== 0 ? 1 : 0;
  return out;
}

/** The dtype of a host typed array (Uint8Array is bool); throws DTypeError for any other array type. */
export function dtypeOfArray(data: ArrayLike<number>): DType {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Uint8Array) return 'bool';
  throw new DTypeError(
    `expected a Float32Array, an Int32Array or a Uint8Array (bool), got ${
      (data as object)?.constructor?.name ?? String(data)
    }`,
  );
}

export function isDType(value: unknown): value is DType {
  return value === 'float32' || value === 'int32' || value === 'bool';
}
