/**
 * The reference backend's kernels on its storage: a Float64Array for a float32 buffer (every value it
 * holds is a float32 value) and an Int32Array for an int32 or bool (0/1) buffer. Each kernel walks the output's
 * shape element by element (strided.ts), computes in float64 (float32) or int32 arithmetic, and rounds
 * each float32 result once when it stores it. Inputs arrive validated by BaseBackend: see the
 * contracts in hal/src/contract/hooks.ts.
 */
import {
  type BinaryOp,
  type DType,
  type NDArray,
  type ReduceOp,
  type ScatterReduction,
  type UnaryOp,
  UnsupportedOpError,
} from '@polyhal/hal';
import { GATHER_FILL } from '@polyhal/hal/internal';
import { binaryFloat, binaryInt, castNarrow, castToInt32, store, unaryFloat, unaryInt } from './scalar.js';
import { rowMajor, sizeOfShape, type Walked, walk } from './strided.js';

/** What a buffer of the reference backend holds. */
export type Storage = Float64Array | Int32Array;

/** out[i] = op(x[i]) for the elements of x in row-major order. */
export function unary(op: UnaryOp, x: NDArray, xs: Storage, out: Storage): void {
  const f = x.dtype === 'float32' ? unaryFloat : unaryInt;
  walk(x.shape, [x, { strides: rowMajor(x.shape), offset: 0 }], ([xi, oi]) => {
    out[oi!] = store(x.dtype, f(op, xs[xi!]!));
  });
}

/** out[i] = op(a[i], b[i]); a and b view the output's shape (broadcast dims have stride 0). */
export function binary(op: BinaryOp, a: NDArray, as: Storage, b: NDArray, bs: Storage, out: Storage): void {
  const f = a.dtype === 'float32' ? binaryFloat : binaryInt;
  walk(a.shape, [a, b, { strides: rowMajor(a.shape), offset: 0 }], ([ai, bi, oi]) => {
    out[oi!] = store(a.dtype, f(op, as[ai!]!, bs[bi!]!));
  });
}

/**
 * sum, max, min or prod of x over `axes` into out (the kept dims, row-major). Every input element is
 * folded into its output's accumulator: float64 for float32 (one rounding at the end), wrapping int32
 * for int32. max and min propagate NaN. An empty reduction gives sum 0, prod 1, max −Inf and min +Inf
 * (int32: −2^31 and 2^31 − 1).
 */
export function reduce(op: ReduceOp, x: NDArray, xs: Storage, axes: readonly number[], out: Storage): void {
  const isInt = x.dtype !== 'float32'; // int32, and bool's 0/1 (any and all are its max and min)
  const folds: Record<ReduceOp, [number, (a: number, v: number) => number]> = {
    sum: [0, isInt ? (a, v) => (a + v) | 0 : (a, v) => a + v],
    prod: [1, isInt ? (a, v) => Math.imul(a, v) : (a, v) => a * v],
    // once NaN, `v > NaN` and `v < NaN` are false: NaN stays
    max: [isInt ? -2147483648 : -Infinity, (a, v) => (v > a || Number.isNaN(v) ? v : a)],
    min: [isInt ? 2147483647 : Infinity, (a, v) => (v < a || Number.isNaN(v) ? v : a)],
  };
  if (!Object.hasOwn(folds, op)) throw new UnsupportedOpError(String(op), x.dtype, 'reference');
  const [init, fold] = folds[op];
  const kept = x.shape.filter((_, d) => !axes.includes(d));
  const keptStrides = rowMajor(kept);
  // Output strides over x's shape: a reduced dim does not move the output position.
  let k = 0;
  const toOut = x.shape.map((_, d) => (axes.includes(d) ? 0 : keptStrides[k++]!));
  const acc = new Float64Array(sizeOfShape(kept)).fill(init);
  walk(x.shape, [x, { strides: toOut, offset: 0 }], ([xi, oi]) => {
    acc[oi!] = fold(acc[oi!]!, xs[xi!]!);
  });
  for (let i = 0; i < acc.length; i++) out[i] = store(x.dtype, acc[i]!);
}

/** out[i] = cond[i] ? x[i] : y[i]; cond (bool: 0/1), x and y view the output's shape. Values move unchanged. */
export function where(c: NDArray, cs: Storage, x: NDArray, xs: Storage, y: NDArray, ys: Storage, out: Storage): void {
  walk(c.shape, [c, x, y, { strides: rowMajor(c.shape), offset: 0 }], ([ci, xi, yi, oi]) => {
    out[oi!] = cs[ci!] !== 0 ? xs[xi!]! : ys[yi!]!;
  });
}

/**
 * Copies x row-major into out (same element count); converts when `outDType` differs from x's, narrowing
 * into int8, uint8 and float16 (their storage is int32 / float32: castNarrow).
 */
