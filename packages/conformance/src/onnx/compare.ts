/**
 * Comparison of a backend's output with ONNX's expected output. Every element must pass ONNX's own
 * check — numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7): |got − want| ≤ 1e-7 + 1e-3·|want|,
 * NaN meets NaN, ±Inf the same infinity — and, where our contract is tighter, that contract too:
 * bit-exact for data movement, selection and int32 arithmetic; the conformance tolerance of the HAL op
 * for the backend's arithmetic class for elementwise float32 ops (~1 ulp on cpu/wasm). ONNX's expected
 * values come from NumPy in float32: exact for correctly rounded ops, a few ulps off for
 * transcendentals, which gets 4 ulps of slack.
 */
import type { BackendCapabilities, HostArray } from '@polyhal/hal';
import { ulpDistance } from '../compare.js';
import { ulp16 } from '../oracle-dtype.js';
import { CLASS_DOMAINS, DIVISOR_DOMAIN_OPS, type Tolerance, toleranceFor } from '../tolerances.js';
import type { Contract } from '@polyhal/onnx';

/** ONNX's own node-test check, relative part: |got − want| ≤ ONNX_ATOL + ONNX_RTOL·|want| (its runner's defaults). */
export const ONNX_RTOL = 1e-3;
/** ONNX's own node-test check, absolute part (see ONNX_RTOL). */
export const ONNX_ATOL = 1e-7;

/** HAL ops whose NumPy float32 reference is correctly rounded (no slack for the reference's own error). */
const CORRECTLY_ROUNDED = new Set([
  'add',
  'sub',
  'mul',
  'div',
  'sqrt',
  'recip',
  'neg',
  'relu',
  'maximum',
  'minimum',
  'abs',
  'sign',
  'floor',
  'ceil',
  'round',
  'trunc',
]);
const REFERENCE_SLACK = 4.8e-7; // 4 ulps

/** The result of comparing one output of an ONNX node test with its expected data. */
export interface OnnxComparison {
  /** Whether every element is within the applied contract. */
  pass: boolean;
  /** Largest |got − want|. */
  maxAbsError: number;
  /** Largest distance in float32 ulps (0 for exact). */
  maxUlpError: number;
  /** The contract applied, in words: "onnx", "exact" or "onnx ∩ hal:exp (…)". */
  applied: string;
  /** The first element out of tolerance: its flat index, the backend's value and the expected one. */
  firstFailure?: { index: number; got: number; want: number };
}

/** The contract tolerance for float results, or undefined where only ONNX's check applies. */
function contractTolerance(contract: Contract, caps: BackendCapabilities, dtype: string): Tolerance | undefined {
  if (contract.kind !== 'hal') return undefined;
  // Under a class with input domains for the op (wgsl sin/cos/exp/log, division), elements outside
  // them may hold anything; ONNX's check alone applies there.
  if (
    CLASS_DOMAINS[caps.arithmetic]?.[contract.op] ||
    (caps.arithmetic !== 'ieee-correctly-rounded' && DIVISOR_DOMAIN_OPS.has(contract.op))
  )
    return undefined;
  const t = toleranceFor(contract.op, dtype === 'float64' ? 'float64' : 'float32', caps.arithmetic);
  // NumPy's float64 references carry their own float64 rounding: 4 float64 ulps of slack
  const slack = dtype === 'float64' ? REFERENCE_SLACK * 2 ** -29 : REFERENCE_SLACK;
  return CORRECTLY_ROUNDED.has(contract.op) ? t : { abs: t.abs, rel: t.rel + slack };
}

/**
 * Compares `got` (`want`'s length) with the expected values under the contract. Integer and bool data
 * compare exactly; float16 as float32 with one float16 ulp more under a HAL contract (its results are
 * the float32 ones rounded again: compare.ts), float64 under the contract's float64 bound (the float32
 * one in float64 ulps), and all of them exactly under an exact contract.
 */
export function compareOnnx(
  got: HostArray,
  want: ArrayLike<number>,
  dtype: string,
  contract: Contract,
  caps: BackendCapabilities,
): OnnxComparison {
  const exact = (dtype !== 'float32' && dtype !== 'float16' && dtype !== 'float64') || contract.kind === 'exact';
  const tol = exact ? undefined : contractTolerance(contract, caps, dtype);
  const applied = exact
    ? 'exact'
    : tol
      ? `onnx ∩ hal:${contract.kind === 'hal' ? contract.op : ''} (abs ${tol.abs}, rel ${tol.rel.toExponential(2)})`
      : 'onnx';
  const res: OnnxComparison = { pass: true, maxAbsError: 0, maxUlpError: 0, applied };
  if (got.length !== want.length)
    return { ...res, pass: false, firstFailure: { index: -1, got: got.length, want: want.length } };
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    let ok: boolean;
    if (Number.isNaN(w) || Number.isNaN(g)) ok = Number.isNaN(w) && Number.isNaN(g);
    else if (!Number.isFinite(w) || !Number.isFinite(g)) ok = g === w;
    else {
      const abs = Math.abs(g - w);
      res.maxAbsError = Math.max(res.maxAbsError, abs);
      if (dtype === 'float32') res.maxUlpError = Math.max(res.maxUlpError, ulpDistance(g, w));
      if (exact) ok = g === w;
      else {
        ok = abs <= ONNX_ATOL + ONNX_RTOL * Math.abs(w);
        if (ok && tol)
          ok =
            abs <= tol.abs + tol.rel * Math.abs(w) + (dtype === 'float16' ? ulp16(w) : 0) ||
            (caps.flushesSubnormals && g === 0 && Math.abs(w) < 1.1754943508222875e-38);
      }
    }
    if (!ok && res.pass) {
      res.pass = false;
      res.firstFailure = { index: i, got: g, want: w };
    }
  }
  return res;
}
