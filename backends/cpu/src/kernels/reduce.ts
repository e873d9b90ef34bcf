/**
 * Reduction kernel (sum, max, min, prod) over any set of axes of a strided input. float32 sums and
 * products accumulate in float64 and round once, so their error does not grow with n; int32 sums and
 * products wrap modulo 2^32. The loop order follows memory: when the innermost stride belongs to a
 * reduced axis, each output is a tight inner loop; otherwise (e.g. a column sum of [N, C]) whole rows
 * of outputs accumulate at once into a float64 scratch.
 */
import { REDUCE_OP_DEFS, type ReduceOp, UnsupportedOpError } from '@polyhal/hal';
import { type StorageArray, splitReduceAxes } from '@polyhal/hal/internal';
import { planRows, type RowPlan, type Strided } from './strided.js';

const FOLDS: readonly ReduceOp[] = ['sum', 'max', 'min', 'prod'];

/** `bool`: x holds bool's 0/1 (max is any, min is all): rows stop at their first 1 (any) or 0 (all). */
export function reduceKernel(op: ReduceOp, x: Strided, axes: readonly number[], out: StorageArray, bool = false): void {
  const isInt = out instanceof Int32Array;
  if (!FOLDS.includes(op)) throw new UnsupportedOpError(String(op), isInt ? 'int32' : 'float32', 'cpu');
  const identity = REDUCE_OP_DEFS[op].identity;
  const init = isInt ? identity.int32! : identity.float32;
  const { kept: k, reduced: r } = splitReduceAxes(x.shape, x.strides, axes);
  const outSize = out.length;
  if (outSize === 0) return;
  const red = planRows(r.shape, [r.strides], [0]);
  const kept = planRows(k.shape, [k.strides], [x.offset]);
  if (red.rows === 0) {
    out.fill(init);
    return;
  }
  // int32 products wrap: Math.imul on int32 accumulators (a float64 product would lose the low bits).
  // int32 (and bool's 0/1) max/min: plain comparisons, no NaN to propagate (any/all are bool max/min).
  const fold = op === 'prod' && isInt ? 'imul' : isInt && (op === 'max' || op === 'min') ? (`${op}Int` as Fold) : op;
  const minRed = innerStride(red);
  const minKept = innerStride(kept);
  if (minKept !== 0 && minKept < minRed) reduceOuter(fold, init, x.data, red, kept, out);
  else if (bool && (op === 'max' || op === 'min')) boolInner(op === 'max', x.data, red, kept, out);
  else reduceInner(fold, init, x.data, red, kept, out);
}

type Fold = ReduceOp | 'imul' | 'maxInt' | 'minInt';

function innerStride(p: RowPlan): number {
  return p.n > 1 ? Math.abs(p.step[0]!) : Infinity;
}

/** For each output: loop over the reduced elements. */
function reduceInner(fold: Fold, init: number, x: StorageArray, red: RowPlan, kept: RowPlan, out: StorageArray): void {
  const rs = red.starts[0]!;
  const rn = red.n;
  const rstep = red.step[0]!;
  const ks = kept.starts[0]!;
  let o = 0;
  for (let kr = 0; kr < kept.rows; kr++) {
    for (let ki = 0; ki < kept.n; ki++, o++) {
      const base = ks[kr]! + ki * kept.step[0]!;
      let acc = init;
      for (let r = 0; r < red.rows; r++) {
        let p = base + rs[r]!;
        if (fold === 'sum') {
          for (let i = 0; i < rn; i++, p += rstep) acc += x[p]!;
        } else if (fold === 'max') {
          for (let i = 0; i < rn; i++, p += rstep) acc = Math.max(acc, x[p]!);
          if (acc !== acc) break;
        } else if (fold === 'min') {
          for (let i = 0; i < rn; i++, p += rstep) acc = Math.min(acc, x[p]!);
          if (acc !== acc) break;
        } else if (fold === 'prod') {
          for (let i = 0; i < rn; i++, p += rstep) acc *= x[p]!;
        } else if (fold === 'maxInt') {
          for (let i = 0; i < rn; i++, p += rstep) if (x[p]! > acc) acc = x[p]!;
        } else if (fold === 'minInt') {
          for (let i = 0; i < rn; i++, p += rstep) if (x[p]! < acc) acc = x[p]!;
        } else {
          for (let i = 0; i < rn; i++, p += rstep) acc = Math.imul(acc, x[p]!);
        }
      }
      out[o] = acc;
    }
  }
}

