/**
 * Creation functions (NumPy/PyTorch names): `zeros`, `ones`, `full`, `arange`, `linspace`, `eye`, `tensor`
 * (nested arrays, shape and dtype inferred) and the `*Like` forms. Every function takes the backend first,
 * as `Tensor.fromArray` does; a `*Like` form takes the backend, shape and dtype of its model tensor. The
 * values are computed in float64 on the host and uploaded once, so they are the same on every backend.
 * Random tensors (`rand`, `randn`, `randint`) are in random.ts.
 */
import {
  type ComputeBackend,
  type DType,
  DTypeError,
  InvalidArgumentError,
  isDType,
  ShapeMismatchError,
} from '@polyhal/hal';
import { Tensor } from './tensor.js';

/** Options of every creation function. */
export interface CreationOptions {
  /** The element type (default float32; a `*Like` form defaults to its model's dtype). */
  dtype?: DType;
  /** Whether the new tensor is a leaf that records gradients (default false). */
  requiresGrad?: boolean;
}

/** A value of a nested array as `tensor`/`Tensor.from` take it: numbers or booleans, nested to any depth. */
export type NestedArray = number | boolean | ArrayLike<number> | readonly NestedArray[];

/** Checks a shape: integers ≥ 0; InvalidArgumentError naming `op` otherwise. */
export function checkShape(op: string, shape: readonly number[]): void {
  if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0))
    throw new InvalidArgumentError(`${op}: shape must be a list of integers ≥ 0, got ${JSON.stringify(shape)}`);
}

function checkDType(op: string, dtype: DType | undefined): void {
  if (dtype !== undefined && !isDType(dtype)) throw new DTypeError(`${op}: unknown dtype ${JSON.stringify(dtype)}`);
}

function checkFinite(op: string, name: string, v: unknown): asserts v is number {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new InvalidArgumentError(`${op}: ${name} must be a finite number, got ${String(v)}`);
}

function upload(be: ComputeBackend, data: ArrayLike<number>, shape: readonly number[], opts: CreationOptions): Tensor {
  return Tensor.fromArray(be, data, shape, { dtype: opts.dtype ?? 'float32', requiresGrad: opts.requiresGrad });
}

/** `value` everywhere: a tensor of `shape` (dtype float32 unless given; int32 truncates). */
export function full(be: ComputeBackend, shape: readonly number[], value: number, opts: CreationOptions = {}): Tensor {
  checkShape('full', shape);
  checkDType('full', opts.dtype);
  if (typeof value !== 'number') throw new InvalidArgumentError(`full: value must be a number, got ${String(value)}`);
  return Tensor.full(be, shape, value, opts);
}

/** Zeros of `shape` (PyTorch `torch.zeros`, tfjs `tf.zeros`), float32 unless `dtype` is given. */
export function zeros(be: ComputeBackend, shape: readonly number[], opts: CreationOptions = {}): Tensor {
  return full(be, shape, 0, opts);
}

/** Ones of `shape` (PyTorch `torch.ones`, tfjs `tf.ones`), float32 unless `dtype` is given. */
export function ones(be: ComputeBackend, shape: readonly number[], opts: CreationOptions = {}): Tensor {
  return full(be, shape, 1, opts);
}

/** Zeros of `like`'s shape, dtype (unless given) and backend. */
export function zerosLike(like: Tensor, opts: CreationOptions = {}): Tensor {
  like.assertLive('zerosLike');
  return full(like.backend, like.shape, 0, { dtype: like.dtype, ...opts });
}

/** Ones of `like`'s shape, dtype (unless given) and backend. */
export function onesLike(like: Tensor, opts: CreationOptions = {}): Tensor {
  like.assertLive('onesLike');
  return full(like.backend, like.shape, 1, { dtype: like.dtype, ...opts });
}

/** `value` in `like`'s shape, dtype (unless given) and backend. */
export function fullLike(like: Tensor, value: number, opts: CreationOptions = {}): Tensor {
  like.assertLive('fullLike');
  return full(like.backend, like.shape, value, { dtype: like.dtype, ...opts });
}

/**
 * A 1-D tensor of start, start + step, ... up to `end` excluded (PyTorch `torch.arange`, NumPy `arange`,
 * tfjs `tf.range`): ceil((end − start) / step) elements, element i = start + i·step computed in float64,
 * then stored in `dtype` (float32 by default; int32 truncates). `arange(be, end)` starts at 0; the last
 * argument may be the options. An empty tensor when `end` lies behind `start` in the step's direction (as
 * NumPy and tfjs). InvalidArgumentError for a non-finite bound or step, a step of 0, or more than 2^31 − 1
 * elements.
 */
export function arange(be: ComputeBackend, end: number, opts?: CreationOptions): Tensor;
export function arange(be: ComputeBackend, start: number, end: number, opts?: CreationOptions): Tensor;
export function arange(be: ComputeBackend, start: number, end: number, step: number, opts?: CreationOptions): Tensor;
export function arange(be: ComputeBackend, ...args: (number | CreationOptions | undefined)[]): Tensor {
  const last = args[args.length - 1];
  const opts = typeof last === 'object' && last !== null ? (args.pop() as CreationOptions) : {};
  while (args.length > 0 && args[args.length - 1] === undefined) args.pop();
  if (args.length < 1 || args.length > 3)
    throw new InvalidArgumentError(
      `arange: takes (end), (start, end) or (start, end, step), got ${args.length} numbers`,
    );
  const [start, end, step] = args.length === 1 ? [0, args[0], 1] : [args[0], args[1], args[2] ?? 1];
  checkFinite('arange', 'start', start);
  checkFinite('arange', 'end', end);
  checkFinite('arange', 'step', step);
  if (step === 0) throw new InvalidArgumentError('arange: step must not be 0');
  checkDType('arange', opts.dtype);
  const count = Math.max(0, Math.ceil((end - start) / step));
  if (count > 2 ** 31 - 1)
    throw new InvalidArgumentError(`arange: [${start}, ${end}) by ${step} has ${count} elements, over 2^31 − 1`);
  const data = new Float64Array(count);
  for (let i = 0; i < count; i++) data[i] = start + i * step;
  return upload(be, data, [count], opts);
}

