// Every public entry point of ComputeBackend validates its arguments once, in the HAL, with typed errors
// thrown before anything is allocated and without touching other arrays; unknown op names throw
// UnsupportedOpError (also from each backend's kernel switch); optimizer hyper-parameters out of their
// domain throw InvalidArgumentError instead of writing NaN into the parameters.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  BINARY_OPS,
  type DeviceBuffer,
  DeviceMismatchError,
  DTypeError,
  InvalidArgumentError,
  type NDArray,
  OP_METHODS,
  OutOfMemoryError,
  ShapeMismatchError,
  UNARY_OPS,
  UnsupportedOpError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';

import { any, type Bad, type ErrorClass, type Fixture, LAYOUT_AND_INDEX_BAD } from './validation-cases.js';
import { CONV_BAD } from './validation-conv-cases.js';
import { LOGIC_BAD } from './validation-logic-cases.js';
import { SCAN_BAD } from './validation-scan-cases.js';
import { QUANT_BAD } from './validation-quant-cases.js';
import { LOSS_BAD } from './validation-loss-cases.js';
import { SCATTER_BAD } from './validation-scatter-cases.js';
import { NORM_BAD } from './validation-norm-cases.js';
import { AMP_BAD } from './validation-amp-cases.js';
import { ATTENTION_BAD } from './validation-attention-cases.js';

const X = [1.5, -2, 3.25, 0, 7, -0.5];
const Y = [0.25, 1, -1, 2, 0.5, 3];

const hyper = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, step: 1 };
const sgd = { lr: 0.1, momentum: 0, weightDecay: 0 };

