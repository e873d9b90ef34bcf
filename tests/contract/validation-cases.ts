// Bad-argument cases of the layout ops (hal/src/families/layout/layout.ts) and the index ops
// (hal/src/families/indexing/indexing.ts) for validation.test.ts, with the fixture and case types that file
// runs them on: each call must throw its typed error naming the words given, allocate nothing and change no
// array.
import {
  type ComputeBackend,
  type DeviceBuffer,
  DTypeError,
  InvalidArgumentError,
  type NDArray,
  type PolyHalError,
  ShapeMismatchError,
} from '@polyhal/hal';

export type ErrorClass = new (...args: never[]) => PolyHalError;

export interface Fixture {
  be: ComputeBackend;
  /** [2, 3] float32 */
  x: NDArray;
  /** [2, 3] float32, a second operand */
  y: NDArray;
  /** [2, 3] int32 */
  xi: NDArray;
  /** float32 buffers of 6 elements (optimizer state) */
  m: DeviceBuffer;
  v: DeviceBuffer;
  /** Allocates a helper buffer that the case frees after the call (not counted as an allocation of the call). */
  tmp: (size: number) => DeviceBuffer;
}

/** [method, call, error class, words the message must contain]. Every public method of ComputeBackend is here. */
export type Bad = [string, (f: Fixture) => unknown, ErrorClass, string[]];

export const any = (v: unknown): never => v as never;

/** A 0-d view of x (no allocation). */
const scalar = (be: ComputeBackend, x: NDArray): NDArray =>
  be.reshape(
    be.shrink(x, [
      [0, 1],
      [0, 1],
    ]),
    [],
  );

