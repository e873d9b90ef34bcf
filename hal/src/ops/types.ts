/**
 * The shape of an op table entry. Every elementwise op of the HAL is ONE entry (hal/src/ops/unary.ts,
 * binary.ts): its semantics (the special-value rule, which docs/OPS.md prints), the dtypes it takes,
 * its float64 reference (the conformance oracle's definition of the op), the input domain of its
 * conformance cases, its allowed error, and its gradient rule written with HAL ops. The HAL's op lists,
 * the oracle, the conformance cases and tolerances, autograd's gradients and the op reference are all
 * derived from these entries; a backend adds one kernel line per op.
 */
import type { DType } from '../core/dtype.js';
import type { NDArray } from '../core/ndarray.js';

/** Values the conformance cases draw for an input (seeded, rounded to float32). */
export type Domain =
  | { kind: 'uniform'; lo: number; hi: number }
  | { kind: 'positive'; lo: number; hi: number }
  | { kind: 'nonzero'; lo: number; hi: number }
  | { kind: 'int'; lo: number; hi: number };

/**
 * Allowed error of one result element: |got − want| ≤ abs + rel·scale, where `want` is the float64
 * reference rounded to float32 and `scale` its error scale (|want|, or |x| + |y| for ops whose
 * entry says `scale: 'operands'`). NaN must meet NaN and ±Inf the same infinity, always.
 */
export interface Accuracy {
  /** Absolute error allowed, ≥ 0 (the floor near zero). */
  abs: number;
  /** Error allowed relative to the error scale, ≥ 0 (one float32 ulp is about 1.2e-7). */
  rel: number;
}

/** Named accuracies. float32 rounds with relative error ≤ 2^-24, so one ulp is rel 1.2e-7. */
export const EXACT: Accuracy = { abs: 0, rel: 0 };
/** One float32 ulp: a correctly rounded result. */
export const ULP1: Accuracy = { abs: 0, rel: 1.2e-7 };
/** Two float32 ulps. */
export const ULP2: Accuracy = { abs: 0, rel: 2.4e-7 };
/** Four float32 ulps. */
export const ULP4: Accuracy = { abs: 0, rel: 4.8e-7 };
/** Transcendentals: a few ulps, and an absolute floor near zero. */
export const TRANSCENDENTAL: Accuracy = { abs: 1e-7, rel: 4.8e-7 };

/**
 * The HAL calls the table's gradient rules may use (every ComputeBackend has them). Kept apart from
 * ComputeBackend, whose elementwise methods are themselves derived from this table.
 */
export interface GradOps {
  /** {@inheritDoc ComputeBackend.neg} */
  neg(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.sin} */
  sin(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.cos} */
  cos(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.sinh} */
  sinh(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.cosh} */
  cosh(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.sqrt} */
  sqrt(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.exp} */
  exp(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.log} */
  log(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.sigmoid} */
  sigmoid(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.erf} */
  erf(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.pow} */
  pow(a: NDArray | number, b: NDArray | number): NDArray;
  /** {@inheritDoc ComputeBackend.full} */
  full(shape: readonly number[], value: number, dtype?: DType): NDArray;
  /** {@inheritDoc ComputeBackend.mul} */
  mul(a: NDArray | number, b: NDArray | number): NDArray;
  /** {@inheritDoc ComputeBackend.div} */
  div(a: NDArray | number, b: NDArray | number): NDArray;
  /** {@inheritDoc ComputeBackend.sub} */
  sub(a: NDArray | number, b: NDArray | number): NDArray;
  /** {@inheritDoc ComputeBackend.add} */
  add(a: NDArray | number, b: NDArray | number): NDArray;
  /** {@inheritDoc ComputeBackend.cmplt} */
  cmplt(a: NDArray | number, b: NDArray | number): NDArray;
  /** {@inheritDoc ComputeBackend.binary} */
  binary(op: 'geluGrad', a: NDArray, b: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.reduce} */
  reduce(op: 'sum' | 'prod', x: NDArray, axes: readonly number[], keepdims: boolean): NDArray;
  /** {@inheritDoc ComputeBackend.expand} */
  expand(x: NDArray, shape: readonly number[]): NDArray;
  /** {@inheritDoc ComputeBackend.contiguous} */
  contiguous(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.free} */
  free(x: NDArray): void;
}

/**
 * A gradient rule: receives the upstream gradient `g`, the op's inputs and output (saved by the
 * forward) and `needs[i]` (false when input i needs no gradient: the rule may return null there);
 * returns one new array per input, before summing broadcast dims back (autograd does that).
 */
export type GradRule = (
  be: GradOps,
  g: NDArray,
  inputs: NDArray[],
  out: NDArray,
  needs: boolean[],
) => (NDArray | null)[];

/**
 * What the WGSL accuracy rules allow beyond the strict bound, for backends that declare
 * `arithmetic: 'wgsl'`: a looser bound, and/or a domain outside which a conformant adapter may return
 * anything (elements with finite inputs outside it are not compared; NaN/±Inf inputs always are).
 */
export interface WgslAccuracy {
  /** The looser bound (absent: the strict bound, within `domain` only). */
  accuracy?: Accuracy;
  /** Whether the (finite) inputs of an element lie where WGSL bounds the error. */
  domain?: (...inputs: number[]) => boolean;
  /** The WGSL rule, cited (for docs/OPS.md and the tolerance report). */
  why: string;
}

