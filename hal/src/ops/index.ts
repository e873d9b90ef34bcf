import { type DType, isNarrow, storageDType } from '../core/dtype.js';
import { ARRAY_OP_DEFS } from './array-ops.js';
import { BINARY_OP_DEFS } from './binary.js';
import { REDUCE_OP_DEFS } from './reduce.js';
import type { BinaryOpDef } from './types.js';
import { UNARY_OP_DEFS } from './unary.js';

export { ARRAY_OP_DEFS, type ArrayOp, type MovementOp } from './array-ops.js';
export { BINARY_OP_DEFS } from './binary.js';
export { REDUCE_OP_DEFS } from './reduce.js';
export { UNARY_OP_DEFS } from './unary.js';
export * from './types.js';

/**
 * The primitive op set of the HAL and its semantics. The f64 oracle of the conformance suite and every
 * backend follow these rules; where IEEE 754 decides, IEEE 754 is the rule.
 *
 * Each elementwise op and reduction is one entry of the op table (ops/unary.ts, ops/binary.ts,
 * ops/reduce.ts), which states its special-value rule, dtypes, float64 reference, case domain, accuracy
 * and gradient; movement, matmul, composites and optimizer steps are entries of ops/array-ops.ts
 * (semantics, dtypes, accuracy, composition). The op lists
 * below, the conformance oracle, cases and tolerances, autograd's gradient rules and docs/OPS.md are
 * derived from it. Across all ops: NaN in → NaN out for every arithmetic op, including `maximum`,
 * `relu` and reductions.
 *
 * Beyond the table:
 * - Reductions over an empty axis give the entry's identity (`sum` 0, `prod` 1, `max` −Inf, `min` +Inf;
 *   int32: −2^31 and 2^31 − 1; int8 and uint8: the dtype's minimum and maximum); `mean` of an empty axis is NaN.
 * - `softmaxCrossEntropy`: loss_i = −Σ_c xlogy(y_ic, p_ic) with p = softmax(logits_i), where
 *   xlogy(y, p) = 0 when y = 0 and log p is not NaN, else y·log p (PyTorch's `torch.xlogy`, SciPy's
 *   `xlogy`: the 0·log 0 = 0 convention of entropy). So a −Inf logit in a class whose label is 0 —
 *   a masked class — contributes 0 and the loss stays finite, as with PyTorch's class-index
 *   `cross_entropy`; a −Inf logit where the label is > 0 gives +Inf; a NaN or +Inf logit (or all
 *   logits −Inf) makes the row's log-probabilities NaN and so the loss NaN, whatever the labels (NaN in
 *   → NaN out). A NaN label gives NaN. Why not the plain IEEE product (0·−Inf = NaN, TensorFlow.js's
 *   composite)? A masked logit would turn the loss of every row it appears in into NaN although the
 *   label puts no mass there, which is never what training wants. The gradient is softmax − labels
 *   in every case (0 at a masked class). Fused kernels, the composite and the oracle all follow this.
 *
 * Optimizer steps (`adamStep`, `sgdStep`) validate their hyper-parameters before touching anything:
 * finite, lr ≥ 0, momentum ≥ 0, weightDecay ≥ 0, eps ≥ 0, beta1 and beta2 in [0, 1), step an integer
 * ≥ 1 (InvalidArgumentError otherwise) — PyTorch's domains. An op name outside the lists below throws
 * UnsupportedOpError (never a silent fallback to another op).
 *
 * int8, uint8 and float16 (narrow dtypes, stored as int32 or float32: dtype.ts, narrow.ts) take what
 * their storage dtype takes (`dtypeTaken`): int8 and uint8 the int32 ops, wrapping modulo 2^8; float16
 * the float32 elementwise ops, reductions and matmul, rounding each result to float16 (nearest even).
 * Movement, layout, index ops, where and cast move them; the other ops (convolutions, losses, composites,
 * random, argmax, cumsum, topk) take float32 (int32 where listed) only: cast first.
 *
 * float64 (on backends with host-addressable storage: cpu, wasm, reference) takes what float32 takes
 * among the elementwise ops and reductions, plus movement, layout, index ops, where, cast, mean,
 * logsumexp, cumsum and topk, each evaluated on the host from the op table's float64 definitions
 * (host-float64.ts). Elsewhere (webgpu) creating a float64 array throws UnsupportedOpError.
 *
 * int32: `add`, `sub`, `mul` wrap modulo 2^32 (two's complement); `maximum`, `mod` (floored;
 * `x mod 0` = 0), `cmplt`, `neg`, reductions `sum` and `prod` (wrapping), `max` and `min`, and every
 * movement op are supported. Other ops on int32 throw UnsupportedOpError. Mixed dtypes throw DTypeError: there is no
 * implicit promotion; cast explicitly with `cast`.
 *
 * bool (stored as int32 0/1): the comparisons return it (equal, notEqual, less, lessEqual, greater,
 * greaterEqual); the logical ops (logicalAnd, logicalOr, logicalXor, logicalNot), `where`'s condition,
 * `any` and `all` take it; equal and notEqual compare it; every movement, layout and index op moves it;
 * `cast` converts it (to bool: x ≠ 0, NaN is true; from bool: 0 or 1). Arithmetic on bool throws
 * UnsupportedOpError. The bitwise ops (bitwiseAnd, bitwiseOr, bitwiseXor, bitwiseNot) and the shifts
 * (bitShiftLeft, bitShiftRight) take int32 only; floorDiv and truncDiv take float32 and int32 (x // 0 = 0).
 *
 * Allowed errors: each table entry's `accuracy`; other ops in the conformance tolerance table.
 */
