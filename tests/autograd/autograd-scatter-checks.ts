// Gradient checks of scatter, scatterAdd, gatherND, scatterND and scatterElements (autograd
// indexing-nd.ts) for autograd.test.ts: duplicate indices (only the last write of a position gets
// its gradient under replace; all of them under add), negative ones, and ones out of range (dropped
// updates get no gradient; a gathered fill is cut away before the loss).
import * as ag from '@polyhal/autograd';
import { type GradCheckInput, Tensor } from '@polyhal/autograd';
import { mulberry32 } from '@polyhal/hal';
import type { Check } from './gradchecks.js';

const ints = (x: Tensor, values: number[], shape: number[]): Tensor =>
  Tensor.fromArray(x.backend, values, shape, { dtype: 'int32' });

/**
 * The checks. Their inputs come from a generator of their own, in [−2, 2], so that the checks after
 * them in autograd.test.ts draw the values they always drew.
 */
export function scatterChecks(): Check[] {
  const rng = mulberry32(7);
  const inp = (shape: number[]): GradCheckInput => ({
    shape,
    values: Array.from({ length: shape.reduce((p, d) => p * d, 1) }, () => -2 + 4 * rng()),
  });
  return [
    [
      'scatter (replace: positions 2, 2, 0, 2 and one out of range)',
      ([t, u]) => ag.scatter(t!, ints(t!, [2, -2, 0, 2, 7], [5]), u!, 0),
      [inp([4, 3]), inp([5, 3])],
    ],
    [
      'scatter (add, axis 1, duplicates and out of range)',
      ([t, u]) => ag.scatter(t!, ints(t!, [4, -1, 0, 9], [2, 2]), u!, 1, 'add'),
      [inp([2, 5]), inp([2, 2, 2])],
    ],
    [
      'scatterAdd (axis −1)',
      ([t, u]) => ag.scatterAdd(t!, ints(t!, [1, 1, -3], [3]), u!, -1),
      [inp([2, 3]), inp([2, 3])],
    ],
    [
      'gatherND (tuples of 2, a duplicate and a negative one)',
      ([x]) => ag.gatherND(x!, ints(x!, [1, -1, 0, 2, 1, 3], [3, 2])),
      [inp([3, 4, 2])],
    ],
    ['gatherND (batchDims 1)', ([x]) => ag.gatherND(x!, ints(x!, [2, -1, 0, 0], [2, 2, 1]), 1), [inp([2, 3, 4])]],
    [
      'gatherND (a tuple out of range, cut away)',
      ([x]) => ag.gatherND(x!, ints(x!, [0, 1, 2, -4, 5, 0], [3, 2])).shrink([[0, 2]]),
      [inp([3, 4])],
    ],
    [
      'scatterND (replace: rows 1, 3, 1 and one out of range)',
      ([t, u]) => ag.scatterND(t!, ints(t!, [1, 3, -3, 9], [4, 1]), u!),
      [inp([4, 3]), inp([4, 3])],
    ],
    [
      'scatterND (add, whole tuples, a duplicate)',
      ([t, u]) => ag.scatterND(t!, ints(t!, [0, 1, 2, -1, 0, 1], [3, 2]), u!, 'add'),
      [inp([3, 4]), inp([3])],
    ],
    [
      'scatterElements (replace, axis 0, a duplicate and one out of range)',
      ([t, u]) => ag.scatterElements(t!, ints(t!, [1, 2, 0, -1, 1, 0, 5, 2], [2, 4]), u!, 0),
      [inp([3, 4]), inp([2, 4])],
    ],
    [
      'scatterElements (add, axis 1)',
      ([t, u]) => ag.scatterElements(t!, ints(t!, [0, 4, 4, -1, 2, 0], [2, 3]), u!, 1, 'add'),
      [inp([2, 5]), inp([2, 3])],
    ],
  ];
}
