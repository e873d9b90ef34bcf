/**
 * DataLoader: batches of (inputs, labels) uploaded to a backend, as PyTorch's DataLoader. Its sources are host
 * arrays (shuffled with a seed each epoch), a Dataset of `{ x, y }` samples (a random-access one shuffled the same
 * way; a stream in its own order), an array, iterable or async iterable of samples, or of ready batches
 * (`batchSize: null`). `prefetch` batches are read, collated and uploaded ahead of the one in use.
 */
import { type ComputeBackend, describeValue, InvalidArgumentError, mulberry32, ShapeMismatchError } from '@polyhal/hal';
import { Dataset, type DatasetSource } from './dataset.js';
import { type ArraySample, collate, type HostArray, isShaped } from './dataset-collate.js';
import { batchStream } from './dataset-ops.js';
import { keep } from './scope.js';
import { Tensor } from './tensor.js';

/** What a DataLoader batches, and how. */
export interface DataLoaderOptions {
  /** Row-major samples: n × prod(inputShape) values (an Int32Array, e.g. token ids, batched as int32). */
  inputs: Float32Array | Int32Array;
  /** Row-major labels: n × prod(labelShape) values (an Int32Array for class indices, batched as int32). */
  labels: Float32Array | Int32Array;
  /** One sample's input shape (a batch's x is [n, ...inputShape]). */
  inputShape: readonly number[];
  /** One sample's label shape (a batch's y is [n, ...labelShape]). */
  labelShape: readonly number[];
  /** Samples per batch, a positive integer (InvalidArgumentError otherwise). */
  batchSize: number;
  /** Where the batches are uploaded. */
  backend: ComputeBackend;
  /** Shuffle the samples each epoch (default false: in order). */
  shuffle?: boolean;
  /** Seed of the shuffle (default 0): epoch e's order depends only on the seed and e. */
  seed?: number;
  /** Leave out the last batch when it has fewer than batchSize samples (default false). */
  dropLast?: boolean;
}

/** A DataLoader's sample: an input and a label, each an array leaf (see `collate`). */
export interface LoaderSample {
  /** The input: a number, typed array, `{ data, shape }` or nested number array. */
  x: ArraySample;
  /** The label: as x; an Int32Array (or `{ data: Int32Array, shape: [] }`) batches as int32 class indices. */
  y: ArraySample;
}

/** A ready batch (what `batchSize: null` takes from its source): `{ x, y }` host arrays with n rows each. */
export interface HostBatch {
  /** Inputs [n, ...]. */
  x: HostArray;
  /** Labels [n, ...]. */
  y: HostArray;
}

/** Options of a DataLoader over a Dataset or another source of samples. */
export interface DataLoaderSourceOptions {
  /** Where the batches are uploaded. */
  backend: ComputeBackend;
  /**
   * Samples per batch, a positive integer; null when the source yields whole batches (`{ x, y }` HostArrays, e.g.
   * from `dataset.batch(n)`), as PyTorch's `batch_size=None`.
   */
  batchSize: number | null;
  /**
   * Shuffle each epoch (default false) with a seeded permutation of all samples; only for a random-access source
   * (an array, or a Dataset with `randomAccess`): a stream is shuffled by its own `shuffle(bufferSize)` step, and
   * `shuffle: true` on one is an InvalidArgumentError.
   */
  shuffle?: boolean;
  /** Seed of the shuffle (default 0): epoch e's order depends only on the seed and e. */
  seed?: number;
  /** Leave out the last batch when it has fewer than batchSize samples (default false). */
  dropLast?: boolean;
  /** Batches read, collated and uploaded ahead of the one in use, an integer ≥ 0 (default 1). */
  prefetch?: number;
  /** Makes a host batch of samples (default `collate`). */
  collate?: (samples: LoaderSample[]) => HostBatch;
}

/** One batch: tensors on the loader's backend, disposed when the next batch is requested. */
export interface Batch {
  /** Inputs [n, ...inputShape], n ≤ batchSize. */
  x: Tensor;
  /** Labels [n, ...labelShape]: int32 when the loader's labels are an Int32Array, else float32. */
  y: Tensor;
  /** Batch number within the epoch. */
  index: number;
}

