/**
 * The binary ops beyond arithmetic, appended to the binary table (binary.ts): the six comparisons
 * (float32, int32; equal and notEqual also bool) and the truncated remainder fmod, then the logical ops
 * on bool and the bitwise ops on int32. A result of dtype bool is stored as an int32 0/1 (dtype.ts).
 * None is differentiable except fmod.
 */
import type { NDArray } from '../core/ndarray.js';
import { withTemps } from '../core/temps.js';
import { type BinaryOpDef, EXACT, ULP1 } from './types.js';

const I = (lo: number, hi: number) => ({ kind: 'int', lo, hi }) as const;
const U = (lo: number, hi: number) => ({ kind: 'uniform', lo, hi }) as const;
const NZ = (lo: number, hi: number) => ({ kind: 'nonzero', lo, hi }) as const;
const b = (v: boolean): number => (v ? 1 : 0);
const NUMERIC = ['float32', 'int32'] as const;
const ALL = ['float32', 'int32', 'bool'] as const;
const BOOL = ['bool'] as const;
const INT = ['int32'] as const;
const EXACT_ALL = { float32: EXACT, int32: EXACT };
const COMPARE = (rule: string): string =>
  `${rule}, as a bool (IEEE 754 comparison): any comparison with a NaN operand is false except notEqual, ` +
  'which is true; −0 equals +0; ±Inf compare as the extreme values. Not differentiable.';

/** The comparisons, each float32 → bool and int32 → bool (equal and notEqual also bool → bool). */
export const COMPARISON_OP_DEFS = {
  equal: {
    semantics: COMPARE('x = y (NumPy equal, ONNX Equal, PyTorch eq)'),
    f64: (x, y) => b(x === y),
    i32: (x, y) => b(x === y),
    takes: ALL,
    returns: 'bool',
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  notEqual: {
    semantics: COMPARE('x ≠ y (NumPy not_equal, PyTorch ne)'),
    f64: (x, y) => b(x !== y),
    i32: (x, y) => b(x !== y),
    takes: ALL,
    returns: 'bool',
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  less: {
    semantics: COMPARE('x < y (NumPy less, ONNX Less, PyTorch lt)'),
    f64: (x, y) => b(x < y),
    i32: (x, y) => b(x < y),
    takes: NUMERIC,
    returns: 'bool',
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  lessEqual: {
    semantics: COMPARE('x ≤ y (NumPy less_equal, ONNX LessOrEqual, PyTorch le)'),
    f64: (x, y) => b(x <= y),
    i32: (x, y) => b(x <= y),
    takes: NUMERIC,
    returns: 'bool',
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  greater: {
    semantics: COMPARE('x > y (NumPy greater, ONNX Greater, PyTorch gt)'),
    f64: (x, y) => b(x > y),
    i32: (x, y) => b(x > y),
    takes: NUMERIC,
    returns: 'bool',
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  greaterEqual: {
    semantics: COMPARE('x ≥ y (NumPy greater_equal, ONNX GreaterOrEqual, PyTorch ge)'),
    f64: (x, y) => b(x >= y),
    i32: (x, y) => b(x >= y),
    takes: NUMERIC,
    returns: 'bool',
    domain: [I(-3, 3), I(-3, 3)],
    int32Domain: [I(-3, 3), I(-3, 3)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  fmod: {
    semantics:
      'The truncated remainder x − y·trunc(x/y) (C fmod, NumPy fmod, PyTorch fmod, ONNX Mod with fmod=1), ' +
      "exact: the result takes x's sign (−1 fmod 3 = −1, 1 fmod −3 = 1); x fmod 0 = NaN, ±Inf fmod y = NaN, " +
      'x fmod ±Inf = x. int32: truncated (JS %), x fmod 0 = 0. Contrast mod, which is floored. Gradient ' +
      '(1, −trunc(x/y)).',
    f64: (x, y) => x % y,
    i32: (x, y) => (y === 0 ? 0 : (x % y) | 0),
    scale: 'divisor',
    domain: [U(-20, 20), NZ(-6, 6)],
    int32Domain: [I(-100, 100), I(-7, 7)],
    accuracy: { float32: ULP1, int32: EXACT },
    // fmod(a, b) = a − b·trunc(a/b): d/da = 1, d/db = −trunc(a/b) = −(a − fmod(a, b))/b.
    grad: (be, g, [a, bb], out) =>
      withTemps(be, (t) => [g, be.neg(t(be.mul(g, t(be.div(t(be.sub(a as NDArray, out)), bb as NDArray)))))]),
  },
} as const satisfies Record<string, BinaryOpDef>;

const LOGICAL = (rule: string): string => `${rule} of two bools (stored 0/1), as a bool. Not differentiable.`;
const BITWISE = (rule: string): string =>
  `${rule} of the two's-complement bits of int32 x and y (NumPy, PyTorch). int32 only. Not differentiable.`;

/** The logical ops (bool × bool → bool) and the bitwise ops (int32 × int32 → int32). */
export const LOGICAL_OP_DEFS = {
  logicalAnd: {
    semantics: LOGICAL('x AND y (NumPy logical_and, ONNX And)'),
    f64: (x, y) => b(x !== 0 && y !== 0),
    i32: (x, y) => x & y,
    takes: BOOL,
    returns: 'bool',
    domain: [I(0, 1), I(0, 1)],
    int32Domain: [I(0, 1), I(0, 1)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  logicalOr: {
    semantics: LOGICAL('x OR y (NumPy logical_or, ONNX Or)'),
    f64: (x, y) => b(x !== 0 || y !== 0),
    i32: (x, y) => x | y,
    takes: BOOL,
    returns: 'bool',
    domain: [I(0, 1), I(0, 1)],
    int32Domain: [I(0, 1), I(0, 1)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  logicalXor: {
    semantics: LOGICAL('x XOR y (NumPy logical_xor, ONNX Xor)'),
    f64: (x, y) => b((x !== 0) !== (y !== 0)),
    i32: (x, y) => x ^ y,
    takes: BOOL,
    returns: 'bool',
    domain: [I(0, 1), I(0, 1)],
    int32Domain: [I(0, 1), I(0, 1)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  bitwiseAnd: {
    semantics: BITWISE('x & y'),
    f64: (x, y) => x & y,
    i32: (x, y) => x & y,
    takes: INT,
    domain: [I(-1e9, 1e9), I(-1e9, 1e9)],
    int32Domain: [I(-2e9, 2e9), I(-2e9, 2e9)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  bitwiseOr: {
    semantics: BITWISE('x | y'),
    f64: (x, y) => x | y,
    i32: (x, y) => x | y,
    takes: INT,
    domain: [I(-1e9, 1e9), I(-1e9, 1e9)],
    int32Domain: [I(-2e9, 2e9), I(-2e9, 2e9)],
    accuracy: EXACT_ALL,
    grad: null,
  },
  bitwiseXor: {
    semantics: BITWISE('x ^ y'),
    f64: (x, y) => x ^ y,
    i32: (x, y) => x ^ y,
    takes: INT,
    domain: [I(-1e9, 1e9), I(-1e9, 1e9)],
    int32Domain: [I(-2e9, 2e9), I(-2e9, 2e9)],
    accuracy: EXACT_ALL,
    grad: null,
  },
} as const satisfies Record<string, BinaryOpDef>;
