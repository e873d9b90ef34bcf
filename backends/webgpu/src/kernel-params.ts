/** Kernel parameters and workgroup grids shared by the dispatches of the WebGPU backend. */
import { contiguousStrides } from '@polyhal/hal';
import { coalesce, grid, rankSlots } from './layout.js';

export const rowMajor = contiguousStrides;

/**
 * Coalesced dims as kernel params: the shape, then each operand's strides, right-aligned in R slots (padding:
 * size 1, stride 0).
 */
export function packDims(
  c: { shape: readonly number[]; strides: readonly (readonly number[])[] },
  R: number,
): number[] {
  // Plain loops: this runs for every elementwise dispatch, where spreads and flatMap showed in CPU profiles.
  const words: number[] = [];
  const put = (v: readonly number[], fill: number): void => {
    for (let i = v.length; i < R; i++) words.push(fill);
    for (let i = 0; i < v.length; i++) words.push(v[i]!);
  };
  put(c.shape, 1);
  for (let k = 0; k < c.strides.length; k++) put(c.strides[k]!, 0);
  return words;
}

/**
 * Shape and strides of coalesced operands as params, right-aligned in R = rankSlots(rank) slots
 * (any rank: ranks past MIN_RANK_SLOTS get kernels specialized for them).
 */
export function stridedParams(
  shape: readonly number[],
  operands: { strides: readonly number[] }[],
): { R: number; words: number[] } {
  const c = coalesce(
    shape,
    operands.map((o) => o.strides),
  );
  const R = rankSlots(c.shape.length);
  return { R, words: packDims(c, R) };
}

/** Workgroups of 256 threads for `n` invocations. */
export function flat(n: number): [number, number, number] {
  const [x, y] = grid(Math.ceil(n / 256));
  return [x, y, 1];
}