interface OpDefBase {
  /** The rule for special values and domain, in sentences (printed in docs/OPS.md). */
  semantics: string;
  /**
   * Allowed error per dtype (float32 required), and where the WGSL accuracy rules allow more on a
   * backend that declares `arithmetic: 'wgsl'`, that bound with the reason.
   */
  accuracy: { float32: Accuracy; int32?: Accuracy; wgsl?: WgslAccuracy };
  /** null: not differentiable (comparisons). */
  grad: GradRule | null;
}

/** An entry of UNARY_OP_DEFS: one elementwise unary op, from its semantics to its gradient rule. */
export interface UnaryOpDef extends OpDefBase {
  /** The float64 reference, computed in plain JS (never a backend's kernel). */
  f64: (x: number) => number;
  /** The int32 reference (wrap-around); present exactly when the op takes int32. */
  i32?: (x: number) => number;
  /** Inputs of the ordinary float32 cases (special values are always added). */
  domain: Domain;
}

/** An entry of BINARY_OP_DEFS: one elementwise binary op (broadcasting), from its semantics to its gradient rule. */
export interface BinaryOpDef extends OpDefBase {
  /** The float64 reference, computed in plain JS (never a backend's kernel). */
  f64: (x: number, y: number) => number;
  /** The int32 reference (wrap-around); also the bool reference, on 0/1, for ops that take bool. */
  i32?: (x: number, y: number) => number;
  /**
   * The dtypes the op takes (both operands alike; see `binaryTakes` in ops.ts): float32, plus int32
   * when `i32` is present, unless listed here.
   */
  takes?: readonly DType[];
  /** 'bool' for the comparisons and the logical ops; otherwise the result has the operands' dtype. */
  returns?: 'bool';
  /**
   * Error scale: |result| (default); |x| + |y| where cancellation makes |result| meaningless (add,
   * sub); |y| where the result is bounded by the divisor (mod; |result| when y is infinite).
   */
  scale?: 'result' | 'operands' | 'divisor';
  /** Inputs of the ordinary float32 cases, per operand (special values are always added). */
  domain: [Domain, Domain];
  /** Inputs of the int32 cases (when `i32` is present). */
  int32Domain?: [Domain, Domain];
}

/**
 * A reduction's gradient rule: receives the upstream gradient `g` and the op's output `out`, both in
 * keepdims shape, the input `x` and the reduced `axes` (normalized, ascending); returns the gradient
 * of `x` (a new array of x's shape).
 */
export type ReduceGradRule = (be: GradOps, g: NDArray, x: NDArray, out: NDArray, axes: readonly number[]) => NDArray;

/** An entry of REDUCE_OP_DEFS: one reduction over any set of axes, from its identity to its gradient rule. */
export interface ReduceOpDef {
  /** The rule for special values and empty axes, in sentences (printed in docs/OPS.md). */
  semantics: string;
  /** The result over an empty axis (the fold's identity), per dtype; int32 present exactly when the op takes int32. */
  identity: { float32: number; int32?: number };
  /** The float64 fold (acc, v) → acc of the reference, applied in index order from the identity. */
  f64: (acc: number, v: number) => number;
  /** The int32 fold (wrap-around). */
  i32?: (acc: number, v: number) => number;
  /** Error scale: Σ|finite terms| ('terms': sums, where cancellation makes |result| meaningless) or |result|. */
  scale: 'terms' | 'result';
  /** Inputs of the ordinary float32 cases (special values are always added). */
  domain: Domain;
  /**
   * Allowed error per dtype; `perTerm` is added once per reduced element on a backend that accumulates
   * in float32 (arithmetic 'wgsl'), whose error grows with the count (products).
   */
  accuracy: { float32: Accuracy; int32?: Accuracy; perTerm?: Accuracy };
  /** The gradient rule, or null where the reduction is not differentiable. */
  grad: ReduceGradRule | null;
}

/** An entry of ARRAY_OP_DEFS (array-ops.ts and the family tables it joins): movement, matmul, composites, ... */
export interface ArrayOpDef {
  /**
   * What the op is: a view or copy (movement), a dot product (contraction: matmul, conv), a composition of
   * primitives a backend may fuse (composite), an in-place optimizer step, a random sampler, or an index op.
   */
  kind: 'movement' | 'contraction' | 'composite' | 'optimizer' | 'random' | 'indexing';
  /** The call with its shapes. */
  signature: string;
  /** The rule for special values, errors and edge cases, in sentences. */
  semantics: string;
  /** The dtypes the op takes (other dtypes: UnsupportedOpError or DTypeError). */
  dtypes: readonly DType[];
  /**
   * Allowed error per dtype (relative to the oracle's error scale: Σ|terms| for dot products); `wgsl` a
   * looser bound for backends that declare `arithmetic: 'wgsl'`, with the reason.
   */
  accuracy: { float32: Accuracy; int32?: Accuracy; wgsl?: { accuracy: Accuracy; why: string } };
  /** Where the gradient rule is (autograd), or null when the op has none. */
  grad: string | null;
  /** Composites and optimizer steps: the default composition from primitives. */
  composition?: string;
}
