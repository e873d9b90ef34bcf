/**
 * Layer normalization (table entries and semantics: ops/norm-ops.ts), installed on BaseBackend so every
 * backend has it: `layerNorm` returns y with the mean and rstd it used, `layerNormBackward` the
 * gradients from them. The default is composed from HAL ops; a backend with the optional hooks
 * `layerNormKernel` / `layerNormBackwardKernel` (hooks.ts) runs each as fused kernels instead, on 2-D
 * views [rows, D] of the operands. Every argument is checked before anything is allocated.
 */
import type { ComputeBackend } from '../../backend.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import { sizeOf } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { checkOptionsObject, describeValue } from '../../contract/validate.js';

/** Options of `layerNorm`. */
export interface LayerNormOptions {
  /** Added to the variance (default 1e−5, PyTorch's). */
  eps?: number;
  /** How many trailing dims are normalized (default 1). */
  dims?: number;
}

/** Options of `layerNormBackward`. */
export interface LayerNormBackwardOptions {
  /** How many trailing dims were normalized (default 1). */
  dims?: number;
  /** Also compute dweight and dbias (default false). */
  paramGrads?: boolean;
}

/** layerNorm and layerNormBackward (BaseBackend's). Semantics: ops/norm-ops.ts. */
export interface NormMethods {
  /**
   * y = (x − mean)·rstd·weight + bias over the trailing `dims` dims, with mean and rstd = 1/√(var + eps)
   * (biased variance) kept as [..., 1, …, 1] for layerNormBackward. weight and bias: the trailing shape, or null.
   */
  layerNorm(
    x: NDArray,
    weight: NDArray | null,
    bias: NDArray | null,
    options?: LayerNormOptions,
  ): { y: NDArray; mean: NDArray; rstd: NDArray };
  /**
   * The gradients of layerNorm for upstream g, from its mean and rstd: dx, and with paramGrads dweight
   * and dbias (the trailing shape).
   */
  layerNormBackward(
    g: NDArray,
    x: NDArray,
    mean: NDArray,
    rstd: NDArray,
    weight: NDArray | null,
    options?: LayerNormBackwardOptions,
  ): { dx: NDArray; dweight?: NDArray; dbias?: NDArray };
}

/** What the frames need of a BaseBackend, with its optional fused hooks (hooks.ts OPTIONAL_HOOKS). */
type NormHost = ComputeBackend & {
  check(x: NDArray, op: string, arg?: string): void;
  layerNormKernel?(
    x: NDArray,
    weight: NDArray | null,
    bias: NDArray | null,
    eps: number,
    y: DeviceBuffer,
    mean: DeviceBuffer,
    rstd: DeviceBuffer,
  ): void;
  layerNormBackwardKernel?(
    g: NDArray,
    x: NDArray,
    mean: NDArray,
    rstd: NDArray,
    weight: NDArray | null,
    dx: DeviceBuffer,
    dweight: DeviceBuffer | null,
    dbias: DeviceBuffer | null,
  ): void;
};

type Temp = <A extends NDArray>(a: A) => A;
const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;
const same = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((d, i) => d === b[i]);

function checkFloat(be: NormHost, x: NDArray, op: string, arg: string): void {
  be.check(x, op, arg);
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: ${arg} must be float32, got ${x.dtype}`);
}

function checkDims(v: unknown, rank: number, op: string): number {
  const dims = v ?? 1;
  if (!Number.isInteger(dims) || (dims as number) < 1 || (dims as number) > rank)
    throw new InvalidArgumentError(
      `${op}: dims must be an integer in [1, ${rank}] (x's rank), got ${describeValue(v)}`,
    );
  return dims as number;
}