export const LAYOUT_AND_INDEX_BAD: Bad[] = [
  ['concat', ({ be }) => be.concat([]), InvalidArgumentError, ['concat', 'non-empty']],
  ['concat', ({ be, x }) => be.concat(any([x, null])), InvalidArgumentError, ['concat', 'xs[1]']],
  ['concat', ({ be, x, xi }) => be.concat([x, xi]), DTypeError, ['concat', 'xs[1]', 'int32']],
  ['concat', ({ be, x, y }) => be.concat([x, be.reshape(y, [3, 2])], 0), ShapeMismatchError, ['concat', 'xs[1]']],
  ['concat', ({ be, x, y }) => be.concat([x, be.reshape(y, [6])]), ShapeMismatchError, ['concat', 'xs[1]']],
  ['concat', ({ be, x, y }) => be.concat([x, y], 2), InvalidArgumentError, ['axis 2', 'rank 2']],
  ['stack', ({ be, x, y }) => be.stack([x, be.reshape(y, [3, 2])]), ShapeMismatchError, ['stack', 'xs[1]']],
  ['stack', ({ be, x, y }) => be.stack([x, y], 3), InvalidArgumentError, ['axis 3']],
  ['stack', ({ be, x, y }) => be.stack([x, y], 0.5), InvalidArgumentError, ['stack', 'axis', '0.5']],
  ['split', ({ be, x }) => be.split(x, 2, 1), InvalidArgumentError, ['split', 'sections', 'size 3']],
  ['split', ({ be, x }) => be.split(x, 0, 1), InvalidArgumentError, ['split', 'sections']],
  ['split', ({ be, x }) => be.split(x, [1, 1], 1), InvalidArgumentError, ['split', 'sum to dimension 1']],
  ['split', ({ be, x }) => be.split(x, [3, -1], 1), InvalidArgumentError, ['split', 'non-negative']],
  ['split', ({ be, x }) => be.split(x, 2, 2), InvalidArgumentError, ['axis 2']],
  ['tile', ({ be, x }) => be.tile(x, [-1, 2]), InvalidArgumentError, ['tile', 'non-negative']],
  ['tile', ({ be, x }) => be.tile(x, [1.5]), InvalidArgumentError, ['tile', 'reps']],
  ['flip', ({ be, x }) => be.flip(x, [0, 0]), InvalidArgumentError, ['repeated']],
  ['flip', ({ be, x }) => be.flip(x, 2), InvalidArgumentError, ['axis 2']],
  ['trilu', ({ be, x }) => be.trilu(be.reshape(x, [6])), InvalidArgumentError, ['trilu', 'rank ≥ 2']],
  ['trilu', ({ be, x }) => be.trilu(x, 0.5), InvalidArgumentError, ['trilu', 'k', '0.5']],
  ['trilu', ({ be, x }) => be.trilu(x, 0, any('yes')), InvalidArgumentError, ['trilu', 'upper']],
  [
    'pad',
    ({ be, x }) =>
      be.pad(
        x,
        [
          [1, 1],
          [0, 0],
        ],
        0,
        any('mirror'),
      ),
    InvalidArgumentError,
    ['pad', "'mirror'"],
  ],
  [
    'pad',
    ({ be, x }) =>
      be.pad(
        be.shrink(x, [
          [0, 2],
          [1, 1],
        ]),
        [
          [0, 0],
          [1, 1],
        ],
        0,
        'reflect',
      ),
    InvalidArgumentError,
    ['pad', "'reflect'", 'size 0'],
  ],
  [
    'pad',
    ({ be, x }) =>
      be.pad(
        x,
        [
          [1, 1],
          [-1, 0],
        ],
        0,
        'edge',
      ),
    InvalidArgumentError,
    ['pad widths'],
  ],
  ['gather', ({ be, x, y }) => be.gather(x, y), DTypeError, ['gather', 'indices', 'int32', 'float32']],
  ['gather', ({ be, x, xi }) => be.gather(x, xi, 2), InvalidArgumentError, ['axis 2', 'rank 2']],
  ['gather', ({ be, x, xi }) => be.gather(x, xi, 0.5), InvalidArgumentError, ['gather', 'axis', '0.5']],
  ['gather', ({ be, x, xi }) => be.gather(scalar(be, x), xi), InvalidArgumentError, ['gather', 'rank ≥ 1']],
  ['gather', ({ be, xi }) => be.gather(any(null), xi), InvalidArgumentError, ['gather', 'null']],
  ['scatterAdd', ({ be, x, y }) => be.scatterAdd(x, y, y), DTypeError, ['scatterAdd', 'indices', 'int32']],
  ['scatterAdd', ({ be, x, xi }) => be.scatterAdd(x, xi, xi), DTypeError, ['scatterAdd', 'updates', 'int32']],
  [
    'scatterAdd',
    ({ be, x, y, xi }) => be.scatterAdd(x, xi, y, 0),
    ShapeMismatchError,
    ['scatterAdd', '[2, 3]', '[2, 3, 3]'],
  ],
  ['scatterAdd', ({ be, x, y, xi }) => be.scatterAdd(x, xi, y, -3), InvalidArgumentError, ['axis -3']],
  ['oneHot', ({ be, xi }) => be.oneHot(xi, -1), InvalidArgumentError, ['oneHot', 'depth', '-1']],
  ['oneHot', ({ be, xi }) => be.oneHot(xi, 2.5), InvalidArgumentError, ['oneHot', 'depth', '2.5']],
  ['oneHot', ({ be, x }) => be.oneHot(x, 3), DTypeError, ['oneHot', 'indices', 'float32']],
  ['argmax', ({ be, x }) => be.argmax(x, 2), InvalidArgumentError, ['argmax', 'axis 2']],
  [
    'argmax',
    ({ be, x }) =>
      be.argmax(
        be.shrink(x, [
          [0, 2],
          [0, 0],
        ]),
        1,
      ),
    InvalidArgumentError,
    ['argmax', 'length 0'],
  ],
  ['argmin', ({ be, x }) => be.argmin(x, 0, 'yes' as never), InvalidArgumentError, ['argmin', 'keepdims']],
  [
    'argmin',
    ({ be, x }) =>
      be.argmin(
        be.shrink(x, [
          [0, 0],
          [0, 3],
        ]),
      ),
    InvalidArgumentError,
    ['argmin', 'empty'],
  ],
];
