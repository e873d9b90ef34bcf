// Bad-argument cases of layerNorm and layerNormBackward (hal/src/families/norm/norm.ts) for
// validation.test.ts: each call must throw its typed error naming the words given, allocate nothing and
// change no array. The fixture's x and y are float32 [2, 3], xi int32 [2, 3].
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

const row = (be: Parameters<Bad[1]>[0]['be'], x: Parameters<Bad[1]>[0]['x']) =>
  be.reshape(
    be.shrink(x, [
      [0, 1],
      [0, 3],
    ]),
    [3],
  );
const col = (be: Parameters<Bad[1]>[0]['be'], x: Parameters<Bad[1]>[0]['x']) =>
  be.shrink(x, [
    [0, 2],
    [0, 1],
  ]);

export const NORM_BAD: Bad[] = [
  ['layerNorm', ({ be }) => be.layerNorm(any(null), null, null), InvalidArgumentError, ['layerNorm', 'x']],
  ['layerNorm', ({ be, xi }) => be.layerNorm(xi, null, null), DTypeError, ['layerNorm', 'x', 'float32']],
  ['layerNorm', ({ be, x }) => be.layerNorm(x, null, null, { dims: 3 }), InvalidArgumentError, ['dims', '[1, 2]']],
  ['layerNorm', ({ be, x }) => be.layerNorm(x, null, null, { dims: any(0.5) }), InvalidArgumentError, ['dims']],
  ['layerNorm', ({ be, x }) => be.layerNorm(x, null, null, { eps: -1 }), InvalidArgumentError, ['eps']],
  ['layerNorm', ({ be, x }) => be.layerNorm(x, null, null, { eps: NaN }), InvalidArgumentError, ['eps']],
  ['layerNorm', ({ be, x }) => be.layerNorm(x, null, null, any({ axis: 1 })), InvalidArgumentError, ["'axis'"]],
  ['layerNorm', ({ be, x, y }) => be.layerNorm(x, y, null), ShapeMismatchError, ['weight', '[3]', '[2, 3]']],
  ['layerNorm', ({ be, x }) => be.layerNorm(x, null, col(be, x)), ShapeMismatchError, ['bias', '[3]']],
  [
    'layerNorm',
    ({ be, x, xi }) =>
      be.layerNorm(
        x,
        be.reshape(
          be.shrink(xi, [
            [0, 1],
            [0, 3],
          ]),
          [3],
        ),
        null,
      ),
    DTypeError,
    ['weight', 'float32'],
  ],
  [
    'layerNormBackward',
    ({ be, x, y }) => be.layerNormBackward(y, x, col(be, x), col(be, y), null, { dims: 0 }),
    InvalidArgumentError,
    ['layerNormBackward', 'dims'],
  ],
  [
    'layerNormBackward',
    ({ be, x, y }) => be.layerNormBackward(row(be, y), x, col(be, x), col(be, y), null),
    ShapeMismatchError,
    ['layerNormBackward', 'g', '[2, 3]'],
  ],
  [
    'layerNormBackward',
    ({ be, x, y }) => be.layerNormBackward(y, x, row(be, x), col(be, y), null),
    ShapeMismatchError,
    ['mean', '[2, 1]'],
  ],
  [
    'layerNormBackward',
    ({ be, x, y }) => be.layerNormBackward(y, x, col(be, x), col(be, y), y),
    ShapeMismatchError,
    ['weight', '[3]'],
  ],
  [
    'layerNormBackward',
    ({ be, x, y }) => be.layerNormBackward(y, x, col(be, x), col(be, y), null, { paramGrads: any(1) }),
    InvalidArgumentError,
    ['paramGrads', 'boolean'],
  ],
  [
    'layerNormBackward',
    ({ be, x, xi }) => be.layerNormBackward(xi, x, col(be, x), col(be, x), null),
    DTypeError,
    ['g', 'float32'],
  ],
];