/** Epoch `epoch`'s order of n samples: identity, or a Fisher–Yates shuffle seeded by (seed, epoch). */
function permutation(n: number, shuffle: boolean | undefined, seed: number, epoch: number): Uint32Array {
  const idx = Uint32Array.from({ length: n }, (_, i) => i);
  if (shuffle) {
    const rng = mulberry32(seed * 1000003 + epoch);
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      const t = idx[i]!;
      idx[i] = idx[j]!;
      idx[j] = t;
    }
  }
  return idx;
}

const isHostArray = (v: unknown): v is HostArray =>
  isShaped(v) && (v.data instanceof Float32Array || v.data instanceof Int32Array) && v.shape.length >= 1;

/**
 * Batches of (x, y) on a backend: `for await (const { x, y } of loader)` is one epoch. Two forms:
 * `new DataLoader({ inputs, labels, inputShape, labelShape, batchSize, backend, ... })` over host arrays
 * (ShapeMismatchError when they do not make whole samples), and `new DataLoader(source, { backend, batchSize, ...
 * })` over a Dataset of `{ x, y }` samples, an array, a function returning an iterable, an iterable or an async
 * iterable (see DataLoaderSourceOptions). A batch whose x or y is not an array is an InvalidArgumentError.
 */
export class DataLoader implements AsyncIterable<Batch> {
  /** Batches per epoch (NaN when the source's length is unknown: a stream). */
  readonly length: number;
  /** Number of samples (NaN when unknown). */
  readonly size: number;
  /** Where the batches are uploaded. */
  readonly backend: ComputeBackend;
  private epoch = 0;
  private readonly inSize: number = 0;
  private readonly labSize: number = 0;
  private readonly o: DataLoaderOptions | null = null;
  private readonly ds: Dataset<unknown> | null = null;
  private readonly so: DataLoaderSourceOptions | null = null;

  constructor(options: DataLoaderOptions);
  constructor(
    source: Dataset<LoaderSample> | DatasetSource<LoaderSample | HostBatch>,
    options: DataLoaderSourceOptions,
  );
  constructor(a: DataLoaderOptions | Dataset<unknown> | DatasetSource<unknown>, so?: DataLoaderSourceOptions) {
    if (so === undefined && a !== null && typeof a === 'object' && 'inputs' in a && 'labels' in a) {
      const o = a as DataLoaderOptions;
      if (!Number.isInteger(o.batchSize) || o.batchSize < 1)
        throw new InvalidArgumentError(`batchSize must be a positive integer, got ${o.batchSize}`);
      this.o = o;
      this.backend = o.backend;
      this.inSize = o.inputShape.reduce((p, d) => p * d, 1);
      this.labSize = o.labelShape.reduce((p, d) => p * d, 1);
      this.size = o.inputs.length / this.inSize;
      if (!Number.isInteger(this.size) || o.labels.length !== this.size * this.labSize) {
        throw new ShapeMismatchError(
          `DataLoader: ${o.inputs.length} input values and ${o.labels.length} label values do not make ` +
            `whole samples of [${o.inputShape}] and [${o.labelShape}]`,
        );
      }
      this.length = o.dropLast ? Math.floor(this.size / o.batchSize) : Math.ceil(this.size / o.batchSize);
      return;
    }
    if (so === null || typeof so !== 'object' || !so.backend)
      throw new InvalidArgumentError(
        'DataLoader: pass { inputs, labels, ... } or (source, { backend, batchSize, ... }), ' +
          `got options ${describeValue(so)}`,
      );
    const { batchSize, prefetch = 1 } = so;
    if (batchSize !== null && (!Number.isInteger(batchSize) || batchSize < 1))
      throw new InvalidArgumentError(
        `DataLoader: batchSize must be a positive integer or null, got ${describeValue(batchSize)}`,
      );
    if (!Number.isInteger(prefetch) || prefetch < 0)
      throw new InvalidArgumentError(`DataLoader: prefetch must be an integer ≥ 0, got ${describeValue(prefetch)}`);
    this.ds = Dataset.from(a as DatasetSource<unknown>);
    this.so = so;
    this.backend = so.backend;
    if (so.shuffle && (!this.ds.randomAccess || batchSize === null))
      throw new InvalidArgumentError(
        'DataLoader: shuffle needs a random-access source of samples (an array, or a Dataset from fromArray or ' +
          'fromSlices); shuffle a stream in the Dataset instead: dataset.shuffle(bufferSize, { seed })',
      );
    const n = this.ds.size;
    this.size = batchSize === null || n === null || !Number.isFinite(n) ? Number.NaN : n;
    this.length =
      batchSize === null
        ? (n ?? Number.NaN)
        : so.dropLast
          ? Math.floor(this.size / batchSize)
          : Math.ceil(this.size / batchSize);
  }

