import type { ArithmeticClass, BackendCapabilities } from '@polyhal/hal';

/**
 * THE tolerance table: one entry per op × dtype, with overrides per arithmetic class — the class a
 * backend declares in `capabilities` (strict when it declares none), never its name. A result element passes
 * when |got − want| ≤ abs + rel·scale, where `want` is the float64 oracle rounded to float32 and
 * `scale` is the oracle's error scale (Σ|terms| for sums and dot products, |want| elsewhere).
 * NaN must meet NaN; ±Inf must meet the same infinity.
 *
 * Why these numbers: float32 rounds with relative error ≤ 2^-24 ≈ 6e-8 (half an ulp), so a correctly
 * rounded op passes at rel 1.2e-7 (one ulp). Transcendentals get a few ulps (WGSL allows exp/log
 * errors of 3 + 2·|x| ulp, sin/cos an absolute 2^-11 on [-π, π]); sums and dot products get error
 * relative to Σ|terms| that grows with the accumulation order (blocked/pairwise: ~log n ulps).
 */
export interface Tolerance {
  abs: number;
  rel: number;
}

const EXACT: Tolerance = { abs: 0, rel: 0 };
const ULP1: Tolerance = { abs: 0, rel: 1.2e-7 };
const ULP4: Tolerance = { abs: 0, rel: 4.8e-7 };
const TRANSC: Tolerance = { abs: 1e-7, rel: 4.8e-7 };
const ACCUM: Tolerance = { abs: 1e-7, rel: 2e-6 };

/** op → dtype → tolerance (the baseline every backend meets). */
export const TOLERANCES: Record<string, Partial<Record<'float32' | 'int32', Tolerance>>> = {
  add: { float32: ULP1, int32: EXACT },
  sub: { float32: ULP1, int32: EXACT },
  mul: { float32: ULP1, int32: EXACT },
  div: { float32: ULP1 },
  maximum: { float32: EXACT, int32: EXACT },
  mod: { float32: { abs: 0, rel: 2.4e-7 }, int32: EXACT },
  cmplt: { float32: EXACT, int32: EXACT },
  neg: { float32: EXACT, int32: EXACT },
  relu: { float32: EXACT },
  recip: { float32: ULP1 },
  sqrt: { float32: ULP1 },
  exp: { float32: ULP4 },
  exp2: { float32: ULP4 },
  log: { float32: TRANSC },
  log2: { float32: TRANSC },
  sigmoid: { float32: TRANSC },
  tanh: { float32: TRANSC },
  sin: { float32: TRANSC },
  cos: { float32: TRANSC },
  sum: { float32: ACCUM, int32: EXACT },
  max: { float32: EXACT, int32: EXACT },
  mean: { float32: ACCUM },
  matmul: { float32: { abs: 1e-6, rel: 4e-6 } },
  softmax: { float32: { abs: 1e-7, rel: 2e-6 } },
  logSoftmax: { float32: { abs: 1e-7, rel: 2e-6 } },
  softmaxCrossEntropy: { float32: { abs: 1e-6, rel: 4e-6 } },
  adamStep: { float32: { abs: 1e-7, rel: 1e-6 } },
  sgdStep: { float32: { abs: 0, rel: 4e-7 } },
  reshape: { float32: EXACT, int32: EXACT },
  permute: { float32: EXACT, int32: EXACT },
  expand: { float32: EXACT, int32: EXACT },
  shrink: { float32: EXACT, int32: EXACT },
  stride: { float32: EXACT, int32: EXACT },
  pad: { float32: EXACT, int32: EXACT },
  contiguous: { float32: EXACT, int32: EXACT },
  cast: { float32: EXACT, int32: EXACT },
};