const BAD: Bad[] = [
  // memory
  ['allocate', ({ be }) => be.allocate(-1), InvalidArgumentError, ['allocation size']],
  ['allocate', ({ be }) => be.allocate(any(null)), InvalidArgumentError, ['allocation size']],
  ['allocate', ({ be }) => be.allocate(4, any('complex64')), DTypeError, ['complex64']],
  ['deallocate', ({ be }) => be.deallocate(any(null)), InvalidArgumentError, ['deallocate', 'null']],
  ['deallocate', ({ be }) => be.deallocate(any({})), InvalidArgumentError, ['deallocate', 'DeviceBuffer']],
  ['free', ({ be }) => be.free(any(null)), InvalidArgumentError, ['free', 'NDArray', 'null']],
  ['free', ({ be }) => be.free(any(undefined)), InvalidArgumentError, ['free', 'undefined']],
  ['free', ({ be, x }) => be.free(any({ buffer: null, shape: x.shape })), InvalidArgumentError, ['free', 'buffer']],
  ['write', ({ be }) => be.write(any(null), new Float32Array(6)), InvalidArgumentError, ['write', 'null']],
  ['write', ({ be, tmp: f0 }) => be.write(f0(0), any(null)), InvalidArgumentError, ['write', 'Float32Array']],
  ['write', ({ be, m }) => be.write(m, any(new Float64Array(6))), DTypeError, ['write', 'Float64Array', 'float32']],
  ['write', ({ be, m }) => be.write(m, any([1, 2, 3, 4, 5, 6])), DTypeError, ['write', 'Float32Array']],
  ['write', ({ be, m }) => be.write(m, new Int32Array(6)), DTypeError, ['write', 'int32', 'float32']],
  ['write', ({ be, m }) => be.write(m, new Float32Array(5)), ShapeMismatchError, ['write', '5', '6']],
  ['copyToDevice', ({ be, m }) => be.copyToDevice(m, any(new Float64Array(6))), DTypeError, ['write', 'Float64Array']],
  ['read', ({ be }) => be.read(any(null)), InvalidArgumentError, ['read', 'null']],
  ['read', ({ be, x }) => be.read(any({ ...x, offset: 4 })), InvalidArgumentError, ['read', 'outside its buffer']],
  ['copyFromDevice', ({ be }) => be.copyFromDevice(any(42)), InvalidArgumentError, ['read', '42']],
  ['readHandle', ({ be }) => be.readHandle(any(null)), InvalidArgumentError, ['readHandle', 'null']],
  [
    'readSync',
    ({ be }) =>
      be.readSync
        ? be.readSync(any(null))
        : (() => {
            throw new InvalidArgumentError('readSync: none');
          })(),
    InvalidArgumentError,
    ['readSync'],
  ],
  // construction
  ['fromArray', ({ be }) => be.fromArray(any(null), [2]), InvalidArgumentError, ['fromArray', 'data', 'null']],
  ['fromArray', ({ be }) => be.fromArray(any('12'), [2]), InvalidArgumentError, ['fromArray', 'data']],
  ['fromArray', ({ be }) => be.fromArray([1, 2], any(null)), InvalidArgumentError, ['fromArray', 'shape']],
  ['fromArray', ({ be }) => be.fromArray([1, 2], any([2.5])), InvalidArgumentError, ['fromArray', 'shape']],
  ['fromArray', ({ be }) => be.fromArray([1, 2], [2], any('complex64')), DTypeError, ['fromArray', 'complex64']],
  ['fromArray', ({ be }) => be.fromArray(any(new BigInt64Array(2)), [2]), DTypeError, ['fromArray', 'BigInt64Array']],
  ['fromArray', ({ be }) => be.fromArray([1, 2, 3], [2, 2]), ShapeMismatchError, ['fromArray', '[2, 2]']],
  ['fromArray', ({ be }) => be.fromArray(any([1, Symbol('s')]), [2]), InvalidArgumentError, ['fromArray', 'number']],
  ['fromArray', ({ be }) => be.fromArray(any({ length: 2 ** 31 }), [2 ** 31]), OutOfMemoryError, ['cannot allocate']],
  ['full', ({ be }) => be.full(any(null), 1), InvalidArgumentError, ['full', 'shape']],
  ['full', ({ be }) => be.full([2], any(null)), InvalidArgumentError, ['full', 'value', 'null']],
  ['full', ({ be }) => be.full([2], any('1')), InvalidArgumentError, ['full', 'value']],
  ['full', ({ be }) => be.full([2], 1, any('boolean')), DTypeError, ['boolean']],
  // elementwise
  ['binary', ({ be, x }) => be.binary(any('notAnOp'), x, x), UnsupportedOpError, ['notAnOp', 'float32', 'add']],
  ['binary', ({ be, xi }) => be.binary(any('notAnOp'), xi, 2), UnsupportedOpError, ['notAnOp', 'int32']],
  ['binary', ({ be, x }) => be.binary(any('toString'), x, x), UnsupportedOpError, ['toString']],
  ['binary', ({ be, x }) => be.binary('add', any(undefined), x), InvalidArgumentError, ['add', 'a', 'undefined']],
  ['binary', ({ be }) => be.binary('add', 1, 2), InvalidArgumentError, ['add', 'array']],
  ['binary', ({ be, x }) => be.binary('add', x, any('1')), InvalidArgumentError, ['add', 'b']],
  [
    'binary',
    ({ be, x }) => be.binary('add', x, any({ ...x, strides: [3, 2] })),
    InvalidArgumentError,
    ['add', 'b', 'outside its buffer'],
  ],
  ['binary', ({ be, x }) => be.binary('add', x, any({ ...x, dtype: 'int32' })), DTypeError, ['add', 'int32']],
  [
    'binary',
    ({ be, x }) => be.binary('add', x, any({ ...x, shape: null })),
    InvalidArgumentError,
    ['add', 'NDArray view'],
  ],
  ...BINARY_OPS.map(
    (op): Bad => [
      op,
      ({ be, x }) => (be[op] as (a: unknown, b: unknown) => NDArray)(x, null),
      InvalidArgumentError,
      [op, 'b', 'null'],
    ],
  ),
  ...BINARY_OPS.map(
    (op): Bad => [
      op,
      ({ be, x }) => (be[op] as (a: unknown, b: unknown) => NDArray)(undefined, x),
      InvalidArgumentError,
      [op, 'a', 'undefined'],
    ],
  ),
  ['unary', ({ be, x }) => be.unary(any('notAnOp'), x), UnsupportedOpError, ['notAnOp', 'float32', 'exp']],
  ['unary', ({ be, xi }) => be.unary(any('floor'), xi), UnsupportedOpError, ['floor', 'int32']],
  ...UNARY_OPS.map(
    (op): Bad => [op, ({ be }) => (be[op] as (a: unknown) => NDArray)(null), InvalidArgumentError, [op, 'null']],
  ),
  // reductions
  ['reduce', ({ be, x }) => be.reduce(any('median'), x), UnsupportedOpError, ['median', 'float32', 'sum']],
  ['reduce', ({ be, xi }) => be.reduce(any('median'), xi, 0), UnsupportedOpError, ['median', 'int32']],
  ['reduce', ({ be }) => be.reduce('sum', any(null)), InvalidArgumentError, ['sum', 'null']],
  ['sum', ({ be, x }) => be.sum(x, any(null)), InvalidArgumentError, ['sum', 'axes', 'null', '[2, 3]']],
  ['sum', ({ be, x }) => be.sum(x, any({})), InvalidArgumentError, ['sum', 'axes']],
  ['sum', ({ be, x }) => be.sum(x, [0.5]), InvalidArgumentError, ['sum', 'axes']],
  ['sum', ({ be, x }) => be.sum(x, 0, any('yes')), InvalidArgumentError, ['sum', 'keepdims']],
  ['sum', ({ be, x }) => be.sum(x, 2), InvalidArgumentError, ['axis 2', 'rank 2']],
  ['max', ({ be, x }) => be.max(x, any('0')), InvalidArgumentError, ['max', 'axes']],
  ['max', ({ be }) => be.max(any(undefined)), InvalidArgumentError, ['max', 'undefined']],
  ['min', ({ be, x }) => be.min(x, any('0')), InvalidArgumentError, ['min', 'axes']],
  ['prod', ({ be, x }) => be.prod(x, 0, any('x')), InvalidArgumentError, ['prod', 'keepdims']],
  ['randomUniform', ({ be }) => be.randomUniform([2], -1), InvalidArgumentError, ['randomUniform', 'seed', '-1']],
  ['randomNormal', ({ be }) => be.randomNormal([2], 0, { std: -1 }), InvalidArgumentError, ['randomNormal', 'std']],
  ['bernoulli', ({ be }) => be.bernoulli([2], 1.5, 0), InvalidArgumentError, ['bernoulli', 'p', '1.5']],
  ['mean', ({ be, x }) => be.mean(x, any(null)), InvalidArgumentError, ['mean', 'axes', 'null']],
  ['mean', ({ be, x }) => be.mean(x, 0, any(1)), InvalidArgumentError, ['mean', 'keepdims']],
  ['mean', ({ be }) => be.mean(any(null)), InvalidArgumentError, ['mean', 'null']],
  // movement
  ['reshape', ({ be, x }) => be.reshape(x, any(null)), InvalidArgumentError, ['reshape', 'shape', 'null', '[2, 3]']],
  ['reshape', ({ be }) => be.reshape(any(null), [6]), InvalidArgumentError, ['reshape', 'null']],
  ['reshape', ({ be, x }) => be.reshape(x, [4, 2]), ShapeMismatchError, ['reshape', '[4, 2]']],
  ['permute', ({ be, x }) => be.permute(x, any(null)), InvalidArgumentError, ['permute', 'perm', 'null']],
  ['permute', ({ be, x }) => be.permute(x, any(['1', '0'])), InvalidArgumentError, ['permute', 'perm']],
  ['expand', ({ be, x }) => be.expand(x, any(null)), InvalidArgumentError, ['expand', 'shape', 'null']],
  ['expand', ({ be }) => be.expand(any(null), [2, 3]), InvalidArgumentError, ['expand', 'null']],
  ['shrink', ({ be, x }) => be.shrink(x, any(null)), InvalidArgumentError, ['shrink', 'bounds', 'null']],
  ['shrink', ({ be, x }) => be.shrink(x, any([1, 2])), InvalidArgumentError, ['shrink', 'bounds', '[2, 3]']],
  [
    'shrink',
    ({ be, x }) =>
      be.shrink(x, [
        [0, 3],
        [0, 3],
      ]),
    InvalidArgumentError,
    ['shrink'],
  ],
  ['stride', ({ be, x }) => be.stride(x, any(null)), InvalidArgumentError, ['stride', 'steps', 'null']],
  ['stride', ({ be, x }) => be.stride(x, [1, 0]), InvalidArgumentError, ['stride', '0']],
  ['pad', ({ be, x }) => be.pad(x, any([1, 2])), InvalidArgumentError, ['pad', 'pads', '[1, 2]', '[2, 3]']],
  ['pad', ({ be, x }) => be.pad(x, any(null)), InvalidArgumentError, ['pad', 'pads', 'null']],
  [
    'pad',
    ({ be, x }) =>
      be.pad(
        x,
        [
          [0, 0],
          [0, 1],
        ],
        any(null),
      ),
    InvalidArgumentError,
    ['pad', 'value', 'null'],
  ],
  [
    'pad',
    ({ be, x }) =>
      be.pad(x, [
        [0, 0],
        [-1, 0],
      ]),
    InvalidArgumentError,
    ['pad'],
  ],
  ['contiguous', ({ be }) => be.contiguous(any(null)), InvalidArgumentError, ['null']],
  ['cast', ({ be }) => be.cast(any(null), 'int32'), InvalidArgumentError, ['cast', 'null']],
  ['cast', ({ be, x }) => be.cast(x, any('complex64')), DTypeError, ['complex64']],
  ['assign', ({ be, x }) => be.assign(any(null), x), InvalidArgumentError, ['assign', 'target', 'null']],
  ['assign', ({ be, m }) => be.assign(m, any(null)), InvalidArgumentError, ['assign', 'value', 'null']],
  ['assign', ({ be, m, xi }) => be.assign(m, xi), DTypeError, ['assign', 'int32']],
  // matmul
  ['matmul', ({ be, x }) => be.matmul(any(null), x), InvalidArgumentError, ['matmul', 'a', 'null']],
  ['matmul', ({ be, x }) => be.matmul(x, any(undefined)), InvalidArgumentError, ['matmul', 'b', 'undefined']],
  ['matmul', ({ be, x }) => be.matmul(x, x), ShapeMismatchError, ['matmul', '[2, 3]']],
  ['matmul', ({ be, x }) => be.matmul(x, be.permute(x, [1, 0]), x), ShapeMismatchError, ['bias', '[2, 3]', '[2, 2]']],
  [
    'matmul',
    ({ be, x }) => be.matmul(x, be.permute(x, [1, 0]), be.reshape(x, [3, 2, 1])),
    ShapeMismatchError,
    ['bias', '[3, 2, 1]', '[2, 2]'],
  ],
  ['matmul', ({ be, x, xi }) => be.matmul(x, be.permute(x, [1, 0]), xi), DTypeError, ['matmul', 'bias', 'int32']],
  ['matmul', ({ be, x }) => be.matmul(x, be.permute(x, [1, 0]), any('b')), InvalidArgumentError, ['matmul', 'bias']],
  // composites
  ['fusedElementwise', ({ be }) => be.fusedElementwise(any(null), [{ op: 'relu' }]), InvalidArgumentError, ['null']],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, any(null)),
    InvalidArgumentError,
    ['fusedElementwise', 'steps', 'null'],
  ],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, [{ op: 'add', scalar: any('1') }]),
    InvalidArgumentError,
    ['fusedElementwise', 'scalar'],
  ],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, [{ op: 'add', array: any(null) }]),
    InvalidArgumentError,
    ['fusedElementwise', "step 0's array", 'null'],
  ],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, [{ op: 'relu' }, { op: 'mul', array: any({ ...x, strides: [3, 2] }) }]),
    InvalidArgumentError,
    ['fusedElementwise', "step 1's array"],
  ],
  [
    'fusedElementwise',
    ({ be, x, xi }) => be.fusedElementwise(x, [{ op: 'add', array: xi }]),
    DTypeError,
    ['fusedElementwise', 'int32', 'float32'],
  ],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, [{ op: 'add', array: be.reshape(x, [3, 2]) }]),
    ShapeMismatchError,
    ['fusedElementwise', "step 0's array", '[3, 2]', '[2, 3]'],
  ],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, [{ op: 'add', array: be.reshape(x, [1, 2, 3]) }]),
    ShapeMismatchError,
    ['fusedElementwise', '[1, 2, 3]', "chain's shape"],
  ],
  [
    'fusedElementwise',
    ({ be, x }) => be.fusedElementwise(x, [any({ op: 'add', array: x, scalar: 1 })]),
    InvalidArgumentError,
    ['fusedElementwise', 'both a scalar and an array'],
  ],
  ['softmax', ({ be }) => be.softmax(any(null)), InvalidArgumentError, ['softmax', 'null']],
  ['softmax', ({ be, x }) => be.softmax(x, any(null)), InvalidArgumentError, ['softmax', 'axis', 'null']],
  ['softmax', ({ be, x }) => be.softmax(x, 2), InvalidArgumentError, ['axis 2', 'rank 2']],
  ['logSoftmax', ({ be }) => be.logSoftmax(any(undefined)), InvalidArgumentError, ['logSoftmax', 'undefined']],
  ['logSoftmax', ({ be, x }) => be.logSoftmax(x, any('1')), InvalidArgumentError, ['logSoftmax', 'axis']],
  [
    'softmaxCrossEntropy',
    ({ be, y }) => be.softmaxCrossEntropy(any(null), y),
    InvalidArgumentError,
    ['softmaxCrossEntropy', 'logits', 'null'],
  ],
  [
    'softmaxCrossEntropy',
    ({ be, x }) => be.softmaxCrossEntropy(x, any(null)),
    InvalidArgumentError,
    ['softmaxCrossEntropy', 'labels', 'null'],
  ],
  [
    'softmaxCrossEntropy',
    ({ be, x, y }) => be.softmaxCrossEntropy(x, y, any('yes')),
    InvalidArgumentError,
    ['softmaxCrossEntropy', 'withGrad'],
  ],
  [
    'softmaxCrossEntropy',
    ({ be, x, y }) => be.softmaxCrossEntropy(x, be.permute(y, [1, 0])),
    ShapeMismatchError,
    ['softmaxCrossEntropy', '[2, 3]', '[3, 2]'],
  ],
  [
    'softmaxCrossEntropy',
    ({ be, x, xi }) => be.softmaxCrossEntropy(x, xi),
    DTypeError,
    ['softmaxCrossEntropy', 'int32'],
  ],
  // optimizer steps: hyper-parameters
  [
    'adamStep',
    ({ be, x, y, m, v }) => be.adamStep(x.buffer, y, m, v, any(null)),
    InvalidArgumentError,
    ['adamStep', 'null'],
  ],
  ...(
    [
      ['step', 0],
      ['step', NaN],
      ['step', -1],
      ['step', 1.5],
      ['step', Infinity],
      ['lr', -1e-3],
      ['lr', NaN],
      ['lr', Infinity],
      ['beta1', 1],
      ['beta1', -0.1],
      ['beta2', NaN],
      ['beta2', 1.5],
      ['eps', -1],
      ['eps', NaN],
      ['weightDecay', -0.1],
      ['weightDecay', Infinity],
      ['step', undefined],
      ['lr', '0.1'],
    ] as [string, unknown][]
  ).map(
    ([k, val]): Bad => [
      'adamStep',
      ({ be, x, y, m, v }) => be.adamStep(x.buffer, y, m, v, any({ ...hyper, [k]: val })),
      InvalidArgumentError,
      ['adamStep', k],
    ],
  ),
  [
    'adamStep',
    ({ be, y, m, v }) => be.adamStep(any(null), y, m, v, hyper),
    InvalidArgumentError,
    ['adamStep', 'param', 'null'],
  ],
  [
    'adamStep',
    ({ be, x, m, v }) => be.adamStep(x.buffer, any(null), m, v, hyper),
    InvalidArgumentError,
    ['adamStep', 'grad', 'null'],
  ],
  [
    'adamStep',
    ({ be, x, y, v }) => be.adamStep(x.buffer, y, any(undefined), v, hyper),
    InvalidArgumentError,
    ['adamStep', 'm', 'undefined'],
  ],
  [
    'adamStep',
    ({ be, x, y, m }) => be.adamStep(x.buffer, y, m, m, hyper),
    InvalidArgumentError,
    ['adamStep', 'distinct'],
  ],
  [
    'adamStep',
    ({ be, x, m, v }) => be.adamStep(x.buffer, x, m, v, hyper),
    InvalidArgumentError,
    ['adamStep', 'distinct'],
  ],
  [
    'adamStep',
    ({ be, x, y, m, tmp }) => be.adamStep(x.buffer, y, m, tmp(5), hyper),
    ShapeMismatchError,
    ['adamStep', 'v', '5', '[2, 3]'],
  ],
  [
    'sgdStep',
    ({ be, x, y }) => be.sgdStep(x.buffer, y, null, any(undefined)),
    InvalidArgumentError,
    ['sgdStep', 'undefined'],
  ],
  ...(
    [
      ['lr', NaN],
      ['lr', -1],
      ['momentum', -0.5],
      ['momentum', NaN],
      ['weightDecay', NaN],
      ['weightDecay', -1],
    ] as [string, number][]
  ).map(
    ([k, val]): Bad => [
      'sgdStep',
      ({ be, x, y, m }) => be.sgdStep(x.buffer, y, m, { ...sgd, momentum: 0.9, [k]: val }),
      InvalidArgumentError,
      ['sgdStep', k],
    ],
  ),
  [
    'sgdStep',
    ({ be, x, y }) => be.sgdStep(x.buffer, y, null, { ...sgd, momentum: 0.9 }),
    InvalidArgumentError,
    ['sgdStep', 'momentum', 'velocity'],
  ],
  ['sgdStep', ({ be, y }) => be.sgdStep(any(null), y, null, sgd), InvalidArgumentError, ['sgdStep', 'param', 'null']],
  [
    'sgdStep',
    ({ be, x, y }) => be.sgdStep(x.buffer, y, any({}), { ...sgd, momentum: 0.9 }),
    InvalidArgumentError,
    ['sgdStep', 'velocity'],
  ],
  ['sgdStep', ({ be, x, xi }) => be.sgdStep(x.buffer, xi, null, sgd), DTypeError, ['sgdStep', 'float32']],
  ...LAYOUT_AND_INDEX_BAD,
  ...LOSS_BAD,
  ...CONV_BAD,
  ...LOGIC_BAD,
  ...SCAN_BAD,
  ...QUANT_BAD,
  ...SCATTER_BAD,
  ...NORM_BAD,
  ...AMP_BAD,
  ...ATTENTION_BAD,
];

