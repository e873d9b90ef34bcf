/**
 * How a case of each op of the table's ARRAY_OP_DEFS (movement, matmul, composites, optimizer steps;
 * hal/src/ops/array-ops.ts) runs on a backend and on the float64 oracle. Typed against the table: an
 * entry without a runner here does not compile. Elementwise ops and reductions need none — their
 * entries carry their float64 references and the runner calls them generically.
 */
import type { ArrayOp, ComputeBackend, ElementwiseStep, NDArray } from '@polyhal/hal';
import type { Case } from './cases.js';
import {
  oAdamStep,
  oCast,
  oLogsumexp,
  oMatmul,
  oMatmulBias,
  oPad,
  oPermute,
  oReduce,
  oReshape,
  oShrink,
  oSoftmax,
  oSoftmaxCrossEntropy,
  oSgdStep,
  oExpand,
  oStride,
  type Ref,
} from './oracle.js';
import { RANDOM_OP_RUNNERS } from './random-runners.js';
import { oHostValue } from './oracle-dtype.js';
import { LOSS_OP_RUNNERS } from './cases-loss.js';
import { CONV_OP_RUNNERS } from './cases-conv.js';
import { caseSteps, oFusedElementwise } from './cases-fused.js';
import { LOGIC_OP_RUNNERS } from './cases-logic.js';
import { SCAN_OP_RUNNERS } from './cases-scan.js';
import { QUANT_OP_RUNNERS } from './cases-quant.js';
import { QUANT_CONV_OP_RUNNERS } from './cases-quant-conv.js';
import { SCATTER_OP_RUNNERS } from './cases-scatter.js';
import { NORM_OP_RUNNERS } from './cases-norm.js';
import { AMP_OP_RUNNERS } from './cases-amp.js';
import { ATTENTION_OP_RUNNERS } from './cases-attention.js';
import { oArgExtreme, oGather, oOneHot, oScatterAdd } from './oracle-index.js';
import { oConcat, oFlip, oPadMode, oSplit, oStack, oTile, oTrilu } from './oracle-layout.js';

type Params = NonNullable<Case['params']>;

export interface OpRunner {
  /** Runs the op on the device: the arrays to read (views allowed). */
  device(be: ComputeBackend, xs: NDArray[], p: Params): NDArray[];
  /** The oracle's results, one per device output. */
  oracle(xs: Ref[], p: Params): Ref[];
}

/** reshape's shape with its −1 resolved. */
const resolve = (shape: number[], n: number): number[] => {
  const known = shape.filter((d) => d !== -1).reduce((q, d) => q * d, 1);
  return shape.map((d) => (d === -1 ? n / known : d));
};

