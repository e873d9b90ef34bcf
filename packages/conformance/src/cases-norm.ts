/**
 * Conformance cases, runners and the float64 oracle of layer normalization (hal/src/ops/norm-ops.ts):
 * layerNorm over one and two trailing dims, with and without weight and bias, rows far from 0 (a large
 * mean against a small spread), constant rows (variance 0: y is the bias), a large eps, an empty
 * batch and strided views; layerNormBackward with and without the parameter gradients, from arbitrary
 * mean and rstd (the backward pass is a function of them, consistent with x or not).
 *
 * Error scales: x − mean carries the rounding of the mean (relative to |mean|), so x̂'s scale is
 * (|x − mean| + |mean|)·rstd, y's that times |weight| plus |bias|, and dx's and dweight's carry it too.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Case, InputSpec, ViewSpec } from './cases.js';
import { fmt, P, U, viewName } from './cases-util.js';
import type { OpRunner } from './op-runners.js';
import { numel, type Ref } from './oracle.js';

export interface NormParams {
  /** Trailing dims normalized (default 1). */
  dims?: number;
  eps?: number;
  /** Inputs after the operands: layerNorm's weight and bias, layerNormBackward's weight. */
  weight?: boolean;
  bias?: boolean;
  paramGrads?: boolean;
}

const refOf = (shape: number[], data: Float64Array, scale: Float64Array): Ref => ({
  shape,
  data,
  dtype: 'float32',
  scale,
});

/** rows × D of x over `dims` trailing dims. */
function split(shape: readonly number[], dims: number): [number, number, number[], number[]] {
  const lead = shape.slice(0, shape.length - dims);
  const trailing = shape.slice(shape.length - dims);
  return [numel(lead), numel(trailing), [...lead, ...trailing.map(() => 1)], trailing];
}

export function oLayerNorm(x: Ref, w: Ref | undefined, b: Ref | undefined, eps: number, dims: number): Ref[] {
  const [rows, D, kept] = split(x.shape, dims);
  const y = new Float64Array(rows * D);
  const ys = new Float64Array(rows * D);
  const [mean, ms, rstd, rs] = [0, 0, 0, 0].map(() => new Float64Array(rows)) as Float64Array[];
  for (let r = 0; r < rows; r++) {
    const row = x.data.subarray(r * D, (r + 1) * D);
    const m = row.reduce((p, v) => p + v, 0) / D;
    const v = row.reduce((p, e) => p + (e - m) ** 2, 0) / D;
    const s = 1 / Math.sqrt(v + eps);
    mean[r] = m;
    ms[r] = row.reduce((p, e) => p + Math.abs(e), 0) / D;
    rstd[r] = s;
    rs[r] = s;
    for (let d = 0; d < D; d++) {
      const [wd, bd] = [w ? w.data[d]! : 1, b ? b.data[d]! : 0];
      y[r * D + d] = (row[d]! - m) * s * wd + bd;
      ys[r * D + d] = (Math.abs(row[d]! - m) + Math.abs(m)) * s * Math.abs(wd) + Math.abs(bd);
    }
  }
  return [refOf(x.shape, y, ys), refOf(kept, mean!, ms!), refOf(kept, rstd!, rs!)];
}

export function oLayerNormBackward(
  g: Ref,
  x: Ref,
  mean: Ref,
  rstd: Ref,
  w: Ref | undefined,
  dims: number,
  paramGrads: boolean,
): Ref[] {
  const [rows, D, , trailing] = split(x.shape, dims);
  const [dx, dxs] = [new Float64Array(rows * D), new Float64Array(rows * D)];
  const [dw, dws, db, dbs] = [0, 0, 0, 0].map(() => new Float64Array(D)) as Float64Array[];
  for (let r = 0; r < rows; r++) {
    const [m, s] = [mean.data[r]!, rstd.data[r]!];
    const xhat = (d: number): number => (x.data[r * D + d]! - m) * s;
    const err = (d: number): number => (Math.abs(x.data[r * D + d]! - m) + Math.abs(m)) * Math.abs(s); // x̂'s scale
    const gw = (d: number): number => g.data[r * D + d]! * (w ? w.data[d]! : 1);
    let [m1, m2, a1, a2] = [0, 0, 0, 0];
    for (let d = 0; d < D; d++) {
      m1 += gw(d) / D;
      m2 += (gw(d) * xhat(d)) / D;
      a1 += Math.abs(gw(d)) / D;
      a2 += Math.abs(gw(d)) * err(d);
    }
    a2 /= D;
    for (let d = 0; d < D; d++) {
      dx[r * D + d] = s * (gw(d) - m1 - xhat(d) * m2);
      dxs[r * D + d] = Math.abs(s) * (Math.abs(gw(d)) + a1 + err(d) * (Math.abs(m2) + a2));
      const gd = g.data[r * D + d]!;
      dw![d] += gd * xhat(d);
      dws![d] += Math.abs(gd) * err(d);
      db![d] += gd;
      dbs![d] += Math.abs(gd);
    }
  }
  const out = [refOf(x.shape, dx, dxs)];
  if (paramGrads) out.push(refOf(trailing, dw!, dws!), refOf(trailing, db!, dbs!));
  return out;
}

