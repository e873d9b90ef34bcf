/**
 * What `InferenceSession.run` takes and gives: feeds checked against the model's inputs (names, types,
 * dims) before anything is uploaded, and outputs as host data typed by their ONNX type.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { OnnxFeedError, OnnxInt64RangeError } from './errors.js';
import { HOST_MAX } from './host-eval.js';
import type { OnnxValueInfo } from './proto.js';
import { deviceDType } from './types.js';

/** Host data of a tensor, as onnxruntime's `Tensor` carries it. */
export type TensorDataArray =
  | Float32Array
  | Float64Array
  | Int32Array
  | BigInt64Array
  | Int8Array
  | Uint8Array
  | Uint16Array
  | readonly number[]
  | readonly bigint[]
  | readonly boolean[];

/**
 * A tensor given as host data: an onnxruntime `Tensor` works as is (`type`, `dims`, `data`). `dtype` (or
 * `type`) is the ONNX element type: 'float32', 'float16', 'float64', 'int32', 'int64', 'int8', 'uint8',
 * 'bool'. `data` has prod(dims) elements: a Float32Array (or numbers) for float32, a BigInt64Array (or
 * numbers, bigints) for int64, a Uint8Array (or booleans) for bool, a Uint16Array of bit patterns (as
 * onnxruntime) or a Float32Array of values for float16.
 */
export interface TensorData {
  /** The ONNX element type (this name or `type`). */
  readonly dtype?: string;
  /** The ONNX element type under onnxruntime's name (this or `dtype`). */
  readonly type?: string;
  /** The shape. */
  readonly dims: readonly number[];
  /** prod(dims) values, row-major, in a container of the type (see above). */
  readonly data: TensorDataArray;
}

/**
 * A tensor that lives on a backend: an @polyhal/autograd `Tensor` (or any `{ backend, value }` holding an
 * NDArray). On the session's own backend it is read in place (never copied, never freed by the session);
 * on another backend it is copied. Its dtype is the HAL's: int32 feeds an int64 input (int64 runs as int32).
 */
export interface BackendTensor {
  /** The backend holding it. */
  readonly backend: ComputeBackend;
  /** The array (any view). */
  readonly value: NDArray;
  /** true when disposed: such a feed is an OnnxFeedError. */
  readonly isDisposed?: boolean;
}

/** One feed: host data, or a tensor already on a backend. */
/** One input's value: host data, or a tensor that lives on a backend. */
export type FeedValue = TensorData | BackendTensor;
/** Model input name → its value. */
export type Feeds = Readonly<Record<string, FeedValue>>;

/**
 * One output on the host. `data` by type: Float32Array (float32; float16, whose values it holds exactly),
 * Float64Array, Int32Array, BigInt64Array (int64), Int8Array, Uint8Array (uint8; bool, 0 or 1).
 */
export interface OutputTensor {
  /** The ONNX element type; `type` repeats it under onnxruntime's name. */
  readonly dtype: string;
  /** The ONNX element type again (onnxruntime's name for it). */
  readonly type: string;
  /** The output's shape. */
  readonly dims: readonly number[];
  /** prod(dims) values, row-major. */
  readonly data: Float32Array | Float64Array | Int32Array | BigInt64Array | Int8Array | Uint8Array;
}

/** A feed checked against its input: where its values go (host data, a device array to read in place, a copy). */
export interface PreparedFeed {
  readonly name: string;
  readonly type: string;
  readonly dims: readonly number[];
  /** Host data (small integer and bool feeds stay on the host: shape arithmetic reads them there). */
  readonly host?: Float64Array;
  /** Data to upload (float feeds, large integer feeds). */
  readonly upload?: ArrayLike<number>;
  /** An array of the session's backend, read in place. */
  readonly array?: NDArray;
  /** An array of another backend, copied. */
  readonly foreign?: BackendTensor;
}