export function copy(x: NDArray, xs: Storage, out: Storage, outDType: DType): void {
  const narrow = outDType === 'int8' || outDType === 'uint8' || outDType === 'float16' ? outDType : null;
  const fromFloat = x.dtype === 'float32';
  const convert = narrow
    ? (v: number) => castNarrow(narrow, fromFloat, v)
    : x.dtype === outDType
      ? (v: number) => v
      : outDType === 'int32'
        ? castToInt32
        : Math.fround;
  walk(x.shape, [x, { strides: rowMajor(x.shape), offset: 0 }], ([xi, oi]) => {
    out[oi!] = convert(xs[xi!]!);
  });
}

/** Writes x (same dtype) into out at `at`: element (i0, i1, ...) goes to `at.offset + Σ ik·at.strides[k]`. */
export function copyInto(x: NDArray, xs: Storage, out: Storage, at: Walked): void {
  walk(x.shape, [x, at], ([xi, oi]) => {
    out[oi!] = xs[xi!]!;
  });
}

/** The position along a dim of `dim` that index `i` reads (i + dim when negative), or −1 out of range. */
function position(i: number, dim: number): number {
  const j = i < 0 ? i + dim : i;
  return j >= 0 && j < dim ? j : -1;
}

/**
 * gather on x [O, D, I] and indices [K] → out [O, K, I]: out[o, k, i] = x[o, position(indices[k]), i],
 * or the fill (GATHER_FILL: NaN for float32, INT32_MIN for int32, 1 for bool) when that position is out of range.
 */
export function gather(x: NDArray, xs: Storage, idx: NDArray, is: Storage, out: Storage): void {
  const [o, dim, n] = x.shape as [number, number, number];
  const k = idx.shape[0]!;
  const fill = GATHER_FILL[x.dtype];
  let w = 0;
  for (let a = 0; a < o; a++)
    for (let q = 0; q < k; q++) {
      const j = position(is[idx.offset + q * idx.strides[0]!]!, dim);
      for (let c = 0; c < n; c++)
        out[w++] = j < 0 ? fill : xs[x.offset + a * x.strides[0]! + j * x.strides[1]! + c * x.strides[2]!]!;
    }
}

/** The value at a position after one update: replaced, or combined with it (rounded or wrapped). */
function combine(dtype: DType, reduction: ScatterReduction, acc: number, u: number): number {
  if (reduction === 'none') return u;
  if (reduction === 'add') return store(dtype, acc + u);
  return dtype === 'int32' ? Math.imul(acc, u) : Math.fround(acc * u);
}

/**
 * scatter on target [O, D, I], indices [K], updates [O, K, I] → out [O, D, I]: each output element
 * starts from the target and takes, for k = 0, 1, ..., each update whose index reads its position —
 * replacing it (reduction none: the last wins), adding it or multiplying by it, rounding (float32) or
 * wrapping (int32) after every step.
 */
export function scatter(
  reduction: ScatterReduction,
  t: NDArray,
  ts: Storage,
  idx: NDArray,
  is: Storage,
  u: NDArray,
  us: Storage,
  out: Storage,
): void {
  const [o, dim, n] = t.shape as [number, number, number];
  const k = idx.shape[0]!;
  let w = 0;
  for (let a = 0; a < o; a++)
    for (let j = 0; j < dim; j++)
      for (let c = 0; c < n; c++) {
        let acc = ts[t.offset + a * t.strides[0]! + j * t.strides[1]! + c * t.strides[2]!]!;
        for (let q = 0; q < k; q++) {
          if (position(is[idx.offset + q * idx.strides[0]!]!, dim) !== j) continue;
          const v = us[u.offset + a * u.strides[0]! + q * u.strides[1]! + c * u.strides[2]!]!;
          acc = combine(t.dtype, reduction, acc, v);
        }
        out[w++] = acc;
      }
}

/**
 * Batched matmul: a [...B, M, K] · b [...B, K, N] → out [...B, M, N] (one batch shape for all three).
 * Each dot product is summed in float64 — float32 products are exact there — and rounded once.
 */
export function matmul(a: NDArray, as: Storage, b: NDArray, bs: Storage, out: Storage): void {
  const r = a.shape.length;
  const [m, k] = [a.shape[r - 2]!, a.shape[r - 1]!];
  const n = b.shape[r - 1]!;
  const [ai, ak] = [a.strides[r - 2]!, a.strides[r - 1]!];
  const [bk, bj] = [b.strides[r - 2]!, b.strides[r - 1]!];
  const batch = a.shape.slice(0, r - 2);
  const outBatch = rowMajor(batch).map((s) => s * m * n);
  walk(
    batch,
    [
      { strides: a.strides.slice(0, r - 2), offset: a.offset },
      { strides: b.strides.slice(0, r - 2), offset: b.offset },
      { strides: outBatch, offset: 0 },
    ],
    ([a0, b0, o0]) => {
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let p = 0; p < k; p++) s += as[a0! + i * ai + p * ak]! * bs[b0! + p * bk + j * bj]!;
          out[o0! + i * n + j] = Math.fround(s);
        }
      }
    },
  );
}
