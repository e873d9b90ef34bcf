/**
 * TensorProto decoding: dtypes, int64 values as protobufjs returns them, raw_data / typed-field / external
 * data into typed arrays. Every fault is an OnnxDecodeError naming the tensor; nothing is allocated from a
 * claimed shape before the bytes that back it are there.
 */
import { OnnxDecodeError } from './wire.js';

/** An int64 as protobufjs returns it: a number, a Long (the `long` package, where loaded) or a string. */
export type Int64 = number | { low: number; high: number; unsigned?: boolean } | string;

/** A protobufjs int64 as an exact bigint; OnnxDecodeError for a number that was already rounded (no `long`). */
export function int64ToBigInt(v: Int64 | null | undefined, what = 'an int64'): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'string') return BigInt(v);
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new OnnxDecodeError(`${what}: int64 value ${v} was rounded in decoding`);
    return BigInt(v);
  }
  const low = BigInt(v.low >>> 0);
  const high = v.unsigned ? BigInt(v.high >>> 0) : BigInt(v.high | 0);
  return (high << 32n) + low;
}

/** A protobufjs int64 as a JS number; OnnxDecodeError (naming `what`) past ±(2^53 − 1). */
export function int64ToNumber(v: Int64 | null | undefined, what = 'an int64'): number {
  if (v === null || v === undefined) return 0;
  const exact = typeof v === 'number' ? v : int64ToBigInt(v, what);
  const n = Number(exact);
  if (!Number.isSafeInteger(n)) throw new OnnxDecodeError(`${what}: int64 value ${String(exact)} is beyond ±2^53`);
  return n;
}

/**
 * A protobufjs int64 as a JS number clamped to ±2^53: ONNX's INT64_MAX/INT64_MIN sentinels (Slice's "to the
 * end", a Split's "the rest") keep their meaning, and no dimension, index or axis reaches 2^53.
 */
export function int64Clamped(v: Int64 | null | undefined): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return Math.max(-(2 ** 53), Math.min(2 ** 53, v));
  const b = int64ToBigInt(v);
  const lim = 2n ** 53n;
  return Number(b > lim ? lim : b < -lim ? -lim : b);
}

/** ONNX TensorProto.DataType codes (onnx.proto) → names. */
export const ONNX_DTYPES: Record<number, string> = {
  0: 'undefined',
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  8: 'string',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  12: 'uint32',
  13: 'uint64',
  14: 'complex64',
  15: 'complex128',
  16: 'bfloat16',
};
export const onnxDTypeName = (code: number): string => ONNX_DTYPES[code] ?? `data type ${code}`;

/**
 * Where an external tensor's bytes are (TensorProto.external_data, `data_location = EXTERNAL`): `location`, a
 * path relative to the model's directory; `offset` (default 0) and `length` (default: the tensor's size) in
 * bytes.
 */
export interface OnnxExternalData {
  /** The file, relative to the model's directory. */
  location: string;
  /** Byte offset in the file (0 when the model gives none). */
  offset: number;
  /** Byte length (absent: the tensor's size). */
  length?: number;
}

/**
 * Reads an external tensor's bytes: exactly `length` bytes of `location` from `offset`. It should throw
 * when the file is shorter than `offset + length` (before allocating `length` bytes: see
 * `externalDataFromDirectory`); a result of another length is an OnnxDecodeError naming the tensor.
 */
export type ExternalDataLoader = (location: string, offset: number, length: number) => Uint8Array;

/**
 * A decoded tensor. `data`: float32 and float16 (its exact values) → Float32Array,
 * int32/int16/int8/uint8/uint16/bool → Int32Array, int64 → BigInt64Array (exact), float64 → Float64Array;
 * undefined for types whose values are not decoded (string, bfloat16, complex, uint32/uint64) — `dtype`
 * still names them. `external`: where the values came from, for a tensor stored outside the model.
 */