const isBackendTensor = (f: unknown): f is BackendTensor =>
  typeof f === 'object' && f !== null && 'backend' in f && 'value' in f;

const sizeOf = (dims: readonly number[]): number => dims.reduce((p, d) => p * d, 1);

/** ONNX float16 bits → value. */
function half(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const f = h & 1023;
  if (e === 31) return f ? Number.NaN : sign * Infinity;
  return sign * (e === 0 ? f * 2 ** -24 : (1024 + f) * 2 ** (e - 25));
}

/**
 * Checks `feeds` against the model's inputs and says where each one's values go. Throws OnnxFeedError
 * (a name the model has no input for, a missing input, another type, rank or fixed dim, data that does
 * not fill the dims, a disposed tensor) and OnnxInt64RangeError (an int64 value beyond int32 in a feed
 * too large to stay on the host: a small one goes there, and is checked when a device op reads it), before
 * anything is uploaded. `fixed`: dims fixed by name (freeDimensionOverrides).
 */
export function prepareFeeds(
  inputs: readonly OnnxValueInfo[],
  feeds: unknown,
  be: ComputeBackend,
  fixed: Readonly<Record<string, number>>,
): PreparedFeed[] {
  const names = inputs.map((v) => v.name);
  if (typeof feeds !== 'object' || feeds === null || Array.isArray(feeds))
    throw new OnnxFeedError(
      '',
      'data',
      `run(feeds): feeds must be an object of input name → tensor (${names.join(', ')})`,
    );
  for (const k of Object.keys(feeds))
    if (!names.includes(k))
      throw new OnnxFeedError(
        k,
        'unknown',
        `run(feeds): the model has no input '${k}' (its inputs: ${names.join(', ')})`,
      );
  return inputs.map((info) => {
    const f = (feeds as Record<string, unknown>)[info.name];
    if (f === undefined || f === null)
      throw new OnnxFeedError(
        info.name,
        'missing',
        `run(feeds): input '${info.name}' is missing (${names.join(', ')})`,
      );
    return isBackendTensor(f) ? prepareArray(info, f, be, fixed) : prepareData(info, f, fixed);
  });
}

function checkDims(info: OnnxValueInfo, dims: readonly number[], fixed: Readonly<Record<string, number>>): void {
  const shape = info.shape;
  if (!shape) return;
  const want = shape.map((d, i) => d ?? fixed[info.dimParams?.[i] ?? ''] ?? null);
  if (want.length !== dims.length || want.some((d, i) => d !== null && d !== dims[i]))
    throw new OnnxFeedError(
      info.name,
      'shape',
      `run(feeds): input '${info.name}' has dims [${dims.join(', ')}], the model expects ` +
        `[${want.map((d, i) => d ?? info.dimParams?.[i] ?? '?').join(', ')}]`,
    );
}

function prepareArray(
  info: OnnxValueInfo,
  t: BackendTensor,
  be: ComputeBackend,
  fixed: Readonly<Record<string, number>>,
): PreparedFeed {
  if (t.isDisposed) throw new OnnxFeedError(info.name, 'data', `run(feeds): input '${info.name}' is a disposed tensor`);
  const x = t.value;
  const type = info.dtype!;
  if (deviceDType(type) !== x.dtype)
    throw new OnnxFeedError(
      info.name,
      'dtype',
      `run(feeds): input '${info.name}' is a tensor of ${x.dtype}, the model expects ${type}` +
        (type === 'int64' ? ' (an int32 tensor feeds it: the HAL runs int64 as int32)' : ''),
    );
  checkDims(info, x.shape, fixed);
  return t.backend === be
    ? { name: info.name, type, dims: x.shape, array: x }
    : { name: info.name, type, dims: x.shape, foreign: t };
}

