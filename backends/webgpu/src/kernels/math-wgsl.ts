/**
 * WGSL float32 math for the elementwise kernels where WGSL has no builtin (erf, log1p, expm1, pow) or
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
// e^(a + b)·2^shift for |b| ≤ 0.11 (a correction a cannot hold): a − k·ln2 is exact, b joins the
// reduced argument; the shift keeps a result that e^(a + b) alone would leave subnormal normal.
fn exp_scaled(a: f32, b: f32, shift: i32) -> f32 {
  let s = a + b;
  if (s < -104.0 - f32(shift) * LN2_HI) { return 0.0; }
  if (s > 89.0) { return qinf(); }
  let k = round(s * LOG2E);
  let r = (keep(a - k * LN2_HI) - k * LN2_LO) + b;
  return scale2(exp_poly(r), i32(k) + shift);
}
fn exp_dd(a: f32, b: f32) -> f32 { return exp_scaled(a, b, 0); }
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
  return log1p_reduced(x);
}
// log1p_f's reduction for finite x > −1 (any such x: near 0, k = 0 and f = 1 + x − 1 exact, c the rounding of
// 1 + x): no branch on the range, so that neighbouring invocations do not diverge.
fn log1p_reduced(x: f32) -> f32 {
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
  -1.1028696193361311e-6, 1.2041321944476356e-7, -1.3113290917698096e-8,
    1.5573888691275958e-9, -1.6755963615115313e-10);
// erfc(x + lo)·2^shift for x ≥ 0.5 (0 from 10.5 on), |lo| ≤ ulp(x): e^(−(x+lo)²)·erfcx(x), with
// x² = h² + (x − h)(x + h).
fn erfc_tail(x: f32, lo: f32, shift: i32) -> f32 {
  if (x >= 10.5) { return 0.0; }
  let piece = u32(x >= 1.0) + u32(x >= 2.0) + u32(x >= 3.0) + u32(x >= 4.5) + u32(x >= 7.0);
  let u = x - ERFCX_CENTRE[piece];
  let c = piece * 10u;
  var s = ERFCX[c + 9u];
  for (var k = 8i; k >= 0i; k--) { s = s * u + ERFCX[c + u32(k)]; }
  let h = hi12(x);
  let d = keep(x - h);
  return exp_scaled(-(h * h), -(d * (x + h)) - 2.0 * x * lo, shift) * s;
}
fn erf_f(x: f32) -> f32 {
  let a = abs(x);
  if (a < 1.0) { return x * erf_over_x(x); }
  let r = 1.0 - erfc_tail(a, 0.0, 0);
  return select(r, -r, x < 0.0);
}
// x·Φ(x), Φ(x) = erfc(z)/2 with z = −x/√2 carried as zh + zl (the rounding of zh would cost 2z² ulp).
const NEG_SQRT_HALF = -0.70710677;         // f32(−1/√2)
const NEG_SQRT_HALF_HI = -0.70703125;      // its top 12 bits
const NEG_SQRT_HALF_LO = -7.551908493e-5;  // the rest
const NEG_SQRT_HALF_TAIL = -1.2101617e-8;  // −1/√2 − f32(−1/√2)
// Φ(x) = erfc(z)/2, z = −x/√2 carried as zh + zl, as gelu_f (no scaling: subnormal results may flush).
fn normal_cdf_f(x: f32) -> f32 {
  let zh = keep(x * NEG_SQRT_HALF);
  let xh = hi12(x);
  let xl = keep(x - xh);
  let zl = keep(xh * NEG_SQRT_HALF_HI - zh) + xh * NEG_SQRT_HALF_LO + xl * NEG_SQRT_HALF_HI + xl * NEG_SQRT_HALF_LO
    + x * NEG_SQRT_HALF_TAIL;
  if (zh >= 0.5) { return 0.5 * erfc_tail(zh, zl, 0); }
  if (zh > -1.0) { return 0.5 - 0.5 * zh * erf_over_x(zh); }
  return 1.0 - 0.5 * erfc_tail(-zh, -zl, 0);
}
// gelu's gradient g·(Φ(x) + x·φ(x)), φ(x) = e^(−x²/2)/√(2π) with x² = h² + (x − h)(x + h) (h: x's top 12
// bits, h² exact); x = +Inf → g, −Inf → g·0, NaN → NaN.
fn gelu_grad_f(x: f32, g: f32) -> f32 {
  if (is_nan(x)) { return x; }
  // x = −Inf: g·0, on the bits (a compiler may fold g·0 to 0): ±0 with g's sign, NaN for g ±Inf or NaN
  if (is_neg_inf(x)) {
    let gb = bitcast<u32>(g);
    return select(bitcast<f32>(gb & 0x80000000u), qnan(), (gb & 0x7fffffffu) >= 0x7f800000u);
  }
  if (is_neg_inf(-x)) { return g; }
  let h = hi12(x);
  let d = keep(x - h);
  let pdf = exp_scaled(-0.5 * (h * h), -0.5 * (d * (x + h)), 0) * 0.39894228;
  return g * (normal_cdf_f(x) + x * pdf);
}
fn gelu_f(x: f32) -> f32 {
  if (is_neg_inf(x)) { return -0.0; }
  let zh = keep(x * NEG_SQRT_HALF);
  let xh = hi12(x);
  let xl = keep(x - xh);
  let zl = keep(xh * NEG_SQRT_HALF_HI - zh) + xh * NEG_SQRT_HALF_LO + xl * NEG_SQRT_HALF_HI + xl * NEG_SQRT_HALF_LO
    + x * NEG_SQRT_HALF_TAIL;
  var cdf: f32;
  if (zh >= 0.5) {
    // erfc(z) is subnormal from z ≈ 9.3 on: take it ·2^64, then scale the product back (one rounding).
    return x * (0.5 * erfc_tail(zh, zl, 64)) * pow2i(-64);
  } else if (zh > -1.0) {
    cdf = 0.5 - 0.5 * zh * erf_over_x(zh);
  } else {
    cdf = 1.0 - 0.5 * erfc_tail(-zh, -zl, 0);
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
  if (v < -80.0) { return x * exp_scaled(v, vl, 64) * pow2i(-64); } // as silu: sigmoid(v) = e^v, kept normal
  let e = exp_dd(-abs(v), select(vl, -vl, v >= 0.0));
  return x * div_acc(select(e, 1.0, v >= 0.0), 1.0 + e);
}
fn silu_f(x: f32) -> f32 {
  if (is_neg_inf(x)) { return -0.0; }
  // Below −80, sigmoid(x) = e^x in float32, subnormal from −87.3 on: x·(e^x·2^64), then ·2^−64 (one rounding).
  if (x < -80.0) { return x * exp_scaled(x, 0.0, 64) * pow2i(-64); }
  return x * sigmoid_acc(x);
}
// x·(clamp(x + 3, 0, 6)/6): x·0 = −0 for finite x ≤ −3 (a −0.0 literal may fold to +0), the limit −0 at −Inf.
fn hardswish_f(x: f32) -> f32 {
  return select(x * div_acc(clamp(x + 3.0, 0.0, 6.0), 6.0), bitcast<f32>(0x80000000u), is_neg_inf(x));
}
fn softplus_f(x: f32) -> f32 {
  return max(x, 0.0) + log1p_reduced(exp_dd(-abs(x), 0.0)); // e^−|x| in [0, 1]: one log1p path, no divergence
}
// ---- pow: x^y = 2^(y·log2|x|) with log2|x| and the product carried in two floats,
// so that a result float32 holds exactly (3^15, 2^-3, (−7)^8) comes out exact, others within ~1 ulp ----
const INV_LN2 = 1.442695;          // f32(1/ln 2)
const INV_LN2_TAIL = 1.925963e-8;  // 1/ln 2 − INV_LN2
const LN2_F = 0.69314718;          // f32(ln 2)
const LN2_F_TAIL = -1.9046543e-9;  // ln 2 − LN2_F
// log2(c) as hi + lo for c = 1 + j/32, j = −8..16 (index j + 8).
const LOG2C_HI = array<f32, 25>(
  -0.41503751277923584, -0.3561438024044037, -0.2995602786540985, -0.24511249363422394, -0.19264507293701172,
  -0.14201900362968445, -0.09310940653085709, -0.04580368846654892, 0.0, 0.0443941205739975,
  0.08746284246444702, 0.12928301095962524, 0.1699250042438507, 0.20945335924625397, 0.24792751669883728,
  0.28540220856666565, 0.32192808389663696, 0.3575519919395447, 0.39231741428375244, 0.42626476287841797,
  0.45943161845207214, 0.49185308814048767, 0.523561954498291, 0.5545888543128967, 0.5849624872207642);
const LOG2C_LO = array<f32, 25>(
  1.3500391915499677e-08, -7.820871950059427e-09, -3.2048093068226535e-09, -4.202307390954729e-09,
  -5.005384107192867e-09, -1.2427434636919088e-09, 2.13937556559074e-09, -1.1465758342765753e-09, 0.0,
  -1.215544109811617e-09, -1.2141075922400546e-09, 5.9853411116250754e-09, -2.8015383346513545e-09,
  6.382695705298147e-09, -3.2552518458572877e-09, 1.0295583052766233e-08, 1.0990725662907153e-08,
  1.2678539107469078e-08, 8.495008252396019e-09, -8.176320065444997e-09, 1.8522511302521139e-10,
  8.189187106211193e-09, 1.5587218182844254e-09, -2.635259344074825e-09, 1.3500391915499677e-08);
// The rounding error of s = fl(a + b) (Knuth's TwoSum; every step exact).
fn sum_err(a: f32, b: f32, s: f32) -> f32 {
  let bb = keep(s - a);
  return keep((a - keep(s - bb)) + (b - bb));
}
// log2(ax) as hi + lo (relative error ~2^-40), for finite ax > 0: ax = 2^e·m with m in [0.75, 1.5),
// c = 1 + j/32 the nearest such value (c = 1 near 1: no cancellation), log2 m = log2 c + (2/ln 2)·atanh(s)
// with s = (m − c)/(m + c) = sh + sl, |s| ≤ 0.0106, and 2·atanh(s) = 2s + s³·(2/3 + 2s²/5).
fn log2_dd(ax: f32) -> vec2f {
  var a = ax;
  var e = 0;
  if (a < 1.17549435e-38) { a = a * 16777216.0; e = -24; }
  let bits = bitcast<u32>(a);
  e += i32(bits >> 23u) - 127;
  var m = bitcast<f32>((bits & 0x7fffffu) | 0x3f800000u);
  if (m >= 1.5) { m = m * 0.5; e += 1; }
  let jf = round((m - 1.0) * 32.0);
  let j = u32(i32(jf) + 8);
  let c = 1.0 + jf * 0.03125;
  let f = m - c;
  let dh = keep(m + c);
  let dl = sum_err(m, c, dh);
  let sh = keep(f / dh);
  let ph = keep(sh * dh);
  let sl = (keep(f - ph) - prod_err(sh, dh, ph) - sh * dl) / dh;
  let w = sh * sh;
  let lnh = 2.0 * sh;
  let lnl = 2.0 * sl + sh * w * (0.6666666667 + w * 0.4);
  let mh = keep(lnh * INV_LN2);
  let ml = prod_err(lnh, INV_LN2, mh) + lnh * INV_LN2_TAIL + lnl * INV_LN2;
  let ef = f32(e);
  let s1 = keep(ef + LOG2C_HI[j]);
  let s2 = keep(s1 + mh);
  let lo = sum_err(ef, LOG2C_HI[j], s1) + sum_err(s1, mh, s2) + (ml + LOG2C_LO[j]);
  let hi = keep(s2 + lo); // renormalized: |lo| ≤ ulp(hi)/2
  return vec2f(hi, lo - keep(hi - s2));
}
// 2^(ph + pl) for |ph| < 160, |pl| ≤ ulp(ph): 2^n·e^t with t = (ph − n + pl)·ln 2 = th + tl in two floats,
// and e^t = (1 + th) + th²·expm1_tail(th) + tl·e^th summed so that the last addition is the one rounding.
fn exp2_dd(ph: f32, pl: f32) -> f32 {
  let n = round(ph);
  let f = keep(ph - n);
  let th = keep(f * LN2_F);
  let tl = prod_err(f, LN2_F, th) + f * LN2_F_TAIL + pl * LN2_F;
  let sh = keep(1.0 + th);
  let sl = th - keep(sh - 1.0);
  let q = th * th * expm1_tail(th); // e^th = sh + sl + q
  let rest = sl + (q + tl * (sh + q)); // e^(th + tl) ≈ e^th·(1 + tl), tl ≲ 2^-19
  return scale2(keep(sh + rest), i32(n));
}
// IEEE 754 pow (C99 F.9.4.4) on float32, the special values decided on bits and comparisons first.
fn pow_f(x: f32, y: f32) -> f32 {
  let ax = abs(x);
  let ay = abs(y);
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return qnan(); }
  let y_int = ay >= 16777216.0 || trunc(y) == y;
  let y_odd = ay < 16777216.0 && y_int && (i32(y) & 1) != 0;
  if (is_pos_inf(ay)) {
    if (ax == 1.0) { return 1.0; }
    return select(0.0, qinf(), (ax > 1.0) == (y > 0.0));
  }
  let neg = y_odd && (bitcast<u32>(x) & 0x80000000u) != 0u; // (−0)^3 = −0
  if (x < 0.0 && !y_int && !is_pos_inf(ax)) { return qnan(); }
  var r: f32;
  if (ax == 1.0) {
    r = 1.0; // (−1)^y: y is an integer here
  } else if (ax == 0.0) {
    r = select(0.0, qinf(), y < 0.0);
  } else if (is_pos_inf(ax)) {
    r = select(qinf(), 0.0, y < 0.0);
  } else {
    let l = log2_dd(ax);
    let ph = keep(y * l.x);
    if (abs(ph) >= 160.0) {
      r = select(0.0, qinf(), ph > 0.0);
    } else {
      r = exp2_dd(ph, prod_err(y, l.x, ph) + y * l.y);
    }
  }
  return select(r, -r, neg);
}
`;

/**
 * floorDiv and truncDiv on float32 (hal/src/ops/binary-int.ts), exact: the quotient's integer part by
 * long division of the 24-bit mantissas (WGSL's float division is within 2.5 ulp, not exact), then
 * rounded to float32 by hand. Needs `qnan()` from the kernel prelude.
 */
