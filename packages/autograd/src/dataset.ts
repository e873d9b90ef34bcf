/**
 * Dataset: a lazy, composable pipeline of host samples, as TensorFlow.js's `tf.data.Dataset` and PyTorch's
 * Dataset/IterableDataset. Sources are arrays, column slices, generator functions, iterables and async iterables;
 * each `for await` over a Dataset is one pass (an epoch) and starts the pipeline anew. Everything stays on the
 * host; a DataLoader (or `batchToTensors`) uploads batches to a backend.
 */
import { describeValue, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { type Collated, collate } from './dataset-collate.js';
import {
  batchStream,
  concatStream,
  filterStream,
  mapStream,
  prefetchStream,
  repeatStream,
  shuffleStream,
  zipStream,
} from './dataset-ops.js';
import { type MapParallelOptions, mapParallelStream, type WorkerFn } from './dataset-workers.js';

/** What Dataset.from takes: an array, an iterable or async iterable, or a function returning one (per pass). */
export type DatasetSource<T> =
  | readonly T[]
  | Iterable<T>
  | AsyncIterable<T>
  | (() => Iterable<T> | AsyncIterable<T> | Iterator<T> | AsyncIterator<T>);

/** Columns of equal length N for Dataset.fromSlices: each `{ data, shape: [N, ...] }`. */
export type SliceColumns = Record<
  string,
  { data: Float32Array | Int32Array | readonly number[]; shape: readonly number[] }
>;

/** A sample of Dataset.fromSlices: per column, the slice `{ data, shape }` (a view, not a copy). */
export type SliceSample<C extends SliceColumns> = {
  [K in keyof C]: { data: C[K]['data'] extends Int32Array ? Int32Array : Float32Array; shape: number[] };
};

/** Options of Dataset.batch. */
export interface BatchOptions<T, B> {
  /** Leave out the last batch when it has fewer than `size` samples (default false). */
  dropLast?: boolean;
  /** Makes a batch of the samples (default `collate`, PyTorch's default_collate). */
  collate?: (samples: T[]) => B;
}

const natural = (op: string, name: string, v: unknown, lo: number): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo)
    throw new InvalidArgumentError(`Dataset.${op}: ${name} must be an integer ≥ ${lo}, got ${describeValue(v)}`);
  return v;
};

/**
 * A lazy sequence of samples. Each pass (`for await (const s of ds)`, `toArray`, `forEachAsync`) starts from the
 * source; a shuffle draws a new order each pass, reproducibly when seeded. `size` is the number of samples when
 * known (Infinity after `repeat()`, null when unknown). A Dataset built from an array or column slices, then
 * `map`, `take`, `skip`, `concatenate`, `zip` and `repeat(count)`, keeps random access (`get(i)`): a DataLoader
 * then shuffles it with a seeded permutation of all samples, as PyTorch's sampler does a map-style Dataset.
 */
export class Dataset<T> implements AsyncIterable<T> {
  private constructor(
    private readonly open: () => AsyncIterator<T>,
    /** Number of samples: a count, Infinity (repeated forever), or null (unknown: a stream, after filter). */
    readonly size: number | null,
    private readonly at?: (i: number) => T | Promise<T>,
  ) {}

  /** A Dataset of the items of an array (random access), by reference. */
  static fromArray<T>(items: readonly T[]): Dataset<T> {
    if (!Array.isArray(items))
      throw new InvalidArgumentError(`Dataset.fromArray: items must be an array, got ${describeValue(items)}`);
    return new Dataset(
      () => mapStream(items, (x) => x),
      items.length,
      (i) => items[i]!,
    );
  }

