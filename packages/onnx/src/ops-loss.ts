/**
 * ONNX losses on the HAL's loss composites (hal/src/families/loss/losses.ts): NegativeLogLikelihoodLoss on nllLoss and
 * SoftmaxCrossEntropyLoss on crossEntropy (its optional second output, log_prob, is logSoftmax along
 * dim 1). Both are PyTorch's rules, which ONNX's reference implementations follow: ignored targets give
 * 0 and no weight, 'mean' divides by the weights of the targets kept. The labels (int64) are host
 * inputs: a label outside [0, C) that is not ignore_index is an error in ONNX (its reference clips the
 * weight index and reads out of bounds), so such a test is not expressible rather than the HAL's NaN.
 */
import type { LossReduction, NDArray } from '@polyhal/hal';
import { NotExpressible, type NodeContext, type OpMapping } from './table.js';

/** The options and the checked int32 labels of a node: reduction, ignore_index, labels within [0, C) or ignored. */
function plan(ctx: NodeContext, op: string) {
  const shape = ctx.inputShapes[0]!;
  if (shape.length < 2) throw new NotExpressible('input', `${op}: scores of rank ${shape.length} (need [N, C, …])`);
  const reduction = ctx.attrs.string('reduction', 'mean') as LossReduction;
  if (reduction !== 'none' && reduction !== 'sum' && reduction !== 'mean')
    throw new NotExpressible('attribute', `${op}: reduction '${reduction}'`);
  const ignoreIndex = ctx.attrs.has('ignore_index') ? ctx.attrs.int('ignore_index', 0) : undefined;
  if (ignoreIndex !== undefined && !(ignoreIndex >= -(2 ** 31) && ignoreIndex < 2 ** 31))
    throw new NotExpressible('attribute', `${op}: ignore_index ${ignoreIndex} beyond int32`);
  const values = ctx.numbers(1);
  if (values === undefined) throw new NotExpressible('input', `${op}: no labels`);
  const C = shape[1]!;
  if (values.some((v) => v !== ignoreIndex && !(v >= 0 && v < C)))
    throw new NotExpressible('input', `${op}: a label outside [0, ${C}) that is not ignore_index (undefined in ONNX)`);
  const labels = Int32Array.from(values);
  const labelShape = [...ctx.inputShapes[1]!];
  // The HAL's default ignoreIndex (−100) never matches here: every label was checked in range.
  const options = (weight: NDArray | undefined) => ({ reduction, weight, ignoreIndex: ignoreIndex ?? -100 });
  return { labels, labelShape, options };
}

const nllLoss: OpMapping = {
  host: [1],
  plan: (ctx) => {
    const { labels, labelShape, options } = plan(ctx, 'NegativeLogLikelihoodLoss');
    return (be, [x, , w]) => [be.nllLoss(x!, be.fromArray(labels, labelShape, 'int32'), options(w))];
  },
};

const softmaxCrossEntropyLoss: OpMapping = {
  host: [1],
  plan: (ctx) => {
    const { labels, labelShape, options } = plan(ctx, 'SoftmaxCrossEntropyLoss');
    const logProb = ctx.node.outputs.length > 1 && ctx.node.outputs[1] !== '';
    return (be, [x, , w]) => {
      const loss = be.crossEntropy(x!, be.fromArray(labels, labelShape, 'int32'), options(w));
      return logProb ? [loss, be.logSoftmax(x!, 1)] : [loss];
    };
  },
};

export const LOSS_OPS: Record<string, OpMapping> = {
  NegativeLogLikelihoodLoss: nllLoss,
  SoftmaxCrossEntropyLoss: softmaxCrossEntropyLoss,
};
