/**
 * The float64 oracle of scatter, gatherND, scatterND and scatterElements: each op by its definition on
 * contiguous arrays, element by element — the updates visited in row-major order (which is index order at
 * every position), tuples resolved component by component. Nothing shared with
 * hal/src/families/indexing/indexing-nd.ts (no flat positions, no [outer, dim, inner] folding). The index
 * rule: i + n for −n ≤ i < 0; a (component) index out of range gathers gather's fill (NaN for floats,
 * INT32_MIN, −128 and 255 for int32, int8 and uint8: oracle-index.ts) and scatters nothing. Reductions:
 * none keeps the last update, add sums exactly in float64 (error scale |target| + Σ|updates|), mul
 * multiplies (scale |product|·(factors + 1): one rounding per factor in float32); int32 wraps modulo
 * 2^32, int8 and uint8 modulo 2^8.
 */
import { numel, ravel, type Ref, unravel } from './oracle.js';
import { oIsInt, oStoreInt } from './oracle-dtype.js';
import { GATHER_FILL_ORACLE } from './oracle-index.js';

export type Reduction = 'none' | 'add' | 'mul';

/** The position index `i` reads in a dim of n, or null out of range. */
function resolve(i: number, n: number): number | null {
  return i >= -n && i < n ? (i < 0 ? i + n : i) : null;
}

/** A scatter in progress: the target's values, their error scale and the factors multiplied in. */
class Scattered {
  readonly data: Float64Array;
  readonly scale: Float64Array;
  readonly factors: Uint32Array;
  constructor(
    private readonly target: Ref,
    private readonly reduction: Reduction,
  ) {
    this.data = Float64Array.from(target.data);
    this.scale = target.data.map(Math.abs);
    this.factors = new Uint32Array(target.data.length);
  }

  /** One update of value u at flat position t. */
  apply(t: number, u: number): void {
    const int = oIsInt(this.target.dtype);
    if (this.reduction === 'none') {
      this.data[t] = u;
      this.scale[t] = Math.abs(u);
    } else if (this.reduction === 'add') {
      this.data[t] = this.data[t]! + u;
      this.scale[t] = this.scale[t]! + Math.abs(u);
    } else {
      this.data[t] = int ? Math.imul(this.data[t]!, u) : this.data[t]! * u;
      this.factors[t] = this.factors[t]! + 1;
    }
  }

  result(): Ref {
    const dtype = this.target.dtype;
    const data = this.data.map((v) => (oIsInt(dtype) ? oStoreInt(dtype, v | 0) : v));
    if (this.reduction === 'mul')
      this.factors.forEach((f, t) => {
        if (f > 0) this.scale[t] = Math.abs(data[t]!) * (f + 1);
      });
    return { shape: [...this.target.shape], data, dtype: this.target.dtype, scale: this.scale };
  }
}

/** scatter along `axis`: updates element [o..., k..., i...] goes to [o..., position(indices[k...]), i...]. */
export function oScatter(target: Ref, indices: Ref, updates: Ref, axis: number, reduction: Reduction): Ref {
  const ax = axis < 0 ? axis + target.shape.length : axis;
  const r = indices.shape.length;
  const s = new Scattered(target, reduction);
  for (let e = 0; e < updates.data.length; e++) {
    const idx = unravel(e, updates.shape);
    const pos = resolve(indices.data[ravel(idx.slice(ax, ax + r), indices.shape)]!, target.shape[ax]!);
    if (pos !== null) s.apply(ravel([...idx.slice(0, ax), pos, ...idx.slice(ax + r)], target.shape), updates.data[e]!);
  }
  return s.result();
}

/** The tuple of indices [...lead, q] at `lead`, resolved against dims, or null when one is out of range. */
function tuple(indices: Ref, lead: number[], dims: readonly number[]): number[] | null {
  const q = indices.shape[indices.shape.length - 1]!;
  const out: number[] = [];
  for (let m = 0; m < q; m++) {
    const p = resolve(indices.data[ravel([...lead, m], indices.shape)]!, dims[m]!);
    if (p === null) return null;
    out.push(p);
  }
  return out;
}

/** gatherND: out[b..., m..., s...] = x[b..., tuple(b..., m...), s...], or the fill. */
export function oGatherND(x: Ref, indices: Ref, batchDims: number): Ref {
  const ri = indices.shape.length;
  const q = indices.shape[ri - 1]!;
  const lead = indices.shape.slice(0, ri - 1);
  const shape = [...lead, ...x.shape.slice(batchDims + q)];
  const data = new Float64Array(numel(shape));
  for (let e = 0; e < data.length; e++) {
    const idx = unravel(e, shape);
    const at = idx.slice(0, ri - 1);
    const t = tuple(indices, at, x.shape.slice(batchDims, batchDims + q));
    data[e] =
      t === null
        ? GATHER_FILL_ORACLE[x.dtype]
        : x.data[ravel([...at.slice(0, batchDims), ...t, ...idx.slice(ri - 1)], x.shape)]!;
  }
  return { shape, data, dtype: x.dtype };
}

/** scatterND: updates[m..., s...] to target[tuple(m...), s...], tuples in row-major order. */
export function oScatterND(target: Ref, indices: Ref, updates: Ref, reduction: Reduction): Ref {
  const ri = indices.shape.length;
  const s = new Scattered(target, reduction);
  for (let e = 0; e < updates.data.length; e++) {
    const idx = unravel(e, updates.shape);
    const t = tuple(indices, idx.slice(0, ri - 1), target.shape);
    if (t !== null) s.apply(ravel([...t, ...idx.slice(ri - 1)], target.shape), updates.data[e]!);
  }
  return s.result();
}

/** scatterElements: updates[p] to target[p with p[axis] = position(indices[p])], p in row-major order. */
export function oScatterElements(target: Ref, indices: Ref, updates: Ref, axis: number, reduction: Reduction): Ref {
  const ax = axis < 0 ? axis + target.shape.length : axis;
  const s = new Scattered(target, reduction);
  for (let e = 0; e < updates.data.length; e++) {
    const idx = unravel(e, updates.shape);
    const pos = resolve(indices.data[e]!, target.shape[ax]!);
    if (pos !== null)
      s.apply(
        ravel(
          idx.map((v, d) => (d === ax ? pos : v)),
          target.shape,
        ),
        updates.data[e]!,
      );
  }
  return s.result();
}
