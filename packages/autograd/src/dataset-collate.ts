/**
 * Collation: a list of samples → one host batch, as PyTorch's `default_collate`. Numbers, typed arrays,
 * `{ data, shape }` arrays and nested number arrays become `{ data, shape: [n, ...sample shape] }`; records and
 * tuples are collated field by field; strings become string lists. Also the upload of a host batch to a backend.
 */
import { type ComputeBackend, DTypeError, describeValue, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { Tensor } from './tensor.js';

/** Host values with their shape: row-major `data` of prod(shape) values (float32, or int32 for class indices). */
export interface HostArray {
  /** Row-major values: float32, or int32 (from Int32Array samples). */
  data: Float32Array | Int32Array;
  /** The shape ([] for a scalar). */
  shape: number[];
}

/** One sample's array given with its shape: `data` holds prod(shape) values (an Int32Array batches as int32). */
export interface ShapedSample {
  /** Row-major values. */
  data: Float32Array | Int32Array | readonly number[];
  /** The sample's shape ([] for a scalar). */
  shape: readonly number[];
}

/** The leaves batch collates into a HostArray: numbers, typed arrays, `{ data, shape }`, nested number arrays. */
export type ArraySample = number | ArrayLike<number> | ShapedSample | readonly ArraySample[];

/** What `batch` makes of a sample type: each array leaf a HostArray [n, ...], strings string[], records per key. */
export type Collated<T> = T extends number | ArrayLike<number> | ShapedSample
  ? HostArray
  : T extends string
    ? string[]
    : T extends readonly (number | readonly unknown[])[]
      ? HostArray
      : T extends object
        ? { [K in keyof T]: Collated<T[K]> }
        : never;

/** A collated batch with each HostArray uploaded as a Tensor (what `batchToTensors` returns). */
export type Uploaded<T> = T extends HostArray
  ? Tensor
  : T extends string[]
    ? string[]
    : T extends object
      ? { [K in keyof T]: Uploaded<T[K]> }
      : T;

const isTyped = (v: unknown): v is ArrayLike<number> & ArrayBufferView =>
  ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array);

/** Whether `v` is a `{ data, shape }` array (exactly those two keys, shape a list of integers). */
export function isShaped(v: unknown): v is ShapedSample {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || isTyped(v)) return false;
  const keys = Object.keys(v);
  const o = v as { data?: unknown; shape?: unknown };
  return (
    keys.length === 2 &&
    Array.isArray(o.shape) &&
    o.shape.every((d) => Number.isInteger(d) && d >= 0) &&
    (isTyped(o.data) || Array.isArray(o.data))
  );
}

/**
 * The shape of a nested plain array of numbers, or null when it is not one (a leaf that is not a number, or
 * ragged). A plain array holding typed arrays or records is a tuple, collated per position.
 */
function nestedShape(v: readonly unknown[]): number[] | null {
  if (v.length === 0) return [0];
  if (v.every((e) => typeof e === 'number')) return [v.length];
  if (!v.every((e) => Array.isArray(e))) return null;
  const inner = v.map((e) => nestedShape(e as unknown[]));
  const first = inner[0];
  if (!first || inner.some((s) => s === null || s.join() !== first.join())) return null;
  return [v.length, ...first];
}

/** Whether `v` is a plain array of numbers and plain arrays of numbers, to any depth (ragged or not). */
const allNumeric = (v: unknown): boolean => Array.isArray(v) && v.every((e) => typeof e === 'number' || allNumeric(e));

/** A leaf's shape, int32-ness and a writer of its values into `out` at `offset`. */
type Leaf = { shape: number[]; int: boolean; write: (out: Float32Array | Int32Array, at: number) => void };
function leafOf(v: unknown, where: string): Leaf {
  if (typeof v === 'number') return { shape: [], int: false, write: (o, at) => void (o[at] = v) };
  if (isTyped(v)) return { shape: [v.length], int: v instanceof Int32Array, write: (o, at) => o.set(v, at) };
  if (isShaped(v)) {
    const size = v.shape.reduce((p, d) => p * d, 1);
    if (v.data.length !== size)
      throw new ShapeMismatchError(`batch: ${where} has ${v.data.length} values, not the ${size} of [${v.shape}]`);
    return { shape: [...v.shape], int: v.data instanceof Int32Array, write: (o, at) => o.set(v.data, at) };
  }
  const arr = v as unknown[];
  const shape = nestedShape(arr)!;
  const values = (arr as unknown as { flat(d: number): number[] }).flat(shape.length);
  return { shape, int: false, write: (o, at) => o.set(values, at) };
}