export const DIV_WGSL = `
// floor (floor = true) or trunc of the exact quotient of finite x by finite nonzero y, rounded to nearest
// even. |x| = mx·2^(ex−150), |y| = my·2^(ey−150) with mantissas normalized to [2^23, 2^24), so |x/y| lies
// in (2^(d−1), 2^(d+1)), d = ex − ey. The integer part N = floor(mx·2^d/my) is taken 7 bits at a time
// until its leading part q holds 25 bits: N = q·2^D + L, L < 2^D, and L's zeroness (L ≠ 0 ⟺ r·2^D ≥ my),
// whether L = 2^D − 1 (for the +1 of a floored negative quotient), and whether x/y has a fraction (the
// remainder carried through the D bits left) decide the rounding; the result is an integer ≥ 1 or zero.
fn div_rounded(x: f32, y: f32, floor: bool) -> f32 {
  let sign = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  if (ax == 0u) { return bitcast<f32>(sign); }
  var ex = i32(ax >> 23u); var ey = i32(ay >> 23u);
  var mx = ax & 0x7fffffu; var my = ay & 0x7fffffu;
  if (ex == 0) { let s = countLeadingZeros(mx) - 8u; mx = mx << s; ex = 1 - i32(s); } else { mx |= 0x800000u; }
  if (ey == 0) { let s = countLeadingZeros(my) - 8u; my = my << s; ey = 1 - i32(s); } else { my |= 0x800000u; }
  var d = ex - ey;
  var q = 0u;
  var r = mx;
  if (d >= 0) {
    q = mx / my;
    r = mx % my;
    loop {
      if (d == 0 || q >= 0x1000000u) { break; }
      let s = u32(min(d, 7));
      let t = r << s; // r < my < 2^24: t < 2^31
      q = (q << s) | (t / my);
      r = t % my;
      d -= i32(s);
    }
  }
  let big = max(d, 0); // D: the bits of N below q
  let cut = select(0u, (my - 1u) >> u32(min(big, 31)), big < 24);
  var sticky = big > 0 && r > cut; // L ≠ 0
  let all_ones = big > 0 && (my - r) <= select(0u, my >> u32(min(big, 31)), big < 24); // L = 2^D − 1
  var rr = r;
  var left = big;
  loop {
    if (left <= 0 || rr == 0u) { break; }
    let s = u32(min(left, 8));
    rr = (rr << s) % my;
    left -= i32(s);
  }
  if (floor && sign != 0u && rr != 0u) { // |floor(x/y)| = N + 1
    if (big == 0 || all_ones) { q += 1u; sticky = false; } else { sticky = true; }
  }
  if (q == 0u) { return bitcast<f32>(sign); }
  let k = 31 - i32(countLeadingZeros(q));
  var m = q << u32(max(23 - k, 0));
  var e = k + big;
  if (k > 23) {
    let sh = u32(k - 23);
    let rest = q & ((1u << sh) - 1u);
    let half = 1u << (sh - 1u);
    m = q >> sh;
    if (rest > half || (rest == half && (sticky || (m & 1u) != 0u))) { m += 1u; }
    if (m == 0x1000000u) { m = 0x800000u; e += 1; }
  }
  if (e > 127) { return bitcast<f32>(sign | 0x7f800000u); }
  return bitcast<f32>(sign | (u32(e + 127) << 23u) | (m & 0x7fffffu));
}
// Whether k = floor(q) (trunc(q)) of q = x/y is the exact quotient's: WGSL's division is within 2.5 ulp
// for |y| in [2^-126, 2^126], so a q farther than |q|·2^-20 + 2^-22 from every integer has the exact
// quotient's floor (trunc); the others take the long division (div_rounded).
fn div_clear(q: f32, k: f32, ay: u32) -> bool {
  let d = abs(q - k);
  let e = abs(q) * 9.5367431640625e-7 + 2.384185791015625e-7;
  return ay >= 0x00800000u && ay < 0x7e800000u && d > e && d < 1.0 - e;
}
// NaN operands → NaN; x/±0 → ±Inf by the signs (NaN for 0/0); decided on bits (WGSL may assume finite math).
fn div_special(ax: u32, ay: u32, sign: u32) -> f32 {
  if (ax > 0x7f800000u || ay > 0x7f800000u || (ax == 0u && ay == 0u)) { return qnan(); }
  return bitcast<f32>(sign | 0x7f800000u);
}
// NumPy's floor_divide: ±Inf // y = NaN; x // ±Inf = −1 where x ≠ 0 and the signs differ, else ±0.
fn div_floor(x: f32, y: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let sign = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
  if (ax > 0x7f800000u || ay > 0x7f800000u || ay == 0u) { return div_special(ax, ay, sign); }
  if (ax == 0x7f800000u) { return qnan(); }
  if (ay == 0x7f800000u) { return select(bitcast<f32>(sign), -1.0, ax != 0u && sign != 0u); }
  let q = x / y;
  let k = floor(q);
  if (div_clear(q, k, ay)) { return k; }
  return div_rounded(x, y, true);
}
// trunc(x/y): ±Inf / finite = ±Inf, ±Inf / ±Inf = NaN, finite / ±Inf = ±0.
fn div_trunc(x: f32, y: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let sign = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
  if (ax > 0x7f800000u || ay > 0x7f800000u || ay == 0u) { return div_special(ax, ay, sign); }
  if (ax == 0x7f800000u) { return select(bitcast<f32>(sign | 0x7f800000u), qnan(), ay == 0x7f800000u); }
  if (ay == 0x7f800000u) { return bitcast<f32>(sign); }
  let q = x / y;
  let k = trunc(q);
  if (div_clear(q, k, ay)) { return k; }
  return div_rounded(x, y, false);
}
// int32: x // 0 = x / 0 = 0; −2^31 // −1 = −2^31 (−x wraps).
fn idiv_floor(x: i32, y: i32) -> i32 {
  if (y == 0) { return 0; }
  if (y == -1) { return -x; }
  let q = x / y;
  return select(q, q - 1, x % y != 0 && (x ^ y) < 0);
}
fn idiv_trunc(x: i32, y: i32) -> i32 {
  if (y == 0) { return 0; }
  if (y == -1) { return -x; }
  return x / y;
}
`;
