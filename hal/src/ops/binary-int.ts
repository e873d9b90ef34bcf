/**
 * The integer-valued divisions and the shifts, appended to the binary table after binary-logic.ts:
 * floorDiv (NumPy floor_divide, Python //, PyTorch div(rounding_mode='floor')), truncDiv (C's /,
 * PyTorch div(rounding_mode='trunc')), then the int32 shifts bitShiftLeft and bitShiftRight (PyTorch
 * bitwise_left_shift, bitwise_right_shift).
 *
 * float32 floorDiv and truncDiv are exact: the float32 rounding of floor (trunc) of the exact quotient.
 * floor(x/y) of the rounded quotient is not: float32 1/0.1 rounds to 10, while the float32 0.1 exceeds 1/10
 * and the exact quotient is 9.99999985 (NumPy's float32 1 // 0.1 is 9).
 */
import type { NDArray } from '../core/ndarray.js';
import { type BinaryOpDef, EXACT, type GradOps } from './types.js';

const I = (lo: number, hi: number) => ({ kind: 'int', lo, hi }) as const;
const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const NZ = (lo: number, hi: number) => ({ kind: 'nonzero', lo, hi }) as const;
const INT = ['int32'] as const;
const EXACT_ALL = { float32: EXACT, int32: EXACT };

/** Piecewise constant in both operands: the gradient is 0 (PyTorch's for div with a rounding mode). */
const zeroGrad = (be: GradOps, g: NDArray): NDArray[] => [be.full(g.shape, 0), be.full(g.shape, 0)];

/** A zero quotient carries the sign of x/y (NumPy's copysign(0, x/y)). */
const zeroOf = (x: number, y: number): number => {
  const q = x / y;
  return q < 0 || Object.is(q, -0) ? -0 : 0;
};

/**
 * trunc or floor of the exact quotient x/y of finite float32 x and finite nonzero y, in float64, to be
 * rounded to float32 once. The remainder r = fmod(x, y) is exact, so (x − r)/y is the integer trunc(x/y)
 * up to two float64 roundings: rounded to the nearest integer it is exact while |x/y| < 2^50. Past 2^48,
 * the float32 rounding of floor(x/y) or trunc(x/y) is that of x/y itself (an integer of float32's grid
 * spacing 2^t ≥ 2^25 that lies within 1 of x/y = (X/Y)·2^c, 2^c a multiple of 2^(t−1), Y < 2^24, is
 * x/y), and float64 x/y rounded to float32 is the float32 quotient (53 ≥ 2·24 + 2 bits).
 */
function roundedQuotient(x: number, y: number, floor: boolean): number {
  const q = x / y;
  if (Math.abs(q) >= 2 ** 49) return q;
  const r = x % y;
  let k = Math.round((x - r) / y);
  if (floor && r !== 0 && r < 0 !== y < 0) k -= 1;
  return k === 0 ? zeroOf(x, y) : k;
}

/** NumPy's float floor_divide (npy_floor_divide, npy_divmod), with the exact quotient's floor. */
function floorDiv64(x: number, y: number): number {
  if (y === 0 || Number.isNaN(x) || Number.isNaN(y)) return x / y;
  if (!Number.isFinite(x)) return NaN;
  if (!Number.isFinite(y)) return x === 0 || x < 0 === y < 0 ? zeroOf(x, y) : -1;
  return roundedQuotient(x, y, true);
}

/** trunc of the exact quotient: ±Inf / finite = ±Inf, finite / ±Inf = ±0, x / 0 as IEEE division. */
function truncDiv64(x: number, y: number): number {
  if (y === 0 || !Number.isFinite(x) || !Number.isFinite(y)) return Math.trunc(x / y);
  return roundedQuotient(x, y, false);
}

/** int32 floored division; x // 0 = 0, −2^31 // −1 wraps to −2^31. */
function floorDivInt32(x: number, y: number): number {
  if (y === 0) return 0;
  const q = (x / y) | 0; // truncated (exact: an int32 quotient is never within 2^-31 of the next integer)
  return x % y !== 0 && x < 0 !== y < 0 ? (q - 1) | 0 : q;
}

