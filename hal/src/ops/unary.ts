/**
 * The elementwise unary ops: one entry each (see types.ts), spread in from family files below
 * (unary-rounding.ts, unary-special.ts, unary-trig.ts). The WASM kernels' op codes are generated from the
 * entries' names (backends/wasm/scripts/op-codes.mjs), so an entry may go anywhere.
 */
import { withTemps } from '../core/temps.js';
import { EXACT, TRANSCENDENTAL, ULP1, ULP4, type UnaryOpDef } from './types.js';
import { ROUNDING_OP_DEFS } from './unary-rounding.js';
import { SPECIAL_OP_DEFS } from './unary-special.js';
import { TRIG_OP_DEFS } from './unary-trig.js';

const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const P = (lo: number, hi: number) => ({ kind: 'positive', lo, hi }) as const;
const NZ = (lo: number, hi: number) => ({ kind: 'nonzero', lo, hi }) as const;
const LN2 = Math.LN2;
const MIN_NORMAL = 1.1754944e-38;
const EXP_RULE = 'WGSL: exp/exp2 within 3 + 2·|x| ulp (checked for |x| ≤ 23, resp. 30)';
const LOG_RULE = 'WGSL: log/log2 within 3 ulp outside [0.5, 2] and 2^-21 absolute inside; subnormal inputs may flush';
const TRIG_RULE = 'WGSL: sin/cos within 2^-11 absolute on [-π, π] only';

/**
 * The elementwise unary op table: op name → UnaryOpDef. Each entry gives `be.<op>(x)` its semantics, float64
 * reference, case domain, accuracy and gradient rule; UNARY_OPS lists the names.
 */
