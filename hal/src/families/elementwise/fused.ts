/**
 * fusedElementwise (ComputeBackend): checks of a chain of elementwise steps, and the chain as separate ops
 * (what a backend without the fusedElementwiseKernel hook runs, and the meaning of the fused kernel).
 */
import type { ElementwiseStep } from '../../backend.js';
import type { DType } from '../../core/dtype.js';
import { InvalidArgumentError, UnsupportedOpError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { type BinaryOp, binaryResult, binaryTakes, dtypeTaken, type UnaryOp, unaryTakes } from '../../ops/index.js';
import { BINARY_OP_SET, describeValue, UNARY_OP_SET } from '../../contract/validate.js';

/** A unary step (no scalar). */
export const isUnaryStep = (s: ElementwiseStep): s is { readonly op: UnaryOp } => !('scalar' in s);

/**
 * The steps with their scalars rounded as `binary` rounds a number operand (Math.fround for float32); throws
 * InvalidArgumentError (no steps, not a step, a scalar that is not a number, a step that changes the dtype) or
 * UnsupportedOpError (an unknown op, an op that does not take `dtype`).
 */
export function checkSteps(steps: unknown, dtype: DType, backend: string): ElementwiseStep[] {
  if (!Array.isArray(steps) || steps.length === 0)
    throw new InvalidArgumentError(`fusedElementwise: steps must be a non-empty array, got ${describeValue(steps)}`);
  return steps.map((s: unknown, i) => {
    if (typeof s !== 'object' || s === null || typeof (s as { op?: unknown }).op !== 'string')
      throw new InvalidArgumentError(
        `fusedElementwise: step ${i} must be { op } or { op, scalar }, got ${describeValue(s)}`,
      );
    const step = s as { op: string; scalar?: unknown; scalarFirst?: unknown };
    if (!('scalar' in step)) {
      const op = step.op as UnaryOp;
      if (!UNARY_OP_SET.has(op)) throw new UnsupportedOpError(op, dtype, backend, `step ${i}: not a unary op`);
      if (!dtypeTaken(unaryTakes(op), dtype)) throw new UnsupportedOpError(op, dtype, backend);
      return { op };
    }
    const op = step.op as BinaryOp;
    if (!BINARY_OP_SET.has(op)) throw new UnsupportedOpError(op, dtype, backend, `step ${i}: not a binary op`);
    if (!dtypeTaken(binaryTakes(op), dtype)) throw new UnsupportedOpError(op, dtype, backend);
    if (binaryResult(op, dtype) !== dtype)
      throw new InvalidArgumentError(
        `fusedElementwise: step ${i} (${op}) gives ${binaryResult(op, dtype)}, not ${dtype}: a chain keeps its dtype`,
      );
    if (typeof step.scalar !== 'number')
      throw new InvalidArgumentError(
        `fusedElementwise: step ${i}'s scalar must be a number, got ${describeValue(step.scalar)}`,
      );
    const scalar = dtype === 'float32' ? Math.fround(step.scalar) : step.scalar;
    return { op, scalar, scalarFirst: step.scalarFirst === true };
  });
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
      : s.scalarFirst
        ? be.binary(s.op, s.scalar, y)
        : be.binary(s.op, y, s.scalar);
    if (y !== x) be.free(y);
    y = next;
  }
  return y;
}
