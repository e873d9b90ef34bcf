/**
 * Operand checks of the convolution and pooling composites (conv.ts, pool.ts): typed errors before
 * anything is allocated.
 */
import type { ComputeBackend } from '../../backend.js';
import type { DType } from '../../core/dtype.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { describeValue } from '../../contract/validate.js';

/** What the composites use of a backend: the public ops plus BaseBackend's view check. */
export type ConvHost = ComputeBackend & { check(x: NDArray, op: string, arg?: string): void };

const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;

function checkDType(be: ConvHost, x: NDArray, op: string, arg: string, dtypes: readonly DType[]): void {
  be.check(x, op, arg);
  if (!dtypes.includes(x.dtype)) throw new DTypeError(`${op}: ${arg} must be ${dtypes.join(' or ')}, got ${x.dtype}`);
}

function checkGroups(groups: unknown, op: string): number {
  if (groups === undefined) return 1;
  if (!Number.isInteger(groups) || (groups as number) < 1)
    throw new InvalidArgumentError(`${op}: groups must be an integer ≥ 1, got ${describeValue(groups)}`);
  return groups as number;
}

/**
 * conv: x [N, C, ...in], w [O, C/groups, ...k]; convTranspose (`transposed`): w [C, O/groups, ...k].
 * DTypeError unless both are of `dtypes` (float32; convInteger's int8/uint8, and int32 once shifted);
 * ShapeMismatchError for ranks, channels or groups that disagree; InvalidArgumentError for groups < 1 or a
 * kernel size of 0.
 */
export function checkConvOperands(
  be: ConvHost,
  x: NDArray,
  w: NDArray,
  groupsArg: unknown,
  op: string,
  transposed = false,
  dtypes: readonly DType[] = ['float32'],
): { r: number; groups: number; N: number; C: number; O: number } {
  checkDType(be, x, op, 'x', dtypes);
  checkDType(be, w, op, 'w', dtypes);
  const groups = checkGroups(groupsArg, op);
  const r = x.shape.length - 2;
  const mismatch = (why: string): never => {
    throw new ShapeMismatchError(`${op}: ${why}: x ${shp(x.shape)}, w ${shp(w.shape)}, groups ${groups}`, [
      x.shape,
      w.shape,
    ]);
  };
  if (r < 1 || r > 3) mismatch('x must be [N, C, ...spatial] with 1 to 3 spatial axes');
  if (w.shape.length !== r + 2) mismatch(`w must have ${r + 2} dims like x`);
  const [N, C] = x.shape as [number, number];
  const [w0, w1] = w.shape as [number, number];
  if (w.shape.slice(2).some((k) => k < 1)) throw new InvalidArgumentError(`${op}: kernel sizes must be ≥ 1`);
  if (C % groups !== 0) mismatch('channels are not divisible by groups');
  if (transposed) {
    if (w0 !== C) mismatch('w must be [C, O/groups, ...k]');
    return { r, groups, N, C, O: w1 * groups };
  }
  if (w0 % groups !== 0) mismatch('output channels are not divisible by groups');
  if (w1 * groups !== C) mismatch('w must be [O, C/groups, ...k]');
  return { r, groups, N, C, O: w0 };
}

/** convWeightGrad: x [N, C, ...in] and dy [N, O, ...out] of one rank and batch. */
export function convGradDims(
  x: NDArray,
  dy: NDArray,
  groupsArg: unknown,
  op: string,
): { r: number; groups: number; N: number; C: number; O: number } {
  const groups = checkGroups(groupsArg, op);
  const r = x.shape.length - 2;
  const [N, C] = x.shape as [number, number];
  const O = dy.shape[1] ?? 0;
  if (r < 1 || r > 3 || dy.shape.length !== r + 2 || dy.shape[0] !== N || C % groups || O % groups) {
    throw new ShapeMismatchError(`${op}: x ${shp(x.shape)} and dy ${shp(dy.shape)} do not agree`, [x.shape, dy.shape]);
  }
  return { r, groups, N, C, O };
}

/**
 * conv's `bias` option: undefined (none), or a float32 [O] array of this backend, one value per output
 * channel. DTypeError for another dtype, ShapeMismatchError for another shape; the backend's view check
 * (UseAfterFreeError, a foreign array) otherwise.
 */
export function checkConvBias(be: ConvHost, bias: NDArray | undefined, O: number, op: string): NDArray | undefined {
  if (bias === undefined) return undefined;
  checkDType(be, bias, op, 'bias', ['float32']);
  if (bias.shape.length !== 1 || bias.shape[0] !== O)
    throw new ShapeMismatchError(`${op}: bias must be [${O}] (one value per output channel), got ${shp(bias.shape)}`, [
      bias.shape,
    ]);
  return bias;
}
