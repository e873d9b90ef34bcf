/**
 * The WebGPU backend's int8 and uint8 arrays in 1-byte storage (option `int8Storage: 'packed'`, the HAL's
 * packedInt8 hook): which buffers hold bytes, the pack/unpack kernels between bytes and int32
 * (kernels/int8-storage.ts), and the helpers through which every kernel hook reaches such a buffer:
 * `widenedBytes` hands a kernel an int32 copy of the region a view spans (same strides, offset moved), and
 * `narrowedBytes` lets it compute into an int32 temporary that is then packed, each value wrapped modulo 2^8
 * (the HAL's narrow route: int32 arithmetic, one wrap). Copies and casts (`copyBytes`) pack straight from int32
 * storage where the source is contiguous and write only the bytes of their destination region; `fillBytes`
 * fills whole words. The idea is the float16 storage's (dispatch-half.ts `widened`/`narrowedInto`), at 1 byte.
 *
 * Memory per element: 1 byte against int32 storage's 4, so an int8 operand of matmulInteger is read in the words
 * its kernels multiply (dispatch-matmul-int.ts) instead of being repacked first.
 * On an H200 (benches/probes/webgpu-int8-matmul.ts --storage both, one process): int8 products 316–317 TOPS at 4096³
 * against 277–285 in int32 storage, 397–398 against 299–305 at 8192³.
 */
import type { DeviceBuffer, DType, NDArray } from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { fillWgsl } from './kernels/copy.js';
import { INT8_STORAGE_WORDS, packBytesWgsl, packWords, unpackBytesWgsl } from './kernels/int8-storage.js';
import { flat, rowMajor } from './kernel-params.js';

/** The dtypes stored in bytes. */
export type ByteDType = 'int8' | 'uint8';