export const UNARY_OP_DEFS = {
  neg: {
    semantics: 'Negation: flips the sign bit (−0 ↔ 0, NaN stays NaN). int32 wraps: −(−2^31) = −2^31.',
    f64: (x) => -x,
    i32: (x) => -x | 0,
    domain: U(-100, 100),
    accuracy: { float32: EXACT, int32: EXACT },
    grad: (be, g) => [be.neg(g)],
  },
  exp: {
    semantics: 'e^x; exp(−Inf) = 0, exp(Inf) = Inf, overflow to Inf past ~88.72.',
    f64: Math.exp,
    domain: U(-20, 20),
    accuracy: {
      float32: ULP4,
      wgsl: { accuracy: { abs: 0, rel: 6e-6 }, domain: (x) => Math.abs(x) <= 23, why: EXP_RULE },
    },
    grad: (be, g, _x, out) => [be.mul(g, out)],
  },
  log: {
    semantics: 'Natural logarithm: log(0) = −Inf (either sign of zero), log(x < 0) = NaN, log(Inf) = Inf.',
    f64: Math.log,
    domain: P(1e-3, 1e3),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: { accuracy: { abs: 5e-7, rel: 4e-7 }, domain: (x) => x === 0 || Math.abs(x) >= MIN_NORMAL, why: LOG_RULE },
    },
    grad: (be, g, [x]) => [be.div(g, x!)],
  },
  relu: {
    semantics: 'max(x, 0): relu(−0) is 0 of either sign, relu(NaN) = NaN. Gradient 0 at x ≤ 0.',
    f64: (x) => (Number.isNaN(x) ? NaN : Math.max(x, 0)),
    domain: U(-10, 10),
    accuracy: { float32: EXACT },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.mul(g, t(be.cmplt(0, x!)))]),
  },
  sigmoid: {
    semantics: '1/(1 + e^−x), computed in a form that never overflows: 1/(1+e^−x) for x ≥ 0, e^x/(1+e^x) otherwise.',
    f64: (x) => 1 / (1 + Math.exp(-x)),
    domain: U(-30, 30),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: { accuracy: { abs: 1e-7, rel: 6e-6 }, why: `built on exp (${EXP_RULE})` },
    },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.mul(t(be.mul(g, out)), t(be.sub(1, out)))]),
  },
  tanh: {
    semantics: 'Hyperbolic tangent; tanh(±Inf) = ±1, tanh(−0) = −0.',
    f64: Math.tanh,
    domain: U(-10, 10),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: { accuracy: { abs: 1e-6, rel: 6e-6 }, why: `built on exp as (1 − e^−2|x|)/(1 + e^−2|x|) (${EXP_RULE})` },
    },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.mul(g, t(be.sub(1, t(be.mul(out, out)))))]),
  },
  sqrt: {
    semantics: 'Square root, correctly rounded: sqrt(−0) = −0, sqrt(x < 0) = NaN, sqrt(Inf) = Inf.',
    f64: Math.sqrt,
    domain: P(0, 1e4),
    accuracy: {
      float32: ULP1,
      wgsl: { accuracy: { abs: 0, rel: 6e-7 }, why: 'WGSL: sqrt inherits 1/inverseSqrt, ~4 ulp' },
    },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.div(t(be.mul(g, 0.5)), out)]),
  },
  recip: {
    semantics: '1/x: recip(0) = Inf, recip(−0) = −Inf, recip(±Inf) = ±0.',
    f64: (x) => 1 / x,
    domain: NZ(-10, 10),
    accuracy: { float32: ULP1, wgsl: { accuracy: { abs: 0, rel: 3.6e-7 }, why: 'WGSL: division within 2.5 ulp' } },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.neg(t(be.mul(g, t(be.mul(out, out)))))]),
  },
  exp2: {
    semantics: '2^x; exp2(−Inf) = 0, overflow to Inf past 128.',
    f64: (x) => 2 ** x,
    domain: U(-30, 30),
    accuracy: {
      float32: ULP4,
      wgsl: { accuracy: { abs: 0, rel: 8e-6 }, domain: (x) => Math.abs(x) <= 30, why: EXP_RULE },
    },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.mul(t(be.mul(g, out)), LN2)]),
  },
  log2: {
    semantics: "Base-2 logarithm, with log's special values.",
    f64: Math.log2,
    domain: P(1e-3, 1e3),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: { accuracy: { abs: 5e-7, rel: 4e-7 }, domain: (x) => x === 0 || Math.abs(x) >= MIN_NORMAL, why: LOG_RULE },
    },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.mul(x!, LN2)))]),
  },
  sin: {
    semantics: 'Sine (radians); sin(±Inf) = NaN, sin(−0) = −0.',
    f64: Math.sin,
    domain: U(-Math.PI, Math.PI),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: { accuracy: { abs: 4.9e-4, rel: 0 }, domain: (x) => Math.abs(x) <= Math.PI, why: TRIG_RULE },
    },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.mul(g, t(be.cos(x!)))]),
  },
  cos: {
    semantics: 'Cosine (radians); cos(±Inf) = NaN.',
    f64: Math.cos,
    domain: U(-Math.PI, Math.PI),
    accuracy: {
      float32: TRANSCENDENTAL,
      wgsl: { accuracy: { abs: 4.9e-4, rel: 0 }, domain: (x) => Math.abs(x) <= Math.PI, why: TRIG_RULE },
    },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.neg(t(be.mul(g, t(be.sin(x!)))))]),
  },
  abs: {
    semantics:
      '|x|: clears the sign bit (abs(−0) = 0, abs(−Inf) = Inf, NaN stays NaN). int32 wraps: abs(−2^31) = −2^31 ' +
      "(two's complement, as ONNX Abs). Gradient sign(x), 0 at x = 0.",
    f64: Math.abs,
    i32: (x) => Math.abs(x) | 0,
    domain: U(-100, 100),
    accuracy: { float32: EXACT, int32: EXACT },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.mul(g, t(be.sub(t(be.cmplt(0, x!)), t(be.cmplt(x!, 0)))))]),
  },
  ...ROUNDING_OP_DEFS,
  ...SPECIAL_OP_DEFS,
  ...TRIG_OP_DEFS,
} as const satisfies Record<string, UnaryOpDef>;