/**
 * `num` evenly spaced values from `start` to `stop`, both included (PyTorch `torch.linspace`, NumPy
 * `linspace`, tfjs `tf.linspace`): element i = start + i·(stop − start)/(num − 1) in float64, the last
 * exactly `stop`; `num` = 1 gives [start]. InvalidArgumentError for a non-finite bound or a `num` that is
 * not an integer ≥ 0.
 */
export function linspace(be: ComputeBackend, start: number, stop: number, num: number, opts: CreationOptions = {}) {
  checkFinite('linspace', 'start', start);
  checkFinite('linspace', 'stop', stop);
  if (!Number.isInteger(num) || num < 0 || num > 2 ** 31 - 1)
    throw new InvalidArgumentError(`linspace: num must be an integer in [0, 2^31 − 1], got ${String(num)}`);
  checkDType('linspace', opts.dtype);
  const data = new Float64Array(num);
  const delta = num > 1 ? (stop - start) / (num - 1) : 0;
  for (let i = 0; i < num; i++) data[i] = start + i * delta;
  if (num > 1) data[num - 1] = stop;
  return upload(be, data, [num], opts);
}

/**
 * The identity matrix [n, m] (m = n unless given): ones on the main diagonal, zeros elsewhere (PyTorch
 * `torch.eye`, tfjs `tf.eye`). InvalidArgumentError unless n and m are integers ≥ 0.
 */
export function eye(be: ComputeBackend, n: number, m: number = n, opts: CreationOptions = {}): Tensor {
  for (const [name, v] of [
    ['n', n],
    ['m', m],
  ] as const)
    if (!Number.isInteger(v) || v < 0) throw new InvalidArgumentError(`eye: ${name} must be an integer ≥ 0, got ${v}`);
  checkDType('eye', opts.dtype);
  const data = new Float32Array(n * m);
  for (let i = 0; i < Math.min(n, m); i++) data[i * m + i] = 1;
  return upload(be, data, [n, m], opts);
}

function isArrayLike(v: unknown): v is ArrayLike<unknown> {
  return Array.isArray(v) || ArrayBuffer.isView(v);
}

/** Walks a nested array: its shape (from the first element at each depth) and its leaves, row-major. */
function flattenNested(data: NestedArray): { shape: number[]; values: number[]; kind: 'number' | 'boolean' | null } {
  const shape: number[] = [];
  for (let v: unknown = data; isArrayLike(v); v = v[0]) {
    shape.push(v.length);
    if (v.length === 0) break;
  }
  const values: number[] = [];
  let kind: 'number' | 'boolean' | null = null;
  const walk = (v: unknown, depth: number, path: string): void => {
    if (depth < shape.length) {
      if (!isArrayLike(v) || v.length !== shape[depth])
        throw new ShapeMismatchError(
          `tensor: ragged nested array: ${path} has ${isArrayLike(v) ? `${v.length} elements` : 'a scalar'} where ` +
            `[${shape.slice(0, depth + 1).join(', ')}] (from the first elements) wants ${shape[depth]}`,
          [shape],
        );
      for (let i = 0; i < v.length; i++) walk(v[i], depth + 1, `${path}[${i}]`);
      return;
    }
    if (isArrayLike(v))
      throw new ShapeMismatchError(`tensor: ragged nested array: ${path} is an array where a scalar is expected`, [
        shape,
      ]);
    const k = typeof v;
    if (k !== 'number' && k !== 'boolean')
      throw new InvalidArgumentError(`tensor: ${path} is ${k === 'object' ? String(v) : k}, not a number or boolean`);
    if (kind !== null && kind !== k)
      throw new DTypeError(`tensor: ${path} is a ${k} among ${kind}s; use one kind (or Number(v)) throughout`);
    kind = k as 'number' | 'boolean';
    values.push(Number(v));
  };
  walk(data, 0, 'data');
  return { shape, values, kind };
}

/**
 * A tensor from nested arrays (PyTorch `torch.tensor`, tfjs `tf.tensor`): `[[1, 2], [3, 4]]` → shape [2, 2].
 * A number gives a scalar (shape []), a typed array a 1-D tensor. The dtype is inferred: bool for
 * booleans, int32 for an Int32Array, float32 otherwise (as tfjs; PyTorch would give int64 for integers) —
 * `dtype` overrides it. Throws ShapeMismatchError for a ragged array (rows of different lengths, or an
 * array beside a scalar), DTypeError for numbers mixed with booleans, InvalidArgumentError for any other
 * leaf (strings, null, undefined).
 */
export function tensor(be: ComputeBackend, data: NestedArray, opts: CreationOptions = {}): Tensor {
  checkDType('tensor', opts.dtype);
  if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
    // A typed array: 1-D as is (no walk over its elements).
    const flat = data as unknown as ArrayLike<number>;
    const dtype = opts.dtype ?? (data instanceof Int32Array ? 'int32' : 'float32');
    return Tensor.fromArray(be, flat, [flat.length], { dtype, requiresGrad: opts.requiresGrad });
  }
  const { shape, values, kind } = flattenNested(data);
  const inferred: DType = kind === 'boolean' ? 'bool' : data instanceof Int32Array ? 'int32' : 'float32';
  return Tensor.fromArray(be, values, shape, { dtype: opts.dtype ?? inferred, requiresGrad: opts.requiresGrad });
}
