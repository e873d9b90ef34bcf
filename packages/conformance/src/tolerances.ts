/**
 * THE tolerance table: one entry per op × dtype, with per-backend overrides. A result element passes
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

/** Per-backend overrides: backend → op → dtype → tolerance. Each entry says why. */
export const BACKEND_TOLERANCES: Record<string, Record<string, Partial<Record<'float32' | 'int32', Tolerance>>>> = {
  // cpu: computes in float64 and rounds once; meets the baseline everywhere.
};

/** The tolerance for an op × dtype on a backend; throws if the table has no entry (every op must have one). */
export function toleranceFor(op: string, dtype: 'float32' | 'int32', backend: string): Tolerance {
  const t = BACKEND_TOLERANCES[backend]?.[op]?.[dtype] ?? TOLERANCES[op]?.[dtype];
  if (!t) throw new Error(`no tolerance for ${op} × ${dtype} (add one to TOLERANCES)`);
  return t;
}
