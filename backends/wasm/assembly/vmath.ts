// float32 expm1, log1p, softplus, sinh, cosh, asinh and acosh on f32x4 lanes, branch-free (lane masks choose between
// the forms), within 2 ulp of the float64 result:
//   exp family: x = n·ln2 + r, |r| ≤ ln2/2 (Cody–Waite, ln2 in two parts, Cephes' split, exact for |n| ≤ 2^8);
//     expm1(r) = r + r²·Q(r), Q the Taylor series of (e^r − 1 − r)/r² to r⁶ (truncation ≤ 2^-28 relative);
//     e^x = 2^n·(1 + expm1(r)), expm1(x) = 2^n·(expm1(r) + 1 − 2^−n) (one rounding; 1 − 2^−n exact for |n| ≤ 24);
//     2^n applied in two exact halves so that 2^128 and subnormal results come out right.
//   log1p: fdlibm's reduction of u = 1 + x to 2^k·(1 + f), √2/2 ≤ 1 + f < √2, with the correction
//     c = (x − (u − 1))/u for the rounding of u, and log(1 + f) = f − f²/2 + s·(f²/2 + R(s²)), s = f/(2 + f),
//     R fdlibm's degree-4 float32 minimax polynomial (Lg1..Lg4).
//   sinh, cosh: from expm1(|x|) below 1 (resp. ln2), from e^|x|/2 (computed directly, so no overflow before
//     float32's own at ~89.415) above: sinh = h − 1/(4h), cosh = h + 1/(4h).
//   asinh, acosh: musl's cancellation-free arguments, each a log1p (log(y) = log1p(y − 1), y − 1 exact).
// Special values follow the op table (hal/src/ops): −0 stays −0, NaN stays NaN, ±Inf give the limits.

const LOG2E: f32 = 1.4426950408889634;
const C1: f32 = 0.693359375; // ln2 = C1 + C2; n·C1 exact for |n| < 2^15
const C2: f32 = -2.12194440e-4;
const LN2_HI: f32 = 6.9313812256e-1; // fdlibm's float32 split: k·LN2_HI exact for |k| < 2^7
const LN2_LO: f32 = 9.0580006145e-6;
const LG1: f32 = 0.66666662693, LG2: f32 = 0.40000972152, LG3: f32 = 0.28498786688, LG4: f32 = 0.24279078841;
const SQRT_HALF_BITS: i32 = 0x3f3504f3; // float32 √2/2

// 2^k for integer lanes k in [−126, 127]: the exponent field alone.
@inline function pow2(k: v128): v128 {
  return i32x4.shl(i32x4.add(k, i32x4.splat(127)), 23);
}

// v·2^k for integer lanes k in [−252, 254], exact but for the one rounding of a subnormal result.
@inline function scale(v: v128, k: v128): v128 {
  const k1 = i32x4.shr_s(k, 1);
  return f32x4.mul(f32x4.mul(v, pow2(k1)), pow2(i32x4.sub(k, k1)));
}

// n = round(x/ln2) as float32 lanes (x clamped by the caller to |x| ≤ 2^8 or NaN).
@inline function expN(x: v128): v128 {
  return f32x4.nearest(f32x4.mul(x, f32x4.splat(LOG2E)));
}

// expm1(r) for r = x − n·ln2, |r| ≤ 0.35.
@inline function expm1Reduced(x: v128, n: v128): v128 {
  const r = f32x4.sub(f32x4.sub(x, f32x4.mul(n, f32x4.splat(C1))), f32x4.mul(n, f32x4.splat(C2)));
  let q = f32x4.splat(<f32>(1.0 / 40320));
  q = f32x4.add(f32x4.mul(q, r), f32x4.splat(<f32>(1.0 / 5040)));
  q = f32x4.add(f32x4.mul(q, r), f32x4.splat(<f32>(1.0 / 720)));
  q = f32x4.add(f32x4.mul(q, r), f32x4.splat(<f32>(1.0 / 120)));
  q = f32x4.add(f32x4.mul(q, r), f32x4.splat(<f32>(1.0 / 24)));
  q = f32x4.add(f32x4.mul(q, r), f32x4.splat(<f32>(1.0 / 6)));
  q = f32x4.add(f32x4.mul(q, r), f32x4.splat(0.5));
  return f32x4.add(r, f32x4.mul(f32x4.mul(r, r), q));
}

// expm1 from its reduction: 2^n·(p + 1 − 2^−n), n ≤ 128 (1 − 2^−n is 1 in float32 from n = 25 on).
@inline function expm1From(p: v128, n: v128): v128 {
  const k = i32x4.trunc_sat_f32x4_s(n);
  const t = f32x4.sub(f32x4.splat(1), pow2(i32x4.neg(i32x4.min_s(k, i32x4.splat(30)))));
  return scale(f32x4.add(p, t), k);
}