function prepareData(info: OnnxValueInfo, f: unknown, fixed: Readonly<Record<string, number>>): PreparedFeed {
  const name = info.name;
  const o = f as Partial<TensorData>;
  const type = o.dtype ?? o.type;
  if (typeof f !== 'object' || typeof type !== 'string' || !Array.isArray(o.dims) || !o.data)
    throw new OnnxFeedError(
      name,
      'data',
      `run(feeds): input '${name}' must be { dtype (or type), dims, data } or a tensor of a backend`,
    );
  if (type !== info.dtype)
    throw new OnnxFeedError(name, 'dtype', `run(feeds): input '${name}' is ${type}, the model expects ${info.dtype}`);
  const dims = o.dims as number[];
  if (dims.some((d) => !Number.isInteger(d) || d < 0))
    throw new OnnxFeedError(name, 'shape', `run(feeds): input '${name}' has dims [${dims.join(', ')}]`);
  checkDims(info, dims, fixed);
  const data = o.data as ArrayLike<number | bigint | boolean>;
  if (typeof data.length !== 'number' || data.length !== sizeOf(dims))
    throw new OnnxFeedError(
      name,
      'data',
      `run(feeds): input '${name}' has ${String(data.length)} values for dims [${dims.join(', ')}] (${sizeOf(dims)})`,
    );
  // small integer and bool feeds stay on the host, where shape arithmetic reads them
  const onHost = type !== 'float32' && type !== 'float16' && type !== 'float64' && data.length <= HOST_MAX;
  const values = numbersOf(name, type, data, onHost);
  return onHost ? { name, type, dims, host: Float64Array.from(values) } : { name, type, dims, upload: values };
}

/**
 * The values as numbers, checked, float16 bits decoded. int64: on the host any value, clamped to ±2^53 (as
 * the decoder clamps ONNX's INT64_MAX/MIN sentinels: Slice's open ends keep their meaning; arithmetic that
 * leaves ±2^53 is not done on the host); for the device within int32, the HAL's storage for it.
 */
function numbersOf(
  name: string,
  type: string,
  data: ArrayLike<number | bigint | boolean>,
  onHost: boolean,
): ArrayLike<number> {
  if (type === 'int64') {
    const out = onHost ? new Float64Array(data.length) : new Int32Array(data.length);
    const [lo, hi] = onHost ? [-(2n ** 53n), 2n ** 53n] : [-(2n ** 31n), 2n ** 31n - 1n];
    for (let i = 0; i < data.length; i++) {
      const v = data[i]!;
      const n = typeof v === 'bigint' ? v : BigInt(Math.trunc(Number(v)));
      if (!onHost && (n < lo || n > hi)) throw new OnnxInt64RangeError(name, n);
      out[i] = Number(n < lo ? lo : n > hi ? hi : n);
    }
    return out;
  }
  if (type === 'float16' && data instanceof Uint16Array) return Float32Array.from(data, half);
  if (data instanceof BigInt64Array || typeof data[0] === 'bigint')
    throw new OnnxFeedError(name, 'data', `run(feeds): input '${name}' of type ${type} holds bigints`);
  if (typeof data[0] === 'boolean') return Array.from(data as ArrayLike<boolean>, Number);
  return data as ArrayLike<number>;
}

/** An output on the host, its data typed by its ONNX type. */
export function toOutput(type: string, dims: readonly number[], values: ArrayLike<number>): OutputTensor {
  let data: OutputTensor['data'];
  switch (type) {
    case 'float64':
      data = Float64Array.from(values);
      break;
    case 'int32':
      // an Int32Array or Float32Array here is a fresh read-back (host values are Float64Arrays): kept, not copied
      data = values instanceof Int32Array ? values : Int32Array.from(values);
      break;
    case 'int64':
      data = BigInt64Array.from(Array.from(values), (v) => BigInt(v));
      break;
    case 'int8':
      data = Int8Array.from(values);
      break;
    case 'uint8':
    case 'bool':
      data = Uint8Array.from(values);
      break;
    default:
      data = values instanceof Float32Array ? values : Float32Array.from(values);
  }
  return { dtype: type, type, dims: [...dims], data };
}
