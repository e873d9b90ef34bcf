// Bad-argument cases of the comparisons, logical ops and bool methods (hal/src/families/logic/logic.ts,
// hal/src/ops/binary-logic.ts) for validation.test.ts: each call must throw its typed error naming the
// words given, allocate nothing and change no array. The fixture's x and y are float32 [2, 3], xi int32 [2, 3].
import { DTypeError, InvalidArgumentError, ShapeMismatchError, UnsupportedOpError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

export const LOGIC_BAD: Bad[] = [
  ['equal', ({ be, x, xi }) => be.equal(x, xi), DTypeError, ['equal', 'float32', 'int32']],
  ['less', ({ be, x, y }) => be.less(x, be.reshape(y, [3, 2])), ShapeMismatchError, ['broadcast']],
  ['logicalAnd', ({ be, x, y }) => be.logicalAnd(x, y), UnsupportedOpError, ['logicalAnd', 'float32']],
  ['bitwiseOr', ({ be, x, y }) => be.bitwiseOr(x, y), UnsupportedOpError, ['bitwiseOr', 'float32']],
  ['fmod', ({ be, x }) => be.fmod(x, any('2')), InvalidArgumentError, ['fmod']],
  ['where', ({ be, x, y }) => be.where(x, x, y), DTypeError, ['where', 'cond', 'bool']],
  ['where', ({ be, xi, y }) => be.where(any(null), xi, y), InvalidArgumentError, ['where', 'cond']],
  ['any', ({ be, x }) => be.any(x), DTypeError, ['any', 'bool', 'float32']],
  ['all', ({ be, xi }) => be.all(xi, 0), DTypeError, ['all', 'bool', 'int32']],
  ['logicalNot', ({ be, x }) => be.logicalNot(x), UnsupportedOpError, ['logicalNot', 'float32']],
  ['bitwiseNot', ({ be, x }) => be.bitwiseNot(x), UnsupportedOpError, ['bitwiseNot', 'float32']],
  ['isnan', ({ be }) => be.isnan(any({})), InvalidArgumentError, ['isnan']],
  ['isinf', ({ be }) => be.isinf(any(null)), InvalidArgumentError, ['isinf']],
  ['isfinite', ({ be }) => be.isfinite(any(3)), InvalidArgumentError, ['isfinite']],
  ['logsumexp', ({ be, xi }) => be.logsumexp(xi), UnsupportedOpError, ['logsumexp', 'int32']],
  ['logsumexp', ({ be, x }) => be.logsumexp(x, 2), InvalidArgumentError, ['axis 2', 'out of range']],
  ['logsumexp', ({ be, x }) => be.logsumexp(x, 0, any('yes')), InvalidArgumentError, ['logsumexp', 'keepdims']],
  ['cast', ({ be, x }) => be.cast(x, any('bfloat16')), DTypeError, ['cast', 'bfloat16', 'bool']],
  ['fromArray', ({ be }) => be.fromArray([1, 0], [2], any('boolean')), DTypeError, ['fromArray', 'boolean', 'bool']],
];