  /** The host batches of the next epoch, in order. */
  private hostBatches(): AsyncIterable<HostBatch> {
    const epoch = this.epoch++;
    const o = this.o;
    if (o) {
      const order = permutation(this.size, o.shuffle, o.seed ?? 0, epoch);
      return async function* (this: DataLoader) {
        for (let b = 0; b < this.length; b++) yield this.sliceBatch(o, order, b);
      }.call(this);
    }
    const so = this.so!;
    const ds = this.ds!;
    const make = so.collate ?? (collate as unknown as (s: LoaderSample[]) => HostBatch);
    if (so.batchSize === null) return ds as AsyncIterable<HostBatch>;
    if (!ds.randomAccess) return batchStream(ds as AsyncIterable<LoaderSample>, so.batchSize, !!so.dropLast, make);
    const order = permutation(this.size, so.shuffle, so.seed ?? 0, epoch);
    const bs = so.batchSize;
    return async function* (this: DataLoader) {
      for (let b = 0; b < this.length; b++) {
        const idx = order.subarray(b * bs, Math.min((b + 1) * bs, order.length));
        yield make(await Promise.all(Array.from(idx, (i) => ds.get(i) as Promise<LoaderSample>)));
      }
    }.call(this);
  }

  private sliceBatch(o: DataLoaderOptions, order: Uint32Array, b: number): HostBatch {
    const start = b * o.batchSize;
    const n = Math.min(o.batchSize, this.size - start);
    const xs = o.inputs instanceof Int32Array ? new Int32Array(n * this.inSize) : new Float32Array(n * this.inSize);
    const ys = o.labels instanceof Int32Array ? new Int32Array(n * this.labSize) : new Float32Array(n * this.labSize);
    for (let i = 0; i < n; i++) {
      const s = order[start + i]!;
      xs.set(o.inputs.subarray(s * this.inSize, (s + 1) * this.inSize), i * this.inSize);
      ys.set(o.labels.subarray(s * this.labSize, (s + 1) * this.labSize), i * this.labSize);
    }
    return { x: { data: xs, shape: [n, ...o.inputShape] }, y: { data: ys, shape: [n, ...o.labelShape] } };
  }

  private upload(h: HostBatch, index: number): Batch {
    if (h === null || typeof h !== 'object' || !isHostArray(h.x) || !isHostArray(h.y))
      throw new InvalidArgumentError(
        `DataLoader: batch ${index} is not { x, y } arrays with a batch dimension, got ${describeValue(h)} ` +
          '(samples must be { x, y }: numbers, typed arrays, { data, shape } or number arrays)',
      );
    // Uploaded ahead, maybe while a training step's scope is open: the loader, not that scope, disposes them.
    const x = keep(Tensor.fromArray(this.backend, h.x.data, h.x.shape));
    try {
      return { x, y: keep(Tensor.fromArray(this.backend, h.y.data, h.y.shape)), index };
    } catch (e) {
      x.dispose();
      throw e;
    }
  }

  /**
   * One epoch. Each batch is disposed when the next one is requested (or when the loop ends); `prefetch` batches
   * are uploaded ahead, and disposed too when the loop stops early.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<Batch> {
    const src = this.hostBatches()[Symbol.asyncIterator]();
    const ahead = this.so?.prefetch ?? 1;
    const queue: Promise<IteratorResult<Batch>>[] = [];
    let index = 0;
    let ended = false;
    const request = (): void => {
      const p = src.next().then((r) => (r.done ? r : { done: false as const, value: this.upload(r.value, index++) }));
      p.catch(() => {}); // awaited in order below
      queue.push(p);
    };
    const release = (b: Batch | undefined): void => {
      b?.x.dispose();
      b?.y.dispose();
    };
    try {
      for (;;) {
        while (!ended && queue.length <= ahead) request();
        const r = await queue.shift()!;
        if (r.done) {
          ended = true;
          break;
        }
        try {
          yield r.value;
        } finally {
          release(r.value);
        }
      }
    } finally {
      // a loop that stops early leaves no prefetched batch behind
      for (const r of await Promise.allSettled(queue))
        if (r.status === 'fulfilled' && !r.value.done) release(r.value.value);
      if (!ended) await src.return?.(undefined);
    }
  }
}