export const ARRAY_OP_RUNNERS = {
  reshape: {
    device: (be, [a], p) => [be.reshape(a!, p.shape!)],
    oracle: ([a], p) => [oReshape(a!, resolve(p.shape!, a!.data.length))],
  },
  permute: { device: (be, [a], p) => [be.permute(a!, p.perm!)], oracle: ([a], p) => [oPermute(a!, p.perm!)] },
  expand: { device: (be, [a], p) => [be.expand(a!, p.shape!)], oracle: ([a], p) => [oExpand(a!, p.shape!)] },
  shrink: { device: (be, [a], p) => [be.shrink(a!, p.bounds!)], oracle: ([a], p) => [oShrink(a!, p.bounds!)] },
  stride: { device: (be, [a], p) => [be.stride(a!, p.steps!)], oracle: ([a], p) => [oStride(a!, p.steps!)] },
  pad: {
    device: (be, [a], p) => [be.pad(a!, p.pads!, p.value, p.mode)],
    oracle: ([a], p) => [
      !p.mode || p.mode === 'constant'
        ? oPad(a!, p.pads!, oHostValue(a!.dtype, p.value ?? 0))
        : oPadMode(a!, p.pads!, p.mode),
    ],
  },
  contiguous: { device: (be, [a]) => [be.contiguous(a!)], oracle: ([a]) => [a!] },
  cast: { device: (be, [a], p) => [be.cast(a!, p.dtype!)], oracle: ([a], p) => [oCast(a!, p.dtype!)] },
  matmul: {
    device: (be, [a, b, bias]) => [be.matmul(a!, b!, bias)],
    oracle: ([a, b, bias]) => [bias ? oMatmulBias(oMatmul(a!, b!), bias) : oMatmul(a!, b!)],
  },
  mean: {
    device: (be, [a], p) => [be.mean(a!, p.axes, p.keepdims)],
    oracle: ([a], p) => [oReduce('mean', a!, p.axes ?? a!.shape.map((_, i) => i), p.keepdims ?? false)],
  },
  softmax: { device: (be, [a], p) => [be.softmax(a!, p.axis)], oracle: ([a]) => [oSoftmax(a!, false)] },
  logSoftmax: { device: (be, [a], p) => [be.logSoftmax(a!, p.axis)], oracle: ([a]) => [oSoftmax(a!, true)] },
  logsumexp: {
    device: (be, [a], p) => [be.logsumexp(a!, p.axes, p.keepdims)],
    oracle: ([a], p) => [oLogsumexp(a!, p.axes, p.keepdims ?? false)],
  },
  fusedElementwise: {
    device: (be, ins, p) => [be.fusedElementwise(ins[0]!, caseSteps(p.chain!, ins) as ElementwiseStep[])],
    oracle: (ins, p) => [oFusedElementwise(ins[0]!, p.chain!, ins)],
  },
  softmaxCrossEntropy: {
    device: (be, [a, b], p) => {
      const { loss, grad } = be.softmaxCrossEntropy(a!, b!, p.withGrad);
      return grad ? [loss, grad] : [loss];
    },
    oracle: ([a, b], p) => {
      const loss = oSoftmaxCrossEntropy(a!, b!);
      if (!p.withGrad) return [loss];
      const sm = oSoftmax(a!, false);
      return [loss, { ...sm, data: sm.data.map((v, i) => v - b!.data[i]!), scale: undefined }];
    },
  },
  adamStep: {
    device: (be, xs, p) => {
      be.adamStep(xs[0]!.buffer, xs[1]!, xs[2]!.buffer, xs[3]!.buffer, p.hyper! as never);
      return [xs[0]!, xs[2]!, xs[3]!];
    },
    oracle: (xs, p) => oAdamStep(xs[0]!, xs[1]!, xs[2]!, xs[3]!, p.hyper!),
  },
  sgdStep: {
    device: (be, xs, p) => {
      const momentum = p.hyper!['momentum'];
      be.sgdStep(xs[0]!.buffer, xs[1]!, momentum ? xs[2]!.buffer : null, p.hyper! as never);
      return momentum ? [xs[0]!, xs[2]!] : [xs[0]!];
    },
    oracle: (xs, p) => oSgdStep(xs[0]!, xs[1]!, xs[2]!, p.hyper!),
  },
  concat: { device: (be, xs, p) => [be.concat(xs, p.axis)], oracle: (xs, p) => [oConcat(xs, p.axis ?? 0)] },
  stack: { device: (be, xs, p) => [be.stack(xs, p.axis)], oracle: (xs, p) => [oStack(xs, p.axis ?? 0)] },
  split: {
    device: (be, [a], p) => be.split(a!, p.split!, p.axis),
    oracle: ([a], p) => oSplit(a!, p.split!, p.axis ?? 0),
  },
  tile: { device: (be, [a], p) => [be.tile(a!, p.reps!)], oracle: ([a], p) => [oTile(a!, p.reps!)] },
  flip: { device: (be, [a], p) => [be.flip(a!, p.axes)], oracle: ([a], p) => [oFlip(a!, p.axes)] },
  trilu: {
    device: (be, [a], p) => [be.trilu(a!, p.k, p.upper)],
    oracle: ([a], p) => [oTrilu(a!, p.k ?? 0, p.upper ?? true)],
  },
  ...RANDOM_OP_RUNNERS,
  ...LOSS_OP_RUNNERS,
  ...CONV_OP_RUNNERS,
  ...LOGIC_OP_RUNNERS,
  ...SCAN_OP_RUNNERS,
  ...QUANT_OP_RUNNERS,
  ...QUANT_CONV_OP_RUNNERS,
  ...SCATTER_OP_RUNNERS,
  ...NORM_OP_RUNNERS,
  ...AMP_OP_RUNNERS,
  ...ATTENTION_OP_RUNNERS,
  gather: {
    device: (be, [x, i], p) => [be.gather(x!, i!, p.axis)],
    oracle: ([x, i], p) => [oGather(x!, i!, p.axis ?? 0)],
  },
  scatterAdd: {
    device: (be, [t, i, u], p) => [be.scatterAdd(t!, i!, u!, p.axis)],
    oracle: ([t, i, u], p) => [oScatterAdd(t!, i!, u!, p.axis ?? 0)],
  },
  oneHot: { device: (be, [i], p) => [be.oneHot(i!, p.depth!)], oracle: ([i], p) => [oOneHot(i!, p.depth!)] },
  argmax: {
    device: (be, [x], p) => [be.argmax(x!, p.axis, p.keepdims ?? false, { lastIndex: p.lastIndex ?? false })],
    oracle: ([x], p) => [oArgExtreme(x!, 'argmax', p.axis, p.keepdims ?? false, p.lastIndex ?? false)],
  },
  argmin: {
    device: (be, [x], p) => [be.argmin(x!, p.axis, p.keepdims ?? false, { lastIndex: p.lastIndex ?? false })],
    oracle: ([x], p) => [oArgExtreme(x!, 'argmin', p.axis, p.keepdims ?? false, p.lastIndex ?? false)],
  },
} satisfies Record<ArrayOp, OpRunner>;
