// Bad-argument cases of cumsum and topk (hal/src/families/scan/scan.ts) for validation.test.ts: each call
// must throw its typed error naming the words given, allocate nothing and change no array. The fixture's x is
// float32 [2, 3].
import { InvalidArgumentError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

export const SCAN_BAD: Bad[] = [
  ['cumsum', ({ be, x }) => be.cumsum(x, 2), InvalidArgumentError, ['cumsum', 'axis 2', 'rank 2']],
  ['cumsum', ({ be, x }) => be.cumsum(x, any(0.5)), InvalidArgumentError, ['cumsum', 'axis']],
  ['cumsum', ({ be, x }) => be.cumsum(x, -3), InvalidArgumentError, ['cumsum', 'axis -3']],
  ['cumsum', ({ be, x }) => be.cumsum(x, 0, { exclusive: any(1) }), InvalidArgumentError, ['exclusive', 'boolean']],
  ['cumsum', ({ be, x }) => be.cumsum(x, 0, { reverse: any('yes') }), InvalidArgumentError, ['reverse', 'boolean']],
  ['cumsum', ({ be }) => be.cumsum(any(null), 0), InvalidArgumentError, ['cumsum', 'x']],
  ['topk', ({ be, x }) => be.topk(x, 4), InvalidArgumentError, ['topk', 'k', '[0, 3]']],
  ['topk', ({ be, x }) => be.topk(x, -1), InvalidArgumentError, ['topk', 'k']],
  ['topk', ({ be, x }) => be.topk(x, any(1.5)), InvalidArgumentError, ['topk', 'k']],
  ['topk', ({ be, x }) => be.topk(x, 1, 2), InvalidArgumentError, ['topk', 'axis 2']],
  ['topk', ({ be, x }) => be.topk(be.reshape(x, [6]), 1, 0, { largest: any(0) }), InvalidArgumentError, ['largest']],
  ['topk', ({ be, x }) => be.topk(x, 1, -1, { sorted: any('no') }), InvalidArgumentError, ['sorted', 'boolean']],
  [
    'topk',
    ({ be, x }) =>
      be.topk(
        be.reshape(
          be.shrink(x, [
            [0, 1],
            [0, 1],
          ]),
          [],
        ),
        1,
      ),
    InvalidArgumentError,
    ['0-d'],
  ],
];
