/**
 * The WebGPU backend's float16 arrays in 2-byte storage (kernels/half.ts): which buffers hold binary16,
 * the elementwise and copy kernels that read and write it, and `widened`/`narrowedInto` for the kernels
 * that take float32 only (reduce, where, gather, scatter): a float16 operand reaches them as a float32
 * copy, and a float16 result is written to a float32 temporary and then rounded into place.
 *
 * Memory traffic per element of a contiguous float16 add: 2 + 2 bytes read, 2 written, against float32's
 * 4 + 4 and 4 (and, before the 2-byte storage, float32 storage plus a separate rounding pass).
 */
import {
  type BinaryOp,
  type DeviceBuffer,
  type DType,
  float16FromBits,
  type NDArray,
  type UnaryOp,
  viewOf,
} from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import { dispatchElementwiseNative } from './dispatch-half-native.js';
import type { CommandBatch } from './encoder.js';
import { copyWords } from './kernels/copy.js';
import { elementwiseWords } from './kernels/elementwise.js';
import {
  binaryHalfWgsl,
  copyHalfWgsl,
  elementwiseHalfWordsWgsl,
  type HalfConversions,
  type HalfCopyMode,
  type HalfOperands,
  halfKey,
  unaryHalfWgsl,
} from './kernels/half.js';
import {
  HALF_CAST_VEC_WIDTH,
  HALF_CAST_VEC_WORDS,
  type HalfCastDirection,
  halfCastVecWgsl,
} from './kernels/half-cast-vec.js';
import { flat, rowMajor, stridedParams } from './kernel-params.js';

/** What the float16 kernels need of the backend. */
export interface HalfContext {
  batch: CommandBatch;
  /** Ids of the buffers that hold float16 in 2 bytes per element. */
  half: ReadonlySet<number>;
  /** The GPU buffer of a HAL buffer, float16 storage included. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
  allocate(size: number, dtype: DType): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
  /** The conversions the kernels use (half-check.ts decides at creation). */
  conversions(): HalfConversions;
  /**
   * 'native': elementwise ops and reductions bind float16 as f16 arrays (`shader-f16`: dispatch-half-native.ts);
   * 'emulated': they decode and encode binary16 words with the conversions above (half-native-check.ts decides).
   */
  arithmetic(): HalfArithmetic;
}

/** How float16 elementwise ops and reductions run: on `shader-f16`'s f16 arrays, or on binary16 words in u32s. */
export type HalfArithmetic = 'native' | 'emulated';

export const isHalf = (c: HalfContext, b: DeviceBuffer): boolean => c.half.has(b.id);

/**
 * Words per invocation of the contiguous kernel (elementwiseHalfWordsWgsl) when every operand and the output
 * are float16 and contiguous from word-aligned offsets: 4 (a vec4<u32>) where offsets and count allow, else
 * 1; null when the general kernel must run.
 */
function wordsPlan(c: HalfContext, operands: NDArray[], out: DeviceBuffer): 1 | 4 | null {
  if (!isHalf(c, out) || !operands.every((x) => isHalf(c, x.buffer) && isContiguous(x) && x.offset % 2 === 0))
    return null;
  return out.size % 8 === 0 && operands.every((x) => x.offset % 8 === 0) ? 4 : 1;
}

function dispatchWords(c: HalfContext, op: UnaryOp | BinaryOp, operands: NDArray[], out: DeviceBuffer, W: 1 | 4): void {
  const arity = operands.length as 1 | 2;
  const conv = c.conversions();
  const offsets = operands.map((x) => x.offset);
  c.batch.dispatch(
    op,
    `${arity === 1 ? 'unary' : 'binary'}hw/${op}/${W}/${conv}`,
    () => elementwiseHalfWordsWgsl(op, arity, W, conv),
    elementwiseWords(1),
    [out.size, 0, offsets[0]!, offsets[1] ?? 0, 1, 0, 0],
    [...operands.map((x) => c.gpu(x.buffer)), c.gpu(out)],
    flat(Math.ceil(out.size / (2 * W))),
  );
}

