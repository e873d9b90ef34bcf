/**
 * The float16 elementwise dispatches on the `shader-f16` path (`float16Arithmetic` 'native': kernels/half-native.ts):
 * float16 operands bound as f16 arrays, add/sub/mul computed in f16, the other ops in f32 on exact conversions and
 * rounded once. Contiguous float16 operands and output: 8 elements per invocation (one vec4<u32> per operand,
 * read as four vec2<f16>) where offsets and the count are multiples of 8, 4 (one vec4<f16>) where they are
 * multiples of 4, 2 (one vec2<f16>) where the offsets are even. Other layouts and dtypes (operands that mix
 * float16 and float32, a float32 or bool output, a broadcast operand): 4 elements per invocation
 * (kernels/half-native-mixed.ts) where the count is a multiple of 4 and each operand is contiguous, a repeated
 * contiguous row of a multiple of 4 elements (a bias) or one element, from offsets that are multiples of 4 (but
 * for the one element); anything else one element per invocation.
 * Results: those of the emulated kernels (dispatch-half.ts), bit for bit (NaN payloads aside).
 */
import type { BinaryOp, DeviceBuffer, NDArray, UnaryOp } from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import { coalesce } from './layout.js';
import type { HalfContext } from './dispatch-half.js';
import { flat, stridedParams } from './kernel-params.js';
import { elementwiseWords } from './kernels/elementwise.js';
import { type HalfOperands, halfKey } from './kernels/half.js';
import { elementwiseNativeVecWgsl, elementwiseNativeWgsl } from './kernels/half-native.js';
import { elementwiseNativeMixedWgsl, type MixedLoad } from './kernels/half-native-mixed.js';

/** Elements per invocation of the vector kernel (8, 4 or 2), or null where the one-element kernel runs. */
function vecPlan(c: HalfContext, operands: NDArray[], out: DeviceBuffer): 2 | 4 | 8 | null {
  const halfOut = c.half.has(out.id);
  if (!halfOut || !operands.every((x) => c.half.has(x.buffer.id) && isContiguous(x) && x.offset % 2 === 0)) return null;
  const aligned = (m: number): boolean => out.size % m === 0 && operands.every((x) => x.offset % m === 0);
  return aligned(8) ? 8 : aligned(4) ? 4 : 2;
}

/**
 * How the 4-wide kernel of half-native-mixed.ts reads each operand, and the length of the repeated row (0 if
 * none), or null where it cannot: the count not a multiple of 4, an operand neither contiguous, nor one row of a
 * multiple of 4 elements repeated (every outer stride 0), nor one element, or a vec4 read misaligned.
 */
function mixedPlan(operands: NDArray[], n: number): { loads: MixedLoad[]; row: number } | null {
  if (n % 4 !== 0) return null;
  const c = coalesce(
    operands[0]!.shape,
    operands.map((x) => x.strides),
  );
  const r = c.shape.length;
  let row = 0;
  const loads: MixedLoad[] = [];
  for (let k = 0; k < operands.length; k++) {
    const x = operands[k]!;
    const s = c.strides[k]!;
    if (s.every((v) => v === 0)) loads.push('scalar');
    else if (x.offset % 4 !== 0) return null;
    else if (isContiguous(x)) loads.push('vec');
    else if (s[r - 1] === 1 && s.every((v, d) => d === r - 1 || v === 0) && c.shape[r - 1]! % 4 === 0) {
      if (row !== 0 && row !== c.shape[r - 1]) return null;
      row = c.shape[r - 1]!;
      loads.push('row');
    } else return null;
  }
  return { loads, row };
}

/** Unary or binary op of float16 operands into `out` (float16, or bool for the comparisons) on the native path. */
export function dispatchElementwiseNative(
  c: HalfContext,
  op: UnaryOp | BinaryOp,
  operands: NDArray[],
  out: DeviceBuffer,
): void {
  const n = out.size;
  if (n === 0) return;
  const arity = operands.length as 1 | 2;
  const kind = arity === 1 ? 'unary' : 'binary';
  const offsets = [operands[0]!.offset, operands[1]?.offset ?? 0];
  const buffers = [...operands.map((x) => c.gpu(x.buffer)), c.gpu(out)];
  const W = vecPlan(c, operands, out);
  if (W) {
    c.batch.dispatch(
      op,
      `${kind}hn/${op}/${W}`,
      () => elementwiseNativeVecWgsl(op, arity, W),
      elementwiseWords(1),
      [n, 0, ...offsets, 1, 0, 0],
      buffers,
      flat(Math.ceil(n / W)),
    );
    return;
  }
  const half: HalfOperands = { inputs: operands.map((x) => c.half.has(x.buffer.id)), out: c.half.has(out.id) };
  const mixed = mixedPlan(operands, n);
  if (mixed) {
    const { loads, row } = mixed;
    c.batch.dispatch(
      op,
      `${kind}hn4/${op}/${out.dtype}/${halfKey(half)}/${loads.join('-')}`,
      () => elementwiseNativeMixedWgsl(op, arity, out.dtype, half, loads),
      elementwiseWords(1),
      [n, row / 4, ...offsets, 0, 0, 0],
      buffers,
      flat(n / 4),
    );
    return;
  }
  const contig = operands.every((x) => isContiguous(x));
  const { R, words } = stridedParams(operands[0]!.shape, operands);
  c.batch.dispatch(
    op,
    `${kind}hn/${op}/${out.dtype}/${halfKey(half)}/${contig}/${R}`,
    () => elementwiseNativeWgsl(op, arity, out.dtype, half, contig, R),
    elementwiseWords(R),
    [n, 0, ...offsets, ...words],
    buffers,
    flat(n),
  );
}