/** For each reduced element: accumulate whole rows of outputs (inner loop over kept elements). */
function reduceOuter(fold: Fold, init: number, x: StorageArray, red: RowPlan, kept: RowPlan, out: StorageArray): void {
  const acc = fold === 'imul' ? new Int32Array(out.length).fill(init) : new Float64Array(out.length).fill(init);
  const ks = kept.starts[0]!;
  const kn = kept.n;
  const kstep = kept.step[0]!;
  const rs = red.starts[0]!;
  for (let r = 0; r < red.rows; r++) {
    for (let ri = 0; ri < red.n; ri++) {
      const roff = rs[r]! + ri * red.step[0]!;
      for (let kr = 0; kr < kept.rows; kr++) {
        let p = ks[kr]! + roff;
        let o = kr * kn;
        const end = o + kn;
        if (fold === 'sum') {
          for (; o < end; o++, p += kstep) acc[o] += x[p]!;
        } else if (fold === 'max' || fold === 'maxInt') {
          for (; o < end; o++, p += kstep) acc[o] = Math.max(acc[o]!, x[p]!);
        } else if (fold === 'min' || fold === 'minInt') {
          for (; o < end; o++, p += kstep) acc[o] = Math.min(acc[o]!, x[p]!);
        } else if (fold === 'prod') {
          for (; o < end; o++, p += kstep) acc[o] *= x[p]!;
        } else {
          for (; o < end; o++, p += kstep) acc[o] = Math.imul(acc[o]!, x[p]!);
        }
      }
    }
  }
  // max/min: Math.max/Math.min return NaN once a NaN is seen, and +0 over −0 (IEEE 754-2019 maximum).
  for (let i = 0; i < acc.length; i++) out[i] = acc[i]!;
}

/**
 * any (max) or all (min) of one bool row x[p], x[p + step], … (values 0/1): OR (any) or AND (all) over
 * blocks of 64 without a branch per element, stopping after the first block that decides the row.
 */
function boolRow(any: boolean, x: StorageArray, p: number, step: number, n: number): number {
  for (let i = 0; i < n; ) {
    const end = Math.min(n, i + 64);
    const s2 = 2 * step;
    const s3 = 3 * step;
    const s4 = 4 * step;
    if (any) {
      let acc = 0;
      for (; i + 4 <= end; i += 4, p += s4) acc |= x[p]! | x[p + step]! | x[p + s2]! | x[p + s3]!;
      for (; i < end; i++, p += step) acc |= x[p]!;
      if (acc !== 0) return 1;
    } else {
      let acc = 1;
      for (; i + 4 <= end; i += 4, p += s4) acc &= x[p]! & x[p + step]! & x[p + s2]! & x[p + s3]!;
      for (; i < end; i++, p += step) acc &= x[p]!;
      if (acc === 0) return 0;
    }
  }
  return any ? 0 : 1;
}

/** boolRow over every output, a row plan of the reduced axes each. */
function boolInner(any: boolean, x: StorageArray, red: RowPlan, kept: RowPlan, out: StorageArray): void {
  const rs = red.starts[0]!;
  const ks = kept.starts[0]!;
  const stop = any ? 1 : 0;
  let o = 0;
  for (let kr = 0; kr < kept.rows; kr++) {
    for (let ki = 0; ki < kept.n; ki++, o++) {
      const base = ks[kr]! + ki * kept.step[0]!;
      let v = 1 - stop;
      for (let r = 0; r < red.rows && v !== stop; r++) v = boolRow(any, x, base + rs[r]!, red.step[0]!, red.n);
      out[o] = v;
    }
  }
}