/** The kind of a sample value: an array leaf, a string, a tuple, a record; InvalidArgumentError for anything else. */
function kindOf(v: unknown, where: string): 'leaf' | 'string' | 'tuple' | 'record' {
  if (typeof v === 'number' || isTyped(v) || isShaped(v)) return 'leaf';
  if (allNumeric(v)) {
    if (nestedShape(v as unknown[]) === null)
      throw new ShapeMismatchError(
        `batch: ${where} is a ragged nested array (use typed arrays or a record for a tuple)`,
      );
    return 'leaf';
  }
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'tuple';
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return 'record';
  throw new InvalidArgumentError(
    `batch: cannot collate ${describeValue(v)} at ${where} (numbers, typed arrays, { data, shape }, number arrays, ` +
      'strings, and records or tuples of these; pass batch(size, { collate }) for other samples)',
  );
}

function collateAt(samples: readonly unknown[], where: string): unknown {
  const kind = kindOf(samples[0], `${where} of sample 0`);
  samples.forEach((s, i) => {
    const k = kindOf(s, `${where} of sample ${i}`);
    if (k !== kind)
      throw new InvalidArgumentError(`batch: ${where} of sample ${i} is a ${k}, but of sample 0 a ${kind}`);
  });
  if (kind === 'string') return [...samples];
  if (kind === 'tuple') {
    const n = (samples[0] as unknown[]).length;
    samples.forEach((s, i) => {
      if ((s as unknown[]).length !== n)
        throw new ShapeMismatchError(`batch: ${where} of sample ${i} has ${(s as unknown[]).length} items, not ${n}`);
    });
    return Array.from({ length: n }, (_, k) =>
      collateAt(
        samples.map((s) => (s as unknown[])[k]),
        `${where}[${k}]`,
      ),
    );
  }
  if (kind === 'record') {
    const keys = Object.keys(samples[0] as object);
    const out: Record<string, unknown> = {};
    samples.forEach((s, i) => {
      const ks = Object.keys(s as object);
      if (ks.length !== keys.length || keys.some((k) => !ks.includes(k)))
        throw new InvalidArgumentError(`batch: sample ${i} has keys {${ks}} at ${where}, sample 0 {${keys}}`);
    });
    for (const k of keys)
      out[k] = collateAt(
        samples.map((s) => (s as Record<string, unknown>)[k]),
        `${where}.${k}`,
      );
    return out;
  }
  const leaves = samples.map((s, i) => leafOf(s, `${where} of sample ${i}`));
  const { shape, int } = leaves[0]!;
  const size = shape.reduce((p, d) => p * d, 1);
  const out = int ? new Int32Array(samples.length * size) : new Float32Array(samples.length * size);
  leaves.forEach((l, i) => {
    if (l.shape.join() !== shape.join())
      throw new ShapeMismatchError(
        `batch: ragged samples: ${where} of sample ${i} has shape [${l.shape}], sample 0 [${shape}] ` +
          '(pad them to one shape in a map, or pass batch(size, { collate }))',
        [shape, l.shape],
      );
    if (l.int !== int)
      throw new DTypeError(`batch: ${where} of sample ${i} is ${l.int ? 'int32' : 'float32'}, of sample 0 not`);
    l.write(out, i * size);
  });
  return { data: out, shape: [samples.length, ...shape] } satisfies HostArray;
}

/**
 * Collates `samples` (n ≥ 1) into one batch, as PyTorch's `default_collate`: each array leaf (number, typed array,
 * `{ data, shape }`, nested number array) of shape S becomes a HostArray [n, ...S] (int32 when the samples hold
 * Int32Arrays, else float32); strings become a string[]; records and tuples are collated per field.
 * ShapeMismatchError for ragged samples (naming the field and sample), DTypeError for mixed int32/float32,
 * InvalidArgumentError for samples of different structure or values that do not collate.
 */
export function collate<T>(samples: readonly T[]): Collated<T> {
  if (!Array.isArray(samples) || samples.length === 0)
    throw new InvalidArgumentError(`collate: samples must be a non-empty array, got ${describeValue(samples)}`);
  return collateAt(samples, 'the sample') as Collated<T>;
}

/**
 * Uploads each HostArray of a collated batch to `backend` as a Tensor (int32 data stays int32), keeping the
 * batch's records, tuples and strings. The caller owns the tensors (dispose them, or run inside `scope`).
 */
export function batchToTensors<T>(batch: T, backend: ComputeBackend): Uploaded<T> {
  const made: Tensor[] = [];
  const up = (v: unknown): unknown => {
    if (isShaped(v) && isTyped(v.data)) {
      const t = Tensor.fromArray(backend, v.data, v.shape);
      made.push(t);
      return t;
    }
    if (Array.isArray(v)) return v.every((e) => typeof e === 'string') ? v : v.map(up);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
      return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, up(e)]));
    return v;
  };
  try {
    return up(batch) as Uploaded<T>;
  } catch (e) {
    for (const t of made) t.dispose();
    throw e;
  }
}