/** Overrides per arithmetic class: class → op → dtype → tolerance. Each entry says why. */
export const CLASS_TOLERANCES: Record<ArithmeticClass, Record<string, Partial<Record<'float32' | 'int32', Tolerance>>>> = {
  // The strict class is the baseline: cpu computes in float64 and rounds once; wasm has musl-derived
  // float32 transcendentals (≤ 1-2 ulp) and float64 sums.
  'ieee-correctly-rounded': {},
  // wgsl: the floors of the WGSL accuracy rules, so the suite holds on any conformant adapter:
  wgsl: {
    div: { float32: { abs: 0, rel: 3.6e-7 } }, // 2.5 ulp
    recip: { float32: { abs: 0, rel: 3.6e-7 } }, // 2.5 ulp
    sqrt: { float32: { abs: 0, rel: 6e-7 } }, // inherited from 1/inverseSqrt: ~4 ulp
    exp: { float32: { abs: 0, rel: 6e-6 } }, // 3 + 2·|x| ulp, |x| ≤ 23 checked (see CLASS_DOMAINS)
    exp2: { float32: { abs: 0, rel: 8e-6 } }, // 3 + 2·|x| ulp, |x| ≤ 30
    log: { float32: { abs: 5e-7, rel: 4e-7 } }, // 3 ulp outside [0.5, 2], 2^-21 absolute inside
    log2: { float32: { abs: 5e-7, rel: 4e-7 } },
    sin: { float32: { abs: 4.9e-4, rel: 0 } }, // 2^-11 absolute on [-π, π]
    cos: { float32: { abs: 4.9e-4, rel: 0 } },
    sigmoid: { float32: { abs: 1e-7, rel: 6e-6 } }, // built on exp
    tanh: { float32: { abs: 1e-6, rel: 6e-6 } }, // built on exp: (1 − e^-2|x|)/(1 + e^-2|x|)
    softmax: { float32: { abs: 1e-6, rel: 1e-5 } },
    logSoftmax: { float32: { abs: 1e-6, rel: 1e-5 } },
    softmaxCrossEntropy: { float32: { abs: 1e-6, rel: 1e-5 } },
    mean: { float32: { abs: 1e-7, rel: 4e-6 } }, // division by n: 2.5 ulp
    adamStep: { float32: { abs: 1e-7, rel: 2e-6 } }, // sqrt and division
  },
};

/**
 * Inputs on which a result for an op is checked, per arithmetic class: WGSL defines sin/cos only on
 * [-π, π] and bounds exp's error by 3 + 2·|x| ulp; outside these domains a conformant adapter may
 * return anything, so those elements are not compared (the result says how many were skipped).
 * Non-finite inputs (NaN, ±Inf) are always checked.
 */
export const CLASS_DOMAINS: Record<ArithmeticClass, Record<string, (x: number) => boolean>> = {
  'ieee-correctly-rounded': {},
  wgsl: {
    sin: (x) => Math.abs(x) <= Math.PI,
    cos: (x) => Math.abs(x) <= Math.PI,
    exp: (x) => Math.abs(x) <= 23,
    exp2: (x) => Math.abs(x) <= 30,
    log: (x) => x === 0 || Math.abs(x) >= 1.1754944e-38,
    log2: (x) => x === 0 || Math.abs(x) >= 1.1754944e-38,
  },
};

/**
 * Binary ops whose divisor must lie in WGSL's accuracy domain for division, |y| ∈ [2^-126, 2^126]
 * (GPUs compute x/y as x·(1/y), and 1/y of a larger |y| is subnormal and flushed), in the wgsl
 * class. Non-finite and zero divisors are checked.
 */
export const DIVISOR_DOMAIN_OPS: ReadonlySet<string> = new Set(['div', 'mod']);
const divisorInRange = (y: number): boolean => !Number.isFinite(y) || y === 0 || (Math.abs(y) >= 2 ** -126 && Math.abs(y) <= 2 ** 126);

const isSubnormal = (x: number): boolean => x !== 0 && Math.abs(x) < 1.1754943508222875e-38;

/**
 * Classes that accumulate sums in float32 (wgsl: WGSL has no float64): an intermediate sum may
 * overflow to ±Inf where the exact sum is finite (or of the other sign), so sums whose finite terms
 * add up past float32's range are not compared there.
 */
export const FLOAT32_ACCUMULATION: ReadonlySet<ArithmeticClass> = new Set<ArithmeticClass>(['wgsl']);
export const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * Whether an element of `op` with these inputs is checked under `caps`: a backend that declares
 * `flushesSubnormals` is not compared on subnormal inputs; the wgsl class only inside its domains.
 */
export function inDomain(op: string, caps: BackendCapabilities, inputs: readonly number[]): boolean {
  if (caps.flushesSubnormals && inputs.some(isSubnormal)) return false;
  if (caps.arithmetic === 'wgsl' && DIVISOR_DOMAIN_OPS.has(op) && inputs.length === 2 && !divisorInRange(inputs[1]!)) return false;
  const d = CLASS_DOMAINS[caps.arithmetic]?.[op];
  return !d || inputs.every((x) => !Number.isFinite(x) || d(x));
}

/**
 * The tolerance for an op × dtype in an arithmetic class; throws if the table has no entry (every op
 * must have one) or the class is unknown (a backend's name is not a class).
 */
export function toleranceFor(op: string, dtype: 'float32' | 'int32', arithmetic: ArithmeticClass): Tolerance {
  const overrides = CLASS_TOLERANCES[arithmetic];
  if (!overrides) throw new Error(`unknown arithmetic class '${String(arithmetic)}' (one of ${Object.keys(CLASS_TOLERANCES).join(', ')})`);
  const t = overrides[op]?.[dtype] ?? TOLERANCES[op]?.[dtype];
  if (!t) throw new Error(`no tolerance for ${op} × ${dtype} (add one to TOLERANCES)`);
  return t;
}
