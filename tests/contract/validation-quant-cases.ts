// Bad-argument cases of the quantization methods (hal/src/families/quant/quantize.ts) for
// validation.test.ts: each call must throw its typed error naming the words given, allocate nothing and
// change no array. The fixture's x is float32 [2, 3], xi int32 [2, 3]; int8 operands are made and freed
// inside the call.
import { type ComputeBackend, DTypeError, InvalidArgumentError, type NDArray, ShapeMismatchError } from '@polyhal/hal';
import { any, type Bad } from './validation-cases.js';

/** A 0-d float32 view of x (a per-tensor scale; no allocation). */
const s0 = (be: ComputeBackend, x: NDArray): NDArray =>
  be.reshape(
    be.shrink(x, [
      [0, 1],
      [0, 1],
    ]),
    [],
  );
/** Runs `fn` on fresh int8/uint8 arrays of `shapes`, freed after. */
const using = <T>(be: ComputeBackend, dtype: 'int8' | 'uint8', shapes: number[][], fn: (...a: NDArray[]) => T): T => {
  const arrays = shapes.map((s) => be.full(s, 1, dtype));
  try {
    return fn(...arrays);
  } finally {
    for (const a of arrays) be.free(a);
  }
};

/** Runs `fn` on fresh int8 arrays a [2, 3] and b [3, 2], freed after. */
const int8Pair = <T>(be: ComputeBackend, fn: (a: NDArray, b: NDArray) => T): T =>
  using(
    be,
    'int8',
    [
      [2, 3],
      [3, 2],
    ],
    (a, b) => fn(a!, b!),
  );

