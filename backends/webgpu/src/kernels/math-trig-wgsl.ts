/**
 * WGSL float32 tan, asin, acos, atan, sinh, cosh, asinh, acosh and atanh, written with + − ×, bits and
 * the helpers of math-wgsl.ts (exp_dd, log2_dd, prod_err, sum_err, div_acc, keep). WGSL's builtins for
 * these are bounded only through the formulas they inherit (atan 4096 ulp; asin and acos through
 * atan2 and sqrt; the hyperbolic ones through exp and log, with cancellation near 0 and overflow of x²
 * and e^x before the result overflows), and lavapipe's are that loose: asin 3800 ulp, atan 350 ulp,
 * sinh, asinh and atanh near 0 millions of ulp, asinh(3.4e38) = Inf, sinh(89) = Inf.
 *
 * Here: Taylor polynomials on small reduced arguments (|u| ≤ 0.5, or 0.79 for sin and cos, the series
 * truncated where the next term is below 2^-30 relative), logarithms from log2_dd (two floats) of an
 * argument carried in two floats, and square roots with one residual correction; asinh, acosh and
 * atanh as log1p of an argument free of cancellation (fdlibm's forms; log1p_reduced of math-wgsl.ts, one
 * path for the whole range so that neighbouring invocations do not diverge). Measured on lavapipe over
 * 2^17–2^18 random inputs per range: tan within 3.6 ulp (|x| ≤ 8192), atan 2.5, asin, acos, sinh and
 * cosh 1.6, asinh 1.9, acosh and atanh 1.6 (the op table's TRANSCENDENTAL bound is 4 ulp).
 */