// e^x·2^b from its reduction.
@inline function expFrom(p: v128, n: v128, b: i32): v128 {
  return scale(f32x4.add(f32x4.splat(1), p), i32x4.add(i32x4.trunc_sat_f32x4_s(n), i32x4.splat(b)));
}

// Lanes where x is ±0 keep x (−0 stays −0); the others take v.
@inline function keepZero(x: v128, v: v128): v128 {
  return v128.bitselect(x, v, f32x4.eq(x, f32x4.splat(0)));
}

/** expm1(x): −1 below ~−17.3 (x clamped to −30), Inf past ~88.72. */
// @ts-ignore: decorator
@inline export function vexpm1(x: v128): v128 {
  const xc = f32x4.max(f32x4.min(x, f32x4.splat(89)), f32x4.splat(-30)); // NaN-propagating
  const n = expN(xc);
  return keepZero(x, expm1From(expm1Reduced(xc, n), n));
}

/**
 * exp(x): 0 below ~−103.97 (x clamped to −110), Inf past ~88.72, NaN for NaN. The exp family's reduction with
 * n = round(x/ln2) taken by the 1.5·2^23 shift (ties to even, as f32x4.nearest) and its integer from the same
 * bits, and the clamp by pmin/pmax (NaN passes as the first operand): V8 lowers f32x4.min/max, nearest and
 * trunc_sat to long sequences (this form measured 1.5× vexpm1's).
 */
// @ts-ignore: decorator
@inline export function vexp(x: v128): v128 {
  const xc = f32x4.pmax(f32x4.pmin(x, f32x4.splat(89)), f32x4.splat(-110));
  const shift = f32x4.splat(12582912.0); // 1.5·2^23
  const t = f32x4.add(f32x4.mul(xc, f32x4.splat(LOG2E)), shift);
  const n = f32x4.sub(t, shift);
  return scale(f32x4.add(f32x4.splat(1), expm1Reduced(xc, n)), i32x4.sub(t, i32x4.splat(0x4b400000)));
}

/** log1p(x): −Inf at −1, NaN below −1 and for NaN, Inf at Inf. */
// @ts-ignore: decorator
@inline export function vlog1p(x: v128): v128 {
  const one = f32x4.splat(1);
  const u = f32x4.add(one, x);
  const iu = i32x4.add(u, i32x4.splat(0x3f800000 - SQRT_HALF_BITS));
  const k = i32x4.sub(i32x4.shr_s(iu, 23), i32x4.splat(127));
  const f = f32x4.sub(i32x4.add(v128.and(iu, i32x4.splat(0x007fffff)), i32x4.splat(SQRT_HALF_BITS)), one);
  // The rounding of u, as a correction to log(u): for k ≥ 2 u − x is exact, for k < 2 u − 1 is; 0 from k = 25.
  const kBig = i32x4.gt_s(k, i32x4.splat(1));
  let c = v128.bitselect(f32x4.sub(one, f32x4.sub(u, x)), f32x4.sub(x, f32x4.sub(u, one)), kBig);
  c = v128.andnot(f32x4.div(c, u), i32x4.gt_s(k, i32x4.splat(24)));
  const s = f32x4.div(f, f32x4.add(f32x4.splat(2), f));
  const z = f32x4.mul(s, s);
  const w = f32x4.mul(z, z);
  const t1 = f32x4.mul(w, f32x4.add(f32x4.splat(LG2), f32x4.mul(w, f32x4.splat(LG4))));
  const t2 = f32x4.mul(z, f32x4.add(f32x4.splat(LG1), f32x4.mul(w, f32x4.splat(LG3))));
  const hfsq = f32x4.mul(f32x4.splat(0.5), f32x4.mul(f, f));
  const dk = f32x4.convert_i32x4_s(k);
  let v = f32x4.add(f32x4.mul(s, f32x4.add(hfsq, f32x4.add(t2, t1))), f32x4.add(f32x4.mul(dk, f32x4.splat(LN2_LO)), c));
  v = f32x4.add(f32x4.add(f32x4.sub(v, hfsq), f), f32x4.mul(dk, f32x4.splat(LN2_HI)));
  // Outside the reduction's range: x < −1 (and NaN) → NaN, x = −1 → −Inf, x = Inf → Inf.
  v = v128.bitselect(f32x4.splat(NaN), v, v128.not(f32x4.ge(x, f32x4.splat(-1))));
  v = v128.bitselect(f32x4.splat(-Infinity), v, f32x4.eq(x, f32x4.splat(-1)));
  v = v128.bitselect(x, v, f32x4.eq(x, f32x4.splat(Infinity)));
  return keepZero(x, v);
}

/** softplus(x) = max(x, 0) + log1p(e^−|x|). */
// @ts-ignore: decorator
@inline export function vsoftplus(x: v128): v128 {
  const a = f32x4.max(f32x4.neg(f32x4.abs(x)), f32x4.splat(-104)); // e^−104 rounds to 0
  const n = expN(a);
  const e = expFrom(expm1Reduced(a, n), n, 0);
  return f32x4.add(f32x4.max(x, f32x4.splat(0)), vlog1p(e));
}