export const UNARY_OPS = Object.keys(UNARY_OP_DEFS) as readonly UnaryOp[];
/** The name of an elementwise unary op: a key of UNARY_OP_DEFS (`neg`, `exp`, `relu`, ...). */
export type UnaryOp = keyof typeof UNARY_OP_DEFS;

/** The elementwise binary ops, in the table's order: the keys of BINARY_OP_DEFS (`add`, `mul`, `less`, ...). */
export const BINARY_OPS = Object.keys(BINARY_OP_DEFS) as readonly BinaryOp[];
/** The name of an elementwise binary op: a key of BINARY_OP_DEFS. */
export type BinaryOp = keyof typeof BINARY_OP_DEFS;

/** Reductions a backend implements (the table's entries); `mean` is composed as sum × (1/n) in the HAL. */
export const REDUCE_OPS = Object.keys(REDUCE_OP_DEFS) as readonly ReduceOp[];
/** The name of a reduction: a key of REDUCE_OP_DEFS (`sum`, `prod`, `max`, `min`). */
export type ReduceOp = keyof typeof REDUCE_OP_DEFS;

/** Ops defined for int32 operands (beyond movement, copy and cast): those whose entry has an int32 reference. */
export const INT32_UNARY_OPS: ReadonlySet<UnaryOp> = new Set(UNARY_OPS.filter((op) => 'i32' in UNARY_OP_DEFS[op]));
/** The binary ops that take int32 operands (their entry's `takes`, or an int32 reference). */
export const INT32_BINARY_OPS: ReadonlySet<BinaryOp> = new Set(
  BINARY_OPS.filter((op) => binaryTakes(op).includes('int32')),
);

/** The dtypes binary op `op` takes (both operands alike): its entry's `takes`, else float32 (+ int32 with `i32`). */
export function binaryTakes(op: BinaryOp): readonly DType[] {
  const def = BINARY_OP_DEFS[op] as BinaryOpDef;
  return def.takes ?? (def.i32 ? ['float32', 'int32'] : ['float32']);
}

/** The dtype of binary op `op`'s result for operands of `dtype`: bool for comparisons and logical ops. */
export function binaryResult(op: BinaryOp, dtype: DType): DType {
  return (BINARY_OP_DEFS[op] as BinaryOpDef).returns ?? dtype;
}
/** The reductions that take int32 (their entry has an int32 fold): wrapping sum and prod, max, min. */
export const INT32_REDUCE_OPS: ReadonlySet<ReduceOp> = new Set(REDUCE_OPS.filter((op) => 'i32' in REDUCE_OP_DEFS[op]));

/**
 * Whether an op that takes the dtypes `takes` (float32, int32, bool) takes `dtype`: a listed dtype, a
 * narrow dtype whose storage dtype is listed — int8 and uint8 where int32 is taken, float16 where
 * float32 is (narrow.ts computes them in that dtype and narrows the result) —, or float64 where float32
 * is (host-float64.ts, on backends with the hostStorage hook).
 */
export function dtypeTaken(takes: readonly DType[], dtype: DType): boolean {
  if (takes.includes(dtype)) return true;
  if (dtype === 'float64') return takes.includes('float32');
  return isNarrow(dtype) && takes.includes(storageDType(dtype));
}

/** The wide dtypes unary op `op` takes: float32, plus int32 when its entry has an int32 reference. */
export function unaryTakes(op: UnaryOp): readonly DType[] {
  return INT32_UNARY_OPS.has(op) ? ['float32', 'int32'] : ['float32'];
}

/** The wide dtypes reduction `op` takes: float32, plus int32 when its entry has an int32 fold. */
export function reduceTakes(op: ReduceOp): readonly DType[] {
  return INT32_REDUCE_OPS.has(op) ? ['float32', 'int32'] : ['float32'];
}

/**
 * Every op method of ComputeBackend, from the op table: the named elementwise ops and reductions, their
 * generic forms (`unary`, `binary`, `reduce`) and every ARRAY_OP_DEFS entry (movement, layout,
 * indexing, random, matmul, composites, optimizer steps). Storage methods (allocate, read, ...) are not ops.
 */
export const OP_METHODS: readonly string[] = [
  ...UNARY_OPS,
  'unary',
  ...BINARY_OPS,
  'binary',
  ...REDUCE_OPS,
  'reduce',
  ...Object.keys(ARRAY_OP_DEFS),
];
