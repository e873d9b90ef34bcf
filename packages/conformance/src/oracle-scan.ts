/**
 * The float64 oracle of cumsum and topk: each output element found from its multi-index by the op's
 * definition, on contiguous arrays — nothing shared with hal/src/families/scan/scan.ts (no blocks, no tournament).
 * cumsum sums sequentially in float64 and carries Σ|finite terms| of each prefix as the error scale;
 * topk sorts each line with a comparator (value first, NaN above every number, then the lower index).
 */
import { numel, ravel, type Ref, unravel } from './oracle.js';

/** The positions of the line through `base` along axis `ax` (a 0-d x is one line of one element). */
function line(shape: readonly number[], base: readonly number[], ax: number, n: number): number[] {
  if (shape.length === 0) return [0];
  return Array.from({ length: n }, (_, i) =>
    ravel(
      base.map((b, d) => (d === ax ? i : b)),
      shape,
    ),
  );
}

export function oCumsum(x: Ref, axis: number, exclusive: boolean, reverse: boolean): Ref {
  const r = Math.max(x.shape.length, 1);
  const ax = axis < 0 ? axis + r : axis;
  const n = x.shape.length === 0 ? 1 : x.shape[ax]!;
  const data = new Float64Array(x.data.length);
  const scale = new Float64Array(x.data.length);
  const lines = x.shape.map((d, i) => (i === ax ? 1 : d));
  for (let o = 0; o < (n === 0 ? 0 : numel(lines)); o++) {
    const pos = line(x.shape, unravel(o, lines), ax, n);
    const order = reverse ? [...pos].reverse() : pos;
    let acc = 0;
    let abs = 0;
    for (const p of order) {
      const v = x.data[p]!;
      if (!exclusive) {
        acc += v;
        if (Number.isFinite(v)) abs += Math.abs(v);
      }
      data[p] = x.dtype === 'int32' ? acc | 0 : acc;
      scale[p] = abs;
      if (exclusive) {
        acc += v;
        if (Number.isFinite(v)) abs += Math.abs(v);
      }
      if (x.dtype === 'int32') acc |= 0;
    }
  }
  return { shape: [...x.shape], data, dtype: x.dtype, scale };
}

/** Whether a is ordered before b (largest: the larger first; NaN above every number; then the lower index). */
function before(a: number, ia: number, b: number, ib: number, largest: boolean): boolean {
  const na = Number.isNaN(a);
  const nb = Number.isNaN(b);
  if (na !== nb) return largest ? na : nb;
  if (!na && a !== b) return largest ? a > b : a < b;
  return ia < ib;
}

export function oTopk(x: Ref, k: number, axis: number, largest: boolean): [Ref, Ref] {
  const ax = axis < 0 ? axis + x.shape.length : axis;
  const n = x.shape[ax]!;
  const shape = x.shape.map((d, i) => (i === ax ? k : d));
  const values = new Float64Array(numel(shape));
  const indices = new Float64Array(numel(shape));
  const lines = x.shape.map((d, i) => (i === ax ? 1 : d));
  for (let o = 0; o < (k === 0 ? 0 : numel(lines)); o++) {
    const base = unravel(o, lines);
    const pos = line(x.shape, base, ax, n);
    const order = Array.from({ length: n }, (_, i) => i).sort((i, j) =>
      before(x.data[pos[i]!]!, i, x.data[pos[j]!]!, j, largest) ? -1 : 1,
    );
    for (let p = 0; p < k; p++) {
      const at = ravel(
        base.map((b, d) => (d === ax ? p : b)),
        shape,
      );
      values[at] = x.data[pos[order[p]!]!]!;
      indices[at] = order[p]!;
    }
  }
  return [
    { shape, data: values, dtype: x.dtype },
    { shape: [...shape], data: indices, dtype: 'int32' },
  ];
}
