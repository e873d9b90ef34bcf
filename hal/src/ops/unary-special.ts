/**
 * The special functions and smooth activations of the unary table (see types.ts): erf, log1p, expm1
 * and the activations built on exp and erf. Appended to UNARY_OP_DEFS after the rounding ops, in this
 * order (their WASM op codes). The references are float64 (erf: ./erf.ts, written for the oracle).
 */
import { withTemps } from '../core/temps.js';
import { erf64, normalCdf64 } from './erf.js';
import { TRANSCENDENTAL, ULP4, type UnaryOpDef } from './types.js';

const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);
/** The tanh approximation of GELU (PyTorch's approximate='tanh'): √(2/π) and 0.044715. */
const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

/** 1/(1 + e^−x) without overflow. */
const sigmoid64 = (x: number): number => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));
/** x·w(x) for an activation whose weight w tends to 0 at −Inf: the limit −0 there, not −Inf·0 = NaN. */
const gated = (x: number, w: (x: number) => number): number => (x === -Infinity ? -0 : x * w(x));

export const SPECIAL_OP_DEFS = {
  erf: {
    semantics: 'The error function (2/√π)∫₀ˣ e^(−t²) dt: erf(±Inf) = ±1, erf(−0) = −0.',
    f64: erf64,
    domain: U(-5, 5),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) =>
      withTemps(be, (t) => [be.mul(g, t(be.mul(t(be.exp(t(be.neg(t(be.mul(x!, x!)))))), TWO_OVER_SQRT_PI)))]),
  },
  log1p: {
    semantics:
      'log(1 + x), accurate where x is tiny (log1p(1e-10) = 1e-10): log1p(−1) = −Inf, log1p(x < −1) = NaN, ' +
      'log1p(−0) = −0, log1p(Inf) = Inf.',
    f64: Math.log1p,
    domain: U(-0.99, 5),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.div(g, t(be.add(x!, 1)))]),
  },
  expm1: {
    semantics: 'e^x − 1, accurate where x is tiny: expm1(−Inf) = −1, expm1(−0) = −0, overflow to Inf past ~88.72.',
    f64: Math.expm1,
    domain: U(-10, 10),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, _x, out) => withTemps(be, (t) => [be.mul(g, t(be.add(out, 1)))]),
  },
  softplus: {
    semantics:
      'log(1 + e^x), computed as max(x, 0) + log1p(e^−|x|), which never overflows: softplus(x) = x for large x ' +
      "(ONNX's reference np.log(np.exp(x) + 1) is Inf past ~88.7), e^x for very negative x; softplus(−Inf) = 0. " +
      'Gradient sigmoid(x).',
    f64: (x) => Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x))),
    domain: U(-30, 30),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x]) => withTemps(be, (t) => [be.mul(g, t(be.sigmoid(x!)))]),
  },
  gelu: {
    semantics:
      "GELU, exact form x·Φ(x) = x·(1 + erf(x/√2))/2 (PyTorch's default, ONNX Gelu approximate='none'); " +
      'gelu(−Inf) = −0 (the limit; the formula would give NaN), gelu(Inf) = Inf.',
    f64: (x) => gated(x, normalCdf64),
    domain: U(-6, 6),
    accuracy: { float32: TRANSCENDENTAL },
    // g·(Φ(x) + x·φ(x)), φ(x) = e^(−x²/2)/√(2π): the geluGrad op, one kernel
    grad: (be, g, [x]) => [be.binary('geluGrad', x!, g)],
  },
  geluTanh: {
    semantics:
      "GELU, tanh approximation (PyTorch's approximate='tanh', ONNX Gelu approximate='tanh'): " +
      '0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), computed as x·sigmoid(2·√(2/π)·(x + 0.044715·x³)) (the same ' +
      'function, without the cancellation of 1 + tanh for negative x); geluTanh(−Inf) = −0, geluTanh(Inf) = Inf.',
    f64: (x) => gated(x, (v) => sigmoid64(2 * GELU_C * (v + GELU_A * v * v * v))),
    domain: U(-6, 6),
    accuracy: { float32: TRANSCENDENTAL },
    // With v = 2c(x + a·x³) and s = sigmoid(v): s + x·s·(1 − s)·v', v' = 2c(1 + 3a·x²).
    grad: (be, g, [x]) =>
      withTemps(be, (t) => {
        const x2 = t(be.mul(x!, x!));
        const s = t(be.sigmoid(t(be.mul(x!, t(be.add(t(be.mul(x2, 2 * GELU_C * GELU_A)), 2 * GELU_C))))));
        const dv = t(be.add(t(be.mul(x2, 6 * GELU_C * GELU_A)), 2 * GELU_C));
        const ds = t(be.mul(t(be.mul(s, t(be.sub(1, s)))), t(be.mul(x!, dv))));
        return [be.mul(g, t(be.add(s, ds)))];
      }),
  },
  silu: {
    semantics:
      'SiLU (swish) x·sigmoid(x), sigmoid computed without overflow; silu(−Inf) = −0 (the limit), silu(Inf) = Inf. ' +
      'Gradient s + silu(x)·(1 − s), s = sigmoid(x).',
    f64: (x) => gated(x, sigmoid64),
    domain: U(-20, 20),
    accuracy: { float32: TRANSCENDENTAL },
    grad: (be, g, [x], out) =>
      withTemps(be, (t) => {
        const s = t(be.sigmoid(x!));
        return [be.mul(g, t(be.add(s, t(be.mul(out, t(be.sub(1, s)))))))];
      }),
  },
  hardSwish: {
    semantics:
      'Hard swish x·relu6(x + 3)/6 (MobileNetV3; PyTorch hardswish, ONNX HardSwish), computed as ' +
      'x · (min(max(x + 3, 0), 6)/6), which never overflows: hardSwish(x) = x for x ≥ 3, −0 for x ≤ −3 ' +
      '(hardSwish(−Inf) = −0, the limit). Gradient 0 below −3, x/3 + 1/2 up to 3, 1 above (PyTorch).',
    f64: (x) => (x === -Infinity ? -0 : x * (Math.min(Math.max(x + 3, 0), 6) / 6)),
    domain: U(-6, 6),
    accuracy: {
      float32: ULP4,
      wgsl: { accuracy: { abs: 0, rel: 6e-7 }, why: 'WGSL: division within 2.5 ulp' },
    },
    grad: (be, g, [x]) =>
      withTemps(be, (t) => {
        const above = t(be.cmplt(3, x!)); // x > 3: slope 1
        const inside = t(be.mul(t(be.cmplt(-3, x!)), t(be.sub(1, above)))); // −3 < x ≤ 3
        const slope = t(be.add(t(be.mul(inside, t(be.add(t(be.div(x!, 3)), 0.5)))), above));
        return [be.mul(g, slope)];
      }),
  },
} as const satisfies Record<string, UnaryOpDef>;
