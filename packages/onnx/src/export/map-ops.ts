/**
 * ONNX forms of the HAL's non-elementwise methods: matmul (MatMul, + Add for the bias), attention (MatMul, Transpose,
 * Mul, Softmax, MatMul), conv (Conv), maxPool and avgPool, layerNorm (LayerNormalization), softmax and logSoftmax,
 * the reductions (ReduceSum, ReduceMean, ...), pad, concat and stack, cumsum (CumSum), cast, where, the copies
 * (contiguous, a reshape that copies) and the constants made in the traced function (full, fromArray). Opset 17
 * forms: ReduceSum takes its axes as an input, the others as an attribute.
 */
import type { DType, NDArray, Operand } from '@polyhal/hal';
import { axesOf, type CallMapping, type ExportContext } from './context.js';
import { elemType } from './graph.js';

type PerAxis = number | readonly number[] | undefined;
type Padding = number | readonly number[] | readonly (readonly [number, number])[] | string | undefined;

const perAxis = (v: PerAxis, r: number, fallback: number): number[] =>
  v === undefined ? new Array<number>(r).fill(fallback) : typeof v === 'number' ? new Array<number>(r).fill(v) : [...v];

/** ONNX pads [b1..br, e1..er] or auto_pad for a HAL padding option. */
function padding(p: Padding, r: number): { pads?: number[]; auto_pad?: string } {
  if (p === 'same') return { auto_pad: 'SAME_UPPER' };
  if (p === 'same-lower') return { auto_pad: 'SAME_LOWER' };
  if (p === undefined || p === 'valid') return { pads: new Array<number>(2 * r).fill(0) };
  if (typeof p === 'number') return { pads: new Array<number>(2 * r).fill(p) };
  const list = p as readonly (number | readonly [number, number])[];
  const pairs = list.map((e) => (typeof e === 'number' ? [e, e] : e));
  return { pads: [...pairs.map((e) => e[0]!), ...pairs.map((e) => e[1]!)] };
}

const isFloat = (d: DType): boolean => d === 'float32' || d === 'float64';

const matmul: CallMapping = (c, args, y) => {
  const [a, b, bias] = args as [NDArray, NDArray, NDArray | null | undefined];
  let t = c.g.op('MatMul', [c.in(a, a.dtype), c.in(b, b.dtype)]);
  if (bias) t = c.g.op('Add', [t, c.in(bias, bias.dtype)]);
  c.out(y as NDArray, t);
  return undefined;
};

/**
 * attention(q, k, v, scale) = softmax(q·kᵀ·scale)·v: MatMul with k's last two dims transposed, Mul, Softmax on the
 * last axis, MatMul (opset 17 has no Attention op: it came in opset 23).
 */
const attention: CallMapping = (c, args, y) => {
  const [q, k, v, scale] = args as [NDArray, NDArray, NDArray, number];
  const r = k.shape.length;
  const perm = [...k.shape.keys()].map((i) => (i < r - 2 ? i : 2 * r - 3 - i));
  const kt = c.g.op('Transpose', [c.in(k, k.dtype)], { perm });
  const scores = c.g.op('Mul', [c.g.op('MatMul', [c.in(q, q.dtype), kt]), c.g.scalar(scale, elemType(q.dtype))]);
  const p = c.g.op('Softmax', [scores], { axis: -1 });
  c.out(y as NDArray, c.g.op('MatMul', [p, c.in(v, v.dtype)]));
  return undefined;
};

const conv: CallMapping = (c, args, y) => {
  const [x, w, o = {}] = args as [NDArray, NDArray, Record<string, unknown> | undefined];
  const r = x.shape.length - 2;
  const inputs = [c.in(x, x.dtype), c.in(w, w.dtype)];
  if (o.bias) inputs.push(c.in(o.bias as NDArray, 'float32'));
  const attrs = {
    kernel_shape: w.shape.slice(2),
    strides: perAxis(o.stride as PerAxis, r, 1),
    dilations: perAxis(o.dilation as PerAxis, r, 1),
    group: (o.groups as number | undefined) ?? 1,
    ...padding(o.padding as Padding, r),
  };
  c.out(y as NDArray, c.g.op('Conv', inputs, attrs));
  return undefined;
};

