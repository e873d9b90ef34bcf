/**
 * WGSL float32 math for the elementwise kernels where WGSL has no builtin (erf, log1p, expm1) or
 * where its builtins are too loose (exp: 3 + 2·|x| ulp; log: 2^-21 absolute near 1), written with
 * + − × (correctly rounded in WGSL), bit operations and polynomials: exp, log1p, expm1, erf/erfc and
 * the activations built on them. Accuracy is a few ulp (docs/OPS.md gives each op's bound).
 *
 * Compilers may rewrite float expressions algebraically (Mesa's NIR turns (a + b) − a into b, and
 * folds c1 + (x + c2) into x + fl(c1 + c2)), which would undo a rounding step an exact difference relies
 * on, or round away the low part of a constant split in two. `keep(x)` XORs x's bits with the params'
 * word 1 — 0 at run time, unknown to the compiler — so such a step stays as written. Products that
 * must be exact use `hi12` splits (12 significant bits each: the product of two is exact).
 *
 * The polynomials are Chebyshev interpolants in float64 (the erf pieces are those of the cpu backend,
 * backends/cpu/src/kernels/special.ts); evaluated here in float32.
 */

/** Needs `p(1u)` = 0, `is_nan`, `qnan()` and `qinf()` from the kernel prelude (layout.ts, elementwise.ts). */
export const MATH_WGSL = `
fn keep(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ u32(p(1u))); }
fn hi12(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }
fn is_pos_inf(x: f32) -> bool { return bitcast<u32>(x) == 0x7f800000u; }
fn is_neg_inf(x: f32) -> bool { return bitcast<u32>(x) == 0xff800000u; }
// 2^k for k in [−126, 127], exactly.
fn pow2i(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }
// q·2^k for q in [0.5, 2) and any k, rounded once (subnormal results: q·2^(k+64) is exact, then ·2^−64).
fn scale2(q: f32, k: i32) -> f32 {
  if (k > 127) { return q * pow2i(127) * pow2i(min(k - 127, 127)); }
  if (k < -126) { return q * pow2i(max(k + 64, -126)) * pow2i(-64); }
  return q * pow2i(k);
}
const LOG2E = 1.44269504;
const LN2_HI = 0.693145751953125; // 15 significant bits: k·LN2_HI is exact for |k| < 512
const LN2_LO = 1.4286068e-6;      // ln 2 − LN2_HI
// e^r on |r| ≤ 0.47 (relative error 7e-10).
fn exp_poly(r: f32) -> f32 {
  return 1.0 + r * (1.0 + r * (0.50000006716 + r * (0.16666667412 + r * (0.04166514717 + r * (0.00833316464
    + r * (0.00139988328 + r * 0.00019963355))))));
}
// e^(a + b) for |b| ≤ 0.11 (a correction a cannot hold): a − k·ln2 is exact, b joins the reduced argument.
fn exp_dd(a: f32, b: f32) -> f32 {
  let s = a + b;
  if (s < -104.0) { return 0.0; }
  if (s > 89.0) { return qinf(); }
  let k = round(s * LOG2E);
  let r = (keep(a - k * LN2_HI) - k * LN2_LO) + b;
  return scale2(exp_poly(r), i32(k));
}
// (log1p(f) − f)/f² on [√½ − 1, √2 − 1] (relative error 8e-9).
fn log1p_tail(f: f32) -> f32 {
  return -0.49999999943 + f * (0.33333322785 + f * (-0.25000011085 + f * (0.20001447694 + f * (-0.16667528808
    + f * (0.14232285228 + f * (-0.12420950115 + f * (0.11812568673 + f * (-0.11556577540 + f * 0.06767020322))))))));
}
// log(1 + x) for x ≥ −1: 1 + x = 2^k·m with m in [√½, √2), f = m − 1 exact, plus the rounding error of 1 + x.
fn log1p_f(x: f32) -> f32 {
  if (x >= -0.29289322 && x < 0.41421357) { return x + x * x * log1p_tail(x); }
  if (x <= -1.0) { return select(qnan(), -qinf(), x == -1.0); }
  if (is_pos_inf(x)) { return x; }
  let u = keep(1.0 + x);
  var c = 0.0;
  if (u < 16777216.0) { c = (x - keep(u - 1.0)) / u; }
  let bits = bitcast<u32>(u);
  var k = i32(bits >> 23u) - 127;
  var m = bitcast<f32>((bits & 0x7fffffu) | 0x3f800000u);
  if (m >= 1.41421356) { m = m * 0.5; k = k + 1; }
  let f = m - 1.0;
  let kf = f32(k);
  return keep(kf * LN2_HI) + (f + f * f * log1p_tail(f) + (kf * LN2_LO + c));
}
// (e^r − 1 − r)/r² on |r| ≤ 0.35 (relative error 3e-9).
fn expm1_tail(r: f32) -> f32 {
  return 0.50000000143 + r * (0.16666666683 + r * (0.04166645690 + r * (0.00833331003 + r * (0.00139345317
    + r * 0.00019891970))));
}
// e^x − 1: x + x²·tail near 0; else 2^k·(e^r − 1) + (2^k − 1) with r = x − k·ln2.
fn expm1_f(x: f32) -> f32 {
  if (x > 89.0) { return qinf(); }
  if (x < -17.5) { return -1.0; }
  if (abs(x) < 0.34657) { return x + x * x * expm1_tail(x); }
  let k = round(x * LOG2E);
  let r = keep(x - k * LN2_HI) - k * LN2_LO;
  let em = r + r * r * expm1_tail(r);
  let ik = i32(k);
  if (ik >= 25) { return scale2(1.0 + em, ik); }
  let s = pow2i(ik);
  return (s - 1.0) + s * em;
}
// n/d to about an ulp: WGSL's division may be off by 2.5 ulp; one residual step corrects it.
fn div_acc(n: f32, d: f32) -> f32 {
  let q = keep(n / d);
  return q + (n - q * d) / d;
}
// 1/(1 + e^−v) without overflow.
fn sigmoid_acc(v: f32) -> f32 {
  let e = exp_dd(-abs(v), 0.0);
  return div_acc(select(e, 1.0, v >= 0.0), 1.0 + e);
}
// erf(x)/x for |x| < 1, in powers of (x² − 0.5).
fn erf_over_x(x: f32) -> f32 {
  let u = x * x - 0.5;
  return 0.96546873864 + u * (-0.28107217804 + u * (0.07940999089 + u * (-0.01828388490 + u * (0.00348019185
    + u * (-0.00056118125 + u * (0.00007882493 + u * -0.00000966704))))));
}
const ERFCX_CENTRE = array<f32, 6>(0.75, 1.5, 2.5, 3.75, 5.75, 8.75);
const ERFCX = array<f32, 60>(
  0.5069376502938032, -0.3679726916560281, 0.23095813102470494, -0.12983606180805476, 0.06679060987699155,
  -0.0318972859548989, 0.014286186748333037, -0.0060504622990656485, 0.002492495435538923, -0.0009580092907806112,
  0.32158541650047495, -0.1636229177465968, 0.07615103062813772, -0.03293090249334706, 0.013377635531296317,
  -0.005146047146809186, 0.0018828527947565084, -0.0006609315052583149, 0.00023813959857475734, -7.717365274918424e-5,
  0.21080636406329534, -0.07434734679033479, 0.024937996656427194, -0.008001569274076288, 0.0024670505607688226,
  -0.0007335943887708153, 0.0002108664301202841, -5.883043828083699e-5, 1.6657495397880416e-5, -4.389073219671667e-6,
  0.14558972128072814, -0.03645625753387202, 0.008878755021811645, -0.002107282768110165, 0.00048822955458486275,
  -0.00011058102313241398, 2.4480809175998717e-5, -5.319500429946037e-6, 1.2066446557187624e-6, -2.52008275226413e-7,
  0.09669877819074267, -0.016343218146962046, 0.0027252731703999206, -0.0004485955972415756, 7.292771919082052e-5,
  -1.1712930342986603e-5, 1.8532037076880486e-6, -2.9092186920719036e-7, 4.968734732068087e-8, -7.617988135296219e-9,
  0.06406571556071448, -0.007229144949114241, 0.0008106971013937276, -9.036262633819108e-5, 1.0012466376355202e-5,
  -1.1028696193361311e-6, 1.2041321944476356e-7, -1.3113290917698096e-8, 1.5573888691275958e-9, -1.6755963615115313e-10);
// erfc(x + lo) for x ≥ 0.5 (0 from 10.5 on), |lo| ≤ ulp(x): e^(−(x+lo)²)·erfcx(x), with x² = h² + (x − h)(x + h).
fn erfc_tail(x: f32, lo: f32) -> f32 {
  if (x >= 10.5) { return 0.0; }
  let piece = u32(x >= 1.0) + u32(x >= 2.0) + u32(x >= 3.0) + u32(x >= 4.5) + u32(x >= 7.0);
  let u = x - ERFCX_CENTRE[piece];
  let c = piece * 10u;
  var s = ERFCX[c + 9u];
  for (var k = 8i; k >= 0i; k--) { s = s * u + ERFCX[c + u32(k)]; }
  let h = hi12(x);
  let d = keep(x - h);
  return exp_dd(-(h * h), -(d * (x + h)) - 2.0 * x * lo) * s;
}
fn erf_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 1.0) { return x * erf_over_x(x); }
  let r = 1.0 - erfc_tail(a, 0.0);
  return select(r, -r, x < 0.0);
}
// x·Φ(x), Φ(x) = erfc(z)/2 with z = −x/√2 carried as zh + zl (the rounding of zh would cost 2z² ulp).
const NEG_SQRT_HALF = -0.70710677;         // f32(−1/√2)
const NEG_SQRT_HALF_HI = -0.70703125;      // its top 12 bits
const NEG_SQRT_HALF_LO = -7.551908493e-5;  // the rest
const NEG_SQRT_HALF_TAIL = -1.2101617e-8;  // −1/√2 − f32(−1/√2)
fn gelu_f(x: f32) -> f32 {
  if (is_neg_inf(x)) { return -0.0; }
  let zh = keep(x * NEG_SQRT_HALF);
  let xh = hi12(x);
  let xl = keep(x - xh);
  let zl = keep(xh * NEG_SQRT_HALF_HI - zh) + xh * NEG_SQRT_HALF_LO + xl * NEG_SQRT_HALF_HI + xl * NEG_SQRT_HALF_LO
    + x * NEG_SQRT_HALF_TAIL;
  var cdf: f32;
  if (zh >= 0.5) {
    cdf = 0.5 * erfc_tail(zh, zl);
  } else if (zh > -1.0) {
    cdf = 0.5 - 0.5 * zh * erf_over_x(zh);
  } else {
    cdf = 1.0 - 0.5 * erfc_tail(-zh, -zl);
  }
  return x * cdf;
}
// The exact rounding error of p = fl(a·b) (Dekker, with hi12 splits: every step below is exact).
fn prod_err(a: f32, b: f32, p: f32) -> f32 {
  let ah = hi12(a);
  let al = keep(a - ah);
  let bh = hi12(b);
  let bl = keep(b - bh);
  return ((keep(ah * bh - p) + ah * bl) + al * bh) + al * bl;
}
// x·sigmoid(v), v = G·x + A·x³ (G = 2√(2/π), A = 0.044715·G): the tanh approximation of GELU. v is
// carried as v + vl (float32 alone would cost ~1.5·|v| ulp in the negative tail) into e^(−|v|).
const GT_G = 1.5957692;
const GT_G_TAIL = -4.534068e-8;
const GT_A = 0.071354814;
const GT_A_TAIL = 2.3988324e-9;
fn gelu_tanh_f(x: f32) -> f32 {
  if (abs(x) > 64.0) { return select(x * 0.0, x, x > 0.0); } // sigmoid(v) is 0 or 1 in float32
  let s = keep(x * x);
  let e1 = prod_err(x, x, s);
  let q = keep(GT_A * s);
  let e2 = prod_err(GT_A, s, q) + GT_A_TAIL * s + GT_A * e1;
  let w = keep(GT_G + q);
  let bb = keep(w - GT_G);
  let e3 = keep((GT_G - keep(w - bb)) + (q - bb)) + GT_G_TAIL + e2;
  let v = keep(x * w);
  let vl = prod_err(x, w, v) + x * e3;
  let e = exp_dd(-abs(v), select(vl, -vl, v >= 0.0));
  return x * div_acc(select(e, 1.0, v >= 0.0), 1.0 + e);
}
fn silu_f(x: f32) -> f32 {
  if (is_neg_inf(x)) { return -0.0; }
  return x * sigmoid_acc(x);
}
fn softplus_f(x: f32) -> f32 {
  return max(x, 0.0) + log1p_f(exp_dd(-abs(x), 0.0));
}
`;
