// Bad-argument cases of scatter, gatherND, scatterND and scatterElements (hal/src/families/indexing/indexing.ts,
// indexing-nd.ts) for validation.test.ts: each call must throw its typed error naming the words given,
// allocate nothing and change no array. The fixture's x and y are float32 [2, 3], xi int32 [2, 3].
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

export const SCATTER_BAD: Bad[] = [
  ['scatter', ({ be, x, y }) => be.scatter(x, y, y), DTypeError, ['scatter', 'indices', 'int32']],
  ['scatter', ({ be, x, xi }) => be.scatter(x, xi, xi), DTypeError, ['scatter', 'updates', 'int32']],
  ['scatter', ({ be, x, y, xi }) => be.scatter(x, xi, y, 0), ShapeMismatchError, ['scatter', '[2, 3]', '[2, 3, 3]']],
  ['scatter', ({ be, x, y, xi }) => be.scatter(x, xi, y, -3), InvalidArgumentError, ['axis -3']],
  [
    'scatter',
    ({ be, x, y, xi }) => be.scatter(x, xi, y, 0, any('max')),
    InvalidArgumentError,
    ['scatter', 'reduction', 'max'],
  ],
  ['scatter', ({ be, y, xi }) => be.scatter(any(null), xi, y), InvalidArgumentError, ['scatter', 'target', 'null']],
  ['gatherND', ({ be, x, y }) => be.gatherND(x, y), DTypeError, ['gatherND', 'indices', 'int32']],
  [
    'gatherND',
    ({ be, x, xi }) =>
      be.gatherND(
        x,
        be.reshape(
          be.shrink(xi, [
            [0, 1],
            [0, 1],
          ]),
          [],
        ),
      ),
    InvalidArgumentError,
    ['gatherND', 'rank ≥ 1'],
  ],
  ['gatherND', ({ be, x, xi }) => be.gatherND(x, xi), ShapeMismatchError, ['gatherND', 'tuples of 3', 'rank 2']],
  ['gatherND', ({ be, x, xi }) => be.gatherND(x, xi, 2), InvalidArgumentError, ['gatherND', 'batchDims', '2']],
  [
    'gatherND',
    ({ be, x, xi }) => be.gatherND(x, be.reshape(xi, [3, 2, 1]), 1),
    ShapeMismatchError,
    ['gatherND', 'batch dims'],
  ],
  ['gatherND', ({ be, xi }) => be.gatherND(any(null), xi), InvalidArgumentError, ['gatherND', 'null']],
  ['scatterND', ({ be, x, y }) => be.scatterND(x, y, y), DTypeError, ['scatterND', 'indices', 'int32']],
  ['scatterND', ({ be, x, y, xi }) => be.scatterND(x, xi, y), ShapeMismatchError, ['scatterND', 'tuples of 3']],
  [
    'scatterND',
    ({ be, x, y, xi }) => be.scatterND(x, be.reshape(xi, [6, 1]), y),
    ShapeMismatchError,
    ['scatterND', '[2, 3]', '[6, 3]'],
  ],
  [
    'scatterND',
    ({ be, x, xi }) => be.scatterND(x, be.reshape(xi, [6, 1]), xi),
    DTypeError,
    ['scatterND', 'updates are int32'],
  ],
  [
    'scatterND',
    ({ be, x, y, xi }) => be.scatterND(x, xi, y, any('min')),
    InvalidArgumentError,
    ['scatterND', 'reduction', 'min'],
  ],
  ['scatterElements', ({ be, x, y }) => be.scatterElements(x, y, y), DTypeError, ['scatterElements', 'int32']],
  [
    'scatterElements',
    ({ be, x, y, xi }) => be.scatterElements(x, xi, y, 2),
    InvalidArgumentError,
    ['scatterElements', 'axis', '2'],
  ],
  [
    'scatterElements',
    ({ be, x, y, xi }) => be.scatterElements(x, be.reshape(xi, [6]), y),
    ShapeMismatchError,
    ['scatterElements', 'rank'],
  ],
  [
    'scatterElements',
    ({ be, x, y, xi }) => be.scatterElements(x, be.reshape(xi, [3, 2]), be.reshape(y, [3, 2]), 1),
    ShapeMismatchError,
    ['scatterElements', '[3, 2]', 'no larger'],
  ],
  [
    'scatterElements',
    ({ be, x, xi }) => be.scatterElements(x, xi, xi),
    DTypeError,
    ['scatterElements', 'updates are int32'],
  ],
  [
    'scatterElements',
    ({ be, x, y, xi }) => be.scatterElements(x, xi, y, 0, any('sum')),
    InvalidArgumentError,
    ['scatterElements', 'reduction', 'sum'],
  ],
];
