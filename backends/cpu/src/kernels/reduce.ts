/**
 * Reduction kernel (sum, max) over any set of axes of a strided input. Accumulates in float64, so the
 * error of a float32 sum does not grow with n. The loop order follows memory: when the innermost
 * stride belongs to a reduced axis, each output is a tight inner loop; otherwise (e.g. a column sum of
 * [N, C]) whole rows of outputs accumulate at once into a float64 scratch.
 */
import { type HostArray, type ReduceOp, UnsupportedOpError } from '@polyhal/hal';
import { planRows, type RowPlan, type Strided } from './strided.js';

export function reduceKernel(op: ReduceOp, x: Strided, axes: readonly number[], out: HostArray): void {
  if (op !== 'sum' && op !== 'max')
    throw new UnsupportedOpError(String(op), out instanceof Int32Array ? 'int32' : 'float32', 'cpu');
  const isMax = op === 'max';
  const init = isMax ? (out instanceof Int32Array ? -2147483648 : -Infinity) : 0;
  const keptShape: number[] = [];
  const keptStrides: number[] = [];
  const redShape: number[] = [];
  const redStrides: number[] = [];
  x.shape.forEach((d, i) => {
    if (axes.includes(i)) {
      redShape.push(d);
      redStrides.push(x.strides[i]!);
    } else {
      keptShape.push(d);
      keptStrides.push(x.strides[i]!);
    }
  });
  const outSize = out.length;
  if (outSize === 0) return;
  const red = planRows(redShape, [redStrides], [0]);
  const kept = planRows(keptShape, [keptStrides], [x.offset]);
  if (red.rows === 0) {
    out.fill(init);
    return;
  }
  const minRed = innerStride(red);
  const minKept = innerStride(kept);
  if (minKept !== 0 && minKept < minRed) reduceOuter(isMax, x.data, red, kept, out);
  else reduceInner(isMax, x.data, red, kept, out);
}

function innerStride(p: RowPlan): number {
  return p.n > 1 ? Math.abs(p.step[0]!) : Infinity;
}

/** For each output: loop over the reduced elements. */
function reduceInner(isMax: boolean, x: HostArray, red: RowPlan, kept: RowPlan, out: HostArray): void {
  const rs = red.starts[0]!;
  const rn = red.n;
  const rstep = red.step[0]!;
  const ks = kept.starts[0]!;
  let o = 0;
  for (let kr = 0; kr < kept.rows; kr++) {
    for (let ki = 0; ki < kept.n; ki++, o++) {
      const base = ks[kr]! + ki * kept.step[0]!;
      let acc = isMax ? -Infinity : 0;
      for (let r = 0; r < red.rows; r++) {
        let p = base + rs[r]!;
        if (isMax) {
          for (let i = 0; i < rn; i++, p += rstep) {
            const v = x[p]!;
            if (v > acc || v !== v) acc = v;
          }
          if (acc !== acc) break;
        } else {
          for (let i = 0; i < rn; i++, p += rstep) acc += x[p]!;
        }
      }
      out[o] = acc;
    }
  }
}

/** For each reduced element: accumulate whole rows of outputs (inner loop over kept elements). */
function reduceOuter(isMax: boolean, x: HostArray, red: RowPlan, kept: RowPlan, out: HostArray): void {
  const acc = new Float64Array(out.length).fill(isMax ? -Infinity : 0);
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
        if (isMax) {
          for (; o < end; o++, p += kstep) {
            const v = x[p]!;
            if (v > acc[o]! || v !== v) acc[o] = v;
          }
        } else {
          for (; o < end; o++, p += kstep) acc[o] += x[p]!;
        }
      }
    }
  }
  // max: a NaN seen once must stay; `v > NaN` is false, so the comparison above keeps it.
  for (let i = 0; i < acc.length; i++) out[i] = acc[i]!;
}