/** What the int8 storage helpers need of the backend. */
export interface Int8Context {
  batch: CommandBatch;
  /** Ids of the buffers that hold int8 or uint8 in 1 byte per element, with their dtype. */
  bytes: ReadonlyMap<number, ByteDType>;
  /** The GPU buffer of a HAL buffer, byte storage included. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
  allocate(size: number, dtype: DType): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
}

/** A copy of `x` into `out` through `strides` from `offset` (dispatch-elementwise.ts dispatchCopy). */
export type CopyFn = (x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number) => void;

export const isBytes = (c: Int8Context, b: DeviceBuffer): boolean => c.bytes.has(b.id);

/** Whether any of the arrays or buffers (nulls skipped) is in byte storage. */
export function anyBytes(c: Int8Context, arrays: readonly (NDArray | null)[], outs: readonly DeviceBuffer[] = []) {
  if (c.bytes.size === 0) return false;
  return arrays.some((x) => x !== null && c.bytes.has(x.buffer.id)) || outs.some((b) => c.bytes.has(b.id));
}

/** `n` int32 values from element `srcOffset` of `src` into bytes `start` … `start + n − 1` of `dst` (wrapped). */
export function dispatchPack(
  c: Int8Context,
  src: DeviceBuffer,
  srcOffset: number,
  n: number,
  dst: DeviceBuffer,
  start: number,
): void {
  if (n === 0) return;
  const params = [n, srcOffset, start, 0];
  const buffers = [c.gpu(src), c.gpu(dst)];
  c.batch.dispatch(
    'packInt8',
    'int8/pack',
    packBytesWgsl,
    INT8_STORAGE_WORDS,
    params,
    buffers,
    flat(packWords(start, n)),
  );
}

/** `n` bytes of `src` from byte `start` into int32 elements of `dst` from `dstOffset` (int8: sign-extended). */
export function dispatchUnpack(
  c: Int8Context,
  src: DeviceBuffer,
  start: number,
  n: number,
  dst: DeviceBuffer,
  dstOffset: number,
): void {
  if (n === 0) return;
  const params = [n, dstOffset, start, c.bytes.get(src.id) === 'int8' ? 1 : 0];
  const buffers = [c.gpu(src), c.gpu(dst)];
  c.batch.dispatch('unpackInt8', 'int8/unpack', unpackBytesWgsl, INT8_STORAGE_WORDS, params, buffers, flat(n));
}

/** The first element a view reaches and how many elements its reach spans (0 when it is empty). */
function reach(x: NDArray): { lo: number; count: number } {
  let lo = x.offset;
  let hi = x.offset;
  for (let k = 0; k < x.shape.length; k++) {
    const d = x.shape[k]!;
    if (d === 0) return { lo: x.offset, count: 0 };
    const s = x.strides[k]! * (d - 1);
    if (s < 0) lo += s;
    else hi += s;
  }
  return { lo, count: hi - lo + 1 };
}

/**
 * Runs `kernel` with every byte-storage operand of `inputs` replaced by an int32 copy of the elements its view
 * reaches (same dtype, shape and strides; the offset moved into the copy), freeing the copies afterwards.
 */
export function widenedBytes<T>(c: Int8Context, inputs: readonly NDArray[], kernel: (wide: NDArray[]) => T): T {
  const temps: DeviceBuffer[] = [];
  try {
    const wide = inputs.map((x) => {
      if (!isBytes(c, x.buffer)) return x;
      const { lo, count } = reach(x);
      const t = c.allocate(count, 'int32');
      temps.push(t);
      dispatchUnpack(c, x.buffer, lo, count, t, 0);
      return { ...x, buffer: t, offset: x.offset - lo };
    });
    return kernel(wide);
  } finally {
    for (const t of temps) c.deallocate(t);
  }
}

/**
 * Runs `kernel` into `out`, or, when `out` is byte storage, into an int32 temporary (handed over with out's dtype,
 * so a narrowing kernel still clamps or wraps as for it) then packed into `out`; not packed when the kernel
 * returns false (it declined and wrote nothing: topk).
 */
export function narrowedBytes<T>(c: Int8Context, out: DeviceBuffer, kernel: (o: DeviceBuffer) => T): T {
  if (!isBytes(c, out)) return kernel(out);
  const t = c.allocate(out.size, 'int32');
  try {
    const r = kernel({ ...t, dtype: out.dtype });
    if (r !== false) dispatchPack(c, t, 0, out.size, out, 0);
    return r;
  } finally {
    c.deallocate(t);
  }
}

/** widenedBytes of `inputs`, then narrowedBytes into `out`. */
export function viaInt32<T>(
  c: Int8Context,
  inputs: readonly NDArray[],
  out: DeviceBuffer,
  run: (wide: NDArray[], o: DeviceBuffer) => T,
): T {
  return widenedBytes(c, inputs, (wide) => narrowedBytes(c, out, (o) => run(wide, o)));
}

/**
 * Runs `run` with the byte-storage arrays of `inputs` widened (nulls kept) and, where `out` is in byte storage,
 * narrowed into it; false when neither an input nor `out` is in byte storage (nothing run).
 */
export function withBytes(
  c: Int8Context,
  inputs: readonly (NDArray | null)[],
  out: DeviceBuffer | null,
  run: (wide: NDArray[], o: DeviceBuffer) => void,
): boolean {
  const arrays = inputs.filter((x): x is NDArray => x !== null);
  if (!anyBytes(c, arrays, out ? [out] : [])) return false;
  const all = (w: NDArray[]): NDArray[] => inputs.map((x) => (x ? w[arrays.indexOf(x)]! : x!));
  if (out) viaInt32(c, arrays, out, (w, o) => run(all(w), o));
  else widenedBytes(c, arrays, (w) => run(all(w), out!));
  return true;
}

/** Whether `a` (anything: an argument not yet checked) is an array in byte storage. */
export function isBytesArray(c: Int8Context, a: unknown): boolean {
  const id = (a as { buffer?: { id?: unknown } } | null)?.buffer?.id;
  return typeof id === 'number' && c.bytes.has(id);
}

/** Whether `strides` lay `shape` out row-major (dims of 1 aside): a contiguous destination region. */
function rowMajorRegion(shape: readonly number[], strides: readonly number[]): boolean {
  const want = rowMajor(shape);
  return shape.every((d, k) => d <= 1 || strides[k] === want[k]);
}

/** dtypes in int32 storage, whose wrap into int8 or uint8 is their low byte. */
const INT32_STORED: ReadonlySet<DType> = new Set(['int32', 'int8', 'uint8', 'bool']);

/**
 * copyKernel and copyIntoKernel where `x` or `out` is byte storage: `x` written into `out` through `strides` from
 * `offset` (out's dtype decides the conversion, as `copy` does it). A row-major region of `out` is packed from
 * an int32 source directly (or from a converted temporary), only its own bytes written; any other region is
 * written into an int32 copy of the whole of `out`, packed back. A contiguous byte source into a row-major int32
 * region is unpacked there directly.
 */
export function copyBytes(
  c: Int8Context,
  x: NDArray,
  out: DeviceBuffer,
  strides: readonly number[],
  offset: number,
  copy: CopyFn,
): void {
  const n = x.shape.reduce((p, d) => p * d, 1);
  if (n === 0) return;
  const unpacks = isBytes(c, x.buffer) && !isBytes(c, out) && out.dtype === 'int32';
  if (unpacks && isContiguous(x) && rowMajorRegion(x.shape, strides)) {
    dispatchUnpack(c, x.buffer, x.offset, n, out, offset); // into int32: the values as they are
    return;
  }
  widenedBytes(c, [x], ([w]) => {
    if (!isBytes(c, out)) {
      copy(w!, out, strides, offset);
      return;
    }
    if (rowMajorRegion(x.shape, strides)) {
      if (INT32_STORED.has(w!.dtype) && isContiguous(w!)) {
        dispatchPack(c, w!.buffer, w!.offset, n, out, offset);
        return;
      }
      const t = c.allocate(n, 'int32');
      try {
        copy(w!, { ...t, dtype: out.dtype }, rowMajor(x.shape), 0);
        dispatchPack(c, t, 0, n, out, offset);
      } finally {
        c.deallocate(t);
      }
      return;
    }
    const t = c.allocate(out.size, 'int32');
    try {
      dispatchUnpack(c, out, 0, out.size, t, 0);
      copy(w!, { ...t, dtype: out.dtype }, strides, offset);
      dispatchPack(c, t, 0, out.size, out, 0);
    } finally {
      c.deallocate(t);
    }
  });
}

/** fillKernel into byte storage: every word holds the value's byte four times (the value is an int8/uint8). */
export function fillBytes(c: Int8Context, out: DeviceBuffer, value: number): void {
  if (out.size === 0) return;
  const words = Math.ceil(out.size / 4);
  const bits = Math.imul(value & 0xff, 0x01010101);
  c.batch.dispatch('fill', 'fill/int32', () => fillWgsl('int32'), 4, [words, bits], [c.gpu(out)], flat(words));
}

/** int8/uint8 values (an Int32Array, as the HAL's storage hooks pass them) → bytes, padded to whole words. */
export function encodeBytes(data: Int32Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / 4) * 4);
  out.set(data); // each value modulo 2^8: its byte
  return out;
}

/** The first `size` bytes of `words` → their int8 (sign-extended) or uint8 values. */
export function decodeBytes(words: ArrayBufferView, size: number, dtype: ByteDType): Int32Array {
  const out = new Int32Array(size);
  const T = dtype === 'int8' ? Int8Array : Uint8Array;
  out.set(new T(words.buffer as ArrayBuffer, words.byteOffset, size));
  return out;
}