  /**
   * A Dataset of the rows of equal-length columns (tfjs's `from_tensor_slices`, PyTorch's TensorDataset): sample i
   * is `{ [column]: { data, shape } }` with column's row i (a subarray view) of its shape without N. Random access.
   * ShapeMismatchError when data and shape disagree or the columns have different N.
   */
  static fromSlices<C extends SliceColumns>(columns: C): Dataset<SliceSample<C>> {
    if (columns === null || typeof columns !== 'object' || Object.keys(columns).length === 0)
      throw new InvalidArgumentError(
        `Dataset.fromSlices: columns must be { name: { data, shape } }, got ${describeValue(columns)}`,
      );
    const cols = Object.entries(columns).map(([k, c]) => {
      if (!c || !Array.isArray(c.shape) || c.shape.length < 1 || c.data === undefined)
        throw new InvalidArgumentError(`Dataset.fromSlices: column ${k} must be { data, shape: [N, ...] }`);
      const size = c.shape.reduce((p, d) => p * d, 1);
      if (c.data.length !== size)
        throw new ShapeMismatchError(
          `Dataset.fromSlices: column ${k} has ${c.data.length} values, not the ${size} of [${c.shape}]`,
        );
      const data = c.data instanceof Int32Array || c.data instanceof Float32Array ? c.data : Float32Array.from(c.data);
      return { k, data, n: c.shape[0]!, row: size / Math.max(1, c.shape[0]!), shape: c.shape.slice(1) };
    });
    const n = cols[0]!.n;
    const other = cols.find((c) => c.n !== n);
    if (other)
      throw new ShapeMismatchError(`Dataset.fromSlices: column ${cols[0]!.k} has ${n} rows and ${other.k} ${other.n}`);
    const get = (i: number) =>
      Object.fromEntries(
        cols.map((c) => [c.k, { data: c.data.subarray(i * c.row, (i + 1) * c.row), shape: [...c.shape] }]),
      ) as SliceSample<C>;
    return new Dataset(() => mapStream(indices(n), get), n, get);
  }

  /**
   * A Dataset over any source: an array (as fromArray), a function returning an iterable, iterator or async
   * iterable (called once per pass, as tfjs's `tf.data.generator`), or an iterable / async iterable. A one-shot
   * source (a generator object) gives one pass; a second is an InvalidArgumentError (pass a function instead).
   */
  static from<T>(source: DatasetSource<T>): Dataset<T> {
    if (Array.isArray(source)) return Dataset.fromArray(source as readonly T[]);
    if (source instanceof Dataset) return source;
    if (typeof source === 'function') {
      return new Dataset(() => {
        const r = (source as () => unknown)();
        return iteratorOf<T>(r, 'the function passed to Dataset.from returned');
      }, null);
    }
    const obj = source as object;
    if (obj === null || typeof obj !== 'object' || !(Symbol.iterator in obj || Symbol.asyncIterator in obj))
      throw new InvalidArgumentError(
        'Dataset.from: source must be an array, an iterable, an async iterable or a function returning one, ' +
          `got ${describeValue(source)}`,
      );
    const oneShot = typeof (obj as { next?: unknown }).next === 'function'; // an iterator: a generator object
    let passes = 0;
    return new Dataset(() => {
      if (oneShot && passes++ > 0)
        throw new InvalidArgumentError(
          'Dataset.from: this source is a one-shot iterator (a generator object) and was already iterated; pass a ' +
            'function that returns a new one, Dataset.from(() => gen()), to iterate it again',
        );
      return iteratorOf<T>(obj, 'source');
    }, null);
  }

  /**
   * Samples of several datasets side by side, ending with the shortest: `Dataset.zip({ x: a, y: b })` gives
   * `{ x, y }` samples, `Dataset.zip([a, b])` gives tuples. Random access when every part has it.
   */
  static zip<const D extends readonly Dataset<unknown>[] | Record<string, Dataset<unknown>>>(
    datasets: D,
  ): Dataset<{ -readonly [K in keyof D]: D[K] extends Dataset<infer U> ? U : never }> {
    type Out = { -readonly [K in keyof D]: D[K] extends Dataset<infer U> ? U : never };
    const entries = Object.entries(datasets ?? {}) as [string, Dataset<unknown>][];
    if (
      datasets === null ||
      typeof datasets !== 'object' ||
      entries.length === 0 ||
      entries.some(([, d]) => !(d instanceof Dataset))
    )
      throw new InvalidArgumentError(
        `Dataset.zip: pass an array or a record of Datasets, got ${describeValue(datasets)}`,
      );
    const tuple = Array.isArray(datasets);
    const build = (values: unknown[]) =>
      (tuple ? values : Object.fromEntries(entries.map(([k], i) => [k, values[i]]))) as Out;
    const sizes = entries.map(([, d]) => d.size);
    const size = sizes.includes(null) ? null : Math.min(...(sizes as number[]));
    const ats = entries.map(([, d]) => d.at);
    const at = ats.every((a) => a) ? async (i: number) => build(await Promise.all(ats.map((a) => a!(i)))) : undefined;
    return new Dataset(
      () =>
        zipStream(
          entries.map(([, d]) => d),
          build,
        ),
      size,
      at,
    );
  }

