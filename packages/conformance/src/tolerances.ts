import {
  ARRAY_OP_DEFS,
  type Accuracy,
  type ArrayOpDef,
  type ArithmeticClass,
  type BackendCapabilities,
  BINARY_OP_DEFS,
  type BinaryOpDef,
  type DType,
  REDUCE_OP_DEFS,
  type ReduceOpDef,
  storageDType,
  UNARY_OP_DEFS,
  type UnaryOpDef,
} from '@polyhal/hal';

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
  /** Absolute error allowed, ≥ 0. */
  abs: number;
  /** Error allowed relative to the element's error scale, ≥ 0 (one float32 ulp ≈ 1.2e-7). */
  rel: number;
}

/** The elementwise ops: their entries in the op table (hal/src/ops/). */
const ELEMENTWISE: Record<string, UnaryOpDef | BinaryOpDef> = { ...UNARY_OP_DEFS, ...BINARY_OP_DEFS };
const byDtype = (a: { float32: Accuracy; int32?: Accuracy }): Partial<Record<'float32' | 'int32', Tolerance>> =>
  a.int32 ? { float32: a.float32, int32: a.int32 } : { float32: a.float32 };

/** op → dtype → tolerance (the baseline every backend meets): every entry of the op table (hal/src/ops/). */
export const TOLERANCES: Record<string, Partial<Record<'float32' | 'int32', Tolerance>>> = {
  ...Object.fromEntries(Object.entries(ELEMENTWISE).map(([op, d]) => [op, byDtype(d.accuracy)])),
  ...Object.fromEntries(Object.entries(REDUCE_OP_DEFS).map(([op, d]) => [op, byDtype(d.accuracy)])),
  ...Object.fromEntries(Object.entries(ARRAY_OP_DEFS).map(([op, d]) => [op, byDtype(d.accuracy)])),
};

/** Overrides per arithmetic class: class → op → dtype → tolerance. Each entry says why. */
export const CLASS_TOLERANCES: Record<
  ArithmeticClass,
  Record<string, Partial<Record<'float32' | 'int32', Tolerance>>>
