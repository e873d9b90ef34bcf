/**
 * Method chaining on Tensor: `x.matmul(w).add(b).relu()` is `relu(add(matmul(x, w), b))`. One method
 * per op of the HAL's op table (elementwise unary and binary ops, reductions) — derived from the table,
 * so a new op gets its method — plus matmul, mean, the movement ops and softmax. Every method records
 * its gradient exactly as the function form does.
 */
import {
  type ArgReduceOptions,
  BINARY_OPS,
  type BinaryOp,
  type DType,
  type PadMode,
  REDUCE_OPS,
  type ReduceOp,
  UNARY_OPS,
  type UnaryOp,
} from '@polyhal/hal';
import { argmax, argmin, gather, oneHot } from './indexing.js';
import { concat, flip, split, tile, trilu } from './layout.js';
import { all, any, bitwiseNot, cast, isfinite, isinf, isnan, logicalNot, where } from './logic.js';
import { expand, flatten, pad, permute, reshape, shrink, stride, transpose } from './movement.js';
import {
  binaryOp,
  logSoftmax,
  logsumexp,
  matmul,
  mean,
  reduceOp,
  type Scalarish,
  softmax,
  softmaxCrossEntropy,
  unaryOp,
} from './ops.js';
import { Tensor } from './tensor.js';

type Axes = number | readonly number[];

/** The methods of Tensor that the op table defines. */
export type TableMethods = { [K in UnaryOp]: () => Tensor } & { [K in BinaryOp]: (other: Scalarish) => Tensor } & {
  [K in ReduceOp]: (axes?: Axes, keepdims?: boolean) => Tensor;
};

/** The other chainable methods. */
export interface OpMethods {
  /** this: [..., M, K] · other: [..., K, N] → [..., M, N]. */
  matmul(other: Tensor, bias?: Tensor | null): Tensor;
  /** Mean over the axes (all when absent); NaN over an empty axis. float32. */
  mean(axes?: Axes, keepdims?: boolean): Tensor;
  /** log Σ exp over the axes (all when absent), stably. */
  logsumexp(axes?: Axes, keepdims?: boolean): Tensor;
  /** The same elements as `shape` (one dim may be −1); a view when the strides allow. */
  reshape(shape: readonly number[]): Tensor;
  /** The dims from `startDim` (default 1, as the Flatten layer) merged into one: [N, C, H, W] → [N, C·H·W]. */
  flatten(startDim?: number): Tensor;
  /** Dims reordered: out.shape[i] = shape[perm[i]] (a view). */
  permute(perm: readonly number[]): Tensor;
  /** Swaps the last two dims (a view). */
  transpose(): Tensor;
  /** Broadcast to `shape` (a view; size-1 dims repeat); the gradient sums over the repeats. */
  expand(shape: readonly number[]): Tensor;
  /** mode: 'constant' (default, `value`), 'edge', 'reflect' or 'wrap'. */
  pad(pads: readonly (readonly [number, number])[], value?: number, mode?: PadMode): Tensor;
  /** x repeated reps[i] times along each dim (NumPy tile). */
  tile(reps: readonly number[]): Tensor;
  /** The given axes (default all) reversed. */
  flip(axes?: Axes): Tensor;
  /** ONNX Trilu: upper (j − i ≥ k, default) or lower (j − i ≤ k) triangle of the last two dims. */
  trilu(k?: number, upper?: boolean): Tensor;
  /** this and `others` joined along an existing axis. */
  concat(others: readonly Tensor[], axis?: number): Tensor;
  /** This tensor's slices along `axis` (default 0) at the int32 `indices` (NumPy take). */
  gather(indices: Tensor, axis?: number): Tensor;
  /** This int32 tensor one-hot encoded: float32 [...shape, depth]. */
  oneHot(depth: number): Tensor;
  /** int32 index of the largest element along axis (flattened when absent). */
  argmax(axis?: number, keepdims?: boolean, options?: ArgReduceOptions): Tensor;
  /** int32 index of the smallest element along axis (flattened when absent). */
  argmin(axis?: number, keepdims?: boolean, options?: ArgReduceOptions): Tensor;
  /** `[start, end)` of each dim (a view). */
  shrink(bounds: readonly (readonly [number, number])[]): Tensor;
  /** Every steps[i]-th element of each dim; negative steps walk backwards (a view). */
  stride(steps: readonly number[]): Tensor;
  /** softmax along `axis` (default −1). */
  softmax(axis?: number): Tensor;
  /** log-softmax along `axis` (default −1), stable for large logits. */
  logSoftmax(axis?: number): Tensor;
  /** this: logits [N, C], labels [N, C] → per-row loss [N]. */
  softmaxCrossEntropy(labels: Tensor): Tensor;
  /** this where the bool `cond` is true, else `other` (PyTorch Tensor.where). */
  where(cond: Tensor, other: Scalarish): Tensor;
  /** bool: whether any element along the axes (all when absent) is true. */
  any(axes?: Axes, keepdims?: boolean): Tensor;
  /** bool: whether every element along the axes (all when absent) is true. */
  all(axes?: Axes, keepdims?: boolean): Tensor;
  /** bool: true where NaN. */
  isnan(): Tensor;
  /** bool: true where ±Inf. */
  isinf(): Tensor;
  /** bool: true where finite. */
  isfinite(): Tensor;
  /** NOT of a bool tensor. */
  logicalNot(): Tensor;
  /** ~ of an int32 tensor. */
  bitwiseNot(): Tensor;
  /** This tensor converted to `dtype` (no gradient). */
  cast(dtype: DType): Tensor;
}