// Every storage method, and every op of the table (OP_METHODS, derived from hal/src/ops/).
const METHODS: string[] = [
  'allocate',
  'deallocate',
  'free',
  'write',
  'copyToDevice',
  'read',
  'copyFromDevice',
  'readHandle',
  'readSync',
  'fromArray',
  'full',
  'assign',
  ...OP_METHODS,
];

test('every public method of ComputeBackend that takes arguments has bad-argument cases', () => {
  const covered = new Set(BAD.map((b) => b[0]));
  expect(METHODS.filter((m) => !covered.has(m))).toEqual([]);
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`argument validation: ${name}`, () => {
    let f: Fixture | undefined;
    let unavailable = '';
    const helpers: DeviceBuffer[] = [];
    beforeAll(async () => {
      try {
        const be = await factory();
        f = {
          be,
          x: be.fromArray(X, [2, 3]),
          y: be.fromArray(Y, [2, 3]),
          xi: be.fromArray([1, 2, 3, 4, 5, 6], [2, 3], 'int32'),
          m: be.fromArray(Y, [6]).buffer,
          v: be.fromArray([0.5, 0.25, 1, 2, 0.125, 4], [6]).buffer,
          tmp: (size) => {
            const b = be.allocate(size);
            helpers.push(b);
            return b;
          },
        };
      } catch (e) {
        unavailable = (e as Error).message;
      }
    }, 120_000);
    afterAll(() => f?.be.dispose());
    const need = (): Fixture => {
      if (!f && requiredBackends().includes(name))
        throw new Error(`${name} is required here but unavailable: ${unavailable}`);
      return f!;
    };

    /** Runs a bad call: it must throw (or reject with) `cls` naming `words`, allocate nothing and change no array. */
    const expectRejected = async (
      fx: Fixture,
      call: (f: Fixture) => unknown,
      cls: ErrorClass,
      words: string[],
    ): Promise<void> => {
      const { be } = fx;
      const before = { live: be.liveBufferCount(), bytes: be.memoryStats().liveBytes };
      let thrown: unknown;
      try {
        await call(fx);
      } catch (e) {
        thrown = e;
      }
      for (const b of helpers.splice(0)) be.deallocate(b);
      expect(thrown).toBeInstanceOf(cls);
      expect((thrown as Error).name).toBe(cls.name);
      for (const w of words) expect((thrown as Error).message).toContain(w);
      // Nothing allocated (helper buffers of the case were freed above).
      const extra = be.liveBufferCount() - before.live;
      expect(extra).toBe(0);
      expect(be.memoryStats().liveBytes).toBe(before.bytes);
      expect(Array.from(await be.read(fx.x))).toEqual(X.map(Math.fround));
      expect(Array.from(await be.read(fx.y))).toEqual(Y.map(Math.fround));
      expect(Array.from(await be.read(fx.m))).toEqual(Y.map(Math.fround));
      expect(Array.from(await be.read(fx.v))).toEqual([0.5, 0.25, 1, 2, 0.125, 4]);
      expect(Array.from(await be.read(fx.xi))).toEqual([1, 2, 3, 4, 5, 6]);
    };

    BAD.forEach(([method, call, cls, words], i) => {
      test(`${method} #${i}: ${cls.name} (${words.join(', ')})`, async () => {
        const fx = need();
        if (!fx) return;
        await expectRejected(fx, call, cls, words);
      });
    });

    test('adamStep with step 0 or NaN leaves param, m and v intact (no NaN written)', async () => {
      const fx = need();
      if (!fx) return;
      for (const step of [0, NaN]) {
        await expectRejected(
          fx,
          ({ be, x, y, m, v }) => be.adamStep(x.buffer, y, m, v, { ...hyper, step }),
          InvalidArgumentError,
          ['step'],
        );
      }
      // and a valid step still works: p' = p − lr·sign(g) at step 1 (|m̂/√v̂| = 1 for v = m = 0).
      const { be } = fx;
      const p = be.fromArray([1, 2], [2]);
      const g = be.fromArray([0.5, -4], [2]);
      const [m, v] = [be.full([2], 0).buffer, be.full([2], 0).buffer];
      be.adamStep(p.buffer, g, m, v, { ...hyper, lr: 0.1 });
      const got = Array.from(await be.read(p));
      expect(got[0]).toBeCloseTo(0.9, 5);
      expect(got[1]).toBeCloseTo(2.1, 5);
      for (const b of [p.buffer, g.buffer, m, v]) be.deallocate(b);
    });

    test('a mean over a named reduction routes through mean(), not reduce()', async () => {
      const fx = need();
      if (!fx) return;
      await expectRejected(fx, ({ be, x }) => be.reduce(any('mean'), x), UnsupportedOpError, ['mean', 'mean()']);
    });

    test(
      'unknown op names also throw from the kernel switch of the backend (no fallthrough to ' + 'another op)',
      async () => {
        const fx = need();
        if (!fx) return;
        const be = fx.be as unknown as Record<string, (...a: unknown[]) => void>;
        const out = fx.be.allocate(6);
        try {
          expect(() => be['unaryKernel']!('notAnOp', fx.x, out)).toThrow(UnsupportedOpError);
          expect(() => be['binaryKernel']!('notAnOp', fx.x, fx.y, out)).toThrow(UnsupportedOpError);
          const red = fx.be.allocate(2);
          try {
            expect(() => be['reduceKernel']!('median', fx.x, [1], red)).toThrow(UnsupportedOpError);
          } finally {
            fx.be.deallocate(red);
          }
          await fx.be.synchronize(); // nothing was encoded that fails later
        } finally {
          fx.be.deallocate(out);
        }
      },
    );

    test('an array of another instance is a DeviceMismatchError, a freed one a UseAfterFreeError', async () => {
      const fx = need();
      if (!fx) return;
      const other = await factory();
      try {
        const o = other.fromArray([1, 2, 3, 4, 5, 6], [2, 3]);
        await expectRejected(fx, ({ be, x }) => be.add(x, o), DeviceMismatchError, ['add']);
        await expectRejected(
          fx,
          ({ be, x, y, m }) => be.adamStep(x.buffer, y, m, o.buffer, hyper),
          DeviceMismatchError,
          ['adamStep'],
        );
        const t = fx.be.full([2, 3], 1);
        fx.be.free(t);
        await expectRejected(fx, ({ be }) => be.softmaxCrossEntropy(t, t), UseAfterFreeError, ['softmaxCrossEntropy']);
      } finally {
        other.dispose();
      }
    });
  });
}
