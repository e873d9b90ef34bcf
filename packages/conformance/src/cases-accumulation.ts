/**
 * Conformance cases of accumulation order: long sums whose float32 left-to-right accumulation is far outside
 * the table's bound, while float64, compensated (Kahan) or pairwise (tree) accumulation is well inside it.
 *
 * The bound (hal/src/ops/reduce.ts, sum and mean; every class): |got − want| ≤ 1e-7 + 2e-6·Σ|x|, about
 * 33.5·u·Σ|x| with u = 2^-24 (half a float32 ulp of 1). What each accumulation order guarantees over n terms:
 * float64, then one rounding: ≤ u·|sum| + n·2^-53·Σ|x|; Kahan in float32: ≤ (2u + O(n·u²))·Σ|x|; pairwise in
 * float32: ≤ ⌈log2 n⌉·u·Σ|x|, 16·u at the n ≤ 65,536 here — all inside the bound on ANY input. Naive float32,
 * left to right: up to (n − 1)·u·Σ|x|, reached by the patterns below, whose terms are exact float32 values
 * from the seeded generator (mulberry32 of the case id, as every case):
 *
 * - dominant-first: each sum's first term is ±2^e (e in −2..2; × n for means, so that the mean is beyond the
 *   1e-7 floor), the n − 1 others of its sign and magnitude (0.5 … 0.95)·u·2^e, under half an ulp of the
 *   running sum: a naive sum returns the first term and drops all others, an error of ≈ 0.72·(n − 1)·u·Σ|x|
 *   — 88× the bound at n = 4096, 1,390× at 65,536.
 * - cancellation: the same, with −2^e at position ⌊n/2⌋ (large + small − large): the small terms before it
 *   are lost by a naive sum in either direction, ≈ 0.36·n·u·2^e against Σ|x| ≈ 2·2^e: 22× the bound at 4096.
 * - mixed-magnitudes: positive terms (1 + r)·2^-k, k uniform in 0..24, in random order: the running sum
 *   outgrows the small terms, which a naive sum drops or rounds: 19× (mean) to 28× (sum) at n = 65,536.
 *
 * "Left to right" is the row-major order of the reduced elements, so the patterns follow it over every
 * axis form: last, first and middle axis, several axes, all axes, keepdims. The composites built on sum are
 * held to their own table entries: logsumexp (abs 1e-6 + rel 2e-6) and softmax (1e-7 + 2e-6 of each
 * probability) over rows whose first exp term is 1 and whose 4095 others are under 2^-24, so a naive sum
 * returns 1 (33× and 48× their bounds; a pairwise sum errs by ≤ 12·u relative). cumsum (strict: rel 6e-7 of
 * the prefix's Σ|x|, 10·u) on dominant-first and cancellation lines: a sequential float32 scan errs by
 * ≈ 0.72·j·u at the j-th output (300× and 150× the bound), the blocked scan of hal/src/families/scan/scan.ts
 * by a few u.
 * prod needs no case here: its strict bound is 2 ulp of the result, and a float32 left-to-right product
 * already fails 7 of its cases in cases-core.ts. Each id ends in `/accumulation/<pattern>`.
 */
import type { Case } from './cases.js';
import { fmt, SPECIAL } from './cases-util.js';
import { hashString, mulberry32, type Rng } from './random.js';

/** Half a float32 ulp of 1: the unit roundoff. */
const UNIT = 2 ** -24;

export type AccumulationPattern = 'dominant-first' | 'cancellation' | 'mixed-magnitudes' | 'exp-dominant-first';

/** The id fragment every case of this file carries. */
export const ACCUMULATION_TAG = '/accumulation/';

/**
 * Values of `shape` whose reduced elements (over `axes`, every axis when absent), taken for each output in
 * row-major order k = 0 … n − 1, follow `pattern`; deterministic in `seedKey`.
 */
