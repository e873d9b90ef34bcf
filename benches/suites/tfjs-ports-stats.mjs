// The small statistics behind the MNIST accuracy comparison of benches/suites/tfjs-ports-accuracy.mjs: mean,
// sample standard deviation, Welch's t-test (two-sided p from Student's t with Welch–Satterthwaite degrees of
// freedom) and a permutation test of the difference of means. Written out here so the figures need no library.

/** Arithmetic mean of `xs` (NaN when empty). */
export const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Sample standard deviation (n − 1 in the denominator; NaN for fewer than 2 values). */
export function std(xs) {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error below 1e-13). */
function logGamma(x) {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0];
  for (let i = 1; i < 9; i++) a += c[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The continued fraction of the regularized incomplete beta (modified Lentz, Numerical Recipes' betacf). */
function betaFraction(a, b, x) {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    for (const aa of [
      (m * (b - m) * x) / ((a + m2 - 1) * (a + m2)),
      (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1)),
    ]) {
      d = 1 + aa * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + aa / c;
      if (Math.abs(c) < tiny) c = tiny;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta I_x(a, b), x in [0, 1]. */
export function incompleteBeta(x, a, b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(|T| ≥ |t|) for Student's t with `df` degrees of freedom (df may be fractional). */
export const twoSidedP = (t, df) => incompleteBeta(df / (df + t * t), df / 2, 0.5);

/** The t with P(|T| ≥ t) = `p` for `df` degrees of freedom (bisection on twoSidedP). */
export function tQuantile(p, df) {
  let [lo, hi] = [0, 1e3];
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (twoSidedP(mid, df) > p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Welch's t-test of mean(a) − mean(b): { diff, t, df, p } with p two-sided, `pLess`, the one-sided
 * P(T ≤ t) (small when a's mean is below b's), and `ci95`, the 95 % confidence interval of the difference.
 */
export function welch(a, b) {
  const va = std(a) ** 2 / a.length;
  const vb = std(b) ** 2 / b.length;
  const diff = mean(a) - mean(b);
  const t = diff / Math.sqrt(va + vb);
  const df = (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1));
  const p = twoSidedP(t, df);
  const half = tQuantile(0.05, df) * Math.sqrt(va + vb);
  return { diff, t, df, p, pLess: t < 0 ? p / 2 : 1 - p / 2, ci95: [diff - half, diff + half] };
}

/**
 * Welch's non-inferiority test (one side of a TOST): the p-value of "mean(a) is below mean(b) by `margin` or
 * more" (H0: mean(a) − mean(b) ≤ −margin); small when a is shown to be no worse than b by that margin.
 */
export function nonInferiority(a, b, margin) {
  const { diff, df } = welch(a, b);
  const t = (diff + margin) / Math.sqrt(std(a) ** 2 / a.length + std(b) ** 2 / b.length);
  const p = twoSidedP(t, df);
  return { margin, t, df, p: t > 0 ? p / 2 : 1 - p / 2 };
}

/**
 * Permutation test of mean(a) − mean(b): the share of `rounds` random relabellings of the pooled values (seeded
 * mulberry32) whose |difference| is at least the observed one, counting the observed labelling (so never 0).
 */
export function permutation(a, b, { rounds = 100_000, seed = 1 } = {}) {
  let s = seed >>> 0;
  const rng = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pooled = [...a, ...b];
  const observed = Math.abs(mean(a) - mean(b));
  let hits = 1;
  for (let r = 0; r < rounds; r++) {
    for (let i = pooled.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [pooled[i], pooled[j]] = [pooled[j], pooled[i]];
    }
    const d = Math.abs(mean(pooled.slice(0, a.length)) - mean(pooled.slice(a.length)));
    if (d >= observed - 1e-12) hits++;
  }
  return { p: hits / (rounds + 1), rounds };
}
