/**
 * GPU time of each kernel of a replayed capture (option `kernelTimestamps`, where the device has the
 * `timestamp-query` feature): a timed replay encodes every kernel in a compute pass of its own whose
 * `timestampWrites` note the GPU clock at the pass's start and end (WebGPU timestamp queries), resolves the query
 * set after the last kernel and copies it to a mappable buffer; `read()` maps it and returns, per kernel in replay
 * order, its key (a merged kernel: `merge[...]` of its parts, plan-merge.ts) and the nanoseconds between the two
 * writes. A pass per kernel costs what Dawn's barriers between dependent dispatches already cost; timings are of
 * the replay as it ran, not of each kernel alone (e.g. nvprof/Nsight's per-kernel durations).
 */

/** One kernel's GPU time in a timed replay. */
export interface KernelTime {
  /** The kernel's pipeline key (kernel family and shape class; merged kernels name their parts). */
  readonly kernel: string;
  /** Nanoseconds between its pass's start and end timestamps. */
  readonly ns: number;
}

const QUERY_RESOLVE_COPY_SRC = 0x200 | 0x4;
const MAP_READ_COPY_DST = 0x1 | 0x8;

/** A plan's query set and buffers; made on the plan's first timed replay. */
export class ReplayTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolve: GPUBuffer;
  private readonly readback: GPUBuffer;
  private mapping: Promise<KernelTime[]> | null = null;
  /** Whether the readback holds a resolved replay not yet read (then the next replay skips the copy). */
  private pending = false;

  constructor(
    private readonly device: GPUDevice,
    private readonly labels: readonly string[],
  ) {
    const count = Math.max(2, 2 * labels.length);
    this.querySet = device.createQuerySet({ type: 'timestamp', count });
    this.resolve = device.createBuffer({ size: 8 * count, usage: QUERY_RESOLVE_COPY_SRC });
    this.readback = device.createBuffer({ size: 8 * count, usage: MAP_READ_COPY_DST });
  }

  /** The pass descriptor of kernel i (in replay order). */
  pass(i: number): GPUComputePassDescriptor {
    return {
      timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 },
    };
  }

  /** After the replay's last kernel: resolves the timestamps into the readback (unless one is being read). */
  finish(enc: GPUCommandEncoder): void {
    if (this.mapping) return;
    const n = 2 * this.labels.length;
    enc.resolveQuerySet(this.querySet, 0, n, this.resolve, 0);
    enc.copyBufferToBuffer(this.resolve, 0, this.readback, 0, 8 * n);
    this.pending = true;
  }

  /** The kernel times of the last replay resolved (null before any). */
  read(): Promise<KernelTime[]> | null {
    if (!this.pending && !this.mapping) return null;
    this.mapping ??= this.readback.mapAsync(0x1).then(() => {
      const t = new BigUint64Array(this.readback.getMappedRange().slice(0));
      this.readback.unmap();
      this.mapping = null;
      this.pending = false;
      return this.labels.map((kernel, i) => ({ kernel, ns: Math.max(0, Number(t[2 * i + 1]! - t[2 * i]!)) }));
    });
    return this.mapping;
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolve.destroy();
    this.readback.destroy();
  }
}
