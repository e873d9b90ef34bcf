/**
 * The WebGPU backend's int8 and uint8 arrays in 1-byte storage (dispatch-int8.ts): four elements to a u32 word,
 * element i in byte i % 4 of word i / 4 (little-endian), int8 in two's complement. Two kernels move values
 * between that storage and int32 (the storage dtype the other kernels compute in):
 *
 * - `packBytesWgsl`: n int32 values from element `srcOffset` of an i32 array into the bytes `start` …
 *   `start + n − 1` of a byte buffer, each wrapped modulo 2^8 (its low byte: NumPy's and PyTorch's wrap for int8
 *   and uint8 alike). One invocation per word of the region; a word the region shares with bytes outside it (a
 *   first byte or an end not on a word boundary) keeps those bytes, so views starting mid-word and their
 *   neighbours are never clobbered (as matmul-f16-crop-half.ts keeps the halves outside its region).
 * - `unpackBytesWgsl`: n bytes from byte `start` into i32 elements from `dstOffset`, sign-extended (int8) or
 *   zero-extended (uint8). One invocation per element; the destination is int32 storage, so nothing is shared.
 *
 * Params (INT8_STORAGE_WORDS i32): 0 n, 1 the offset on the int32 side, 2 the first byte, 3 1 for int8 (signed).
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const INT8_STORAGE_WORDS = 4;

/** WGSL: int32 values → bytes of a region, one invocation per word, the bytes outside the region kept. */
export function packBytesWgsl(): string {
  return `${paramsPrelude(INT8_STORAGE_WORDS)}
@group(0) @binding(1) var<storage, read> src: array<i32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let start = u32(p(2u));
  let end = start + u32(p(0u));
  let w = (start >> 2u) + idx;
  let e0 = w * 4u;
  if (e0 >= end) { return; }
  var word = 0u;
  if (e0 < start || e0 + 4u > end) { word = dst[w]; }
  let first = u32(p(1u));
  for (var j = 0u; j < 4u; j++) {
    let e = e0 + j;
    if (e >= start && e < end) {
      let shift = 8u * j;
      let v = bitcast<u32>(src[first + e - start]) & 0xffu;
      word = (word & ~(0xffu << shift)) | (v << shift);
    }
  }
  dst[w] = word;
}`;
}

/** WGSL: bytes of a region → int32 values (sign-extended for int8), one invocation per element. */
export function unpackBytesWgsl(): string {
  return `${paramsPrelude(INT8_STORAGE_WORDS)}
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<i32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let b = u32(p(2u)) + idx;
  let v = (src[b >> 2u] >> (8u * (b & 3u))) & 0xffu;
  var r = i32(v);
  if (p(3u) == 1) { r = bitcast<i32>(v << 24u) >> 24u; }
  dst[u32(p(1u)) + idx] = r;
}`;
}

/** Invocations of the pack kernel for `n` bytes from byte `start`: the words the region touches. */
export function packWords(start: number, n: number): number {
  return n === 0 ? 0 : ((start + n - 1) >> 2) - (start >> 2) + 1;
}