/** Needs MATH_WGSL (math-wgsl.ts) and the kernel prelude. */
export const TRIG_WGSL = `
const PI_2_HI = 1.5707963705062866;   // f32(π/2)
const PI_2_LO = -4.371139006309477e-8;
const PI_4_HI = 0.7853981852531433;
const PI_4_LO = -2.1855695031547384e-8;
const PI_HI = 3.1415927410125732;
const PI_LO = -8.742278012618954e-8;
// π/2 in four parts, the first three of 11 bits: k·part is exact for |k| < 2^13 (|x| ≤ 8192).
const PIO2_1 = 1.5703125;
const PIO2_2 = 0.0004837512969970703;
const PIO2_3 = 7.549533620476723e-8;
const PIO2_4 = 2.5632829192545614e-12;
const TWO_OVER_PI = 0.6366197466850281;
// ln(h + l) for finite h > 0, |l| ≤ ulp(h): log2_dd(h)·ln 2 in two floats, plus l/h.
fn ln_dd(h: f32, l: f32) -> f32 {
  let t = log2_dd(h);
  let m = keep(t.x * LN2_F);
  return m + (prod_err(t.x, LN2_F, m) + t.x * LN2_F_TAIL + t.y * LN2_F + l / h);
}
// ln(2a) for a ≥ 2^12 (where asinh(a) and acosh(a) are ln(2a) in float32).
fn ln_twice(a: f32) -> f32 {
  let t = log2_dd(a);
  let h = keep(t.x + 1.0);
  let l = sum_err(t.x, 1.0, h) + t.y;
  let m = keep(h * LN2_F);
  return m + (prod_err(h, LN2_F, m) + h * LN2_F_TAIL + l * LN2_F);
}
// √(h + l) as two floats (h > 0): s = √h and the residual correction (h − s²)/(2s), s² exact.
fn sqrt_dd(h: f32, l: f32) -> vec2f {
  let s = sqrt(h);
  if (s == 0.0) { return vec2f(0.0, 0.0); }
  let p = keep(s * s);
  return vec2f(s, (keep(h - p) - prod_err(s, s, p) + l) / (2.0 * s));
}
// (asin(x) − x)/x³ in w = x², |x| ≤ 0.5: the Taylor series to x^25.
fn asin_tail(w: f32) -> f32 {
  return 0.16666666667 + w * (0.075 + w * (0.044642857143 + w * (0.030381944444 + w * (0.022372159091
    + w * (0.017352764423 + w * (0.01396484375 + w * (0.011551800896 + w * (0.0097616095292
    + w * (0.0083903358096 + w * (0.0073125258736 + w * 0.0064472103119))))))))));
}
// 2·asin(√z) for z in [0, 0.25], as hi + lo.
fn twice_asin_sqrt(z: f32) -> vec2f {
  let s = sqrt_dd(z, 0.0);
  return vec2f(2.0 * s.x, 2.0 * s.y + 2.0 * s.x * z * asin_tail(z));
}
fn asin_f(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0 || is_pos_inf(a)) { return qnan(); }
  if (a < 2.44140625e-4) { return x; }
  if (a <= 0.5) { return x + x * (x * x) * asin_tail(x * x); }
  let t = twice_asin_sqrt((1.0 - a) * 0.5); // asin(a) = π/2 − 2·asin(√((1 − a)/2))
  let r = keep(PI_2_HI - t.x) + (PI_2_LO - t.y);
  return select(r, -r, x < 0.0);
}
fn acos_f(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0 || is_pos_inf(a)) { return qnan(); }
  if (a <= 0.5) { return PI_2_HI + (PI_2_LO - (x + x * (x * x) * asin_tail(x * x))); }
  let t = twice_asin_sqrt((1.0 - a) * 0.5);
  if (x > 0.0) { return t.x + t.y; }
  return keep(PI_HI - t.x) + (PI_LO - t.y); // π − 2·asin(√((1 + x)/2))
}
// (atan(u) − u)/u³ in w = u², |u| ≤ tan(π/8): the Taylor series to u^21.
fn atan_tail(w: f32) -> f32 {
  return -0.33333333333 + w * (0.2 + w * (-0.14285714286 + w * (0.11111111111 + w * (-0.090909090909
    + w * (0.076923076923 + w * (-0.066666666667 + w * (0.058823529412 + w * (-0.052631578947
    + w * 0.047619047619))))))));
}
fn atan_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 2.44140625e-4) { return x; }
  var r: f32;
  if (a <= 0.41421356) {
    r = a + a * (a * a) * atan_tail(a * a);
  } else if (a < 2.41421356) {
    let u = div_acc(a - 1.0, a + 1.0); // atan(a) = π/4 + atan((a − 1)/(a + 1))
    r = PI_4_HI + (PI_4_LO + (u + u * (u * u) * atan_tail(u * u)));
  } else if (is_pos_inf(a)) {
    r = PI_2_HI;
  } else {
    let u = div_acc(1.0, a); // atan(a) = π/2 − atan(1/a)
    r = PI_2_HI + (PI_2_LO - (u + u * (u * u) * atan_tail(u * u)));
  }
  return select(r, -r, x < 0.0);
}
// tan(x) = sin(r)/cos(r), or −cos(r)/sin(r) for odd k, with r = x − k·π/2 (|r| ≤ 0.79) and the
// Taylor series of sin (to r^13) and cos (to r^14).
fn tan_f(x: f32) -> f32 {
  if (abs(x) < 2.44140625e-4) { return x; }
  if (is_pos_inf(abs(x))) { return qnan(); }
  if (abs(x) > 8192.0) { return tan(x); } // beyond the exact reduction: WGSL's tan (no accuracy promised)
  let k = round(x * TWO_OVER_PI);
  let r = keep(keep(keep(x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3) - k * PIO2_4;
  let w = r * r;
  let s = r + r * w * (-0.16666666667 + w * (0.0083333333333 + w * (-0.00019841269841 + w * (2.7557319224e-6
    + w * (-2.5052108385e-8 + w * 1.6059043837e-10)))));
  let c = 1.0 - w * (0.5 + w * (-0.041666666667 + w * (0.0013888888889 + w * (-0.000024801587302
    + w * (2.7557319224e-7 + w * (-2.0876756988e-9 + w * 1.1470745598e-11))))));
  let half = k * 0.5;
  if (half != floor(half)) { return -div_acc(c, s); }
  return div_acc(s, c);
}
// sinh and cosh: the Taylor series of sinh below 1 (to x^13); (e^a ∓ e^−a)/2 up to 9; e^(a − ln 2) beyond,
// which overflows where the result does (past ~89.42), not where e^a does.
fn half_exp(a: f32) -> f32 { return exp_dd(keep(a - LN2_HI), -LN2_LO); }
fn sinh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 2.44140625e-4) { return x; }
  var r: f32;
  if (a < 1.0) {
    let w = a * a;
    r = a + a * w * (0.16666666667 + w * (0.0083333333333 + w * (0.00019841269841 + w * (2.7557319224e-6
      + w * (2.5052108385e-8 + w * 1.6059043837e-10)))));
  } else if (a < 9.0) {
    let e = exp_dd(a, 0.0);
    r = 0.5 * e - 0.5 / e;
  } else {
    r = half_exp(a);
  }
  return select(r, -r, x < 0.0);
}
fn cosh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 9.0) {
    let e = exp_dd(a, 0.0);
    return 0.5 * e + 0.5 / e;
  }
  return half_exp(a);
}
// asinh: log1p(a + a²/(1 + √(1 + a²))) (fdlibm's form, no cancellation) for 2^-12 ≤ a < 2^12; ln(2a) beyond.
fn asinh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 2.44140625e-4) { return x; }
  var r: f32;
  if (a < 4096.0) {
    let w = a * a;
    r = log1p_reduced(a + w / (1.0 + sqrt(1.0 + w)));
  } else if (is_pos_inf(a)) {
    r = a;
  } else {
    r = ln_twice(a);
  }
  return select(r, -r, x < 0.0);
}
// acosh: log1p(v) with v = t + √(t(t + 2)), t = x − 1 exact, below 2^12 (v's tail from sqrt_dd: the result
// stays within ~1 ulp where a builtin sqrt is loose); ln(2x) beyond.
fn acosh_f(x: f32) -> f32 {
  if (x < 1.0) { return qnan(); }
  if (is_pos_inf(x)) { return x; }
  if (x >= 4096.0) { return ln_twice(x); }
  let t = x - 1.0;
  let u = keep(t + 2.0);
  let q = keep(t * u);
  let s = sqrt_dd(q, prod_err(t, u, q) + t * sum_err(t, 2.0, u));
  let v = keep(t + s.x);
  return log1p_reduced(v) + (sum_err(t, s.x, v) + s.y) / (1.0 + v);
}
// atanh: log1p(q)/2 with q = 2a/(1 − a) in two floats (the quotient's residual, exact products).
fn atanh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0 || is_pos_inf(a)) { return qnan(); }
  if (a == 1.0) { return select(qinf(), -qinf(), x < 0.0); }
  if (a < 2.44140625e-4) { return x; }
  let d = keep(1.0 - a);
  let dl = sum_err(1.0, -a, d);
  let n = a + a;
  let qh = keep(n / d);
  let p = keep(qh * d);
  let ql = (keep(n - p) - prod_err(qh, d, p) - qh * dl) / d;
  let r = 0.5 * (log1p_reduced(qh) + ql / (1.0 + qh));
  return select(r, -r, x < 0.0);
}
`;