export function accumulationValues(
  seedKey: string,
  shape: readonly number[],
  axes: readonly number[] | undefined,
  pattern: AccumulationPattern,
  magnitude = 1,
): number[] {
  const rank = shape.length;
  const reduced = (axes ?? shape.map((_, i) => i)).map((a) => (a < 0 ? a + rank : a));
  const n = reduced.reduce((p, a) => p * shape[a]!, 1);
  const outputs = shape.reduce((p, d) => p * d, 1) / n;
  const rng: Rng = mulberry32(hashString(seedKey));
  // per output: the large term ±2^e (e in −2..2), or the row's shift c for exp-dominant-first
  const large = Array.from({ length: outputs }, () =>
    pattern === 'exp-dominant-first'
      ? Math.fround(rng() - 0.5)
      : (rng() < 0.5 ? -1 : 1) * magnitude * 2 ** (Math.floor(rng() * 5) - 2),
  );
  const total = outputs * n;
  const values = new Array<number>(total);
  const idx = new Array<number>(rank).fill(0);
  for (let i = 0; i < total; i++) {
    // k: the position among the reduced elements; o: the output
    let k = 0;
    let o = 0;
    for (let d = 0; d < rank; d++)
      if (reduced.includes(d)) k = k * shape[d]! + idx[d]!;
      else o = o * shape[d]! + idx[d]!;
    values[i] = term(pattern, k, n, large[o]!, rng);
    for (let d = rank - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return values;
}

function term(pattern: AccumulationPattern, k: number, n: number, big: number, rng: Rng): number {
  const r = rng();
  switch (pattern) {
    case 'mixed-magnitudes':
      return Math.fround((1 + r) * 2 ** -Math.floor(rng() * 25));
    case 'exp-dominant-first':
      // exp(x − c) = 1 first, then exp(−17.2 … −17.9) ∈ (1.7e-8, 3.4e-8): under half an ulp of 1
      return k === 0 ? big : Math.fround(big - 17.2 - 0.7 * r);
    default:
      if (k === 0) return big;
      if (pattern === 'cancellation' && k === Math.floor(n / 2)) return -big;
      // same sign as the large term, under half an ulp of it: dropped when added to it in float32
      return Math.fround(big * UNIT * (0.5 + 0.45 * r));
  }
}

interface Spec {
  op: 'sum' | 'mean' | 'logsumexp' | 'softmax' | 'cumsum';
  shape: number[];
  axes?: number[];
  keepdims?: boolean;
  pattern: AccumulationPattern;
  /** A power of two multiplying the large terms (means: n, so the mean is of order 1, beyond the 1e-7 floor). */
  magnitude?: number;
}

const SPECS: Spec[] = [
  // sum: all axes (1-D and 2-D), last, first and middle axis, several axes, keepdims
  { op: 'sum', shape: [65536], pattern: 'dominant-first' },
  { op: 'sum', shape: [256, 256], pattern: 'mixed-magnitudes' },
  { op: 'sum', shape: [8, 4096], axes: [1], pattern: 'cancellation' },
  { op: 'sum', shape: [4096, 8], axes: [0], pattern: 'dominant-first' },
  { op: 'sum', shape: [4, 4096, 4], axes: [1], keepdims: true, pattern: 'cancellation' },
  { op: 'sum', shape: [64, 8, 64], axes: [0, 2], pattern: 'dominant-first' },
  // mean (sum × 1/n): the same forms
  { op: 'mean', shape: [65536], pattern: 'mixed-magnitudes' },
  { op: 'mean', shape: [8, 4096], axes: [-1], keepdims: true, pattern: 'dominant-first', magnitude: 4096 },
  { op: 'mean', shape: [4096, 8], axes: [0], pattern: 'cancellation', magnitude: 4096 },
  { op: 'mean', shape: [4, 64, 4, 64], axes: [1, 3], pattern: 'dominant-first', magnitude: 4096 },
  // composites on sum, and cumsum
  { op: 'logsumexp', shape: [4, 4096], axes: [1], pattern: 'exp-dominant-first' },
  { op: 'softmax', shape: [4, 4096], pattern: 'exp-dominant-first' },
  { op: 'cumsum', shape: [4, 4096], axes: [1], pattern: 'dominant-first' },
  { op: 'cumsum', shape: [4096, 4], axes: [0], pattern: 'cancellation' },
];

export function accumulationCases(): Case[] {
  return SPECS.map((s) => {
    const id =
      `${s.op}/float32/${fmt(s.shape)}${s.axes ? `/axes=${s.axes}` : ''}${s.keepdims ? '/keepdims' : ''}` +
      `${ACCUMULATION_TAG}${s.pattern}`;
    // softmax works on the last axis, cumsum on one axis
    const valueAxes = s.op === 'softmax' ? [s.shape.length - 1] : s.axes;
    const values = accumulationValues(id, s.shape, valueAxes, s.pattern, s.magnitude);
    const params: Case['params'] =
      s.op === 'softmax'
        ? { axis: -1 }
        : s.op === 'cumsum'
          ? { axis: s.axes![0]!, scan: {} }
          : { axes: s.axes, keepdims: s.keepdims };
    return {
      id,
      kind: s.op === 'sum' || s.op === 'mean' ? 'reduce' : 'composite',
      op: s.op,
      dtype: 'float32',
      inputs: [{ shape: s.shape, gen: SPECIAL, values }],
      params,
    };
  });
}