const define = (name: string, value: (this: Tensor, ...args: never[]) => Tensor): void => {
  if (Object.hasOwn(Tensor.prototype, name)) throw new Error(`Tensor.${name} is defined twice`);
  Object.defineProperty(Tensor.prototype, name, { value, writable: true, configurable: true });
};

for (const op of UNARY_OPS)
  define(op, function (this: Tensor) {
    return unaryOp(op, this);
  });
for (const op of BINARY_OPS)
  define(op, function (this: Tensor, other: Scalarish) {
    return binaryOp(op, this, other);
  });
for (const op of REDUCE_OPS)
  define(op, function (this: Tensor, axes?: Axes, keepdims?: boolean) {
    return reduceOp(op, this, axes, keepdims);
  });

const others: { [K in keyof OpMethods]: (this: Tensor, ...args: Parameters<OpMethods[K]>) => Tensor } = {
  matmul(other, bias) {
    return matmul(this, other, bias);
  },
  mean(axes, keepdims) {
    return mean(this, axes, keepdims);
  },
  logsumexp(axes, keepdims) {
    return logsumexp(this, axes, keepdims);
  },
  reshape(shape) {
    return reshape(this, shape);
  },
  flatten(startDim) {
    return flatten(this, startDim);
  },
  permute(perm) {
    return permute(this, perm);
  },
  transpose() {
    return transpose(this);
  },
  expand(shape) {
    return expand(this, shape);
  },
  pad(pads, value, mode) {
    return pad(this, pads, value, mode);
  },
  tile(reps) {
    return tile(this, reps);
  },
  flip(axes) {
    return flip(this, axes);
  },
  trilu(k, upper) {
    return trilu(this, k, upper);
  },
  concat(others, axis) {
    return concat([this, ...others], axis);
  },
  gather(indices, axis) {
    return gather(this, indices, axis);
  },
  oneHot(depth) {
    return oneHot(this, depth);
  },
  argmax(axis, keepdims, options) {
    return argmax(this, axis, keepdims, options);
  },
  argmin(axis, keepdims, options) {
    return argmin(this, axis, keepdims, options);
  },
  shrink(bounds) {
    return shrink(this, bounds);
  },
  stride(steps) {
    return stride(this, steps);
  },
  softmax(axis) {
    return softmax(this, axis);
  },
  logSoftmax(axis) {
    return logSoftmax(this, axis);
  },
  softmaxCrossEntropy(labels) {
    return softmaxCrossEntropy(this, labels);
  },
  where(cond, other) {
    return where(cond, this, other);
  },
  any(axes, keepdims) {
    return any(this, axes, keepdims);
  },
  all(axes, keepdims) {
    return all(this, axes, keepdims);
  },
  isnan() {
    return isnan(this);
  },
  isinf() {
    return isinf(this);
  },
  isfinite() {
    return isfinite(this);
  },
  logicalNot() {
    return logicalNot(this);
  },
  bitwiseNot() {
    return bitwiseNot(this);
  },
  cast(dtype) {
    return cast(this, dtype);
  },
};
for (const [name, fn] of Object.entries(others)) define(name, fn as (this: Tensor, ...args: never[]) => Tensor);

/** Methods returning several tensors. */
export interface MultiMethods {
  /** Parts along an axis: `sections` equal parts or the given sizes (each a shrink of this). */
  split(sizesOrSections: number | readonly number[], axis?: number): Tensor[];
}
Object.defineProperty(Tensor.prototype, 'split', {
  value(this: Tensor, s: number | readonly number[], axis?: number): Tensor[] {
    return split(this, s, axis);
  },
  writable: true,
  configurable: true,
});