export const NORM_OP_RUNNERS = {
  layerNorm: {
    device: (be: ComputeBackend, xs: NDArray[], p) => {
      const n = p.norm!;
      const w = n.weight ? xs[1]! : null;
      const b = n.bias ? xs[n.weight ? 2 : 1]! : null;
      const { y, mean, rstd } = be.layerNorm(xs[0]!, w, b, { eps: n.eps, dims: n.dims });
      return [y, mean, rstd];
    },
    oracle: (xs: Ref[], p) => {
      const n = p.norm!;
      const w = n.weight ? xs[1] : undefined;
      const b = n.bias ? xs[n.weight ? 2 : 1] : undefined;
      return oLayerNorm(xs[0]!, w, b, n.eps ?? 1e-5, n.dims ?? 1);
    },
  },
  layerNormBackward: {
    device: (be: ComputeBackend, xs: NDArray[], p) => {
      const n = p.norm!;
      const r = be.layerNormBackward(xs[0]!, xs[1]!, xs[2]!, xs[3]!, n.weight ? xs[4]! : null, {
        dims: n.dims,
        paramGrads: n.paramGrads,
      });
      return r.dweight && r.dbias ? [r.dx, r.dweight, r.dbias] : [r.dx];
    },
    oracle: (xs: Ref[], p) => {
      const n = p.norm!;
      return oLayerNormBackward(
        xs[0]!,
        xs[1]!,
        xs[2]!,
        xs[3]!,
        n.weight ? xs[4] : undefined,
        n.dims ?? 1,
        n.paramGrads ?? false,
      );
    },
  },
} satisfies Record<string, OpRunner>;

export function normCases(): Case[] {
  const cases: Case[] = [];
  const fwd = (tag: string, x: InputSpec, norm: NormParams, viewed = x.shape): void => {
    const trailing = viewed.slice(viewed.length - (norm.dims ?? 1));
    const param = (gen = P(0.25, 2)): InputSpec => ({ shape: trailing, gen });
    cases.push({
      id: `layerNorm/float32/${tag}`,
      kind: 'composite',
      op: 'layerNorm',
      dtype: 'float32',
      inputs: [x, ...(norm.weight ? [param()] : []), ...(norm.bias ? [param(U(-1, 1))] : [])],
      params: { norm },
    });
  };
  const both = { weight: true, bias: true };
  fwd('[6,64]', { shape: [6, 64], gen: U(-2, 2) }, both);
  fwd('[4,17,64]', { shape: [4, 17, 64], gen: U(-3, 3) }, both);
  fwd('[3,5,8]/dims2', { shape: [3, 5, 8], gen: U(-2, 2) }, { ...both, dims: 2 });
  fwd('[7,33]/no-affine', { shape: [7, 33], gen: U(-5, 5) }, {});
  fwd('[5,16]/bias-only/eps0.1', { shape: [5, 16], gen: U(-1, 1) }, { bias: true, eps: 0.1 });
  fwd('[5,16]/far-from-0', { shape: [5, 16], gen: U(10, 10.5) }, both);
  const constant = Array.from({ length: 4 * 8 }, (_, i) => Math.floor(i / 8) - 1.5);
  fwd('[4,8]/constant-rows', { shape: [4, 8], gen: U(-1, 1), values: constant }, both);
  fwd('[16,12].permute', { shape: [16, 12], gen: U(-2, 2), view: { permute: [1, 0] } }, both, [12, 16]);
  fwd('[16,12].stride', { shape: [16, 12], gen: U(-2, 2), view: { stride: [2, 1] } }, both, [8, 12]);
  fwd('[0,8]', { shape: [0, 8], gen: U(-1, 1) }, both);
  fwd('[9]', { shape: [9], gen: U(-1, 1) }, both);

  const bwd = (shape: number[], norm: NormParams, view?: ViewSpec): void => {
    const [, , kept, trailing] = split(shape, norm.dims ?? 1);
    cases.push({
      id: `layerNormBackward/float32/${fmt(shape)}${norm.dims ? `/dims${norm.dims}` : ''}${
        norm.weight ? '' : '/no-weight'
      }${norm.paramGrads ? '/paramGrads' : ''}${viewName(view)}`,
      kind: 'composite',
      op: 'layerNormBackward',
      dtype: 'float32',
      inputs: [
        { shape, gen: U(-1, 1), view },
        { shape, gen: U(-2, 2) },
        { shape: kept, gen: U(-0.5, 0.5) },
        { shape: kept, gen: P(0.5, 2) },
        ...(norm.weight ? [{ shape: trailing, gen: P(0.25, 2) }] : []),
      ],
      params: { norm },
    });
  };
  bwd([6, 64], { weight: true, paramGrads: true });
  bwd([4, 17, 64], { weight: true, paramGrads: true });
  bwd([3, 5, 8], { weight: true, paramGrads: true, dims: 2 });
  bwd([7, 33], { paramGrads: true });
  bwd([7, 33], { weight: true });
  bwd([12, 12], { weight: true, paramGrads: true }, { permute: [1, 0] });
  bwd([0, 8], { weight: true, paramGrads: true });
  // enough rows for webgpu's chunked parameter sums (chunks of ≥ 32 rows, a short last one), plain and strided
  bwd([2, 150, 24], { weight: true, paramGrads: true });
  bwd([96, 96], { weight: true, paramGrads: true }, { permute: [1, 0] });
  return cases;
}