/** The normalized (trailing) shape, after checking weight or bias against it. */
function checkParam(be: NormHost, p: NDArray | null, trailing: readonly number[], op: string, arg: string): void {
  if (p === null || p === undefined) return;
  checkFloat(be, p, op, arg);
  if (!same(p.shape, trailing))
    throw new ShapeMismatchError(`${op}: ${arg} must have the normalized shape ${shp(trailing)}, got ${shp(p.shape)}`, [
      p.shape,
      trailing,
    ]);
}

/** A view of x reshaped (a copy kept by `t` when the strides do not allow a view). */
function as(be: NormHost, x: NDArray, shape: number[], t: Temp): NDArray {
  const r = be.reshape(x, shape);
  return r.buffer === x.buffer ? r : t(r);
}

/** Runs a fused kernel into fresh buffers; frees them all if it throws. */
function fused<T>(be: NormHost, sizes: number[], run: (outs: DeviceBuffer[]) => T): T {
  const outs: DeviceBuffer[] = [];
  try {
    for (const n of sizes) outs.push(be.allocate(n, 'float32'));
    return run(outs);
  } catch (e) {
    for (const b of outs) be.deallocate(b);
    throw e;
  }
}

function layerNorm(
  be: NormHost,
  x: NDArray,
  weight: NDArray | null,
  bias: NDArray | null,
  options?: LayerNormOptions,
): { y: NDArray; mean: NDArray; rstd: NDArray } {
  const op = 'layerNorm';
  const o = checkOptionsObject(options, op, ['eps', 'dims']);
  checkFloat(be, x, op, 'x');
  const dims = checkDims(o['dims'], x.shape.length, op);
  const eps = o['eps'] ?? 1e-5;
  if (typeof eps !== 'number' || !Number.isFinite(eps) || eps < 0)
    throw new InvalidArgumentError(`${op}: eps must be a finite number ≥ 0, got ${describeValue(eps)}`);
  const lead = x.shape.slice(0, x.shape.length - dims);
  const trailing = x.shape.slice(x.shape.length - dims);
  checkParam(be, weight, trailing, op, 'weight');
  checkParam(be, bias, trailing, op, 'bias');
  const kept = [...lead, ...trailing.map(() => 1)];
  const [rows, D] = [sizeOf(lead), sizeOf(trailing)];
  if (typeof be.layerNormKernel === 'function' && rows > 0 && D > 0)
    return withTemps(be, (t) => {
      const x2 = as(be, x, [rows, D], t);
      const [w, b] = [weight, bias].map((p) => (p ? as(be, p, [D], t) : null));
      return fused(be, [rows * D, rows, rows], ([y, mean, rstd]) => {
        be.layerNormKernel!(x2, w ?? null, b ?? null, eps, y!, mean!, rstd!);
        return { y: viewOf(y!, x.shape), mean: viewOf(mean!, kept), rstd: viewOf(rstd!, kept) };
      });
    });
  const axes = trailing.map((_, i) => lead.length + i);
  return withTemps(be, (t) => {
    const mean = be.mean(x, axes, true);
    try {
      const centred = t(be.sub(x, mean));
      const variance = t(be.mean(t(be.mul(centred, centred)), axes, true));
      const rstd = be.recip(t(be.sqrt(t(be.add(variance, eps)))));
      try {
        let y = be.mul(centred, rstd);
        if (weight) y = be.mul(t(y), weight);
        if (bias) y = be.add(t(y), bias);
        return { y, mean, rstd };
      } catch (e) {
        be.free(rstd);
        throw e;
      }
    } catch (e) {
      be.free(mean);
      throw e;
    }
  });
}

