/**
 * The float64 error function of the op table's references (erf, gelu): textbook series and continued
 * fraction, written plainly here and shared with no backend (their kernels use fitted polynomials).
 * Relative error below ~1e-14 for erf everywhere and for erfc wherever it is a normal float64.
 *
 * - |x| < 3: erf(x) = (2/√π)·e^(−x²)·Σ_{n≥0} (2x²)^n·x / (1·3·5···(2n+1)) (Abramowitz & Stegun 7.1.6):
 *   every term has the sign of x, so the sum does not cancel.
 * - x ≥ 1: erfc(x) = (e^(−x²)/√π) · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ···))))) (A&S 7.1.14),
 *   evaluated bottom-up from 300 terms (converged to float64 from x = 0.8 on); erf(x) = 1 − erfc(x)
 *   from x = 3 on, and erfc(x) = 1 − erf(x) for |x| < 1 (erfc(1) ≈ 0.16: under a digit lost).
 */

const TWO_OVER_SQRT_PI = 1.1283791670955126;
const ONE_OVER_SQRT_PI = 0.5641895835477563;

/** The series of A&S 7.1.6 (any finite x; used for |x| < 3). */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
    if (Math.abs(term) <= 1e-17 * Math.abs(sum)) break;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
}

/** erfc(x) for x ≥ 1 by the continued fraction of A&S 7.1.14 (partial numerators k/2). */
function erfcFraction(x: number): number {
  let f = x;
  for (let k = 300; k >= 1; k--) f = x + k / 2 / f;
  return (ONE_OVER_SQRT_PI * Math.exp(-x * x)) / f;
}

export function erf64(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a < 3) return erfSeries(x);
  const r = 1 - erfcFraction(a);
  return x < 0 ? -r : r;
}

/** erfc(x) = 1 − erf(x), relative to its own size (no cancellation for large x). */
export function erfc64(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x >= 1) return x === Infinity ? 0 : erfcFraction(x);
  if (x > -1) return 1 - erfSeries(x);
  return 2 - (x === -Infinity ? 0 : erfcFraction(-x));
}

/** The standard normal CDF Φ(x) = erfc(−x/√2)/2. */
export function normalCdf64(x: number): number {
  return 0.5 * erfc64(-x * Math.SQRT1_2);
}
