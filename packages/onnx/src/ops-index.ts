/**
 * ONNX index ops on the HAL's gather, oneHot, gatherND, scatterND and scatterElements
 * (hal/src/families/indexing/indexing.ts, indexing-nd.ts). Indices (int64, or float for
 * OneHot) are host inputs: read as numbers, checked to fit int32, uploaded as int32. Gather and
 * GatherElements need indices in range (ONNX leaves others undefined), so one out of range is not
 * expressible rather than the HAL's NaN fill.
 */
import type { ScatterReduction } from '@polyhal/hal';
import { type Contract, NotExpressible, normAxis, type NodeContext, type OpMapping } from './table.js';

const FI = ['float32', 'int32'] as const;
const EXACT = { kind: 'exact' } as const;

/** Host input i as int32 indices, each in [−dim, dim) when `dim` is given. */
function indicesOf(ctx: NodeContext, i: number, dim?: number): Int32Array {
  const v = ctx.numbers(i);
  if (v === undefined) throw new NotExpressible('input', `${ctx.node.opType}: no indices input`);
  const lo = dim === undefined ? -(2 ** 31) : -dim;
  const hi = dim === undefined ? 2 ** 31 : dim;
  if (v.some((x) => !(x >= lo && x < hi)))
    throw new NotExpressible('input', `${ctx.node.opType}: an index outside [${lo}, ${hi})`);
  return Int32Array.from(v, Math.trunc);
}

/** Gather: x's slices along `axis` at the indices (output x.shape[:axis] + indices.shape + x.shape[axis+1:]). */
const gather: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axis = normAxis(ctx.attrs.int('axis', 0), shape.length, 'Gather');
    const idx = indicesOf(ctx, 1, shape[axis]);
    const idxShape = [...ctx.inputShapes[1]!];
    return (be, [x]) => [be.gather(x!, be.fromArray(idx, idxShape, 'int32'), axis)];
  },
};

/**
 * GatherElements: out[i] = x[i with its `axis` coordinate replaced by indices[i]] — a gather of the
 * flattened x at flat positions computed on the host from the (host) indices.
 */
const gatherElements: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const idxShape = [...ctx.inputShapes[1]!];
    const r = shape.length;
    const axis = normAxis(ctx.attrs.int('axis', 0), r, 'GatherElements');
    if (idxShape.length !== r) throw new NotExpressible('input', 'GatherElements: indices of another rank');
    const idx = indicesOf(ctx, 1, shape[axis]);
    const strides = shape.map((_, k) => shape.slice(k + 1).reduce((p, d) => p * d, 1));
    const flat = new Int32Array(idx.length);
    for (let e = 0; e < idx.length; e++) {
      let rest = e;
      let f = 0;
      for (let k = r - 1; k >= 0; k--) {
        const c = rest % idxShape[k]!;
        rest = Math.floor(rest / idxShape[k]!);
        if (k !== axis && c >= shape[k]!) throw new NotExpressible('input', 'GatherElements: indices wider than x');
        f += (k === axis ? (idx[e]! < 0 ? idx[e]! + shape[k]! : idx[e]!) : c) * strides[k]!;
      }
      flat[e] = f;
    }
    const n = shape.reduce((p, d) => p * d, 1);
    return (be, [x]) => [be.gather(be.reshape(x!, [n]), be.fromArray(flat, idxShape, 'int32'), 0)];
  },
};

/**
 * OneHot(indices, depth, values = [off, on]), axis (default −1) where the new dim goes: the HAL's
 * oneHot (indices outside [−depth, depth) give off everywhere, as ONNX says), then on·h + off·(1 − h),
 * exact (each term is 0 or a value), in the output's dtype.
 */
const oneHot: OpMapping = {
  host: [0, 1, 2],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const idxShape = [...ctx.inputShapes[0]!];
    const r = idxShape.length + 1;
    let axis = ctx.attrs.int('axis', -1);
    if (!Number.isInteger(axis) || axis < -r || axis >= r)
      throw new NotExpressible('attribute', `OneHot: axis ${axis} out of range for rank ${r}`);
    if (axis < 0) axis += r;
    const idx = indicesOf(ctx, 0);
    const depth = Math.trunc(ctx.numbers(1)?.[0] ?? Number.NaN);
    const [off, on] = ctx.numbers(2) ?? [];
    if (!(depth >= 1) || off === undefined || on === undefined)
      throw new NotExpressible('input', 'OneHot: depth < 1 or values without two entries');
    const to = ctx.outputTypes[0] === 'int32' ? 'int32' : 'float32';
    const perm = [
      ...Array.from({ length: axis }, (_, i) => i),
      r - 1,
      ...Array.from({ length: r - 1 - axis }, (_, i) => axis + i),
    ];
    return (be) => {
      let h = be.oneHot(be.fromArray(idx, idxShape, 'int32'), depth);
      if (to === 'int32') h = be.cast(h, 'int32');
      return [be.permute(be.add(be.mul(h, on), be.mul(be.sub(1, h), off)), perm)];
    };
  },
};

