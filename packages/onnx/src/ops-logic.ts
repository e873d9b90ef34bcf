/**
 * ONNX ops on bool (stored by the HAL as int32 0/1, read back as 0/1): the comparisons Equal, Less,
 * LessOrEqual, Greater, GreaterOrEqual (bool results), And, Or, Xor, Not, Where, IsNaN, IsInf
 * (detect_negative, detect_positive), Compress (a host condition: a gather of the kept positions) and
 * Mod with fmod=1 (the HAL's truncated remainder fmod). Semantics from onnx/docs/Operators.md and the
 * operators' reference implementations.
 */
import type { BinaryOp, ComputeBackend, NDArray } from '@polyhal/hal';
import { NotExpressible, normAxis, type OpMapping } from './table.js';

const EXACT = { kind: 'exact' } as const;

/** A comparison (float32 or int32 operands, multidirectional broadcasting) → bool. */
const compare = (op: BinaryOp): OpMapping => ({
  dtypes: ['float32', 'int32', 'bool'],
  contract: EXACT,
  plan: (ctx) => {
    if (ctx.inputTypes[0] === 'bool' && op !== 'equal')
      throw new NotExpressible('dtype', `${ctx.node.opType} of bool operands`);
    return (be, [a, b]) => [be.binary(op, a!, b!)];
  },
});

/** And, Or, Xor: bool × bool → bool with broadcasting. */
const logical = (op: BinaryOp): OpMapping => ({
  dtypes: ['bool'],
  contract: EXACT,
  plan:
    () =>
    (be, [a, b]) => [be.binary(op, a!, b!)],
});

/** IsInf: +Inf where detect_positive, −Inf where detect_negative (both by default). */
const isInf: OpMapping = {
  dtypes: ['float32', 'bool'],
  contract: EXACT,
  plan: (ctx) => {
    const neg = ctx.attrs.int('detect_negative', 1) !== 0;
    const pos = ctx.attrs.int('detect_positive', 1) !== 0;
    return (be, [x]) => [
      neg && pos
        ? be.isinf(x!)
        : neg
          ? be.equal(x!, -Infinity)
          : pos
            ? be.equal(x!, Infinity)
            : be.full(x!.shape, 0, 'bool'),
    ];
  },
};

/**
 * Compress: the slices of x along `axis` (x flattened when absent) where the condition is true; a
 * condition shorter than the axis keeps nothing past its end. The condition is read on the host (the
 * output's shape depends on it) and the kept positions gathered.
 */
const compress: OpMapping = {
  host: [1],
  dtypes: ['float32', 'int32', 'bool'],
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const cond = ctx.numbers(1);
    if (!cond) throw new NotExpressible('input', 'Compress: no condition');
    const hasAxis = ctx.attrs.has('axis');
    const axis = hasAxis ? normAxis(ctx.attrs.int('axis', 0), shape.length, 'Compress') : 0;
    const dim = hasAxis ? shape[axis]! : shape.reduce((p, d) => p * d, 1);
    if (cond.length > dim) throw new NotExpressible('input', 'Compress: a condition longer than the axis');
    const kept = Int32Array.from(cond.flatMap((c, i) => (c ? [i] : [])));
    return (be: ComputeBackend, [x]: (NDArray | undefined)[]) => {
      const src = hasAxis ? x! : be.reshape(x!, [dim]);
      return [be.gather(src, be.fromArray(kept, [kept.length], 'int32'), axis)];
    };
  },
};

export const LOGIC_OPS: Record<string, OpMapping> = {
  Equal: compare('equal'),
  Less: compare('less'),
  LessOrEqual: compare('lessEqual'),
  Greater: compare('greater'),
  GreaterOrEqual: compare('greaterEqual'),
  And: logical('logicalAnd'),
  Or: logical('logicalOr'),
  Xor: logical('logicalXor'),
  Not: {
    dtypes: ['bool'],
    contract: EXACT,
    plan:
      () =>
      (be, [x]) => [be.logicalNot(x!)],
  },
  Where: {
    dtypes: ['bool', 'float32', 'int32'],
    contract: EXACT,
    plan:
      () =>
      (be, [c, x, y]) => [be.where(c!, x!, y!)],
  },
  IsNaN: {
    dtypes: ['float32', 'bool'],
    contract: EXACT,
    plan:
      () =>
      (be, [x]) => [be.isnan(x!)],
  },
  IsInf: isInf,
  Compress: compress,
  // ONNX defines BitShift on unsigned integers only (a logical right shift, a left shift modulo 2^bits):
  // on uint8 the HAL's shifts are exactly that (its values are non-negative, results wrap modulo 2^8);
  // uint16/32/64 the HAL lacks, and a signed type is not expressible by the op's definition.
  BitShift: {
    dtypes: ['uint8', 'int32'],
    contract: EXACT,
    plan: (ctx) => {
      if (ctx.inputTypes[0] !== 'uint8')
        throw new NotExpressible('dtype', 'BitShift on a signed type (ONNX defines it on unsigned integers)');
      const left = ctx.attrs.string('direction', '') === 'LEFT';
      return (be, [a, b]) => [left ? be.bitShiftLeft(a!, b!) : be.bitShiftRight(a!, b!)];
    },
  },
};
