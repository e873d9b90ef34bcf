/**
 * Storage aliases of the narrow dtypes (int8, uint8, float16; their descriptors' route `narrow`,
 * core/dtype.ts). A narrow buffer lives in its storage dtype (int32 or float32) and holds only values its
 * dtype represents; backends never see a narrow dtype except as the `out` of copyKernel (the narrowing
 * cast). What a hook receives instead is the same buffer, or a view of it, typed as its storage dtype: the
 * same id, so every backend finds its storage. The kernel routing step that hands hooks these aliases and
 * narrows computed results is kernel-router.ts; StorageBackend gives the storage hooks the aliases too.
 */
import { isNarrow, storageDType } from '../core/dtype.js';
import type { DeviceBuffer, NDArray } from '../core/ndarray.js';

const aliases = new WeakMap<DeviceBuffer, DeviceBuffer>();

/** `b` typed as its storage dtype: `b` itself unless narrow, else one frozen alias per buffer (same id). */
export function storageBuffer(b: DeviceBuffer): DeviceBuffer {
  if (!isNarrow(b.dtype)) return b;
  let a = aliases.get(b);
  if (!a) {
    a = Object.freeze({ ...b, dtype: storageDType(b.dtype) });
    aliases.set(b, a);
  }
  return a;
}

/** Whether `b` is the storage alias of the live buffer `of` (checkBuffer accepts it). */
export function isStorageAlias(of: DeviceBuffer, b: DeviceBuffer): boolean {
  return aliases.get(of) === b;
}

/** `x` viewing the same elements typed as its storage dtype (`x` itself unless narrow). */
export function storageView(x: NDArray): NDArray {
  if (!isNarrow(x.dtype)) return x;
  const buffer = storageBuffer(x.buffer);
  return { buffer, dtype: buffer.dtype, shape: x.shape, strides: x.strides, offset: x.offset };
}
