/**
 * erf, erfc and the normal CDF for the cpu kernels, evaluated in float64 and rounded once on store.
 * Fitted polynomials, not the oracle's series (hal/src/ops/erf.ts): the conformance suite compares
 * the two. The same fits, in the same pieces, serve the wasm and webgpu kernels.
 *
 * - |x| < 1: erf(x) = x·E(x²), E a degree-7 Chebyshev interpolant of erf(√t)/√t on t ∈ [0, 1], in
 *   powers of (t − 0.5); relative error 4e-11.
 * - 0.5 ≤ x < 10.5: erfc(x) = e^(−x²)·erfcx(x), erfcx (the scaled erfc, smooth and decreasing like
 *   1/(x√π)) a degree-9 Chebyshev interpolant on each of [0.5, 1, 2, 3, 4.5, 7, 10.5], in powers of
 *   (x − the piece's centre); relative error ≤ 2.2e-10. erfc(x ≥ 10.5) < 2^-160 is 0 in float32.
 */

/** erf(√t)/√t on [0, 1], in powers of (t − 0.5). */
const E = [
  0.9654687386375693, -0.2810721780422438, 0.07940999088982117, -0.018283884897644553, 0.003480191849919302,
  -0.0005611812542463042, 7.882493436803198e-5, -9.667043434542967e-6,
];

/** Pieces of erfcx: lower bounds, centres, then 10 coefficients per piece (powers of x − centre). */
const ERFCX_LO = [0.5, 1, 2, 3, 4.5, 7];
const ERFCX_CENTRE = [0.75, 1.5, 2.5, 3.75, 5.75, 8.75];
export const ERFCX_END = 10.5;
const ERFCX = [
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
  -1.1028696193361311e-6, 1.2041321944476356e-7, -1.3113290917698096e-8, 1.5573888691275958e-9, -1.6755963615115313e-10,
];

/** erf(x)/x for |x| ≤ 1. */
function erfOverX(x: number): number {
  const u = x * x - 0.5;
  let r = E[7]!;
  for (let k = 6; k >= 0; k--) r = r * u + E[k]!;
  return r;
}

/** erfc(x) for 0.5 ≤ x (0 from 10.5 on). */
function erfcTail(x: number): number {
  if (x >= ERFCX_END) return 0;
  let p = 5;
  while (x < ERFCX_LO[p]!) p--;
  const u = x - ERFCX_CENTRE[p]!;
  const c = p * 10;
  let r = ERFCX[c + 9]!;
  for (let k = 8; k >= 0; k--) r = r * u + ERFCX[c + k]!;
  return Math.exp(-x * x) * r;
}

export function erf(x: number): number {
  if (Math.abs(x) < 1) return x * erfOverX(x);
  if (x !== x) return x;
  return x > 0 ? 1 - erfcTail(x) : erfcTail(-x) - 1;
}

export function erfc(x: number): number {
  if (x >= 0.5) return erfcTail(x);
  if (x > -0.5) return 1 - x * erfOverX(x);
  if (x !== x) return x;
  return 2 - erfcTail(-x);
}

/** The standard normal CDF Φ(x) = erfc(−x/√2)/2. */
export const normalCdf = (x: number): number => 0.5 * erfc(-x * Math.SQRT1_2);
