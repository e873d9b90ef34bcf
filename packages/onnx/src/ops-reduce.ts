/**
 * ONNX reductions, Softmax/LogSoftmax and global pooling on the HAL's reductions (sum, max, min,
 * prod, mean) and softmax.
 * Axes come from the `axes` input (ReduceSum from opset 13) or the `axes` attribute; an empty or absent
 * list reduces every axis unless `noop_with_empty_axes` = 1 (then the input passes through).
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { NotExpressible, normAxis, type NodeContext, type OpMapping } from './table.js';

type Reducer = (be: ComputeBackend, x: NDArray, axes: number[] | undefined, keepdims: boolean) => NDArray;

const square = (be: ComputeBackend, x: NDArray): NDArray => be.mul(x, x);

/** The ONNX reductions expressible as HAL ops, each in the form of ONNX's reference implementation. */
/** float32 and float64 (where the backend has it), and int32 for the reductions that take it. */
const FF = ['float32', 'float64'] as const;
const FIF = ['float32', 'int32', 'float64'] as const;

const REDUCERS: Record<string, { fn: Reducer; dtypes?: readonly string[]; exact?: boolean }> = {
  ReduceSum: { fn: (be, x, a, k) => be.sum(x, a, k), dtypes: FIF },
  ReduceMax: { fn: (be, x, a, k) => be.max(x, a, k), dtypes: FIF, exact: true },
  ReduceMin: { fn: (be, x, a, k) => be.min(x, a, k), dtypes: FIF, exact: true },
  ReduceProd: { fn: (be, x, a, k) => be.prod(x, a, k), dtypes: FIF },
  ReduceMean: { fn: (be, x, a, k) => be.mean(x, a, k), dtypes: FF },
  ReduceSumSquare: { fn: (be, x, a, k) => be.sum(square(be, x), a, k), dtypes: FF },
  ReduceL1: { fn: (be, x, a, k) => be.sum(be.abs(x), a, k), dtypes: FF },
  ReduceL2: { fn: (be, x, a, k) => be.sqrt(be.sum(square(be, x), a, k)), dtypes: FF },
  ReduceLogSum: { fn: (be, x, a, k) => be.log(be.sum(x, a, k)), dtypes: FF },
  ReduceLogSumExp: { fn: (be, x, a, k) => be.logsumexp(x, a, k), dtypes: FF },
};

function reduction(op: string, fn: Reducer, dtypes: readonly string[] | undefined, exact: boolean): OpMapping {
  // ReduceSum takes its axes as an input from opset 13; the other reductions from opset 18.
  const axesInputFrom = op === 'ReduceSum' ? 13 : 18;
  return {
    host: [1],
    dtypes,
    contract: (ctx) => (exact || ctx.inputTypes[0] === 'int32' ? { kind: 'exact' } : { kind: 'onnx' }),
    plan: (ctx) => {
      const keepdims = ctx.attrs.int('keepdims', 1) !== 0;
      const noop = ctx.attrs.int('noop_with_empty_axes', 0) !== 0;
      const rank = ctx.inputShapes[0]!.length;
      let axes: number[] | undefined;
      if (ctx.opset >= axesInputFrom) {
        if (ctx.attrs.has('axes')) throw new NotExpressible('attribute', `${op}: axes attribute in opset ${ctx.opset}`);
        axes = ctx.numbers(1);
      } else {
        if (ctx.node.inputs.length > 1)
          throw new NotExpressible('input', `${op}: an axes input before opset ${axesInputFrom}`);
        axes = ctx.attrs.ints('axes');
      }
      if (axes !== undefined && axes.length === 0) axes = undefined;
      if (axes === undefined && noop) return (_be, [x]) => [x!];
      const norm = axes?.map((a) => normAxis(a, rank, op));
      return (be, [x]) => [fn(be, x!, norm, keepdims)];
    },
  };
}

/**
 * Softmax/LogSoftmax: from opset 13 over the single axis `axis` (default −1); before, the input is
 * coerced to 2-D at `axis` (default 1) — [∏ dims before it, ∏ dims from it] — and normalized over
 * the second dimension.
 */
const softmax = (log: boolean): OpMapping => ({
  plan: (ctx: NodeContext) => {
    const shape = ctx.inputShapes[0]!;
    const rank = shape.length;
    const modern = ctx.opset >= 13;
    const axis = normAxis(ctx.attrs.int('axis', modern ? -1 : 1), Math.max(rank, 1), ctx.node.opType);
    const f = (be: ComputeBackend, x: NDArray, ax: number): NDArray => (log ? be.logSoftmax(x, ax) : be.softmax(x, ax));
    if (modern) return (be, [x]) => [f(be, x!, axis)];
    const outer = shape.slice(0, axis).reduce((p, d) => p * d, 1);
    const inner = shape.slice(axis).reduce((p, d) => p * d, 1);
    return (be, [x]) => [be.reshape(f(be, be.reshape(x!, [outer, inner]), 1), shape)];
  },
});

/** GlobalAveragePool/GlobalMaxPool: mean/max over every spatial axis (2..rank−1), dims kept. */
const globalPool = (max: boolean): OpMapping => ({
  contract: { kind: max ? 'exact' : 'onnx' },
  plan: (ctx) => {
    const rank = ctx.inputShapes[0]!.length;
    if (rank < 3) throw new NotExpressible('input', `${ctx.node.opType} of rank ${rank}`);
    const axes = Array.from({ length: rank - 2 }, (_, i) => i + 2);
    return (be, [x]) => [max ? be.max(x!, axes, true) : be.mean(x!, axes, true)];
  },
});

export const REDUCE_OPS_ONNX: Record<string, OpMapping> = {
  ...Object.fromEntries(
    Object.entries(REDUCERS).map(([op, r]) => [op, reduction(op, r.fn, r.dtypes, r.exact ?? false)]),
  ),
  Softmax: softmax(false),
  LogSoftmax: softmax(true),
  GlobalAveragePool: globalPool(false),
  GlobalMaxPool: globalPool(true),
};