// expm1(|x|) (t) and e^|x|/2 (h) share one reduction; |x| clamped to 89.5 (NaN-propagating).
@inline function hyperbolic(x: v128, cosh: bool): v128 {
  const a = f32x4.min(f32x4.abs(x), f32x4.splat(89.5));
  const n = expN(a);
  const p = expm1Reduced(a, n);
  const h = expFrom(p, n, -1);
  const quarterOverH = f32x4.div(f32x4.splat(0.25), h);
  const t = expm1From(p, n);
  const t1 = f32x4.add(f32x4.splat(1), t);
  if (cosh) {
    // |x| < ln2: 1 + t²/(2(1 + t)); above: h + 1/(4h)
    const small = f32x4.add(f32x4.splat(1), f32x4.div(f32x4.mul(t, t), f32x4.add(t1, t1)));
    return v128.bitselect(small, f32x4.add(h, quarterOverH), f32x4.lt(a, f32x4.splat(0.6931471805599453)));
  }
  // |x| < 1: t − t²/(2(1 + t)); above: h − 1/(4h); |x| < 2^-12: x
  const small = f32x4.sub(t, f32x4.div(f32x4.mul(t, t), f32x4.add(t1, t1)));
  let v = v128.bitselect(small, f32x4.sub(h, quarterOverH), f32x4.lt(a, f32x4.splat(1)));
  v = v128.or(v, v128.and(x, f32x4.splat(-0.0))); // the sign of x (v ≥ 0 or NaN)
  return v128.bitselect(x, v, f32x4.lt(a, f32x4.splat(2.44140625e-4)));
}

/** sinh(x): Inf past ~89.415. */
// @ts-ignore: decorator
@inline export function vsinh(x: v128): v128 {
  return hyperbolic(x, false);
}

/** cosh(x): Inf past ~89.415. */
// @ts-ignore: decorator
@inline export function vcosh(x: v128): v128 {
  return hyperbolic(x, true);
}

// log1p(arg), plus ln2 on the lanes of `big`, where arg is |x| − 1: log(2|x|) (asinh, acosh past 2^12).
@inline function logBig(arg: v128, big: v128): v128 {
  return f32x4.add(vlog1p(arg), v128.and(f32x4.splat(0.6931471805599453), big));
}

/** asinh(x): log1p(a + a²/(√(a² + 1) + 1)) below 2, log(2a + 1/(√(a² + 1) + a)) below 2^12, log(2a) above. */
// @ts-ignore: decorator
@inline export function vasinh(x: v128): v128 {
  const one = f32x4.splat(1);
  const a = f32x4.abs(x);
  const r = f32x4.sqrt(f32x4.add(f32x4.mul(a, a), one));
  const small = f32x4.add(a, f32x4.div(f32x4.mul(a, a), f32x4.add(r, one)));
  const mid = f32x4.add(f32x4.sub(f32x4.add(a, a), one), f32x4.div(one, f32x4.add(r, a)));
  const big = f32x4.ge(a, f32x4.splat(4096));
  let arg = v128.bitselect(small, mid, f32x4.lt(a, f32x4.splat(2)));
  arg = v128.bitselect(f32x4.sub(a, one), arg, big);
  const v = v128.or(logBig(arg, big), v128.and(x, f32x4.splat(-0.0))); // the sign of x
  return v128.bitselect(x, v, f32x4.lt(a, f32x4.splat(2.44140625e-4)));
}

/** acosh(x): NaN below 1; log1p(t + √(2t + t²)), t = x − 1, below 2; log(2x − 1/(x + √(x² − 1))) below 2^12. */
// @ts-ignore: decorator
@inline export function vacosh(x: v128): v128 {
  const one = f32x4.splat(1);
  const t = f32x4.sub(x, one);
  const small = f32x4.add(t, f32x4.sqrt(f32x4.add(f32x4.add(t, t), f32x4.mul(t, t))));
  const mid = f32x4.sub(f32x4.add(t, x), f32x4.div(one, f32x4.add(x, f32x4.sqrt(f32x4.sub(f32x4.mul(x, x), one)))));
  const big = f32x4.ge(x, f32x4.splat(4096));
  let arg = v128.bitselect(small, mid, f32x4.lt(x, f32x4.splat(2)));
  arg = v128.bitselect(t, arg, big);
  return v128.bitselect(logBig(arg, big), f32x4.splat(NaN), f32x4.ge(x, one));
}

/** hardSwish(x) = x · (min(x + 3, 6)/6) in float32 steps, −0 for x ≤ −3 (−Inf included). */
@inline export function vhardswish(x: v128): v128 {
  const c = f32x4.min(f32x4.add(x, f32x4.splat(3)), f32x4.splat(6));
  const y = f32x4.mul(x, f32x4.div(c, f32x4.splat(6)));
  return v128.bitselect(f32x4.splat(-0.0), y, f32x4.le(x, f32x4.splat(-3)));
}