export interface OnnxTensor {
  /** The tensor's name ('' when it has none, as in some attributes). */
  name: string;
  /** The ONNX element type's name (`float32`, `int64`, `string`, ...). */
  dtype: string;
  /** The shape. */
  dims: number[];
  /** The values, row-major (see above); undefined for types not decoded. */
  data?: Float32Array | Int32Array | BigInt64Array | Float64Array;
  /** Where the values were stored, for a tensor stored outside the model. */
  external?: OnnxExternalData;
}

type Msg = Record<string, unknown>;

/** The value of IEEE 754 binary16 bits `h`. */
function half(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const f = h & 1023;
  if (e === 31) return f ? Number.NaN : sign * Infinity;
  return sign * (e === 0 ? f * 2 ** -24 : (1024 + f) * 2 ** (e - 25));
}

/** Bytes per element of raw_data, for the dtypes whose data is decoded. */
export const RAW_BYTES: Readonly<Record<string, number>> = {
  float32: 4,
  float16: 2,
  float64: 8,
  int64: 8,
  int32: 4,
  int16: 2,
  uint16: 2,
  int8: 1,
  uint8: 1,
  bool: 1,
};

/** An aligned copy of little-endian `raw` (ONNX raw_data is little-endian, as are the hosts we run on). */
function aligned(raw: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  return copy.buffer;
}

/** Little-endian bytes of a decoded dtype (a whole number of elements) as OnnxTensor['data']. */
function fromBytes(dtype: string, raw: Uint8Array): NonNullable<OnnxTensor['data']> {
  const n = raw.length / RAW_BYTES[dtype]!;
  switch (dtype) {
    case 'float32':
      return new Float32Array(aligned(raw), 0, n);
    case 'float16':
      return Float32Array.from(new Uint16Array(aligned(raw), 0, n), half);
    case 'float64':
      return new Float64Array(aligned(raw), 0, n);
    case 'int64':
      return new BigInt64Array(aligned(raw), 0, n);
    case 'int32':
      return new Int32Array(aligned(raw), 0, n);
    case 'int16':
      return Int32Array.from(new Int16Array(aligned(raw), 0, n));
    case 'uint16':
      return Int32Array.from(new Uint16Array(aligned(raw), 0, n));
    case 'int8':
      return Int32Array.from(new Int8Array(raw.buffer, raw.byteOffset, n));
    default: // uint8, bool
      return Int32Array.from(raw);
  }
}

/** The values of the typed field (float_data, int32_data, ...) that holds `dtype`. */
function fromFields(dtype: string, m: Msg, name: string): NonNullable<OnnxTensor['data']> {
  switch (dtype) {
    case 'float32':
      return Float32Array.from((m['float_data'] as number[] | undefined) ?? []);
    case 'float16': // one uint16 bit pattern per int32_data element
      return Float32Array.from((m['int32_data'] as number[] | undefined) ?? [], (h) => half(h & 0xffff));
    case 'float64':
      return Float64Array.from((m['double_data'] as number[] | undefined) ?? []);
    case 'int64':
      return BigInt64Array.from((m['int64_data'] as Int64[] | undefined) ?? [], (v) =>
        int64ToBigInt(v, `tensor '${name}'`),
      );
    default:
      return Int32Array.from((m['int32_data'] as number[] | undefined) ?? []);
  }
}

/** The external_data key/value pairs of a tensor, checked: location (relative, inside), offset, length. */
function externalFrom(m: Msg, name: string): OnnxExternalData {
  const entries = (m['external_data'] as Msg[] | undefined) ?? [];
  const kv = new Map(entries.map((e) => [(e['key'] as string | undefined) ?? '', (e['value'] as string) ?? '']));
  const location = kv.get('location');
  if (!location) throw new OnnxDecodeError(`tensor '${name}': external data without a location`);
  const parts = location.split(/[\\/]/);
  if (/^([\\/]|[A-Za-z]:)/.test(location) || parts.includes('..') || location.includes('\0'))
    throw new OnnxDecodeError(
      `tensor '${name}': external data location '${location}' is outside the model's directory`,
    );
  const count = (key: string): number | undefined => {
    const v = kv.get(key);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
      throw new OnnxDecodeError(`tensor '${name}': external data ${key} '${v}' is not a byte count`);
    return Number(v);
  };
  const length = count('length');
  return { location, offset: count('offset') ?? 0, ...(length === undefined ? {} : { length }) };
}

