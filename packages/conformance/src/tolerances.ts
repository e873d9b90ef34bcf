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
  // wasm: musl-derived float32 transcendentals (≤ 1-2 ulp), float64 sums; meets the baseline everywhere.
  // webgpu: the floors of the WGSL accuracy rules, so the suite holds on any conformant adapter:
  webgpu: {
    div: { float32: { abs: 0, rel: 3.6e-7 } }, // 2.5 ulp
    recip: { float32: { abs: 0, rel: 3.6e-7 } }, // 2.5 ulp
    sqrt: { float32: { abs: 0, rel: 6e-7 } }, // inherited from 1/inverseSqrt: ~4 ulp
    exp: { float32: { abs: 0, rel: 6e-6 } }, // 3 + 2·|x| ulp, |x| ≤ 23 checked (see BACKEND_DOMAINS)
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
 * Inputs on which a backend's result for an op is checked: WGSL defines sin/cos only on [-π, π],
 * lets GPUs flush subnormals, and bounds exp's error by 3 + 2·|x| ulp; outside these domains a
 * conformant adapter may return anything, so those elements are not compared (the result says how
 * many were skipped). Non-finite inputs (NaN, ±Inf) are always checked.
 */
export const BACKEND_DOMAINS: Record<string, Record<string, (x: number) => boolean>> = {
  webgpu: {
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
 * (GPUs compute x/y as x·(1/y), and 1/y of a larger |y| is subnormal and flushed), on the backends
 * of BACKEND_DOMAINS. Non-finite and zero divisors are checked.
 */
export const DIVISOR_DOMAIN_OPS: ReadonlySet<string> = new Set(['div', 'mod']);
const divisorInRange = (y: number): boolean => !Number.isFinite(y) || y === 0 || (Math.abs(y) >= 2 ** -126 && Math.abs(y) <= 2 ** 126);

/**
 * Backends that may flush subnormal float32 values to zero (WGSL allows it): elements with a subnormal
 * input are not compared, and a subnormal expected result may come back as ±0.
 */
export const FLUSHES_SUBNORMALS: ReadonlySet<string> = new Set(['webgpu']);

const isSubnormal = (x: number): boolean => x !== 0 && Math.abs(x) < 1.1754943508222875e-38;

/**
 * Backends that accumulate sums in float32 (webgpu: WGSL has no float64): an intermediate sum may
 * overflow to ±Inf where the exact sum is finite (or of the other sign), so sums whose finite terms
 * add up past float32's range are not compared there.
 */
export const FLOAT32_ACCUMULATION: ReadonlySet<string> = new Set(['webgpu']);
export const FLOAT32_MAX = 3.4028234663852886e38;

/** Whether an element of `op` with these inputs is checked on `backend`. */
export function inDomain(op: string, backend: string, inputs: readonly number[]): boolean {
  if (FLUSHES_SUBNORMALS.has(backend) && inputs.some(isSubnormal)) return false;
  if (DIVISOR_DOMAIN_OPS.has(op) && BACKEND_DOMAINS[backend] && inputs.length === 2 && !divisorInRange(inputs[1]!)) return false;
  const d = BACKEND_DOMAINS[backend]?.[op];
  return !d || inputs.every((x) => !Number.isFinite(x) || d(x));
}

/** The tolerance for an op × dtype on a backend; throws if the table has no entry (every op must have one). */
export function toleranceFor(op: string, dtype: 'float32' | 'int32', backend: string): Tolerance {
  const t = BACKEND_TOLERANCES[backend]?.[op]?.[dtype] ?? TOLERANCES[op]?.[dtype];
  if (!t) throw new Error(`no tolerance for ${op} × ${dtype} (add one to TOLERANCES)`);
  return t;
}