/** Host input i as int32 index tuples [..., q], component m in [−dims[m], dims[m]) (ONNX leaves others undefined). */
function tuplesOf(ctx: NodeContext, i: number, dims: readonly number[]): Int32Array {
  const idx = indicesOf(ctx, i);
  const shape = ctx.inputShapes[i]!;
  const q = shape[shape.length - 1] ?? 0;
  idx.forEach((v, e) => {
    const n = dims[e % q]!;
    if (!(v >= -n && v < n)) throw new NotExpressible('input', `${ctx.node.opType}: an index outside [${-n}, ${n})`);
  });
  return idx;
}

/** The reduction attribute of ScatterND and ScatterElements (opset 16+): none, add or mul. */
function reductionOf(ctx: NodeContext): ScatterReduction {
  const r = ctx.attrs.string('reduction', 'none');
  if (r !== 'none' && r !== 'add' && r !== 'mul')
    throw new NotExpressible('attribute', `${ctx.node.opType}: reduction '${r}'`);
  return r;
}

/** Replace is a selection (exact); add and mul are held to the HAL op's tolerance. */
const scatterContract =
  (op: string) =>
  (ctx: NodeContext): Contract =>
    reductionOf(ctx) === 'none' ? EXACT : { kind: 'hal', op };

/** GatherND(data, indices), batch_dims: the HAL's gatherND. */
const gatherND: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const idxShape = [...ctx.inputShapes[1]!];
    const b = ctx.attrs.int('batch_dims', 0);
    if (idxShape.length === 0 || b < 0 || b >= idxShape.length)
      throw new NotExpressible('attribute', `GatherND: batch_dims ${b} for indices of rank ${idxShape.length}`);
    const idx = tuplesOf(ctx, 1, shape.slice(b));
    return (be, [x]) => [be.gatherND(x!, be.fromArray(idx, idxShape, 'int32'), b)];
  },
};

/** ScatterND(data, indices, updates), reduction: the HAL's scatterND. */
const scatterND: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: scatterContract('scatterND'),
  plan: (ctx) => {
    const reduction = reductionOf(ctx);
    const idxShape = [...ctx.inputShapes[1]!];
    const idx = tuplesOf(ctx, 1, ctx.inputShapes[0]!);
    return (be, [x, , u]) => [be.scatterND(x!, be.fromArray(idx, idxShape, 'int32'), u!, reduction)];
  },
};

/** ScatterElements(data, indices, updates), axis, reduction (and Scatter, its deprecated alias): scatterElements. */
const scatterElements = (op: string): OpMapping => ({
  host: [1],
  dtypes: FI,
  contract: scatterContract('scatterElements'),
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axis = normAxis(ctx.attrs.int('axis', 0), shape.length, op);
    const reduction = op === 'Scatter' ? 'none' : reductionOf(ctx);
    const idxShape = [...ctx.inputShapes[1]!];
    const idx = indicesOf(ctx, 1, shape[axis]);
    return (be, [x, , u]) => [be.scatterElements(x!, be.fromArray(idx, idxShape, 'int32'), u!, axis, reduction)];
  },
});

/** ArgMax/ArgMin on the HAL's argmax/argmin: axis (default 0), keepdims (default 1), select_last_index. */
const argExtreme = (op: 'argmax' | 'argmin'): OpMapping => ({
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const rank = ctx.inputShapes[0]!.length;
    const axis = ctx.attrs.int('axis', 0);
    if (!Number.isInteger(axis) || axis < -rank || axis >= rank)
      throw new NotExpressible('attribute', `${op}: axis ${axis} out of range for rank ${rank}`);
    const keepdims = ctx.attrs.int('keepdims', 1) !== 0;
    const lastIndex = ctx.attrs.int('select_last_index', 0) !== 0;
    return (be, [x]) => [be[op](x!, axis, keepdims, { lastIndex })];
  },
});

export const INDEX_OPS: Record<string, OpMapping> = {
  ArgMax: argExtreme('argmax'),
  ArgMin: argExtreme('argmin'),
  Gather: gather,
  GatherElements: gatherElements,
  GatherND: gatherND,
  OneHot: oneHot,
  Scatter: scatterElements('Scatter'),
  ScatterElements: scatterElements('ScatterElements'),
  ScatterND: scatterND,
};