/** How a tensor is decoded: the loader of external data (none: an external tensor is an error). */
export interface TensorContext {
  externalData?: ExternalDataLoader;
}

/**
 * A TensorProto message (protobufjs plain object) as an OnnxTensor. OnnxDecodeError, naming the tensor, for
 * no data_type, a negative or unsafe dimension, raw_data that is no whole number of elements, values that do
 * not fill the shape, or external data that is missing, out of bounds or without a loader.
 */
export function tensorFrom(m: Msg, ctx: TensorContext = {}): OnnxTensor {
  const code = (m['data_type'] as number | undefined) ?? 0;
  const name = (m['name'] as string | undefined) ?? '';
  const what = `tensor '${name}'`;
  if (code === 0) throw new OnnxDecodeError(`${what} has no data_type`);
  const dtype = onnxDTypeName(code);
  const dims = ((m['dims'] as Int64[] | undefined) ?? []).map((d) => int64ToNumber(d, `${what} dimension`));
  const negative = dims.find((d) => d < 0);
  if (negative !== undefined) throw new OnnxDecodeError(`${what} has dimension ${negative}`);
  const size = dims.reduce((p, d) => p * d, 1);
  const shape = `[${dims.join(', ')}]`;
  /** The element count in words, exact past 2^53. */
  const count = () => String(dims.reduce((p, d) => p * BigInt(d), 1n));
  const bytes = RAW_BYTES[dtype];
  if ((m['data_location'] as number | undefined) === 1) {
    const external = externalFrom(m, name);
    if (bytes === undefined) return { name, dtype, dims, external };
    const need = size * bytes;
    if (external.length !== undefined && external.length !== need)
      throw new OnnxDecodeError(
        `${what} of ${dtype} ${shape} needs ${need} bytes; its external data has length ${external.length}`,
      );
    if (!Number.isSafeInteger(need) || !Number.isSafeInteger(external.offset + need))
      throw new OnnxDecodeError(`${what} of ${dtype} ${shape} claims ${count()} elements of ${bytes} bytes`);
    if (!ctx.externalData)
      throw new OnnxDecodeError(
        `${what} is stored in external file '${external.location}': decode with an external data loader`,
      );
    let raw: Uint8Array;
    try {
      raw = ctx.externalData(external.location, external.offset, need);
    } catch (e) {
      throw new OnnxDecodeError(
        `${what}: cannot read ${need} bytes at offset ${external.offset} of '${external.location}': ` +
          (e as Error).message,
      );
    }
    if (raw.length !== need)
      throw new OnnxDecodeError(`${what}: '${external.location}' gave ${raw.length} bytes, not ${need}`);
    return { name, dtype, dims, data: fromBytes(dtype, raw), external };
  }
  if (bytes === undefined) return { name, dtype, dims };
  const raw = m['raw_data'] as Uint8Array | undefined;
  const hasRaw = raw !== undefined && raw.length > 0;
  if (hasRaw && raw.length % bytes !== 0)
    throw new OnnxDecodeError(`${what}: raw_data of ${raw.length} bytes is no whole number of ${dtype}`);
  // compare counts before decoding: a shape of many GB over a few bytes is an error, never an allocation
  const held = hasRaw ? raw.length / bytes : countFields(dtype, m);
  if (held !== size) throw new OnnxDecodeError(`${what} of shape ${shape} holds ${held} values, not ${count()}`);
  return { name, dtype, dims, data: hasRaw ? fromBytes(dtype, raw) : fromFields(dtype, m, name) };
}

/** How many values the typed field that holds `dtype` has. */
function countFields(dtype: string, m: Msg): number {
  const key =
    dtype === 'float32' ? 'float_data' : dtype === 'float64' ? 'double_data' : dtype === 'int64' ? 'int64_data' : '';
  return ((m[key || 'int32_data'] as unknown[] | undefined) ?? []).length;
}
