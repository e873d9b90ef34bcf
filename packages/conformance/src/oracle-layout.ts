/**
 * The float64 oracle of the layout ops (concat, stack, split, tile, flip, trilu, pad modes): each
 * output element found from its multi-index by the op's definition, on contiguous arrays — no runs,
 * no skew, nothing shared with hal/src/families/layout/layout.ts.
 */
import { numel, type Ref, unravel } from './oracle.js';

function at(x: Ref, idx: readonly number[]): number {
  let f = 0;
  for (let d = 0; d < x.shape.length; d++) f = f * x.shape[d]! + idx[d]!;
  return x.data[f]!;
}

/** A Ref of `shape` whose element at idx is value(idx). */
function build(shape: number[], dtype: Ref['dtype'], value: (idx: number[]) => number): Ref {
  const data = new Float64Array(numel(shape));
  for (let i = 0; i < data.length; i++) data[i] = value(unravel(i, shape));
  return { shape, data, dtype };
}

export function oConcat(xs: Ref[], axis: number): Ref {
  const ax = axis < 0 ? axis + xs[0]!.shape.length : axis;
  const shape = [...xs[0]!.shape];
  shape[ax] = xs.reduce((s, x) => s + x.shape[ax]!, 0);
  return build(shape, xs[0]!.dtype, (idx) => {
    let i = idx[ax]!;
    for (const x of xs) {
      if (i < x.shape[ax]!)
        return at(
          x,
          idx.map((v, d) => (d === ax ? i : v)),
        );
      i -= x.shape[ax]!;
    }
    throw new Error('oracle: concat index out of range');
  });
}

export function oStack(xs: Ref[], axis: number): Ref {
  const ax = axis < 0 ? axis + xs[0]!.shape.length + 1 : axis;
  const shape = [...xs[0]!.shape.slice(0, ax), xs.length, ...xs[0]!.shape.slice(ax)];
  return build(shape, xs[0]!.dtype, (idx) => at(xs[idx[ax]!]!, [...idx.slice(0, ax), ...idx.slice(ax + 1)]));
}

export function oSplit(x: Ref, sizesOrSections: number | number[], axis: number): Ref[] {
  const ax = axis < 0 ? axis + x.shape.length : axis;
  const dim = x.shape[ax]!;
  const sizes =
    typeof sizesOrSections === 'number'
      ? new Array<number>(sizesOrSections).fill(dim / sizesOrSections)
      : sizesOrSections;
  let start = 0;
  return sizes.map((s) => {
    const first = start;
    start += s;
    const shape = x.shape.map((d, i) => (i === ax ? s : d));
    return build(shape, x.dtype, (idx) =>
      at(
        x,
        idx.map((v, d) => (d === ax ? v + first : v)),
      ),
    );
  });
}

export function oTile(x: Ref, reps: number[]): Ref {
  const rank = Math.max(reps.length, x.shape.length);
  const r = [...new Array<number>(rank - reps.length).fill(1), ...reps];
  const dims = [...new Array<number>(rank - x.shape.length).fill(1), ...x.shape];
  const lead = rank - x.shape.length;
  return build(
    dims.map((d, i) => d * r[i]!),
    x.dtype,
    (idx) =>
      at(
        x,
        idx.slice(lead).map((v, d) => v % x.shape[d]!),
      ),
  );
}

export function oFlip(x: Ref, axes?: number[]): Ref {
  const ax = (axes ?? x.shape.map((_, i) => i)).map((a) => (a < 0 ? a + x.shape.length : a));
  return build([...x.shape], x.dtype, (idx) =>
    at(
      x,
      idx.map((v, d) => (ax.includes(d) ? x.shape[d]! - 1 - v : v)),
    ),
  );
}

export function oTrilu(x: Ref, k: number, upper: boolean): Ref {
  const r = x.shape.length;
  return build([...x.shape], x.dtype, (idx) => {
    const t = idx[r - 1]! - idx[r - 2]!;
    return (upper ? t >= k : t <= k) ? at(x, idx) : 0;
  });
}

/** NumPy's np.pad modes, by definition per index: edge clamps, reflect mirrors (period 2n − 2), wrap is periodic. */
export function oPadMode(x: Ref, pads: [number, number][], mode: 'edge' | 'reflect' | 'wrap'): Ref {
  const source = (o: number, n: number): number => {
    if (mode === 'edge') return Math.min(n - 1, Math.max(0, o));
    if (mode === 'wrap') return ((o % n) + n) % n;
    if (n === 1) return 0;
    let p = Math.abs(o) % (2 * n - 2);
    if (p >= n) p = 2 * n - 2 - p;
    return p;
  };
  const shape = x.shape.map((d, i) => d + pads[i]![0] + pads[i]![1]);
  return build(shape, x.dtype, (idx) =>
    at(
      x,
      idx.map((v, d) => source(v - pads[d]![0], x.shape[d]!)),
    ),
  );
}
