// Bad-argument cases of the loss functions (hal/src/families/loss/losses.ts) for validation.test.ts: each call must
// throw its typed error naming the words given, allocate nothing and change no array. The fixture's x
// is float32 [2, 3] (N = 2, C = 3), xi int32 [2, 3].
import { type ComputeBackend, DTypeError, InvalidArgumentError, type NDArray, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

/** int32 labels [2] (a view of xi's first column: no allocation). */
const labels = (be: ComputeBackend, xi: NDArray): NDArray =>
  be.reshape(
    be.shrink(xi, [
      [0, 2],
      [0, 1],
    ]),
    [2],
  );
/** float32 [3] (a view of x's first row). */
const row = (be: ComputeBackend, x: NDArray): NDArray =>
  be.reshape(
    be.shrink(x, [
      [0, 1],
      [0, 3],
    ]),
    [3],
  );

export const LOSS_BAD: Bad[] = [
  ['nllLoss', ({ be, x, y }) => be.nllLoss(x, y), DTypeError, ['nllLoss', 'labels', 'int32']],
  ['nllLoss', ({ be, xi }) => be.nllLoss(xi, labels(be, xi)), DTypeError, ['nllLoss', 'logProbs', 'float32']],
  ['nllLoss', ({ be, x, xi }) => be.nllLoss(x, xi), ShapeMismatchError, ['nllLoss', 'labels', '[2, 3]', '[2]']],
  ['nllLoss', ({ be, x, xi }) => be.nllLoss(row(be, x), xi), ShapeMismatchError, ['nllLoss', 'rank ≥ 2']],
  [
    'nllLoss',
    ({ be, x, xi }) => be.nllLoss(x, labels(be, xi), { weight: be.reshape(x, [6]) }),
    ShapeMismatchError,
    ['nllLoss', 'weight', '[3]', '[6]'],
  ],
  [
    'nllLoss',
    ({ be, x, xi }) => be.nllLoss(x, labels(be, xi), { weight: labels(be, xi) }),
    DTypeError,
    ['nllLoss', 'weight', 'int32'],
  ],
  [
    'nllLoss',
    ({ be, x, xi }) => be.nllLoss(x, labels(be, xi), { reduction: any('avg') }),
    InvalidArgumentError,
    ['nllLoss', 'reduction', "'avg'"],
  ],
  [
    'nllLoss',
    ({ be, x, xi }) => be.nllLoss(x, labels(be, xi), { ignoreIndex: 1.5 }),
    InvalidArgumentError,
    ['nllLoss', 'ignoreIndex', '1.5'],
  ],
  [
    'nllLoss',
    ({ be, x, xi }) => be.nllLoss(x, labels(be, xi), any({ labelSmoothing: 0.1 })),
    InvalidArgumentError,
    ['nllLoss', "unknown option 'labelSmoothing'"],
  ],
  ['nllLoss', ({ be, x }) => be.nllLoss(x, any(null)), InvalidArgumentError, ['nllLoss', 'labels', 'null']],
  [
    'crossEntropy',
    ({ be, x, xi }) => be.crossEntropy(x, labels(be, xi), { labelSmoothing: 1.5 }),
    InvalidArgumentError,
    ['crossEntropy', 'labelSmoothing', '1.5'],
  ],
  ['crossEntropy', ({ be, x, y }) => be.crossEntropy(x, y), DTypeError, ['crossEntropy', 'labels', 'float32']],
  ['crossEntropy', ({ be, x, xi }) => be.crossEntropy(x, xi), ShapeMismatchError, ['crossEntropy', 'labels']],
  [
    'crossEntropy',
    ({ be, x, xi }) => be.crossEntropy(x, labels(be, xi), any('mean')),
    InvalidArgumentError,
    ['crossEntropy', 'options', "'mean'"],
  ],
  [
    'binaryCrossEntropyWithLogits',
    ({ be, x, xi }) => be.binaryCrossEntropyWithLogits(x, xi),
    DTypeError,
    ['binaryCrossEntropyWithLogits', 'targets', 'int32'],
  ],
  [
    'binaryCrossEntropyWithLogits',
    ({ be, x, y }) => be.binaryCrossEntropyWithLogits(x, be.reshape(y, [3, 2])),
    ShapeMismatchError,
    ['binaryCrossEntropyWithLogits', 'targets', '[3, 2]', '[2, 3]'],
  ],
  [
    'binaryCrossEntropyWithLogits',
    ({ be, x, y }) => be.binaryCrossEntropyWithLogits(x, y, { posWeight: be.reshape(y, [6]) }),
    ShapeMismatchError,
    ['binaryCrossEntropyWithLogits', 'posWeight', '[6]', 'broadcast'],
  ],
  [
    'binaryCrossEntropyWithLogits',
    ({ be, x, y }) => be.binaryCrossEntropyWithLogits(x, y, { weight: be.reshape(y, [1, 2, 3]) }),
    ShapeMismatchError,
    ['binaryCrossEntropyWithLogits', 'weight', '[1, 2, 3]'],
  ],
  [
    'binaryCrossEntropyWithLogits',
    ({ be, x, y }) => be.binaryCrossEntropyWithLogits(x, y, { reduction: any('max') }),
    InvalidArgumentError,
    ['binaryCrossEntropyWithLogits', 'reduction', "'max'"],
  ],
];