export const QUANT_BAD: Bad[] = [
  [
    'quantizeLinear',
    ({ be, x, xi }) => be.quantizeLinear(xi, s0(be, x)),
    DTypeError,
    ['quantizeLinear', 'x', 'float32'],
  ],
  ['quantizeLinear', ({ be, x, xi }) => be.quantizeLinear(x, be.reshape(xi, [6])), DTypeError, ['scale', 'float32']],
  ['quantizeLinear', ({ be, x }) => be.quantizeLinear(x, s0(be, x), x), DTypeError, ['zeroPoint', 'int8 or uint8']],
  [
    'quantizeLinear',
    ({ be, x }) => be.quantizeLinear(x, be.reshape(x, [6])),
    ShapeMismatchError,
    ['quantizeLinear', 'scale', '[3]'],
  ],
  [
    'quantizeLinear',
    ({ be, x }) => be.quantizeLinear(x, be.shrink(be.reshape(x, [6]), [[0, 3]]), undefined, 5),
    InvalidArgumentError,
    ['quantizeLinear', 'axis 5'],
  ],
  [
    'quantizeLinear',
    ({ be, x }) => using(be, 'int8', [[2]], (z) => be.quantizeLinear(x, be.shrink(be.reshape(x, [6]), [[0, 3]]), z)),
    ShapeMismatchError,
    ['zeroPoint', '[3]'],
  ],
  ['quantizeLinear', ({ be, x }) => be.quantizeLinear(any(null), s0(be, x)), InvalidArgumentError, ['quantizeLinear']],
  ['dequantizeLinear', ({ be, x }) => be.dequantizeLinear(x, s0(be, x)), DTypeError, ['dequantizeLinear', 'x']],
  [
    'dequantizeLinear',
    ({ be, x }) =>
      using(be, 'int8', [[2, 3]], (q) => using(be, 'uint8', [[]], (z) => be.dequantizeLinear(q!, s0(be, x), z))),
    DTypeError,
    ['zeroPoint', 'int8'],
  ],
  ['matmulInteger', ({ be, x }) => be.matmulInteger(x, x), DTypeError, ['matmulInteger', 'a', 'int8 or uint8']],
  [
    'matmulInteger',
    ({ be }) =>
      using(
        be,
        'int8',
        [
          [2, 3],
          [4, 2],
        ],
        (a, b) => be.matmulInteger(a!, b!),
      ),
    ShapeMismatchError,
    ['matmul'],
  ],
  [
    'matmulInteger',
    ({ be }) => using(be, 'int8', [[3], [3, 2]], (a, b) => be.matmulInteger(a!, b!)),
    ShapeMismatchError,
    ['matmulInteger', 'at least 2 dims'],
  ],
  [
    'matmulInteger',
    ({ be }) => using(be, 'int8', [[2, 3], [3, 2], [5]], (a, b, z) => be.matmulInteger(a!, b!, z)),
    ShapeMismatchError,
    ['aZeroPoint', '[2]'],
  ],
  [
    'matmulInteger',
    ({ be }) => int8Pair(be, (a, b) => using(be, 'uint8', [[]], (z) => be.matmulInteger(a!, b!, undefined, z))),
    DTypeError,
    ['bZeroPoint', 'int8'],
  ],
  [
    'matmulIntegerToFloat',
    ({ be, x }) => using(be, 'int8', [[3, 2]], (b) => be.matmulIntegerToFloat(x, b!, s0(be, x), s0(be, x))),
    DTypeError,
    ['matmulIntegerToFloat', 'a', 'int8 or uint8'],
  ],
  [
    'matmulIntegerToFloat',
    ({ be, x, xi }) => int8Pair(be, (a, b) => be.matmulIntegerToFloat(a, b, s0(be, x), be.reshape(xi, [6]))),
    DTypeError,
    ['matmulIntegerToFloat', 'bScale', 'float32'],
  ],
  [
    'matmulIntegerToFloat',
    ({ be, x }) => int8Pair(be, (a, b) => be.matmulIntegerToFloat(a, b, s0(be, x), be.reshape(x, [6]))),
    ShapeMismatchError,
    ['matmulIntegerToFloat', 'bScale', '[2]'],
  ],
  [
    'matmulIntegerToFloat',
    ({ be, x }) => int8Pair(be, (a, b) => be.matmulIntegerToFloat(a, b, be.reshape(x, [6]), s0(be, x))),
    ShapeMismatchError,
    ['matmulIntegerToFloat', 'aScale'],
  ],
  [
    'matmulIntegerToFloat',
    ({ be, x }) =>
      int8Pair(be, (a, b) =>
        be.matmulIntegerToFloat(a, b, s0(be, x), s0(be, x), undefined, undefined, be.reshape(x, [6])),
      ),
    ShapeMismatchError,
    ['matmulIntegerToFloat', 'bias', '[2]'],
  ],
  [
    'matmulIntegerToFloat',
    ({ be, x }) =>
      using(
        be,
        'int8',
        [
          [2, 3],
          [2, 2],
        ],
        (a, b) => be.matmulIntegerToFloat(a, b, s0(be, x), s0(be, x)),
      ),
    ShapeMismatchError,
    ['matmulIntegerToFloat', 'K differs'],
  ],
  [
    'convInteger',
    ({ be, x }) => using(be, 'int8', [[2, 3, 2]], (w) => be.convInteger(be.reshape(x, [1, 2, 3]), w!)),
    DTypeError,
    ['convInteger', 'x', 'int8 or uint8'],
  ],
  [
    'convInteger',
    ({ be }) => using(be, 'int8', [[1, 2, 5], [3, 2, 2], [2]], (x, w, z) => be.convInteger(x!, w!, undefined, z)),
    ShapeMismatchError,
    ['convInteger', 'wZeroPoint', '[3]'],
  ],
  [
    'convInteger',
    ({ be }) =>
      using(
        be,
        'uint8',
        [
          [1, 2, 5],
          [3, 2, 2],
        ],
        (x, w) => be.convInteger(x!, w!, undefined, undefined, { groups: 0 }),
      ),
    InvalidArgumentError,
    ['convInteger', 'groups'],
  ],
  [
    'convInteger',
    ({ be }) =>
      using(
        be,
        'uint8',
        [
          [1, 2, 5],
          [3, 4, 2],
        ],
        (x, w) => be.convInteger(x!, w!),
      ),
    ShapeMismatchError,
    ['convInteger', 'w must be [O, C/groups, ...k]'],
  ],
  [
    'convInteger',
    ({ be }) =>
      using(
        be,
        'uint8',
        [
          [1, 2, 5],
          [3, 2, 2],
        ],
        (x, w) => using(be, 'int8', [[]], (z) => be.convInteger(x!, w!, z)),
      ),
    DTypeError,
    ['xZeroPoint', 'uint8'],
  ],
];
