// Bad-argument cases of convolution and pooling (hal/src/families/conv/conv.ts, pool.ts) for validation.test.ts:
// each call must throw its typed error naming the words given, allocate nothing and change no array. The
// fixture's x and y are float32 [2, 3], xi int32 [2, 3]; the views below reshape them without allocating.
import { type ComputeBackend, DTypeError, InvalidArgumentError, type NDArray, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

/** [1, 2, 3]: N = 1, C = 2, one spatial axis of 3. */
const ncl = (be: ComputeBackend, a: NDArray): NDArray => be.reshape(a, [1, 2, 3]);

export const CONV_BAD: Bad[] = [
  // bias: float32 [O] (O = 1 here)
  [
    'conv',
    ({ be, x, y }) => be.conv(ncl(be, x), be.reshape(y, [1, 2, 3]), { bias: y }),
    ShapeMismatchError,
    ['conv', 'bias', '[1]'],
  ],
  [
    'conv',
    ({ be, x, y, xi }) => be.conv(ncl(be, x), be.reshape(y, [1, 2, 3]), { bias: be.reshape(xi, [6]) }),
    DTypeError,
    ['conv', 'bias', 'float32'],
  ],
  ['conv', ({ be, x, y }) => be.conv(x, y), ShapeMismatchError, ['conv', 'spatial']],
  ['conv', ({ be, x, xi }) => be.conv(ncl(be, xi), ncl(be, x)), DTypeError, ['conv', 'x', 'float32']],
  ['conv', ({ be, x, y }) => be.conv(ncl(be, x), be.reshape(y, [2, 1, 3])), ShapeMismatchError, ['conv', 'C/groups']],
  [
    'conv',
    ({ be, x, y }) => be.conv(ncl(be, x), be.reshape(y, [1, 2, 3]), { groups: 0 }),
    InvalidArgumentError,
    ['groups'],
  ],
  [
    'conv',
    ({ be, x, y }) => be.conv(ncl(be, x), be.reshape(y, [1, 2, 3]), { stride: 0 }),
    InvalidArgumentError,
    ['stride'],
  ],
  [
    'conv',
    ({ be, x, y }) => be.conv(ncl(be, x), be.reshape(y, [1, 2, 3]), { padding: any('full') }),
    InvalidArgumentError,
    ['padding', 'full'],
  ],
  [
    'conv',
    ({ be, x, y }) => be.conv(ncl(be, x), be.reshape(y, [1, 2, 3]), { dilation: 2 }),
    ShapeMismatchError,
    ['conv', 'larger than the padded input'],
  ],
  [
    'convTranspose',
    ({ be, x, y }) => be.convTranspose(ncl(be, x), be.reshape(y, [3, 1, 2])),
    ShapeMismatchError,
    ['convTranspose', '[C, O/groups'],
  ],
  [
    'convTranspose',
    ({ be, x, y }) => be.convTranspose(ncl(be, x), be.reshape(y, [2, 1, 3]), { padding: any('same') }),
    InvalidArgumentError,
    ['convTranspose', 'padding'],
  ],
  [
    'convTranspose',
    ({ be, x, y }) => be.convTranspose(ncl(be, x), be.reshape(y, [2, 1, 3]), { padding: 4 }),
    InvalidArgumentError,
    ['convTranspose', 'crops'],
  ],
  ['maxPool', ({ be, x }) => be.maxPool(x, { kernelSize: 2 }), ShapeMismatchError, ['maxPool', 'spatial']],
  ['maxPool', ({ be, xi }) => be.maxPool(ncl(be, xi), { kernelSize: 2 }), DTypeError, ['maxPool', 'float32']],
  ['maxPool', ({ be, x }) => be.maxPool(ncl(be, x), any({})), InvalidArgumentError, ['maxPool', 'kernelSize']],
  [
    'avgPool',
    ({ be, x }) => be.avgPool(ncl(be, x), { kernelSize: 0 }),
    InvalidArgumentError,
    ['avgPool', 'kernelSize'],
  ],
  ['avgPool', ({ be, x }) => be.avgPool(ncl(be, x), { kernelSize: 4 }), ShapeMismatchError, ['avgPool', 'larger']],
  ['resize', ({ be, x }) => be.resize(x, {}), InvalidArgumentError, ['resize', 'sizes or scales']],
  ['resize', ({ be, xi }) => be.resize(xi, { sizes: [4, 6] }), DTypeError, ['resize', 'float32']],
  ['resize', ({ be, x }) => be.resize(x, { sizes: [4] }), InvalidArgumentError, ['resize', 'sizes', 'one per axis']],
  ['resize', ({ be, x }) => be.resize(x, { scales: [1, 0] }), InvalidArgumentError, ['resize', 'scales']],
  ['resize', ({ be, x }) => be.resize(x, { sizes: [4, 6], mode: any('area') }), InvalidArgumentError, ['mode', 'area']],
  [
    'resize',
    ({ be, x }) => be.resize(x, { sizes: [4, 6], nearestMode: any('nearest_even') }),
    InvalidArgumentError,
    ['nearestMode', 'nearest_even'],
  ],
  [
    'resize',
    ({ be, x }) => be.resize(x, { sizes: [4, 6], coordinateTransformationMode: any('center') }),
    InvalidArgumentError,
    ['coordinateTransformationMode', 'center'],
  ],
];
