import type { Ref } from './oracle.js';
import { oRound16, ulp16 } from './oracle-dtype.js';
import type { Tolerance } from './tolerances.js';

/** The result of comparing a backend's output with the oracle's, element by element. */
export interface Comparison {
  /** Whether every compared element is within the tolerance (NaN meeting NaN, ±Inf the same infinity). */
  pass: boolean;
  /** Largest |got − want| over the compared elements. */
  maxAbsError: number;
  /** Largest |got − want| / |want| over the compared elements with want ≠ 0. */
  maxRelError: number;
  /** Largest distance in float32 units in the last place (0 for exact). */
  maxUlpError: number;
  /** Elements not compared because their input is outside the backend's domain for the op. */
  skipped?: number;
  /** First failing element, for the report. */
  firstFailure?: { index: number; got: number; want: number };
}

const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);
/** Maps a float32 to an integer that is monotonic in the float order, so ulp distance is a difference. */
function ordered(v: number): number {
  f32[0] = v;
  const b = i32[0]!;
  return b < 0 ? -2147483648 - b : b;
}

/** The number of float32 values between a and b (0 when equal or both NaN; Infinity when one is NaN). */
export function ulpDistance(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  return Math.abs(ordered(a) - ordered(b));
}

/**
 * Compares backend output with the oracle under a tolerance. `want` is rounded to its dtype: float32 by
 * Math.fround, float16 by oRound16 (integers and bool are exact already). float16 results, computed in
 * float32 and rounded once more, may land one float16 unit from the rounded oracle where the float32
 * result is not exact: their bound is the tolerance (the float32 one of the op) plus one float16 ulp of
 * `want`, and exactly 0 where the tolerance is 0.
 * `checked(i)` false skips element i (an input outside the backend's guaranteed domain).
 */
export function compare(
  got: ArrayLike<number>,
  want: Ref,
  tol: Tolerance,
  checked?: (i: number) => boolean,
  flushesSubnormals = false,
): Comparison {
  const res: Comparison = { pass: true, maxAbsError: 0, maxRelError: 0, maxUlpError: 0 };
  if (got.length !== want.data.length) {
    return { ...res, pass: false, firstFailure: { index: -1, got: got.length, want: want.data.length } };
  }
  for (let i = 0; i < got.length; i++) {
    if (checked && !checked(i)) {
      res.skipped = (res.skipped ?? 0) + 1;
      continue;
    }
    const g = got[i]!;
    const w =
      want.dtype === 'float32'
        ? Math.fround(want.data[i]!)
        : want.dtype === 'float16'
          ? oRound16(want.data[i]!)
          : want.data[i]!;
    let ok: boolean;
    let abs = 0;
    if (Number.isNaN(w) || Number.isNaN(g)) ok = Number.isNaN(w) && Number.isNaN(g);
    else if (!Number.isFinite(w) || !Number.isFinite(g)) ok = g === w;
    else {
      abs = Math.abs(g - w);
      const scale = want.scale ? want.scale[i]! : Math.abs(w);
      const slack = want.dtype === 'float16' && (tol.abs > 0 || tol.rel > 0) ? ulp16(w) : 0;
      ok =
        abs <= tol.abs + tol.rel * scale + slack ||
        (flushesSubnormals && g === 0 && Math.abs(w) < 1.1754943508222875e-38);
      res.maxAbsError = Math.max(res.maxAbsError, abs);
      if (w !== 0) res.maxRelError = Math.max(res.maxRelError, abs / Math.abs(w));
      if (want.dtype === 'float32') res.maxUlpError = Math.max(res.maxUlpError, ulpDistance(g, w));
    }
    if (!ok) {
      if (res.pass) res.firstFailure = { index: i, got: g, want: w };
      res.pass = false;
      if (!Number.isFinite(abs)) res.maxAbsError = Infinity;
    }
  }
  return res;
}