/** Unary op of a float16 `x` into the float16 `out` (both 2-byte storage). */
export function dispatchUnaryHalf(c: HalfContext, op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
  const n = out.size;
  if (n === 0) return;
  if (c.arithmetic() === 'native') {
    dispatchElementwiseNative(c, op, [x], out);
    return;
  }
  const W = wordsPlan(c, [x], out);
  if (W) {
    dispatchWords(c, op, [x], out, W);
    return;
  }
  const half: HalfOperands = { inputs: [isHalf(c, x.buffer)], out: isHalf(c, out) };
  const contig = isContiguous(x);
  const conv = c.conversions();
  const { R, words } = stridedParams(x.shape, [x]);
  c.batch.dispatch(
    op,
    `unaryh/${op}/${halfKey(half)}/${contig}/${R}/${conv}`,
    () => unaryHalfWgsl(op, half, contig, R, conv),
    elementwiseWords(R),
    [n, 0, x.offset, 0, ...words],
    [c.gpu(x.buffer), c.gpu(out)],
    flat(half.out ? Math.ceil(n / 2) : n),
  );
}

/** Binary op of float16 `a`, `b` into `out`: float16 (2-byte storage) or bool for the comparisons. */
export function dispatchBinaryHalf(c: HalfContext, op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
  const n = out.size;
  if (n === 0) return;
  if (c.arithmetic() === 'native') {
    dispatchElementwiseNative(c, op, [a, b], out);
    return;
  }
  const W = wordsPlan(c, [a, b], out);
  if (W) {
    dispatchWords(c, op, [a, b], out, W);
    return;
  }
  const half: HalfOperands = { inputs: [isHalf(c, a.buffer), isHalf(c, b.buffer)], out: isHalf(c, out) };
  const contig = isContiguous(a) && isContiguous(b);
  const conv = c.conversions();
  const { R, words } = stridedParams(a.shape, [a, b]);
  c.batch.dispatch(
    op,
    `binaryh/${op}/${out.dtype}/${halfKey(half)}/${contig}/${R}/${conv}`,
    () => binaryHalfWgsl(op, out.dtype, half, contig, R, conv),
    elementwiseWords(R),
    [n, 0, a.offset, b.offset, ...words],
    [c.gpu(a.buffer), c.gpu(b.buffer), c.gpu(out)],
    flat(half.out ? Math.ceil(n / 2) : n),
  );
}

/** Whether `strides` lay `shape` out row-major (dims of 1 aside): a contiguous destination region. */
function rowMajorRegion(shape: readonly number[], strides: readonly number[]): boolean {
  const want = rowMajor(shape);
  return shape.every((d, k) => d <= 1 || strides[k] === want[k]);
}

/**
 * The direction of the 8-wide cast (kernels/half-cast-vec.ts) when `x` → `out` is a float32 ↔ float16 cast of a
 * contiguous source into a row-major destination region with the count and both offsets multiples of 8; null
 * when the general kernel must run.
 */
function vecCastDirection(
  c: HalfContext,
  x: NDArray,
  out: DeviceBuffer,
  outDtype: DType,
  strides: readonly number[],
  offset: number,
  n: number,
): HalfCastDirection | null {
  const w = HALF_CAST_VEC_WIDTH;
  if (n % w !== 0 || x.offset % w !== 0 || offset % w !== 0 || x.dtype !== 'float32') return null;
  if (!isContiguous(x) || !rowMajorRegion(x.shape, strides)) return null;
  const srcHalf = isHalf(c, x.buffer);
  const outHalf = isHalf(c, out);
  if (!srcHalf && outHalf && outDtype === 'float16') return 'narrow';
  if (srcHalf && !outHalf && outDtype === 'float32') return 'widen';
  return null;
}

/**
 * Copy/cast of `x` into `out` at (`strides`, `offset`) where `x` or `out` holds float16 in 2-byte storage:
 * `outDtype` is out's dtype (float16, float32, int32, int8, uint8).
 */
