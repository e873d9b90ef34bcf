/**
 * The trigonometric and hyperbolic functions of the unary table (see types.ts) beyond sin and cos:
 * tan, the inverse functions asin, acos, atan, and sinh, cosh and their inverses asinh, acosh, atanh.
 * Appended to UNARY_OP_DEFS after the special functions, in this order (their WASM op codes). Special
 * values are those of C99 Annex F / IEEE 754 (NumPy's and PyTorch's): a domain error gives NaN, a pole
 * ±Inf, an overflow ±Inf. The references are JavaScript's float64 Math functions.
 */
import { withTemps } from '../core/temps.js';
import { TRANSCENDENTAL, type UnaryOpDef } from './types.js';

const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const P = (lo: number, hi: number) => ({ kind: 'positive', lo, hi }) as const;

export const TRIG_OP_DEFS = {
  tan: {
    semantics:
      'Tangent (radians): tan(±Inf) = NaN, tan(−0) = −0; float32 holds no multiple of π/2, so no pole is ' +
      'reached (tan(f32(π/2)) = −22877332). Gradient 1 + tan²(x).',
    f64: Math.tan,
    domain: U(-10, 10),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: {
        domain: (x) => Math.abs(x) <= 8192,
        why:
          "WGSL: tan inherits sin/cos's 2^-11 absolute bound on [-π, π] only; computed here with a " +
          'Cody–Waite reduction by π/2 in four parts, exact for |x| ≤ 8192 (within 3.6 ulp there on lavapipe)',
      },
    },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.mul(g, t(be.add(t(be.mul(out, out)), 1)))]),
  },
  asin: {
    semantics: 'Arcsine, in [−π/2, π/2]: asin(|x| > 1) = NaN (and ±Inf), asin(±1) = ±π/2, asin(−0) = −0.',
    f64: Math.asin,
    domain: U(-1, 1),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.sqrt(t(be.mul(t(be.sub(1, x!)), t(be.add(1, x!)))))))]),
  },
  acos: {
    semantics: 'Arccosine, in [0, π]: acos(|x| > 1) = NaN (and ±Inf), acos(1) = 0, acos(−1) = π.',
    f64: Math.acos,
    domain: U(-1, 1),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) =>
      withTemps(be, (t) => [be.neg(t(be.div(g, t(be.sqrt(t(be.mul(t(be.sub(1, x!)), t(be.add(1, x!)))))))))]),
  },
  atan: {
    semantics: 'Arctangent, in [−π/2, π/2]: atan(±Inf) = ±π/2, atan(−0) = −0. Gradient 1/(1 + x²).',
    f64: Math.atan,
    domain: U(-10, 10),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.add(t(be.mul(x!, x!)), 1)))]),
  },
  sinh: {
    semantics:
      'Hyperbolic sine (e^x − e^−x)/2: sinh(±Inf) = ±Inf, sinh(−0) = −0, overflow to ±Inf past ~89.42 (not at ' +
      '88.72, where e^x alone overflows). Gradient cosh(x).',
    f64: Math.sinh,
    domain: U(-20, 20),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.mul(g, t(be.cosh(x!)))]),
  },
  cosh: {
    semantics: 'Hyperbolic cosine (e^x + e^−x)/2 ≥ 1: cosh(±Inf) = Inf, overflow to Inf past ~89.42. Gradient sinh(x).',
    f64: Math.cosh,
    domain: U(-20, 20),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.mul(g, t(be.sinh(x!)))]),
  },
  asinh: {
    semantics:
      'Inverse hyperbolic sine log(x + √(x² + 1)), computed without overflow or cancellation (odd: asinh(−x) = ' +
      '−asinh(x); asinh(3.4e38) = 89.4): asinh(±Inf) = ±Inf, asinh(−0) = −0. Gradient 1/√(x² + 1).',
    f64: Math.asinh,
    domain: U(-100, 100),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.sqrt(t(be.add(t(be.mul(x!, x!)), 1)))))]),
  },
  acosh: {
    semantics:
      'Inverse hyperbolic cosine log(x + √(x² − 1)) ≥ 0, computed without overflow: acosh(x < 1) = NaN (and −Inf), ' +
      'acosh(1) = 0, acosh(Inf) = Inf. Gradient 1/√((x − 1)(x + 1)).',
    f64: Math.acosh,
    domain: P(1, 100),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.sqrt(t(be.mul(t(be.sub(x!, 1)), t(be.add(x!, 1)))))))]),
  },
  atanh: {
    semantics:
      'Inverse hyperbolic tangent log((1 + x)/(1 − x))/2: atanh(±1) = ±Inf (a pole), atanh(|x| > 1) = NaN ' +
      '(and ±Inf), atanh(−0) = −0. Gradient 1/((1 − x)(1 + x)).',
    f64: Math.atanh,
    domain: U(-1, 1),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.mul(t(be.sub(1, x!)), t(be.add(1, x!)))))]),
  },
} as const satisfies Record<string, UnaryOpDef>;
