/**
 * ONNX CumSum and TopK on the HAL's cumsum and topk (hal/src/families/scan/scan.ts). CumSum's axis and TopK's K are
 * host inputs (int32 or int64 scalars, K a one-element tensor); TopK's int64 Indices output is the HAL's
 * int32. The attributes map one to one: exclusive, reverse; axis (default −1), largest, sorted.
 */
import { NotExpressible, type NodeContext, normAxis, type OpMapping } from './table.js';

const FI = ['float32', 'int32', 'float64'] as const;

/** Host input i as one integer (a scalar or a one-element tensor). */
function scalarOf(ctx: NodeContext, i: number, what: string): number {
  const v = ctx.numbers(i);
  if (v?.length !== 1 || !Number.isInteger(v[0]))
    throw new NotExpressible('input', `${ctx.node.opType}: ${what} must be one integer`);
  return v[0]!;
}

/** CumSum: running sums along the axis input (opset 11, 14), exclusive and reverse attributes. */
const cumSum: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: (ctx) => (ctx.inputTypes[0] === 'int32' ? { kind: 'exact' } : { kind: 'hal', op: 'cumsum' }),
  // float64 (where the backend has it): accumulated in float64, as ONNX's reference (NumPy cumsum)
  plan: (ctx) => {
    const rank = ctx.inputShapes[0]!.length;
    const axis = normAxis(scalarOf(ctx, 1, 'axis'), Math.max(rank, 1), 'CumSum');
    const exclusive = ctx.attrs.int('exclusive', 0) !== 0;
    const reverse = ctx.attrs.int('reverse', 0) !== 0;
    return (be, [x]) => [be.cumsum(x!, axis, { exclusive, reverse })];
  },
};

/** TopK (opset 10, 11): the K largest or smallest along axis with their indices, sorted, lower index first. */
const topK: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axis = normAxis(ctx.attrs.int('axis', -1), shape.length, 'TopK');
    const k = ctx.opset < 10 ? ctx.attrs.int('k', 1) : scalarOf(ctx, 1, 'K');
    if (k < 0 || k > shape[axis]!) throw new NotExpressible('input', `TopK: K ${k} outside [0, ${shape[axis]}]`);
    const largest = ctx.attrs.int('largest', 1) !== 0;
    const sorted = ctx.attrs.int('sorted', 1) !== 0;
    return (be, [x]) => {
      const { values, indices } = be.topk(x!, k, axis, { largest, sorted });
      return [values, indices];
    };
  },
};

export const SCAN_OPS: Record<string, OpMapping> = {
  CumSum: cumSum,
  TopK: topK,
};
