/**
 * The float64 oracle of the index ops (gather, scatterAdd, oneHot): each output element found from its
 * multi-index by the op's definition, on contiguous arrays — nothing shared with hal/src/families/indexing/indexing.ts
 * (no [outer, dim, inner] folding). The index rule: i + n for −n ≤ i < 0; out of range gathers NaN
 * (float32, float16), INT32_MIN (int32), −128 (int8), 255 (uint8) or true (bool), scatters nothing
 * and one-hot encodes as zeros.
 */
import type { DType } from '@polyhal/hal';
import { numel, ravel, type Ref, unravel } from './oracle.js';
import { oIsInt, oStoreInt } from './oracle-dtype.js';

const flat = (shape: readonly number[], idx: readonly number[]): number => ravel(idx, shape);

/** The position index `i` reads in a dim of n, or null out of range. */
function resolve(i: number, n: number): number | null {
  return i >= -n && i < n ? (i < 0 ? i + n : i) : null;
}

/** JAX's fills: NaN for floats, the minimum of signed integers, the maximum of unsigned ones, true for bool. */
export const GATHER_FILL_ORACLE: Record<DType, number> = {
  float32: Number.NaN,
  float16: Number.NaN,
  float64: Number.NaN,
  int32: -2147483648,
  int8: -128,
  uint8: 255,
  bool: 1,
};

export function oGather(x: Ref, indices: Ref, axis: number): Ref {
  const ax = axis < 0 ? axis + x.shape.length : axis;
  const r = indices.shape.length;
  const shape = [...x.shape.slice(0, ax), ...indices.shape, ...x.shape.slice(ax + 1)];
  const data = new Float64Array(numel(shape));
  for (let e = 0; e < data.length; e++) {
    const idx = unravel(e, shape);
    const pos = resolve(indices.data[flat(indices.shape, idx.slice(ax, ax + r))]!, x.shape[ax]!);
    data[e] =
      pos === null
        ? GATHER_FILL_ORACLE[x.dtype]
        : x.data[flat(x.shape, [...idx.slice(0, ax), pos, ...idx.slice(ax + r)])]!;
  }
  return { shape, data, dtype: x.dtype };
}

/** target plus the updates, summed exactly in float64 (scale: |target| + Σ|updates| per element). */
export function oScatterAdd(target: Ref, indices: Ref, updates: Ref, axis: number): Ref {
  const ax = axis < 0 ? axis + target.shape.length : axis;
  const r = indices.shape.length;
  const data = Float64Array.from(target.data);
  const scale = target.data.map(Math.abs);
  for (let e = 0; e < updates.data.length; e++) {
    const idx = unravel(e, updates.shape);
    const pos = resolve(indices.data[flat(indices.shape, idx.slice(ax, ax + r))]!, target.shape[ax]!);
    if (pos === null) continue;
    const t = flat(target.shape, [...idx.slice(0, ax), pos, ...idx.slice(ax + r)]);
    data[t] = data[t]! + updates.data[e]!;
    scale[t] = scale[t]! + Math.abs(updates.data[e]!);
  }
  if (oIsInt(target.dtype)) for (let i = 0; i < data.length; i++) data[i] = oStoreInt(target.dtype, data[i]! | 0);
  return { shape: [...target.shape], data, dtype: target.dtype, scale };
}

export function oOneHot(indices: Ref, depth: number): Ref {
  const shape = [...indices.shape, depth];
  const data = new Float64Array(numel(shape));
  indices.data.forEach((v, k) => {
    const pos = resolve(v, depth);
    if (pos !== null) data[k * depth + pos] = 1;
  });
  return { shape, data, dtype: 'float32' };
}

/**
 * argmax/argmin by definition: along `axis` (the flattened array when absent) the position of the
 * largest (smallest) element, NaN counting as the extreme; the first among ties, or the last.
 */
export function oArgExtreme(
  x: Ref,
  op: 'argmax' | 'argmin',
  axis: number | undefined,
  keepdims: boolean,
  last: boolean,
): Ref {
  if (axis === undefined) {
    const r = oArgExtreme({ ...x, shape: [numel(x.shape)] }, op, 0, false, last);
    return keepdims ? { ...r, shape: x.shape.map(() => 1) } : r;
  }
  const ax = axis < 0 ? axis + x.shape.length : axis;
  const n = x.shape[ax]!;
  const kept = x.shape.map((d, i) => (i === ax ? 1 : d));
  const data = new Float64Array(numel(kept));
  for (let o = 0; o < data.length; o++) {
    const base = unravel(o, kept);
    let best = -1;
    let bestV = 0;
    for (let i = 0; i < n; i++) {
      const v =
        x.data[
          ravel(
            base.map((b, d) => (d === ax ? i : b)),
            x.shape,
          )
        ]!;
      const better =
        best < 0 ||
        (Number.isNaN(v) && !Number.isNaN(bestV)) ||
        (!Number.isNaN(bestV) && (op === 'argmax' ? v > bestV : v < bestV)) ||
        (last && (v === bestV || (Number.isNaN(v) && Number.isNaN(bestV))));
      if (better) {
        best = i;
        bestV = v;
      }
    }
    data[o] = best;
  }
  return { shape: keepdims ? kept : x.shape.filter((_, i) => i !== ax), data, dtype: 'int32' };
}
