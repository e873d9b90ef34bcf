/**
 * Conformance cases of matmul's empty forms: every product with a zero-sized M, N, K or batch, in every
 * layout a backend or the HAL may take a shortcut on — 2-D × 2-D, batched a × 2-D b (the batch merged into
 * M), 2-D a × batched b, equal and broadcast batches — with and without a bias, in float32, float16, int32,
 * int8 and uint8. NumPy, PyTorch and tfjs return an empty result of the broadcast shape, or zeros (plus the
 * bias) where only K is 0. A shortcut that works out a row count by dividing by N (0) fails here.
 * matmulInteger and matmulIntegerToFloat (int8, with zero points and scales) take the same forms.
 */
import type { DType } from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { fmt, I, U } from './cases-util.js';
import type { Generator } from './random.js';

/** [a shape, b shape] of each empty form, named by what is 0. */
const FORMS: readonly [string, number[], number[]][] = [
  ['M', [0, 3], [3, 4]],
  ['N', [4, 3], [3, 0]],
  ['K', [4, 0], [0, 5]],
  ['all', [0, 0], [0, 0]],
  // batched a × 2-D b
  ['batched-a/N', [2, 3, 4], [4, 0]],
  ['batched-a/M', [2, 0, 4], [4, 5]],
  ['batched-a/K', [2, 3, 0], [0, 5]],
  ['batched-a/batch', [0, 3, 4], [4, 5]],
  // 2-D a × batched b
  ['batched-b/N', [3, 4], [2, 4, 0]],
  ['batched-b/M', [0, 4], [2, 4, 5]],
  ['batched-b/K', [3, 0], [2, 0, 5]],
  ['batched-b/batch', [3, 4], [0, 4, 5]],
  // equal batches
  ['batched/N', [2, 3, 4], [2, 4, 0]],
  ['batched/K', [2, 3, 0], [2, 0, 5]],
  // broadcast batches ([2, 1] with [5] → [2, 5]; [0, 1] with [5] → [0, 5])
  ['broadcast/N', [2, 1, 3, 4], [5, 4, 0]],
  ['broadcast/M', [2, 1, 0, 4], [5, 4, 6]],
  ['broadcast/K', [2, 1, 3, 0], [5, 0, 6]],
  ['broadcast/batch', [0, 1, 3, 4], [5, 4, 6]],
];

const DTYPES: readonly DType[] = ['float32', 'float16', 'int32', 'int8', 'uint8'];

function gen(dtype: DType): Generator {
  if (dtype === 'float32' || dtype === 'float16') return U(-1, 1);
  if (dtype === 'uint8') return I(0, 255);
  return I(-128, 127);
}

/** A bias of the product's last dimension ([N]), which broadcasts over every form. */
function biasShape(b: readonly number[]): number[] {
  return [b[b.length - 1]!];
}

export function emptyMatmulCases(): Case[] {
  const cases: Case[] = [];
  for (const dtype of DTYPES) {
    const g = gen(dtype);
    for (const [name, sa, sb] of FORMS) {
      const a: InputSpec = { shape: sa, gen: g, dtype };
      const b: InputSpec = { shape: sb, gen: g, dtype };
      const bias: InputSpec = { shape: biasShape(sb), gen: g, dtype };
      const id = `matmul/${dtype}/empty-${name}/${fmt(sa)}x${fmt(sb)}`;
      cases.push({ id, kind: 'matmul', op: 'matmul', dtype, inputs: [a, b] });
      cases.push({ id: `${id}+bias${fmt(bias.shape)}`, kind: 'matmul', op: 'matmul', dtype, inputs: [a, b, bias] });
    }
  }
  // The quantized products: int8 operands, a per-tensor zero point for a, scales per tensor and per column.
  const i8 = (shape: number[]): InputSpec => ({ shape, gen: I(-128, 127), dtype: 'int8' });
  const scale = (shape: number[]): InputSpec => ({ shape, gen: { kind: 'positive', lo: 1e-3, hi: 0.02 } });
  for (const [name, sa, sb] of FORMS) {
    const n = sb[sb.length - 1]!;
    const shapes = `${fmt(sa)}x${fmt(sb)}`;
    const [a, b] = [i8(sa), i8(sb)];
    cases.push({
      id: `matmulInteger/int8/${shapes}/empty-${name}`,
      kind: 'composite',
      op: 'matmulInteger',
      dtype: 'int8',
      inputs: [a, b, i8([]), i8([])],
    });
    const bias: InputSpec = { shape: [n], gen: U(-3, 3), dtype: 'float32' };
    cases.push({
      id: `matmulIntegerToFloat/int8/${shapes}/empty-${name}+bias`,
      kind: 'composite',
      op: 'matmulIntegerToFloat',
      dtype: 'float32',
      inputs: [a, b, scale([]), scale([n]), bias],
    });
  }
  return cases;
}