export function dispatchCopyHalf(
  c: HalfContext,
  x: NDArray,
  out: DeviceBuffer,
  outDtype: DType,
  strides: readonly number[],
  offset: number,
): void {
  const n = x.shape.reduce((p, d) => p * d, 1);
  if (n === 0) return;
  const srcHalf = isHalf(c, x.buffer);
  const conv = c.conversions();
  const direction = vecCastDirection(c, x, out, outDtype, strides, offset, n);
  if (direction) {
    c.batch.dispatch(
      'copy',
      `copyh8/${direction}/${conv}`,
      () => halfCastVecWgsl(direction, conv),
      HALF_CAST_VEC_WORDS,
      [n, 0, x.offset, offset],
      [c.gpu(x.buffer), c.gpu(out)],
      flat(n / HALF_CAST_VEC_WIDTH),
    );
    return;
  }
  const mode: HalfCopyMode = !isHalf(c, out) ? 'wide' : rowMajorRegion(x.shape, strides) ? 'words' : 'atomic';
  const { R, words } = stridedParams(x.shape, [x, { strides }]);
  const invocations = mode === 'words' ? ((offset + n - 1) >> 1) - (offset >> 1) + 1 : n;
  c.batch.dispatch(
    'copy',
    `copyh/${x.dtype}/${outDtype}/${srcHalf}/${mode}/${R}/${conv}`,
    () => copyHalfWgsl(x.dtype, outDtype, srcHalf, mode, R, conv),
    copyWords(R),
    [n, 0, x.offset, offset, ...words],
    [c.gpu(x.buffer), c.gpu(out)],
    flat(invocations),
  );
}

/**
 * Runs `kernel` with every float16 operand of `inputs` replaced by a float32 copy of its whole buffer
 * (same strides and offset), freeing the copies afterwards.
 */
export function widened<T>(c: HalfContext, inputs: NDArray[], kernel: (wide: NDArray[]) => T): T {
  const temps: DeviceBuffer[] = [];
  try {
    const wide = inputs.map((x) => {
      if (!isHalf(c, x.buffer)) return x;
      const t = c.allocate(x.buffer.size, 'float32');
      temps.push(t);
      const all = viewOf(x.buffer);
      dispatchCopyHalf(c, { ...all, dtype: 'float32' }, t, 'float32', rowMajor(all.shape), 0);
      return { ...x, buffer: t, dtype: 'float32' as const };
    });
    return kernel(wide);
  } finally {
    for (const t of temps) c.deallocate(t);
  }
}

/** Runs `kernel` into `out`, or, when `out` is float16 storage, into a float32 temporary then rounded into it. */
export function narrowedInto(c: HalfContext, out: DeviceBuffer, kernel: (o: DeviceBuffer) => void): void {
  if (!isHalf(c, out)) {
    kernel(out);
    return;
  }
  const t = c.allocate(out.size, 'float32');
  try {
    kernel(t);
    dispatchCopyHalf(c, viewOf(t), out, 'float16', rowMajor([out.size]), 0);
  } finally {
    c.deallocate(t);
  }
}

let decodeTable: Float32Array | null = null;

/** float16 values (a Float32Array of exact float16s, as the HAL's storage hooks pass them) → binary16 bits. */
export function encodeHalf(data: Float32Array): Uint16Array {
  const out = new Uint16Array(data.length + (data.length & 1)); // whole 4-byte words
  const u = new Uint32Array(data.buffer, data.byteOffset, data.length);
  for (let i = 0; i < data.length; i++) {
    const b = u[i]!;
    const s = (b >>> 16) & 0x8000;
    const a = b & 0x7fffffff;
    if (a > 0x7f800000) out[i] = s | 0x7e00 | ((a >>> 13) & 0x3ff);
    else if (a >= 0x38800000) out[i] = a >= 0x47800000 ? s | 0x7c00 : s | ((a - 0x38000000) >>> 13);
    else out[i] = s | Math.round(Math.abs(data[i]!) * 2 ** 24); // subnormal or zero: a multiple of 2^-24
  }
  return out;
}

/** binary16 bits → their float32 values (exact), the first `size` of `bits`. */
export function decodeHalf(bits: Uint16Array, size: number): Float32Array {
  if (!decodeTable) {
    decodeTable = new Float32Array(0x10000);
    for (let h = 0; h < 0x10000; h++) decodeTable[h] = float16FromBits(h);
  }
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = decodeTable[bits[i]!]!;
  return out;
}
