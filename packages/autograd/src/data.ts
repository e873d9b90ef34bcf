/**
 * DataLoader: batches of (inputs, labels) from host arrays, shuffled with a seed each epoch,
 * optionally dropping the last partial batch, uploaded to the target backend one batch ahead
 * (the next batch's copy is queued while the current one computes).
 */
import { type ComputeBackend, InvalidArgumentError, mulberry32, ShapeMismatchError } from '@polyhal/hal';
import { Tensor } from './tensor.js';

/** What a DataLoader batches, and how. */
export interface DataLoaderOptions {
  /** Row-major samples: n × prod(inputShape) values. */
  inputs: Float32Array;
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

/** One batch: tensors on the loader's backend, disposed when the next batch is requested. */
export interface Batch {
  /** Inputs [n, ...inputShape], n ≤ batchSize. */
  x: Tensor;
  /** Labels [n, ...labelShape]: int32 when the loader's labels are an Int32Array, else float32. */
  y: Tensor;
  /** Batch number within the epoch. */
  index: number;
}

/**
 * Batches of (x, y) from host arrays: `for await (const { x, y } of loader)` is one epoch. ShapeMismatchError
 * when inputs and labels do not make whole samples of their shapes.
 */
export class DataLoader implements AsyncIterable<Batch> {
  /** Batches per epoch. */
  readonly length: number;
  /** Number of samples. */
  readonly size: number;
  private epoch = 0;
  private readonly inSize: number;
  private readonly labSize: number;

  constructor(private readonly o: DataLoaderOptions) {
    if (!Number.isInteger(o.batchSize) || o.batchSize < 1)
      throw new InvalidArgumentError(`batchSize must be a positive integer, got ${o.batchSize}`);
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
  }

  /** The sample order of the next epoch (a seeded Fisher–Yates shuffle, different each epoch). */
  private order(): Uint32Array {
    const idx = Uint32Array.from({ length: this.size }, (_, i) => i);
    if (this.o.shuffle) {
      const rng = mulberry32((this.o.seed ?? 0) * 1000003 + this.epoch);
      for (let i = idx.length - 1; i > 0; i--) {
        const j = Math.floor(rng() * (i + 1));
        const t = idx[i]!;
        idx[i] = idx[j]!;
        idx[j] = t;
      }
    }
    this.epoch++;
    return idx;
  }

  private batch(order: Uint32Array, b: number): Batch {
    const start = b * this.o.batchSize;
    const n = Math.min(this.o.batchSize, this.size - start);
    const xs = new Float32Array(n * this.inSize);
    const ys =
      this.o.labels instanceof Int32Array ? new Int32Array(n * this.labSize) : new Float32Array(n * this.labSize);
    for (let i = 0; i < n; i++) {
      const s = order[start + i]!;
      xs.set(this.o.inputs.subarray(s * this.inSize, (s + 1) * this.inSize), i * this.inSize);
      ys.set(this.o.labels.subarray(s * this.labSize, (s + 1) * this.labSize), i * this.labSize);
    }
    return {
      x: Tensor.fromArray(this.o.backend, xs, [n, ...this.o.inputShape]),
      y: Tensor.fromArray(this.o.backend, ys, [n, ...this.o.labelShape]),
      index: b,
    };
  }

  /** One epoch. Each batch is disposed when the next one is requested (or when the loop ends). */
  async *[Symbol.asyncIterator](): AsyncGenerator<Batch> {
    const order = this.order();
    let next: Batch | null = this.length > 0 ? this.batch(order, 0) : null;
    const release = (b: Batch | null): void => {
      b?.x.dispose();
      b?.y.dispose();
    };
    try {
      for (let b = 0; b < this.length; b++) {
        const cur = next!;
        next = b + 1 < this.length ? this.batch(order, b + 1) : null; // prefetch
        try {
          yield cur;
        } finally {
          release(cur);
        }
      }
    } finally {
      release(next); // a loop that stops early leaves no prefetched batch behind
    }
  }
}
