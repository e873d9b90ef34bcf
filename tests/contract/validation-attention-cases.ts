// Bad-argument cases of attention, attentionBackward and attentionBackwardPacked (hal/src/families/composite/) for
// validation.test.ts: each call must throw its typed error naming the words given, allocate nothing and change no
// array. The fixture's x and y are float32 [2, 3] (attention(x, y, x, s) is valid: L = S = 2, d = dv = 3), xi
// int32 [2, 3]; the bad shapes are views of x (no allocation). attentionBackwardPacked(qkv(x), dO(x), 1) is valid:
// qkv [1, 2, 3, 1, 1] (L = 2, one head of width 1), dOut [1, 1, 2, 1].
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

type F = Parameters<Bad[1]>[0];
const A = 'attention';
const AB = 'attentionBackward';
/** x seen as [3, 2], [3] and [1, 2, 3]. */
const xT = ({ be, x }: F) => be.permute(x, [1, 0]);
const row = ({ be, x }: F) =>
  be.reshape(
    be.shrink(x, [
      [0, 1],
      [0, 3],
    ]),
    [3],
  );
const lead = ({ be, x }: F) => be.reshape(x, [1, 2, 3]);
const ABP = 'attentionBackwardPacked';
const qkv = ({ be }: F, x: F['x']) => be.reshape(x, [1, 2, 3, 1, 1]);
const dO = ({ be, x }: F, shape = [1, 1, 2, 1]) =>
  be.reshape(
    be.shrink(x, [
      [0, 1],
      [0, 2],
    ]),
    shape,
  );

export const ATTENTION_BAD: Bad[] = [
  [A, ({ be, x }) => be.attention(any(null), x, x, 1), InvalidArgumentError, [A, 'q']],
  [A, ({ be, x, xi }) => be.attention(x, xi, x, 1), DTypeError, [A, 'k', 'float32', 'int32']],
  [A, ({ be, x, xi }) => be.attention(x, x, xi, 1), DTypeError, [A, 'v', 'int32']],
  [A, (f) => f.be.attention(row(f), row(f), row(f), 1), ShapeMismatchError, [A, 'rank ≥ 2', '[3]']],
  [A, (f) => f.be.attention(f.x, xT(f), f.x, 1), ShapeMismatchError, [A, "k's last dim 2", "q's 3"]],
  [A, (f) => f.be.attention(f.x, f.y, xT(f), 1), ShapeMismatchError, [A, 'v has 3 rows, k 2']],
  [A, (f) => f.be.attention(lead(f), f.y, f.x, 1), ShapeMismatchError, [A, 'leading dims', '[1, 2, 3]']],
  [A, (f) => f.be.attention(f.x, f.y, lead(f), 1), ShapeMismatchError, [A, "v's leading dims"]],
  ...[Number.NaN, Number.POSITIVE_INFINITY, any('0.5'), any(undefined)].map(
    (s): Bad => [A, ({ be, x, y }) => be.attention(x, y, x, s), InvalidArgumentError, [A, 'scale']],
  ),
  [AB, ({ be, x, y }) => be.attentionBackward(x, y, x, any(null), 1), InvalidArgumentError, [AB, 'dOut']],
  [AB, ({ be, x, y, xi }) => be.attentionBackward(x, y, x, xi, 1), DTypeError, [AB, 'dOut', 'int32']],
  [AB, ({ be, x, y, xi }) => be.attentionBackward(xi, y, x, x, 1), DTypeError, [AB, 'q', 'int32']],
  [AB, (f) => f.be.attentionBackward(f.x, f.y, f.x, xT(f), 1), ShapeMismatchError, [AB, 'dOut must be [2, 3]']],
  [AB, (f) => f.be.attentionBackward(f.x, f.y, f.x, lead(f), 1), ShapeMismatchError, [AB, "dOut's leading dims"]],
  [AB, (f) => f.be.attentionBackward(f.x, xT(f), f.x, f.x, 1), ShapeMismatchError, [AB, "k's last dim"]],
  [AB, ({ be, x, y }) => be.attentionBackward(x, y, x, x, Number.NaN), InvalidArgumentError, [AB, 'scale']],
  [ABP, (f) => f.be.attentionBackwardPacked(any(null), dO(f), 1), InvalidArgumentError, [ABP, 'qkv']],
  [ABP, (f) => f.be.attentionBackwardPacked(qkv(f, f.x), any(null), 1), InvalidArgumentError, [ABP, 'dOut']],
  [ABP, (f) => f.be.attentionBackwardPacked(qkv(f, f.xi), dO(f), 1), DTypeError, [ABP, 'qkv', 'int32']],
  [
    ABP,
    (f) => f.be.attentionBackwardPacked(qkv(f, f.x), f.be.reshape(f.xi, [1, 1, 2, 3]), 1),
    DTypeError,
    [ABP, 'dOut'],
  ],
  [ABP, (f) => f.be.attentionBackwardPacked(f.x, dO(f), 1), ShapeMismatchError, [ABP, '[N, L, 3, H, D]', '[2, 3]']],
  [
    ABP,
    (f) => f.be.attentionBackwardPacked(f.be.reshape(f.x, [1, 3, 2, 1, 1]), dO(f), 1),
    ShapeMismatchError,
    [ABP, '[N, L, 3, H, D]', '[1, 3, 2, 1, 1]'],
  ],
  [
    ABP,
    (f) => f.be.attentionBackwardPacked(qkv(f, f.x), dO(f, [1, 1, 1, 2]), 1),
    ShapeMismatchError,
    [ABP, 'dOut must be'],
  ],
  [ABP, (f) => f.be.attentionBackwardPacked(qkv(f, f.x), dO(f), Number.NaN), InvalidArgumentError, [ABP, 'scale']],
];