/** int32 x·2^s modulo 2^32 for counts s in [0, 31]; 0 for counts outside (negative ones included). */
const shiftLeft = (x: number, s: number): number => (s >= 0 && s <= 31 ? x << s : 0);
/** int32 floor(x/2^s) for counts s in [0, 31]; outside, x >> 31 (0 or −1 by x's sign). */
const shiftRight = (x: number, s: number): number => (s >= 0 && s <= 31 ? x >> s : x >> 31);

const SHIFT = (rule: string): string =>
  `${rule} (PyTorch ${rule.startsWith('x <<') ? 'bitwise_left_shift' : 'bitwise_right_shift'}). int32 only. ` +
  'Not differentiable.';

export const INTEGER_OP_DEFS = {
  floorDiv: {
    semantics:
      'floor(x/y) (NumPy floor_divide, Python //, PyTorch div with rounding_mode="floor"): the float32 ' +
      'rounding of the floor of the exact quotient, so exact — 1 // 0.1 = 9 (the float32 0.1 exceeds 1/10; ' +
      'the rounded quotient is 10); NumPy rounds (x − fmod(x, y))/y twice in float32 and can be an ulp off ' +
      'where |x/y| ≥ 2^24. ' +
      'x // ±0 = x/±0 (±Inf by the signs, NaN for 0 // 0); ±Inf // y = NaN; x // ±Inf = ±0 where x is ±0 or ' +
      "has y's sign, else −1; a zero result has the sign of x/y (−0 // 3 = −0, 1 // 3 = 0). int32: floored, " +
      'x // 0 = 0 (NumPy), −2^31 // −1 wraps to −2^31. Gradient 0 (piecewise constant, as PyTorch).',
    f64: floorDiv64,
    i32: floorDivInt32,
    domain: [U(-20, 20), NZ(-6, 6)],
    int32Domain: [I(-100, 100), I(-7, 7)],
    accuracy: EXACT_ALL,
    grad: zeroGrad,
  },
  truncDiv: {
    semantics:
      'trunc(x/y) (C\'s integer /, PyTorch div with rounding_mode="trunc", ONNX Div on integers): the ' +
      'float32 rounding of the truncation of the exact quotient, so exact (PyTorch truncates the rounded ' +
      'quotient: 1 / 0.1 gives 10 there, 9 here). x / ±0 = ±Inf by the signs, NaN for 0 / 0; ±Inf / finite y ' +
      '= ±Inf; ±Inf / ±Inf = NaN; finite x / ±Inf = ±0; a zero result has the sign of x/y. int32: truncated, ' +
      'x / 0 = 0, −2^31 / −1 wraps to −2^31. Gradient 0 (piecewise constant, as PyTorch).',
    f64: truncDiv64,
    i32: (x, y) => (y === 0 ? 0 : (x / y) | 0),
    domain: [U(-20, 20), NZ(-6, 6)],
    int32Domain: [I(-100, 100), I(-7, 7)],
    accuracy: EXACT_ALL,
    grad: zeroGrad,
  },
  bitShiftLeft: {
    semantics: SHIFT(
      'x << s: x·2^s modulo 2^32 (bits shifted past bit 31 are lost, so the sign may change) for counts s ' +
        'in [0, 31]; 0 for any other count, negative ones included',
    ),
    f64: shiftLeft,
    i32: shiftLeft,
    takes: INT,
    domain: [I(-1e9, 1e9), I(-2, 34)],
    int32Domain: [I(-2e9, 2e9), I(-2, 34)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  bitShiftRight: {
    semantics: SHIFT(
      'x >> s, arithmetic: floor(x/2^s) (the sign bit fills in) for counts s in [0, 31]; for any other ' +
        "count, negative ones included, 0 or −1 by x's sign (x >> 31)",
    ),
    f64: shiftRight,
    i32: shiftRight,
    takes: INT,
    domain: [I(-1e9, 1e9), I(-2, 34)],
    int32Domain: [I(-2e9, 2e9), I(-2, 34)],
    accuracy: EXACT_ALL,
    grad: null,
  },
} as const satisfies Record<string, BinaryOpDef>;