function layerNormBackward(
  be: NormHost,
  g: NDArray,
  x: NDArray,
  mean: NDArray,
  rstd: NDArray,
  weight: NDArray | null,
  options?: LayerNormBackwardOptions,
): { dx: NDArray; dweight?: NDArray; dbias?: NDArray } {
  const op = 'layerNormBackward';
  const o = checkOptionsObject(options, op, ['dims', 'paramGrads']);
  checkFloat(be, x, op, 'x');
  const dims = checkDims(o['dims'], x.shape.length, op);
  const paramGrads = o['paramGrads'] ?? false;
  if (typeof paramGrads !== 'boolean')
    throw new InvalidArgumentError(`${op}: paramGrads must be a boolean, got ${describeValue(paramGrads)}`);
  const lead = x.shape.slice(0, x.shape.length - dims);
  const trailing = x.shape.slice(x.shape.length - dims);
  const kept = [...lead, ...trailing.map(() => 1)];
  checkFloat(be, g, op, 'g');
  if (!same(g.shape, x.shape))
    throw new ShapeMismatchError(`${op}: g must have x's shape ${shp(x.shape)}, got ${shp(g.shape)}`, [
      g.shape,
      x.shape,
    ]);
  for (const [arg, s] of [
    ['mean', mean],
    ['rstd', rstd],
  ] as const) {
    checkFloat(be, s, op, arg);
    if (!same(s.shape, kept))
      throw new ShapeMismatchError(`${op}: ${arg} must be ${shp(kept)} (layerNorm's), got ${shp(s.shape)}`, [
        s.shape,
        kept,
      ]);
  }
  checkParam(be, weight, trailing, op, 'weight');
  const [rows, D] = [sizeOf(lead), sizeOf(trailing)];
  if (typeof be.layerNormBackwardKernel === 'function' && rows > 0 && D > 0)
    return withTemps(be, (t) => {
      const [g2, x2] = [g, x].map((a) => as(be, a, [rows, D], t));
      const [m1, r1] = [mean, rstd].map((a) => as(be, a, [rows], t));
      const w = weight ? as(be, weight, [D], t) : null;
      return fused(be, paramGrads ? [rows * D, D, D] : [rows * D], ([dx, dw, db]) => {
        be.layerNormBackwardKernel!(g2!, x2!, m1!, r1!, w, dx!, dw ?? null, db ?? null);
        const r: { dx: NDArray; dweight?: NDArray; dbias?: NDArray } = { dx: viewOf(dx!, x.shape) };
        if (dw && db) [r.dweight, r.dbias] = [viewOf(dw, trailing), viewOf(db, trailing)];
        return r;
      });
    });
  const axes = trailing.map((_, i) => lead.length + i);
  const leadAxes = lead.map((_, i) => i);
  return withTemps(be, (t) => {
    const xhat = t(be.mul(t(be.sub(x, mean)), rstd));
    const gw = weight ? t(be.mul(g, weight)) : g;
    const m1 = t(be.mean(gw, axes, true));
    const m2 = t(be.mean(t(be.mul(gw, xhat)), axes, true));
    const dx = be.mul(t(be.sub(t(be.sub(gw, m1)), t(be.mul(xhat, m2)))), rstd);
    if (!paramGrads) return { dx };
    const sumLead = (a: NDArray): NDArray => (leadAxes.length ? be.sum(a, leadAxes) : be.contiguous(a));
    const out: NDArray[] = [dx];
    try {
      out.push(sumLead(t(be.mul(g, xhat))));
      out.push(sumLead(g));
    } catch (e) {
      for (const a of out) be.free(a);
      throw e;
    }
    return { dx, dweight: out[1]!, dbias: out[2]! };
  });
}

/** The norm methods (NormMethods) as BaseBackend has them (FAMILIES, base.ts): the fused hooks, else composites. */
export const NORM_METHODS: FamilyTable<NormMethods> = {
  layerNorm(x: NDArray, w: NDArray | null, b: NDArray | null, o?: LayerNormOptions) {
    return layerNorm(this, x, w, b, o);
  },
  layerNormBackward(
    g: NDArray,
    x: NDArray,
    mean: NDArray,
    rstd: NDArray,
    w: NDArray | null,
    o?: LayerNormBackwardOptions,
  ) {
    return layerNormBackward(this, g, x, mean, rstd, w, o);
  },
} satisfies FamilyTable<NormMethods, NormHost>;