const pool =
  (op: 'MaxPool' | 'AveragePool'): CallMapping =>
  (c, args, y) => {
    const [x, o] = args as [NDArray, Record<string, unknown>];
    const r = x.shape.length - 2;
    const kernel = perAxis(o.kernelSize as PerAxis, r, 1);
    const dilations = perAxis(o.dilation as PerAxis, r, 1);
    const attrs: Record<string, number | number[] | string> = {
      kernel_shape: kernel,
      strides: o.stride === undefined ? kernel : perAxis(o.stride as PerAxis, r, 1),
      ceil_mode: o.ceilMode ? 1 : 0,
      ...padding(o.padding as Padding, r),
    };
    if (op === 'MaxPool') attrs.dilations = dilations;
    else if (dilations.some((d) => d !== 1)) return 'avgPool with dilation (AveragePool takes it from opset 19)';
    else attrs.count_include_pad = o.countIncludePad === false ? 0 : 1;
    c.out(y as NDArray, c.g.op(op, [c.in(x, x.dtype)], attrs));
    return undefined;
  };

const layerNorm: CallMapping = (c, args, res) => {
  const [x, w, b, o = {}] = args as [NDArray, NDArray | null, NDArray | null, { eps?: number; dims?: number }];
  const { y, mean, rstd } = res as { y: NDArray; mean: NDArray; rstd: NDArray };
  const dims = o.dims ?? 1;
  const trailing = x.shape.slice(x.shape.length - dims);
  const scale = w ? c.in(w, w.dtype) : c.g.op('Expand', [c.g.scalar(1, elemType(x.dtype)), c.g.int64(trailing)]);
  const inputs = [c.in(x, x.dtype), scale, ...(b ? [c.in(b, b.dtype)] : [])];
  const [ny, nm, nr] = c.g.node('LayerNormalization', inputs, { axis: -dims, epsilon: { f: o.eps ?? 1e-5 } }, 3);
  c.out(y, ny!);
  c.out(mean, nm!);
  c.out(rstd, nr!);
  return undefined;
};

const softmax =
  (op: 'Softmax' | 'LogSoftmax'): CallMapping =>
  (c, args, y) => {
    const [x, axis = -1] = args as [NDArray, number | undefined];
    c.out(y as NDArray, c.g.op(op, [c.in(x, x.dtype)], { axis }));
    return undefined;
  };

/** ReduceSum (axes an input since opset 13) or ReduceMax/Min/Prod/Mean/LogSumExp (an attribute until opset 18). */
function reduce(c: ExportContext, op: string, x: NDArray, axesArg: unknown, keep: unknown, y: NDArray): undefined {
  const axes = axesOf(axesArg, x.shape.length);
  const keepdims = keep ? 1 : 0;
  const t = c.in(x, x.dtype);
  let out: string;
  if (axes !== null && axes.length === 0) out = c.g.op('Identity', [t]);
  else if (op === 'ReduceSum') out = c.g.op(op, axes ? [t, c.g.int64(axes)] : [t], { keepdims });
  else out = c.g.op(op, [t], axes ? { axes, keepdims } : { keepdims });
  c.out(y, out);
  return undefined;
}

const REDUCE: Record<string, string> = {
  sum: 'ReduceSum',
  max: 'ReduceMax',
  min: 'ReduceMin',
  prod: 'ReduceProd',
  mean: 'ReduceMean',
  logsumexp: 'ReduceLogSumExp',
};

const reduceMethod =
  (m: string): CallMapping =>
  (c, args, y) => {
    const [x, axes, keep] = args as [NDArray, unknown, unknown];
    return reduce(c, REDUCE[m]!, x, axes, keep, y as NDArray);
  };

const reduceOp: CallMapping = (c, args, y) => {
  const [op, x, axes, keep] = args as [string, NDArray, unknown, unknown];
  if (!REDUCE[op]) return `reduce:${op} (no ONNX form)`;
  return reduce(c, REDUCE[op], x, axes, keep, y as NDArray);
};

