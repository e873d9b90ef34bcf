/**
 * The elementwise binary ops (NumPy broadcasting through strides): one entry each (see types.ts).
 * The WASM kernels' op codes are generated from the entries' names (backends/wasm/scripts/op-codes.mjs),
 * so an entry may go anywhere.
 */
import type { NDArray } from '../core/ndarray.js';
import { withTemps } from '../core/temps.js';
import { INTEGER_OP_DEFS } from './binary-int.js';
import { COMPARISON_OP_DEFS, LOGICAL_OP_DEFS } from './binary-logic.js';
import { normalCdf64 } from './erf.js';
import { type BinaryOpDef, EXACT, type GradOps, TRANSCENDENTAL, ULP1, ULP2 } from './types.js';

const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const P = (lo: number, hi: number) => ({ kind: 'positive', lo, hi }) as const;
const NZ = (lo: number, hi: number) => ({ kind: 'nonzero', lo, hi }) as const;
const I = (lo: number, hi: number) => ({ kind: 'int', lo, hi }) as const;
const DIVISION_RULE = 'WGSL: x/y within 2.5 ulp for |y| in [2^-126, 2^126] (computed as x·(1/y))';
/** Divisors WGSL bounds division for, |y| in [2^-126, 2^126]; zero and non-finite divisors are always checked. */
const divisorInRange = (_x: number, y: number): boolean =>
  !Number.isFinite(y) || y === 0 || (Math.abs(y) >= 2 ** -126 && Math.abs(y) <= 2 ** 126);

const ONE_OVER_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
/** g·(Φ(x) + x·φ(x)), the limits at x = ±Inf (1 and 0) taken explicitly. */
function geluGrad64(x: number, g: number): number {
  if (x === Infinity) return g;
  if (x === -Infinity) return g * 0;
  return g * (normalCdf64(x) + x * Math.exp(-0.5 * x * x) * ONE_OVER_SQRT_2PI);
}

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);

/**
 * a + b for float32 a and b, rounded to odd in float64 when inexact (TwoSum gives the rounding error),
 * so that rounding the result to float32 afterwards rounds the exact sum once.
 */
function sumRoundedToOdd(a: number, b: number): number {
  const s = a + b;
  const bb = s - a;
  const err = a - (s - bb) + (b - bb);
  f64[0] = s;
  if (err !== 0 && (f64Words[0]! & 1) === 0) {
    // Step to the neighbour on err's side of s: it is odd, and the exact sum lies between the two.
    const up = err > 0 === s > 0;
    let lo = f64Words[0]!;
    let hi = f64Words[1]!;
    if (up) {
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi++;
    } else {
      if (lo === 0) hi--;
      lo = (lo - 1) >>> 0;
    }
    f64Words[0] = lo;
    f64Words[1] = hi;
  }
  return f64[0]!;
}

/**
 * NumPy's floored remainder of float32 x and y: the truncated remainder (IEEE fmod, exact on doubles),
 * then + y once when the signs differ, rounded once (to odd here, so the float32 rounding is single).
 */
function flooredMod(x: number, y: number): number {
  if (y === 0 || !Number.isFinite(x) || Number.isNaN(y)) return NaN;
  if (!Number.isFinite(y)) return x === 0 || Math.sign(x) === Math.sign(y) ? x : y;
  const r = x % y;
  return r !== 0 && r < 0 !== y < 0 ? sumRoundedToOdd(r, y) : r;
}

/**
 * IEEE 754 pow (C99's, NumPy's) in float64: JS `**` agrees except that it gives NaN for 1^NaN, 1^±Inf
 * and (−1)^±Inf, where IEEE's pow is 1.
 */
function pow64(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return x ** y;
}

/**
 * int32 x^y modulo 2^32 (exponentiation by squaring with wrapping products); y < 0 follows PyTorch's
 * integer pow: 1 for x = 1, ±1 for x = −1 by y's parity, 0 otherwise (also for x = 0).
 */
function powInt32(x: number, y: number): number {
  if (y < 0) return x === 1 ? 1 : x === -1 ? (y % 2 === 0 ? 1 : -1) : 0;
  let r = 1;
  let b = x | 0;
  for (let e = y; e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) r = Math.imul(r, b);
    b = Math.imul(b, b);
  }
  return r;
}

