/**
 * Elementwise dispatch of the WASM backend: unary and binary ops, and where, over strided, broadcast
 * operands into a contiguous output. The views are planned into rows (planRows), the row starts lent to the
 * kernel in linear memory (withPlan), and an output of at least elementwiseThreadThreshold elements
 * is split across the worker pool by rows, or by element ranges when there are few long rows.
 */
import { contiguousStrides, type DeviceBuffer, type NDArray } from '@polyhal/hal';
import { planRows, type RowPlan } from '@polyhal/hal/internal';
import { type WasmContext, withPlan } from './context.js';
import { type JobKernel, QUEUE_PARTS } from './threads.js';

/**
 * The kernels' op codes by op name (binaryF32/binaryI32/compareF32 and unaryF32/unaryI32 switch on them),
 * written with the kernels' constants by scripts/op-codes.mjs from the op table.
 */
export { BINARY_CODES, UNARY_CODES } from './generated/op-codes.js';

const rowMajor = contiguousStrides;

/** out = op(x) for unary op `code` (UNARY_CODES); int32 (neg, abs, sign) runs unaryI32 (bool never gets here). */
export function dispatchUnary(ctx: WasmContext, code: number, x: NDArray, out: DeviceBuffer): void {
  const plan = planRows(x.shape, [x.strides, rowMajor(x.shape)], [x.offset, 0]);
  if (plan.rows === 0) return;
  withPlan(ctx.heap, plan, 1, ([xs]) => {
    const xp = { ptr: ctx.ptr(x.buffer), starts: xs!, step: plan.step[0]! };
    if (x.dtype !== 'float32') runElementwise(ctx, 'unaryI32', [code], plan, [xp], ctx.ptr(out));
    else runElementwise(ctx, 'unaryF32', [code], plan, [xp], ctx.ptr(out));
  });
}

/**
 * out = op(a, b) for binary op `code` (BINARY_CODES); a and b view the output's shape. int32 and bool
 * (int32 0/1) operands run binaryI32; float32 operands run compareF32 when the output is bool (the
 * comparisons), else binaryF32.
 */
export function dispatchBinary(ctx: WasmContext, code: number, a: NDArray, b: NDArray, out: DeviceBuffer): void {
  const plan = planRows(a.shape, [a.strides, b.strides, rowMajor(a.shape)], [a.offset, b.offset, 0]);
  if (plan.rows === 0) return;
  const kernel = a.dtype !== 'float32' ? 'binaryI32' : out.dtype === 'bool' ? 'compareF32' : 'binaryF32';
  withPlan(ctx.heap, plan, 2, ([as, bs]) =>
    runElementwise(
      ctx,
      kernel,
      [code],
      plan,
      [
        { ptr: ctx.ptr(a.buffer), starts: as!, step: plan.step[0]! },
        { ptr: ctx.ptr(b.buffer), starts: bs!, step: plan.step[1]! },
      ],
      ctx.ptr(out),
    ),
  );
}

/**
 * out = cond ? x : y (where32: 32-bit words, any dtype of out); cond (bool), x and y view the output's
 * shape.
 */
export function dispatchWhere(ctx: WasmContext, cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
  const ops = [cond, x, y];
  const plan = planRows(
    cond.shape,
    [...ops.map((o) => o.strides), rowMajor(cond.shape)],
    [...ops.map((o) => o.offset), 0],
  );
  if (plan.rows === 0) return;
  withPlan(ctx.heap, plan, 3, (starts) =>
    runElementwise(
      ctx,
      'where32',
      [],
      plan,
      ops.map((o, k) => ({ ptr: ctx.ptr(o.buffer), starts: starts[k]!, step: plan.step[k]! })),
      ctx.ptr(out),
    ),
  );
}

/**
 * Runs an elementwise kernel (arguments: `lead`, n, rows, then per operand pointer, row starts,
 * step, then out) on the calling thread, or split across the thread pool when the output has at
 * least `elementwiseThreadThreshold` elements: by rows when there are enough of them, else one row
 * by element ranges (operand pointers advanced by range start × step), two parts per thread that the threads
 * claim in turn. Parts write disjoint output.
 */
function runElementwise(
  ctx: WasmContext,
  kernel: JobKernel,
  lead: number[],
  plan: RowPlan,
  operands: { ptr: number; starts: number; step: number }[],
  out: number,
): void {
  const args = (n: number, r0: number, r1: number, i0: number): number[] => [
    ...lead,
    n,
    r1 - r0,
    ...operands.flatMap((o) => [o.ptr + i0 * o.step * 4, o.starts + r0 * 4, o.step]),
    out + (r0 * plan.n + i0) * 4,
  ];
  const size = plan.n * plan.rows;
  // parts that the threads claim in turn (runQueued): a few per thread, so that one held back takes fewer
  const parts = ctx.pool && size >= ctx.elementwiseThreadThreshold ? ctx.pool.size * 2 : 1;
  const call = (a: number[]): void => (ctx.k[kernel] as (...x: number[]) => void)(...a);
  if (parts === 1) {
    call(args(plan.n, 0, plan.rows, 0));
    return;
  }
  const jobs: number[][] = [];
  if (plan.rows >= parts) {
    const per = Math.ceil(plan.rows / parts);
    for (let r0 = 0; r0 < plan.rows; r0 += per) jobs.push(args(plan.n, r0, Math.min(plan.rows, r0 + per), 0));
  } else {
    // Few long rows: split each row's elements (in multiples of 8, the kernels' vector width).
    const per = Math.ceil(plan.n / parts / 8) * 8;
    for (let r = 0; r < plan.rows; r++)
      for (let i0 = 0; i0 < plan.n; i0 += per) jobs.push(args(Math.min(per, plan.n - i0), r, r + 1, i0));
  }
  // in waves of at most QUEUE_PARTS
  for (let w = 0; w < jobs.length; w += QUEUE_PARTS) ctx.pool!.runQueued(kernel, jobs.slice(w, w + QUEUE_PARTS), call);
}