  /** Whether `get(i)` works (an array or slices source, through random-access steps only). */
  get randomAccess(): boolean {
    return this.at !== undefined && this.size !== null && Number.isFinite(this.size);
  }

  /** Sample `index` of a random-access Dataset; InvalidArgumentError for a stream or an index out of [0, size). */
  async get(index: number): Promise<T> {
    if (!this.randomAccess)
      throw new InvalidArgumentError(
        'Dataset.get: this Dataset is a stream (a generator, filter, shuffle or batch step)',
      );
    if (!Number.isInteger(index) || index < 0 || index >= this.size!)
      throw new InvalidArgumentError(
        `Dataset.get: index must be an integer in [0, ${this.size}), got ${describeValue(index)}`,
      );
    return this.at!(index);
  }

  /** One pass over the samples. */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.open();
  }

  /** Each sample through `fn` (sync or async), in order. Keeps random access. */
  map<U>(fn: (sample: T) => U | Promise<U>): Dataset<Awaited<U>> {
    if (typeof fn !== 'function')
      throw new InvalidArgumentError(`Dataset.map: fn must be a function, got ${describeValue(fn)}`);
    const at = this.at;
    return new Dataset(() => mapStream(this, fn), this.size, at && (async (i: number) => fn(await at(i)))) as Dataset<
      Awaited<U>
    >;
  }

  /**
   * Each sample through `fn` in worker threads (Node's worker_threads, a browser's Worker), `workers` at a time,
   * in order: see MapParallelOptions for what `fn` may be. Where the runtime has no workers, or with `workers: 0`,
   * `fn` runs inline on this thread. An error in `fn` is a DatasetWorkerError naming the sample's index; the
   * workers end when the pass ends, also when the loop breaks early.
   */
  mapParallel<U>(fn: WorkerFn<T, U>, options: MapParallelOptions = {}): Dataset<U> {
    return new Dataset(() => mapParallelStream(this, fn, options), this.size);
  }

  /** The samples for which `predicate` (sync or async) is true. The size becomes unknown. */
  filter(predicate: (sample: T) => boolean | Promise<boolean>): Dataset<T> {
    if (typeof predicate !== 'function')
      throw new InvalidArgumentError(`Dataset.filter: predicate must be a function, got ${describeValue(predicate)}`);
    return new Dataset(() => filterStream(this, predicate), null);
  }

  /**
   * Shuffled through a buffer of `bufferSize` samples, as tfjs's `shuffle`: each output is drawn at random from the
   * buffer, which the next sample refills (bufferSize ≥ size gives a uniform permutation). Pass k draws from
   * mulberry32 seeded with (seed, k): the same seed gives the same orders on every run, a new order each pass.
   * Without a seed, one is drawn from Math.random when the Dataset is made.
   */
  shuffle(bufferSize: number, options: { seed?: number } = {}): Dataset<T> {
    natural('shuffle', 'bufferSize', bufferSize, 1);
    const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
    if (typeof seed !== 'number' || !Number.isFinite(seed))
      throw new InvalidArgumentError(`Dataset.shuffle: seed must be a number, got ${describeValue(seed)}`);
    let pass = 0;
    return new Dataset(() => shuffleStream(this, bufferSize, seed, pass++), this.size);
  }

  /**
   * Batches of `size` consecutive samples made by `collate` (default: PyTorch's default_collate, see `collate`:
   * `{ x, y }` samples give `{ x: { data, shape: [n, ...] }, y: ... }`); the last has fewer unless dropLast.
   * Ragged samples are a ShapeMismatchError when their batch is made.
   */
  batch<B = Collated<T>>(size: number, options: BatchOptions<T, B> = {}): Dataset<B> {
    natural('batch', 'size', size, 1);
    const make = options.collate ?? (collate as unknown as (s: T[]) => B);
    const n = this.size;
    const batches =
      n === null || !Number.isFinite(n) ? n : options.dropLast ? Math.floor(n / size) : Math.ceil(n / size);
    return new Dataset(() => batchStream(this, size, !!options.dropLast, make), batches);
  }

  /**
   * Computes up to `count` samples ahead of the consumer (tfjs's `prefetch`): while one sample is used, the
   * upstream steps (an async map, a generator waiting on I/O) already work on the next ones.
   */
  prefetch(count: number): Dataset<T> {
    natural('prefetch', 'count', count, 1);
    return new Dataset(() => prefetchStream(this, count), this.size, this.at);
  }

  /** The first `count` samples. Keeps random access. */
  take(count: number): Dataset<T> {
    natural('take', 'count', count, 0);
    const size = this.size === null ? null : Math.min(this.size, count);
    return new Dataset(() => limitStream(this, 0, count), size, this.at);
  }

  /** All samples but the first `count`. Keeps random access. */
  skip(count: number): Dataset<T> {
    natural('skip', 'count', count, 0);
    const at = this.at;
    const size = this.size === null ? null : Math.max(0, this.size - count);
    return new Dataset(() => limitStream(this, count, Infinity), size, at && ((i: number) => at(i + count)));
  }

  /** The samples `count` times over (forever without a count); each repetition is a new pass (a new shuffle). */
  repeat(count?: number): Dataset<T> {
    if (count !== undefined) natural('repeat', 'count', count, 0);
    const n = count ?? Infinity;
    const at = this.at;
    const size = this.size === null ? null : this.size === 0 ? 0 : this.size * n;
    const base = this.size;
    const access = at && base !== null && Number.isFinite(n) ? (i: number) => at(i % base) : undefined;
    return new Dataset(() => repeatStream(this, n), size, access);
  }

  /** This Dataset's samples, then `other`'s. Random access when both have it. */
  concatenate(other: Dataset<T>): Dataset<T> {
    if (!(other instanceof Dataset))
      throw new InvalidArgumentError(`Dataset.concatenate: other must be a Dataset, got ${describeValue(other)}`);
    const [a, b, n] = [this.at, other.at, this.size];
    const size = n === null || other.size === null ? null : n + other.size;
    const at = a && b && n !== null ? (i: number) => (i < n ? a(i) : b(i - n)) : undefined;
    return new Dataset(() => concatStream([this, other]), size, at);
  }

  /** Every sample of one pass, in an array (InvalidArgumentError for an infinite Dataset). */
  async toArray(): Promise<T[]> {
    if (this.size === Infinity) throw new InvalidArgumentError('Dataset.toArray: the Dataset is infinite (repeat())');
    const out: T[] = [];
    for await (const s of this) out.push(s);
    return out;
  }

  /** Calls `fn` (sync or async, awaited) on each sample of one pass, in order. */
  async forEachAsync(fn: (sample: T) => unknown): Promise<void> {
    if (typeof fn !== 'function')
      throw new InvalidArgumentError(`Dataset.forEachAsync: fn must be a function, got ${describeValue(fn)}`);
    for await (const s of this) await fn(s);
  }
}

function iteratorOf<T>(r: unknown, what: string): AsyncIterator<T> {
  const o = r as { [Symbol.asyncIterator]?: () => AsyncIterator<T>; [Symbol.iterator]?: () => Iterator<T> };
  if (o !== null && typeof o === 'object') {
    if (typeof o[Symbol.asyncIterator] === 'function') return o[Symbol.asyncIterator]!();
    if (typeof o[Symbol.iterator] === 'function') return mapStream(o as Iterable<T>, (x) => x);
    if (typeof (o as { next?: unknown }).next === 'function')
      return mapStream({ [Symbol.asyncIterator]: () => o as unknown as AsyncIterator<T> }, (x) => x);
  }
  throw new InvalidArgumentError(`${what} ${describeValue(r)}, not an iterable, async iterable or iterator`);
}

function* indices(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}

async function* limitStream<T>(src: AsyncIterable<T>, skip: number, take: number): AsyncGenerator<T> {
  if (take <= 0) return;
  let i = 0;
  for await (const s of src) {
    if (i++ < skip) continue;
    yield s;
    if (i - skip >= take) return;
  }
}