/** 1 where x = 0 (either sign), else 0 — NaN included (cmplt is 0 both ways). */
const isZero = (be: GradOps, x: NDArray, t: <A extends NDArray>(a: A) => A): NDArray =>
  t(be.sub(1, t(be.add(t(be.cmplt(x, 0)), t(be.cmplt(0, x))))));

/**
 * The elementwise binary op table: op name → BinaryOpDef. Each entry gives `be.<op>(a, b)` its semantics,
 * dtypes, float64 reference, case domains, accuracy and gradient rule; BINARY_OPS lists the names.
 */
export const BINARY_OP_DEFS = {
  add: {
    semantics: 'x + y (IEEE): Inf + −Inf = NaN, −0 + −0 = −0. int32 wraps modulo 2^32.',
    f64: (x, y) => x + y,
    i32: (x, y) => (x + y) | 0,
    scale: 'operands',
    domain: [U(-100, 100), U(-100, 100)],
    int32Domain: [I(-2e9, 2e9), I(-2e9, 2e9)],
    accuracy: { float32: ULP1, int32: EXACT },
    grad: (_be, g) => [g, g],
  },
  sub: {
    semantics: 'x − y (IEEE): Inf − Inf = NaN. int32 wraps modulo 2^32.',
    f64: (x, y) => x - y,
    i32: (x, y) => (x - y) | 0,
    scale: 'operands',
    domain: [U(-100, 100), U(-100, 100)],
    int32Domain: [I(-2e9, 2e9), I(-2e9, 2e9)],
    accuracy: { float32: ULP1, int32: EXACT },
    grad: (be, g) => [g, be.neg(g)],
  },
  mul: {
    semantics: 'x · y (IEEE): 0 · Inf = NaN, signs of zeros by the rule of signs. int32 wraps (low 32 bits).',
    f64: (x, y) => x * y,
    i32: (x, y) => Math.imul(x, y),
    domain: [U(-10, 10), U(-10, 10)],
    int32Domain: [I(-1e6, 1e6), I(-1e6, 1e6)],
    accuracy: { float32: ULP1, int32: EXACT },
    grad: (be, g, [a, b]) => [be.mul(g, b!), be.mul(g, a!)],
  },
  div: {
    semantics: 'x / y (IEEE): x/0 = ±Inf by the signs, 0/0 = NaN, x/±Inf = ±0. float32 only.',
    f64: (x, y) => x / y,
    domain: [U(-10, 10), NZ(-10, 10)],
    accuracy: {
      float32: ULP1,
      wgsl: { accuracy: { abs: 0, rel: 3.6e-7 }, domain: divisorInRange, why: DIVISION_RULE },
    },
    grad: (be, g, [, b], out) => withTemps(be, (t) => [be.div(g, b!), be.neg(t(be.div(t(be.mul(g, out)), b!)))]),
  },
  maximum: {
    semantics:
      'The larger of x and y; NaN if either is NaN (unlike JS Math.max, which agrees). Gradient goes to y on ties.',
    f64: (x, y) => (Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.max(x, y)),
    i32: (x, y) => Math.max(x, y),
    domain: [U(-5, 5), U(-5, 5)],
    int32Domain: [I(-50, 50), I(-50, 50)],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: (be, g, [a, b]) =>
      withTemps(be, (t) => {
        const aWins = t(be.cmplt(b!, a!));
        return [be.mul(g, aWins), be.mul(g, t(be.sub(1, aWins)))];
      }),
  },
  mod: {
    semantics:
      "NumPy's floored remainder x − y·floor(x/y), exact: the result takes the divisor's sign (−1 mod 3 = 2, " +
      "1 mod −3 = −2); a zero result keeps x's sign (−0 mod 3 = −0); x mod 0 = NaN; ±Inf mod y = NaN; " +
      "x mod ±Inf = x when x is ±0 or has y's sign, else y. int32: floored, x mod 0 = 0. JS `%` " +
      'truncates and is NOT the rule.',
    f64: flooredMod,
    i32: (x, y) => {
      if (y === 0) return 0;
      let r = x % y;
      if (r !== 0 && r < 0 !== y < 0) r += y;
      return r | 0;
    },
    // The exact result lies in [0, |y|): its error is judged against |y| (|x| + |y| would let a
    // remainder of 0 for −0.96·|y| pass once |x/y| reached 2^21).
    scale: 'divisor',
    domain: [U(-20, 20), NZ(-6, 6)],
    int32Domain: [I(-100, 100), I(-7, 7)],
    accuracy: { float32: ULP2, int32: EXACT, wgsl: { domain: divisorInRange, why: DIVISION_RULE } },
    // a mod b = a − b·floor(a/b): d/da = 1, d/db = −floor(a/b) = −(a − (a mod b))/b.
    grad: (be, g, [a, b], out) => withTemps(be, (t) => [g, be.neg(t(be.mul(g, t(be.div(t(be.sub(a!, out)), b!)))))]),
  },
  cmplt: {
    semantics: "1 where x < y else 0, in the inputs' dtype; any NaN operand gives 0. Not differentiable.",
    f64: (x, y) => (x < y ? 1 : 0),
    i32: (x, y) => (x < y ? 1 : 0),
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: null,
  },
  minimum: {
    semantics:
      'The smaller of x and y; NaN if either is NaN (np.minimum; JS Math.min agrees). Gradient goes to y on ties.',
    f64: (x, y) => (Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.min(x, y)),
    i32: (x, y) => Math.min(x, y),
    domain: [U(-5, 5), U(-5, 5)],
    int32Domain: [I(-50, 50), I(-50, 50)],
    accuracy: { float32: EXACT, int32: EXACT },
    grad: (be, g, [a, b]) =>
      withTemps(be, (t) => {
        const aWins = t(be.cmplt(a!, b!));
        return [be.mul(g, aWins), be.mul(g, t(be.sub(1, aWins)))];
      }),
  },
  pow: {
    semantics:
      'x^y with IEEE 754 / C99 / NumPy special values: x^±0 = 1 and 1^y = 1 even for NaN, (−1)^±Inf = 1, ' +
      'x^y = NaN for finite x < 0 and finite non-integer y, (±0)^y = ±Inf for odd integer y < 0 and +Inf for other ' +
      'y < 0, |x| < 1 to −Inf is +Inf and to +Inf is +0 (reversed for |x| > 1). An integer result that float32 ' +
      'holds (2^-3, 3^15, (−7)^8) is exact. int32: wraps modulo 2^32; y < 0 gives 1 for x = 1, ±1 for x = −1, ' +
      "else 0 (PyTorch's rule). Gradient y·x^(y−1) (0 where y = 0) and x^y·log(x) (0 where x = 0 and y ≥ 0).",
    f64: pow64,
    i32: powInt32,
    domain: [P(0.01, 10), U(-10, 10)],
    int32Domain: [I(-50, 50), I(-2, 9)],
    accuracy: { float32: ULP2, int32: EXACT },
    // As PyTorch's pow_backward: y·x^(y−1), written y·x^(y − 1 + [y = 0]) so that y = 0 gives 0·x^0 = 0
    // even at x = 0; x^y·log(x + [x = 0 and y ≥ 0]) so that 0^y·log 0 (y ≥ 0) gives 0, not 0·−Inf.
    grad: (be, g, [a, b], out, needs) =>
      withTemps(be, (t) => {
        let da: NDArray | null = null;
        let db: NDArray | null = null;
        if (needs[0]) {
          const exponent = t(be.add(t(be.sub(b!, 1)), isZero(be, b!, t)));
          da = be.mul(g, t(be.mul(b!, t(be.pow(a!, exponent)))));
        }
        if (needs[1]) {
          const zeroBase = t(be.mul(isZero(be, a!, t), t(be.sub(1, t(be.cmplt(b!, 0))))));
          db = be.mul(g, t(be.mul(out, t(be.log(t(be.add(a!, zeroBase)))))));
        }
        return [da, db];
      }),
  },
  ...COMPARISON_OP_DEFS,
  ...LOGICAL_OP_DEFS,
  ...INTEGER_OP_DEFS,
  geluGrad: {
    semantics:
      "The gradient of the exact GELU (PyTorch's gelu_backward): x is gelu's input, y the upstream gradient g, " +
      "result g·(Φ(x) + x·φ(x)), Φ the normal CDF, φ its density, in one pass (gelu's gradient rule runs it). " +
      'x = +Inf gives g, x = −Inf gives g·0, NaN in → NaN. The error is bounded relative to |x| + |g|: the two ' +
      'terms cancel where Φ(x) + x·φ(x) crosses 0 (x ≈ −0.7518). Not differentiable itself.',
    f64: geluGrad64,
    scale: 'operands',
    domain: [U(-6, 6), U(-10, 10)],
    accuracy: { float32: TRANSCENDENTAL },
    grad: null,
  },
} as const satisfies Record<string, BinaryOpDef>;
