/**
 * fusedElementwise (ComputeBackend): checks of a chain of elementwise steps, and the chain as separate ops
 * (what a backend without the fusedElementwiseKernel hook runs, and the meaning of the fused kernel).
 */
import type { ElementwiseStep } from '../../backend.js';
import type { DType } from '../../core/dtype.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError, UnsupportedOpError } from '../../core/errors.js';
import { expandView, type NDArray } from '../../core/ndarray.js';
import { type BinaryOp, binaryResult, binaryTakes, dtypeTaken, type UnaryOp, unaryTakes } from '../../ops/index.js';
import { BINARY_OP_SET, describeValue, UNARY_OP_SET } from '../../contract/validate.js';

/** A step of a binary op with a number operand. */
export type ScalarStep = Extract<ElementwiseStep, { readonly scalar: number }>;
/** A step of a binary op with an array operand. */
export type ArrayStep = Extract<ElementwiseStep, { readonly array: NDArray }>;

/** A unary step (no scalar, no array). */
export const isUnaryStep = (s: ElementwiseStep): s is { readonly op: UnaryOp } => !('scalar' in s) && !('array' in s);
/** A binary step with an array operand. */
export const isArrayStep = (s: ElementwiseStep): s is ArrayStep => 'array' in s;
/** A binary step with a number operand. */
export const isScalarStep = (s: ElementwiseStep): s is ScalarStep => 'scalar' in s;

/**
 * The steps with their scalars rounded as `binary` rounds a number operand (Math.fround for float32) and their
 * arrays as views of x's shape (broadcast strides 0); throws InvalidArgumentError (no steps, not a step, a scalar
 * that is not a number, a step with both a scalar and an array, a step that changes the dtype, an array operand
 * that `checkArray` refuses), UnsupportedOpError (an unknown op, an op that does not take `x`'s dtype),
 * DTypeError (an array of another dtype) or ShapeMismatchError (an array that does not broadcast to x's shape).
 * `checkArray(a, arg)` validates an array operand as a live array of the backend (StorageBackend.check).
 */
export function checkSteps(
  steps: unknown,
  x: { readonly dtype: DType; readonly shape: readonly number[] },
  backend: string,
  checkArray: (a: NDArray, arg: string) => void = () => {},
): ElementwiseStep[] {
  const dtype = x.dtype;
  if (!Array.isArray(steps) || steps.length === 0)
    throw new InvalidArgumentError(`fusedElementwise: steps must be a non-empty array, got ${describeValue(steps)}`);
  return steps.map((s: unknown, i): ElementwiseStep => {
    if (typeof s !== 'object' || s === null || typeof (s as { op?: unknown }).op !== 'string')
      throw new InvalidArgumentError(
        `fusedElementwise: step ${i} must be { op }, { op, scalar } or { op, array }, got ${describeValue(s)}`,
      );
    const step = s as { op: string; scalar?: unknown; scalarFirst?: unknown; array?: unknown; arrayFirst?: unknown };
    const hasScalar = 'scalar' in step;
    const hasArray = 'array' in step;
    if (!hasScalar && !hasArray) {
      const op = step.op as UnaryOp;
      if (!UNARY_OP_SET.has(op)) throw new UnsupportedOpError(op, dtype, backend, `step ${i}: not a unary op`);
      if (!dtypeTaken(unaryTakes(op), dtype)) throw new UnsupportedOpError(op, dtype, backend);
      return { op };
    }
    if (hasScalar && hasArray)
      throw new InvalidArgumentError(`fusedElementwise: step ${i} has both a scalar and an array operand`);
    const op = step.op as BinaryOp;
    if (!BINARY_OP_SET.has(op)) throw new UnsupportedOpError(op, dtype, backend, `step ${i}: not a binary op`);
    if (!dtypeTaken(binaryTakes(op), dtype)) throw new UnsupportedOpError(op, dtype, backend);
    if (binaryResult(op, dtype) !== dtype)
      throw new InvalidArgumentError(
        `fusedElementwise: step ${i} (${op}) gives ${binaryResult(op, dtype)}, not ${dtype}: a chain keeps its dtype`,
      );
    if (hasArray) return { op, array: checkArray_(step.array, i), arrayFirst: step.arrayFirst === true };
    if (typeof step.scalar !== 'number')
      throw new InvalidArgumentError(
        `fusedElementwise: step ${i}'s scalar must be a number, got ${describeValue(step.scalar)}`,
      );
    const scalar = dtype === 'float32' ? Math.fround(step.scalar) : step.scalar;
    return { op, scalar, scalarFirst: step.scalarFirst === true };
  });

  function checkArray_(a: unknown, i: number): NDArray {
    checkArray(a as NDArray, `step ${i}'s array`);
    const arr = a as NDArray;
    if (arr.dtype !== dtype)
      throw new DTypeError(`fusedElementwise: step ${i}'s array is ${arr.dtype}, the chain ${dtype}; cast it first`);
    const lead = x.shape.length - arr.shape.length;
    if (lead < 0 || arr.shape.some((d, k) => d !== 1 && d !== x.shape[lead + k]))
      throw new ShapeMismatchError(
        `fusedElementwise: step ${i}'s array of shape [${arr.shape.join(', ')}] does not broadcast to the ` +
          `chain's shape [${x.shape.join(', ')}] (a chain keeps its shape)`,
        [arr.shape, x.shape],
      );
    return expandView(arr, x.shape);
  }
}

/** What the separate-ops chain needs of a backend. */
export interface FusedHost {
  unary(op: UnaryOp, x: NDArray): NDArray;
  binary(op: BinaryOp, a: NDArray | number, b: NDArray | number): NDArray;
  free(x: NDArray): void;
}

/** The chain as separate ops: each intermediate freed once the next step has read it. */
export function fusedElementwiseComposite(be: FusedHost, x: NDArray, steps: readonly ElementwiseStep[]): NDArray {
  let y = x;
  for (const s of steps) {
    const next = isUnaryStep(s)
      ? be.unary(s.op, y)
      : isArrayStep(s)
        ? s.arrayFirst
          ? be.binary(s.op, s.array, y)
          : be.binary(s.op, y, s.array)
        : s.scalarFirst
          ? be.binary(s.op, s.scalar, y)
          : be.binary(s.op, y, s.scalar);
    if (y !== x) be.free(y);
    y = next;
  }
  return y;
}
