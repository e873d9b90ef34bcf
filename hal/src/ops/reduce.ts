/**
 * The reductions: one entry each (see ReduceOpDef in types.ts); the WASM kernels' op codes are generated
 * from the entries' names (backends/wasm/scripts/op-codes.mjs), so order is free. `mean` is not an entry:
 * it is composed as sum × (1/n) by the HAL.
 */
import type { NDArray } from '../core/ndarray.js';
import { withTemps } from '../core/temps.js';
import { EXACT, type GradOps, type ReduceOpDef } from './types.js';

const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Expands a keepdims-shaped gradient `g` over `shape` (a new contiguous array). */
export function spread(be: GradOps, g: NDArray, shape: readonly number[]): NDArray {
  return be.contiguous(be.expand(g, shape));
}

/** 1 where x equals the (spread) extreme m, else 0: ties all receive the gradient (as in tfjs). */
function extremeGrad(be: GradOps, g: NDArray, x: NDArray, out: NDArray, isMax: boolean): NDArray {
  return withTemps(be, (t) => {
    const m = t(spread(be, out, x.shape));
    const beyond = t(isMax ? be.cmplt(x, m) : be.cmplt(m, x));
    return be.mul(t(spread(be, g, x.shape)), t(be.sub(1, beyond)));
  });
}

/**
 * The reduction table: op name → ReduceOpDef (sum, max, min, prod). Each entry gives `be.<op>(x, axes,
 * keepdims)` its semantics, identity, float64 fold, accuracy and gradient rule; REDUCE_OPS lists the names.
 */
export const REDUCE_OP_DEFS = {
  sum: {
    semantics:
      'Σ over the axes; the sum of an empty axis is 0. Summation is pairwise or better (error grows ' +
      'like log n); cpu and wasm accumulate float32 in float64. NaN, or +Inf with −Inf, gives NaN. ' +
      'int32 wraps modulo 2^32.',
    identity: { float32: 0, int32: 0 },
    f64: (acc, v) => acc + v,
    i32: (acc, v) => (acc + v) | 0,
    scale: 'terms',
    domain: U(-10, 10),
    accuracy: { float32: { abs: 1e-7, rel: 2e-6 }, int32: EXACT },
    grad: (be, g, x) => spread(be, g, x.shape),
  },
  max: {
    semantics:
      'Largest element over the axes; NaN if any element is NaN; the max of an empty axis is −Inf ' +
      '(int32: −2^31). Gradient: to every element equal to the max (ties all receive it).',
    identity: { float32: -Infinity, int32: INT32_MIN },
    f64: (acc, v) => (Number.isNaN(acc) || Number.isNaN(v) ? NaN : Math.max(acc, v)),
    i32: (acc, v) => Math.max(acc, v),
    scale: 'result',
    domain: U(-10, 10),
    accuracy: { float32: EXACT, int32: EXACT },
    grad: (be, g, x, out) => extremeGrad(be, g, x, out, true),
  },
  min: {
    semantics:
      'Smallest element over the axes; NaN if any element is NaN; the min of an empty axis is +Inf ' +
      '(int32: 2^31 − 1). Gradient: to every element equal to the min (ties all receive it).',
    identity: { float32: Infinity, int32: INT32_MAX },
    f64: (acc, v) => (Number.isNaN(acc) || Number.isNaN(v) ? NaN : Math.min(acc, v)),
    i32: (acc, v) => Math.min(acc, v),
    scale: 'result',
    domain: U(-10, 10),
    accuracy: { float32: EXACT, int32: EXACT },
    grad: (be, g, x, out) => extremeGrad(be, g, x, out, false),
  },
  prod: {
    semantics:
      'Π over the axes; the product of an empty axis is 1. IEEE rules: 0 · ±Inf = NaN, NaN in → NaN ' +
      'out; overflow to ±Inf and underflow to ±0 as float32 gives (cpu and wasm accumulate in ' +
      'float64 and round once). int32 wraps modulo 2^32. Gradient: the product of the other elements ' +
      '(exact with zeros: one zero gets the product of the rest, the others 0).',
    identity: { float32: 1, int32: 1 },
    f64: (acc, v) => acc * v,
    i32: (acc, v) => Math.imul(acc, v),
    scale: 'result',
    // Near 1, so that products of up to 10^5 terms stay within float32's normal range.
    domain: U(0.97, 1.03),
    // Each float32 multiply rounds (≤ 1/2 ulp); a float32 accumulator (wgsl) adds that per term.
    accuracy: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT, perTerm: { abs: 0, rel: 6e-8 } },
    grad: (be, g, x, _out, axes) =>
      withTemps(be, (t) => {
        // Zeros are replaced by 1 to form P' (the product of the nonzero elements) and counted: with no
        // zero the gradient is P'/x; with one zero, P' at the zero and 0 elsewhere; with more, 0.
        const isZero = t(be.sub(1, t(be.add(t(be.cmplt(x, 0)), t(be.cmplt(0, x))))));
        const nonzero = t(be.add(x, isZero));
        const xs = x.shape;
        const pNonzero = t(spread(be, t(be.reduce('prod', nonzero, axes, true)), xs));
        const zeros = t(spread(be, t(be.reduce('sum', isZero, axes, true)), xs));
        const none = t(be.sub(1, t(be.cmplt(0.5, zeros))));
        const one = t(be.sub(t(be.cmplt(0.5, zeros)), t(be.cmplt(1.5, zeros))));
        const weight = t(be.add(t(be.mul(none, t(be.div(1, nonzero)))), t(be.mul(one, isZero))));
        return be.mul(t(be.mul(t(spread(be, g, xs)), pNonzero)), weight);
      }),
  },
} as const satisfies Record<string, ReduceOpDef>;