const pad: CallMapping = (c, args, y) => {
  const [x, pads, value = 0, mode = 'constant'] = args as [
    NDArray,
    readonly (readonly [number, number])[],
    number,
    string,
  ];
  if (mode !== 'constant' && mode !== 'edge' && mode !== 'reflect') return `pad in mode '${mode}' (opset 19)`;
  const inputs = [c.in(x, x.dtype), c.g.int64([...pads.map((p) => p[0]), ...pads.map((p) => p[1])])];
  if (mode === 'constant') inputs.push(c.g.scalar(value, elemType(x.dtype)));
  c.out(y as NDArray, c.g.op('Pad', inputs, { mode }));
  return undefined;
};

const concat: CallMapping = (c, args, y) => {
  const [xs, axis = 0] = args as [readonly NDArray[], number | undefined];
  c.out(
    y as NDArray,
    c.g.op(
      'Concat',
      xs.map((x) => c.in(x, x.dtype)),
      { axis },
    ),
  );
  return undefined;
};

const stack: CallMapping = (c, args, y) => {
  const [xs, axis = 0] = args as [readonly NDArray[], number | undefined];
  const out = y as NDArray;
  const ax = axis < 0 ? axis + out.shape.length : axis;
  const parts = xs.map((x) => c.g.op('Unsqueeze', [c.in(x, x.dtype), c.g.int64([ax])]));
  c.out(out, c.g.op('Concat', parts, { axis: ax }));
  return undefined;
};

const cast: CallMapping = (c, args, y) => {
  const [x, dtype] = args as [NDArray, DType];
  if (isFloat(x.dtype) && !isFloat(dtype) && dtype !== 'bool') return `cast ${x.dtype} → ${dtype} (HAL saturates)`;
  c.out(y as NDArray, c.g.op('Cast', [c.in(x, x.dtype)], { to: elemType(dtype) }));
  return undefined;
};

const where: CallMapping = (c, args, y) => {
  const [cond, a, b] = args as [NDArray, Operand, Operand];
  const out = y as NDArray;
  c.out(out, c.g.op('Where', [c.in(cond, cond.dtype), c.in(a, out.dtype), c.in(b, out.dtype)]));
  return undefined;
};

/** contiguous and a reshape that copies: the view's expression is the result. */
const copy: CallMapping = (c, args, y) => {
  const out = y as NDArray;
  c.out(out, c.in(args[0] as NDArray, out.dtype), (args[0] as NDArray).shape);
  return undefined;
};

const full: CallMapping = (c, args, y) => {
  const [shape, value] = args as [readonly number[], number];
  const out = y as NDArray;
  const s = c.g.scalar(value, elemType(out.dtype));
  c.out(out, shape.length ? c.g.op('Expand', [s, c.g.int64(shape)]) : s, shape);
  return undefined;
};

const fromArray: CallMapping = (c, args, y) => {
  const [data] = args as [ArrayLike<number>];
  const out = y as NDArray;
  c.out(out, c.g.initializer('constant', elemType(out.dtype), out.shape, Array.from(data, Number)));
  return undefined;
};

const cumsum: CallMapping = (c, args, y) => {
  const [x, axis, o = {}] = args as [NDArray, number, { exclusive?: boolean; reverse?: boolean }];
  const attrs = { exclusive: o.exclusive ? 1 : 0, reverse: o.reverse ? 1 : 0 };
  c.out(y as NDArray, c.g.op('CumSum', [c.in(x, x.dtype), c.g.scalar(axis, 7)], attrs));
  return undefined;
};

/** Method → mapping of the methods above (the elementwise ones are in map-elementwise.ts). */
export const OP_MAPPINGS: Readonly<Record<string, CallMapping>> = {
  matmul,
  attention,
  conv,
  maxPool: pool('MaxPool'),
  avgPool: pool('AveragePool'),
  layerNorm,
  softmax: softmax('Softmax'),
  logSoftmax: softmax('LogSoftmax'),
  reduce: reduceOp,
  sum: reduceMethod('sum'),
  max: reduceMethod('max'),
  min: reduceMethod('min'),
  prod: reduceMethod('prod'),
  mean: reduceMethod('mean'),
  logsumexp: reduceMethod('logsumexp'),
  pad,
  concat,
  stack,
  cast,
  where,
  cumsum,
  contiguous: copy,
  reshape: copy,
  full,
  fromArray,
};
