// The gradient checks of the losses (reductions, weights, ignoreIndex, label smoothing, class probabilities):
// autograd-losses.test.ts checks them against central differences on every backend; compile-gradchecks.test.ts
// checks compiled gradients against eager ones bit for bit.
import * as ag from '@polyhal/autograd';
import { type GradCheckInput, Tensor } from '@polyhal/autograd';
import { mulberry32 } from '@polyhal/hal';
import type { Check } from './gradchecks.js';

const rng = mulberry32(11);
const inp = (shape: number[], lo = -2, hi = 2): GradCheckInput => ({
  shape,
  values: Array.from({ length: shape.reduce((p, d) => p * d, 1) }, () => lo + (hi - lo) * rng()),
});
/** int32 labels on the backend of `like` (constants of the checked function). */
const labels = (like: Tensor, values: number[], shape = [values.length]): Tensor =>
  Tensor.fromArray(like.backend, values, shape, { dtype: 'int32' });
const consts = (like: Tensor, values: number[], shape = [values.length]): Tensor =>
  Tensor.fromArray(like.backend, values, shape);

const W4 = [0.5, 2, 1, 1.5];
const L5 = [0, 3, -1, 2, 1]; // −1 ignored below
const L2x2x2 = [0, 2, 1, -1, 2, 2, 0, 1];

export const LOSS_CHECKS: Check[] = [];
for (const reduction of ['none', 'sum', 'mean'] as const) {
  LOSS_CHECKS.push(
    [
      `nllLoss (${reduction}, weight, ignoreIndex)`,
      ([x]) => ag.nllLoss(x!, labels(x!, L5), { weight: consts(x!, W4), ignoreIndex: -1, reduction }),
      [inp([5, 4], -3, 0)],
    ],
    [
      `crossEntropy (${reduction}, weight, ignoreIndex)`,
      ([x]) => ag.crossEntropy(x!, labels(x!, L5), { weight: consts(x!, W4), ignoreIndex: -1, reduction }),
      [inp([5, 4])],
    ],
    [
      `crossEntropy (${reduction}, [N, C, d1, d2], labelSmoothing 0.2)`,
      ([x]) => ag.crossEntropy(x!, labels(x!, L2x2x2, [2, 2, 2]), { ignoreIndex: -1, labelSmoothing: 0.2, reduction }),
      [inp([2, 3, 2, 2])],
    ],
    [
      `binaryCrossEntropyWithLogits (${reduction})`,
      ([x, y]) => ag.binaryCrossEntropyWithLogits(x!, y!, { reduction }),
      [inp([3, 4], -4, 4), inp([3, 4], 0, 1)],
    ],
    [
      `binaryCrossEntropyWithLogits (${reduction}, weight [4], posWeight [3, 1])`,
      ([x, y]) =>
        ag.binaryCrossEntropyWithLogits(x!, y!, {
          weight: consts(x!, W4),
          posWeight: consts(x!, [3, 0.5, 1.5], [3, 1]),
          reduction,
        }),
      [inp([3, 4], -4, 4), inp([3, 4], 0, 1)],
    ],
  );
}
LOSS_CHECKS.push(
  [
    'nllLoss ([N, C, d1], smoothing-free, default ignoreIndex)',
    ([x]) => ag.nllLoss(x!, labels(x!, [1, -100, 0, 2, 2, 1], [2, 3])),
    [inp([2, 3, 3], -3, 0)],
  ],
  [
    'crossEntropy with class probabilities (sum)',
    ([x, y]) => ag.crossEntropy(x!, ag.softmax(y!, -1), { reduction: 'sum' }),
    [inp([3, 4]), inp([3, 4])],
  ],
);
