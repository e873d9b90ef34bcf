// Bad-argument cases of nonFiniteCheckAndUnscale (hal/src/families/composite/unscale.ts) for validation.test.ts:
// each call must throw its typed error naming the words given, allocate nothing and change no array — a valid
// gradient listed before the bad operand is not multiplied. The fixture's x and y are float32 [2, 3], xi int32
// [2, 3], m and v float32 buffers of 6 elements; tmp(1) is a float32 buffer of one element (a flag).
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

const OP = 'nonFiniteCheckAndUnscale';

export const AMP_BAD: Bad[] = [
  [OP, ({ be, tmp }) => be.nonFiniteCheckAndUnscale(any(null), tmp(1), 1), InvalidArgumentError, [OP, 'grads']],
  [OP, ({ be, m, tmp }) => be.nonFiniteCheckAndUnscale(any(m), tmp(1), 1), InvalidArgumentError, [OP, 'grads']],
  [
    OP,
    ({ be, m, tmp }) => be.nonFiniteCheckAndUnscale([m, any(null)], tmp(1), 1),
    InvalidArgumentError,
    [OP, 'grads[1]', 'null'],
  ],
  [OP, ({ be, m }) => be.nonFiniteCheckAndUnscale([m], any(undefined), 1), InvalidArgumentError, [OP, 'foundInf']],
  [OP, ({ be, m, v }) => be.nonFiniteCheckAndUnscale([m], v, 1), ShapeMismatchError, [OP, 'foundInf', 'one element']],
  [OP, ({ be, m, xi }) => be.nonFiniteCheckAndUnscale([m], xi.buffer, 1), DTypeError, [OP, 'foundInf', 'int32']],
  [
    OP,
    ({ be, m, xi, tmp }) => be.nonFiniteCheckAndUnscale([m, xi.buffer], tmp(1), 1),
    DTypeError,
    [OP, 'grads[1]', 'float32', 'int32'],
  ],
  [
    OP,
    ({ be, m, v, tmp }) => be.nonFiniteCheckAndUnscale([m, v, m], tmp(1), 1),
    InvalidArgumentError,
    [OP, 'grads[2]', 'listed twice'],
  ],
  [
    OP,
    ({ be, m, tmp }) => {
      const flag = tmp(1);
      return be.nonFiniteCheckAndUnscale([m, flag], flag, 1);
    },
    InvalidArgumentError,
    [OP, 'grads[1]', 'foundInf'],
  ],
  ...[Number.NaN, Number.POSITIVE_INFINITY, any('0.5'), any(null)].map(
    (inv): Bad => [
      OP,
      ({ be, m, tmp }) => be.nonFiniteCheckAndUnscale([m], tmp(1), inv),
      InvalidArgumentError,
      [OP, 'invScale'],
    ],
  ),
];
