/**
 * The sign and rounding ops of the unary table (see types.ts): exact on every backend. Appended to
 * UNARY_OP_DEFS after the entries of unary.ts, in this order (their WASM op codes).
 */
import type { NDArray } from '../core/ndarray.js';
import { EXACT, type GradOps, type UnaryOpDef } from './types.js';

const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;

/** Piecewise constant: the gradient is 0 everywhere (PyTorch's convention at the jumps too), also where g is NaN. */
const zeroGrad = (be: GradOps, g: NDArray): NDArray[] => [be.full(g.shape, 0)];

/** A zero result keeps x's sign, as IEEE's roundToIntegral does (floor(−0.5) is −1, ceil(−0.5) is −0). */
const signedZero = (r: number, x: number): number => (r === 0 ? x * 0 : r);

/** NumPy's np.round / ONNX Round: to the nearest integer, ties to the even one. */
function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const lo = Math.floor(x);
  const d = x - lo; // exact: lo is x's integer part, below it by less than 1
  const r = d < 0.5 ? lo : d > 0.5 ? lo + 1 : lo % 2 === 0 ? lo : lo + 1;
  return signedZero(r, x);
}

export const ROUNDING_OP_DEFS = {
  sign: {
    semantics:
      '−1, 0 or 1 by the sign of x (NumPy, ONNX Sign): sign(±0) = 0, sign(±Inf) = ±1, sign(NaN) = NaN. ' +
      'int32: −1, 0, 1. Gradient 0.',
    f64: (x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : 0),
    i32: (x) => (x > 0 ? 1 : x < 0 ? -1 : 0),
    domain: U(-10, 10),
    accuracy: { float32: EXACT, int32: EXACT },
    grad: zeroGrad,
  },
  floor: {
    semantics: 'The largest integer ≤ x; floor(−0) = −0, ±Inf and NaN unchanged. Gradient 0.',
    f64: Math.floor,
    domain: U(-100, 100),
    accuracy: { float32: EXACT },
    grad: zeroGrad,
  },
  ceil: {
    semantics: 'The smallest integer ≥ x; ceil(−0.5) = −0, ±Inf and NaN unchanged. Gradient 0.',
    f64: Math.ceil,
    domain: U(-100, 100),
    accuracy: { float32: EXACT },
    grad: zeroGrad,
  },
  round: {
    semantics:
      'The nearest integer, halfway cases to the even one (np.round, ONNX Round, WGSL round): round(2.5) = 2, ' +
      'round(−0.5) = −0, round(0.49999997) = 0; ±Inf and NaN unchanged. JS Math.round (ties up) is ' +
      'NOT the rule. Gradient 0.',
    f64: roundHalfEven,
    domain: U(-10, 10),
    accuracy: { float32: EXACT },
    grad: zeroGrad,
  },
  trunc: {
    semantics: 'x without its fraction, toward zero: trunc(−0.7) = −0, ±Inf and NaN unchanged. Gradient 0.',
    f64: Math.trunc,
    domain: U(-100, 100),
    accuracy: { float32: EXACT },
    grad: zeroGrad,
  },
} as const satisfies Record<string, UnaryOpDef>;