> = {
  // The strict class is the baseline: cpu computes in float64 and rounds once; wasm has musl-derived
  // float32 transcendentals (≤ 1-2 ulp) and float64 sums.
  'ieee-correctly-rounded': {},
  // wgsl: the floors of the WGSL accuracy rules, so the suite holds on any conformant adapter:
  wgsl: {
    // elementwise ops: the bound each op table entry states for WGSL (its `accuracy.wgsl`, with the rule cited)
    ...Object.fromEntries(
      Object.entries(ELEMENTWISE).flatMap(([op, d]) => {
        const a = d.accuracy.wgsl?.accuracy;
        return a ? [[op, { float32: { abs: a.abs, rel: a.rel } }]] : [];
      }),
    ),
    // matmul, composites and optimizer steps: their entries' WGSL bounds (hal/src/ops/array-ops.ts)
    ...Object.fromEntries(
      Object.entries(ARRAY_OP_DEFS as Record<string, ArrayOpDef>).flatMap(([op, d]) =>
        d.accuracy.wgsl ? [[op, { float32: d.accuracy.wgsl.accuracy }]] : [],
      ),
    ),
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
  // from the op table: unary entries whose `accuracy.wgsl` has a domain
  wgsl: Object.fromEntries(
    Object.entries(UNARY_OP_DEFS).flatMap(([op, d]) => {
      const domain = (d as UnaryOpDef).accuracy.wgsl?.domain;
      return domain ? [[op, (x: number) => domain(x)]] : [];
    }),
  ),
};

/**
 * Binary ops whose operands must lie in WGSL's accuracy domain (division: |y| ∈ [2^-126, 2^126], as GPUs
 * compute x/y as x·(1/y) and 1/y of a larger |y| is subnormal and flushed), in the wgsl class: the op
 * table's binary entries whose `accuracy.wgsl` has a domain. Non-finite and zero divisors are checked.
 */
export const DIVISOR_DOMAIN_OPS: ReadonlySet<string> = new Set(
  Object.entries(BINARY_OP_DEFS)
    .filter(([, d]) => (d as BinaryOpDef).accuracy.wgsl?.domain)
    .map(([op]) => op),
);
const binaryWgslDomain = (op: string): ((x: number, y: number) => boolean) | undefined =>
  (BINARY_OP_DEFS as Record<string, BinaryOpDef>)[op]?.accuracy.wgsl?.domain;

const isSubnormal = (x: number): boolean => x !== 0 && Math.abs(x) < 1.1754943508222875e-38;

/**
 * Classes that accumulate sums in float32 (wgsl: WGSL has no float64): an intermediate sum may
 * overflow to ±Inf where the exact sum is finite (or of the other sign), so sums whose finite terms
 * add up past float32's range are not compared there.
 */
export const FLOAT32_ACCUMULATION: ReadonlySet<ArithmeticClass> = new Set<ArithmeticClass>(['wgsl']);

/**
 * A reduction's tolerance over `count` elements: the table's bound plus, in a class that accumulates in
 * float32, its `perTerm` bound once per element (a float32 product rounds at every step).
 */
export function reduceTolerance(op: string, tol: Tolerance, count: number, arithmetic: ArithmeticClass): Tolerance {
  const per = (REDUCE_OP_DEFS as Record<string, ReduceOpDef>)[op]?.accuracy.perTerm;
  if (!per || !FLOAT32_ACCUMULATION.has(arithmetic)) return tol;
  return { abs: tol.abs + per.abs * count, rel: tol.rel + per.rel * count };
}
/**
 * matmul's tolerance for float16 operands over `terms` rounded float32 additions (K, plus one for a bias):
 * each product of two float16 values is exact in float32 (11 + 11 significand bits ≤ 24), so the float32
 * result differs from the exact one by at most the sum's bound, `terms`·2^-24·Σ|a·b| (+ |bias|: the oracle's
 * scale), the standard first-order bound of any summation order (γ_n ≤ n·2^-24 covers the second order
 * for n < 2^23 with one term to spare); compare() adds one float16 ulp of the result for the final rounding.
 * Other dtypes: `tol` as it is.
 */
export function matmulTolerance(dtype: DType, tol: Tolerance, terms: number): Tolerance {
  return dtype === 'float16' ? { abs: 0, rel: terms * 2 ** -24 } : tol;
}
/** The largest finite float32, 3.4028234663852886e38 (beyond it a float32 result overflows to ±Inf). */
export const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * Whether an element of `op` with these inputs is checked under `caps`: a backend that declares
 * `flushesSubnormals` is not compared on subnormal inputs; the wgsl class only inside its domains.
 */
export function inDomain(op: string, caps: BackendCapabilities, inputs: readonly number[]): boolean {
  if (caps.flushesSubnormals && inputs.some(isSubnormal)) return false;
  if (caps.arithmetic === 'wgsl' && inputs.length === 2 && binaryWgslDomain(op)?.(inputs[0]!, inputs[1]!) === false)
    return false;
  const d = CLASS_DOMAINS[caps.arithmetic]?.[op];
  return !d || inputs.every((x) => !Number.isFinite(x) || d(x));
}

/**
 * The tolerance for an op × dtype in an arithmetic class; throws if the table has no entry (every op
 * must have one) or the class is unknown (a backend's name is not a class).
 */
export function toleranceFor(op: string, dtype: DType, arithmetic: ArithmeticClass): Tolerance {
  const overrides = CLASS_TOLERANCES[arithmetic];
  if (!overrides)
    throw new Error(
      `unknown arithmetic class '${String(arithmetic)}' (one of ${Object.keys(CLASS_TOLERANCES).join(', ')})`,
    );
  // bool results and operands: 0 or 1, compared exactly
  if (dtype === 'bool') return { abs: 0, rel: 0 };
  // int8 and uint8 compute in int32 (exact, wrapped), float16 in float32 then rounded: the storage dtype's
  // bound, to which compare() adds one float16 rounding where that bound is not 0. float64: the float32
  // bound in float64 units (× 2^-29, the ratio of their ulps), exact where that one is.
  const wide = dtype === 'float64' ? 'float32' : (storageDType(dtype) as 'float32' | 'int32');
  const t = overrides[op]?.[wide] ?? TOLERANCES[op]?.[wide];
  if (!t) throw new Error(`no tolerance for ${op} × ${dtype} (add one to TOLERANCES)`);
  return dtype === 'float64' ? { abs: t.abs * FLOAT64_PER_FLOAT32_ULP, rel: t.rel * FLOAT64_PER_FLOAT32_ULP } : t;
}

/** One float64 ulp in float32 ulps: 2^-52 / 2^-23. */
export const FLOAT64_PER_FLOAT32_ULP = 2 ** -29;
