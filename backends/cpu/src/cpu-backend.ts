import {
  type AdamStepParams,
  type SgdStepParams,
  type BaseBackendOptions,
  type BinaryOp,
  type ConvOptions,
  type DeviceBuffer,
  type HostArray,
  isNarrow,
  type NDArray,
  type ReduceOp,
  type ScatterReduction,
  type UnaryOp,
  viewOf,
} from '@polyhal/hal';
import {
  BaseBackend,
  checkConvBias,
  checkConvOperands,
  GATHER_FILL,
  hostCumsum,
  hostIntMatmul,
  hostArgReduce,
  hostOneHot,
  hostTuplePositions,
  hostTopk,
  isDepthwise,
  isWholeBuffer,
  newStorageArray,
  type StorageArray,
  storageToHost,
  window2d,
  windowGeometry,
} from '@polyhal/hal/internal';
import { type PhiloxStream, philoxUniformFill } from '@polyhal/hal/internal';
import { binaryKernel } from './kernels/binary.js';
import { depthwiseConvKernel } from './kernels/conv.js';
import { copyKernel, stridedCopy } from './kernels/copy.js';
import { gatherKernel, scatterKernel } from './kernels/index.js';
import { matmulKernel } from './kernels/matmul.js';
import { adamKernel, sgdKernel } from './kernels/optim.js';
import { unscaleKernel } from './kernels/unscale.js';
import { softmaxCrossEntropyKernel } from './kernels/softmax.js';
import { reduceKernel } from './kernels/reduce.js';
import type { Strided } from './kernels/strided.js';
import { unaryKernel } from './kernels/unary.js';
import { whereKernel } from './kernels/where.js';

/** Options of CpuBackend: those every backend takes (memoryLimit), nothing of its own. */
export type CpuBackendOptions = BaseBackendOptions;

function describeHost(): string {
  const g = globalThis as {
    process?: { versions?: { v8?: string; node?: string; bun?: string } };
    Deno?: { version?: { deno?: string; v8?: string } };
    navigator?: { hardwareConcurrency?: number; userAgent?: string };
  };
  const cores = g.navigator?.hardwareConcurrency;
  const engine = g.Deno?.version?.deno
    ? `Deno ${g.Deno.version.deno}, V8 ${g.Deno.version.v8}`
    : g.process?.versions?.bun
      ? `Bun ${g.process.versions.bun}`
      : g.process?.versions?.node
        ? `Node ${g.process.versions.node}, V8 ${g.process.versions.v8}`
        : (g.navigator?.userAgent ?? 'JavaScript');
  return `JavaScript on the host CPU (${engine}${cores ? `, ${cores} cores` : ''})`;
}

/**
 * The reference backend: pure TypeScript on typed arrays, every HAL primitive, synchronous under the
 * hood (ops run when called; `read`/`synchronize` resolve at once) and with `readSync`.
 * Default memory limit: 2 GiB of live buffers (option `memoryLimit`).
 */
export class CpuBackend extends BaseBackend {
  readonly name = 'cpu';
  readonly deviceName = describeHost();
  readonly deviceType = 'cpu' as const;
  private readonly store = new Map<number, StorageArray>();

  constructor(options: CpuBackendOptions = {}) {
    super(options);
  }

  /** Synchronous read of any view. */
  readonly readSync = (x: NDArray | DeviceBuffer): HostArray => {
    const view = this.readView(x, 'readSync');
    let out: StorageArray;
    if (isWholeBuffer(view)) out = this.data(view.buffer).slice();
    else {
      out = newStorageArray(
        view.dtype,
        view.shape.reduce((p, d) => p * d, 1),
      );
      copyKernel(this.strided(view), out);
    }
    return storageToHost(view.dtype, out);
  };

  protected createStorage(buffer: DeviceBuffer): void {
    try {
      this.store.set(buffer.id, newStorageArray(buffer.dtype, buffer.size));
    } catch (e) {
      if (e instanceof RangeError) throw this.hostArrayRefused(buffer, e);
      throw e;
    }
  }

  protected destroyStorage(buffer: DeviceBuffer): void {
    this.store.delete(buffer.id);
  }

  protected writeStorage(buffer: DeviceBuffer, data: StorageArray): void {
    this.data(buffer).set(data);
  }

  protected async readStorage(buffer: DeviceBuffer): Promise<StorageArray> {
    return this.data(buffer).slice();
  }

  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    unaryKernel(op, this.strided(x), this.data(out));
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    binaryKernel(op, this.strided(a), this.strided(b), this.data(out));
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    reduceKernel(op, this.strided(x), axes, this.data(out), x.dtype === 'bool');
  }

  protected copyKernel(x: NDArray, out: DeviceBuffer): void {
    // out is int8, uint8 or float16 only for the narrowing cast (hal narrow.ts); its storage is int32/float32
    copyKernel(this.strided(x), this.data(out), isNarrow(out.dtype) ? out.dtype : undefined);
  }

  protected copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    stridedCopy(this.strided(x), { data: this.data(out), shape: x.shape, strides, offset });
  }

  protected fillKernel(out: DeviceBuffer, value: number): void {
    this.data(out).fill(value);
  }

  protected gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
    gatherKernel(this.strided(x), this.strided(indices), this.data(out), GATHER_FILL[x.dtype]);
  }

  protected scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void {
    scatterKernel(this.strided(target), this.strided(indices), this.strided(updates), this.data(out), 'add');
  }

  protected override scatterKernel(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    scatterKernel(this.strided(target), this.strided(indices), this.strided(updates), this.data(out), reduction);
  }

  /** int32 matmul, exact modulo 2^32 (hostIntMatmul: Math.imul, row by row). */
  protected override integerMatmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    hostIntMatmul(this.strided(a), this.strided(b), this.data(out) as Int32Array);
  }

  /** cumsum in index order (hostCumsum: a sequential scan, float64 accumulator). */
  protected override cumsumKernel(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void {
    hostCumsum(this.strided(x), this.data(out), exclusive, reverse);
  }

  /** topk (hostTopk: a sorted buffer of k candidates, or a sort for large k). */
  protected override topkKernel(
    x: NDArray,
    k: number,
    largest: boolean,
    values: DeviceBuffer,
    indices: DeviceBuffer,
  ): void {
    hostTopk(this.strided(x), k, largest, this.data(values), this.data(indices) as Int32Array);
  }

  /** argmax/argmin (hostArgReduce: one sequential pass per row). */
  protected override argReduceKernel(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void {
    hostArgReduce(this.strided(x), op, lastIndex, this.data(out) as Int32Array);
  }

  /** oneHot (hostOneHot: zero the output, then one store per index). */
  protected override oneHotKernel(indices: NDArray, depth: number, out: DeviceBuffer): void {
    hostOneHot(this.strided(indices), depth, this.data(out) as Float32Array);
  }

  /** gatherND/scatterND positions (hostTuplePositions: one pass over the tuples). */
  protected override tuplePositionsKernel(
    indices: NDArray,
    dims: readonly number[],
    batch: number,
    out: DeviceBuffer,
  ): void {
    hostTuplePositions(this.strided(indices), dims, batch, this.data(out) as Int32Array);
  }

  protected whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    whereKernel(this.strided(cond), this.strided(x), this.strided(y), this.data(out));
  }

  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    matmulKernel(
      this.strided(a) as Strided<Float32Array>,
      this.strided(b) as Strided<Float32Array>,
      this.data(out) as Float32Array,
    );
  }

  /**
   * conv: depthwise convolutions (groups = C = O) over 1 or 2 spatial axes on float32 run
   * kernels/conv.ts (weights finite: a padded zero times a NaN or infinite weight is NaN, as the composite
   * computes it); every other conv runs the HAL's composite (im2col and one matmul).
   */
  override conv(x: NDArray, w: NDArray, options: ConvOptions = {}): NDArray {
    const { r, groups, N, C, O } = checkConvOperands(this, x, w, options.groups, 'conv');
    const bias = checkConvBias(this, options.bias, O, 'conv');
    if (r > 2 || !isDepthwise(groups, C, O) || x.shape.includes(0)) return super.conv(x, w, options);
    if (bias) {
      // the depthwise kernel, then the bias added to its sums (the composite's order)
      const y = this.conv(x, w, { ...options, bias: undefined });
      const b = this.reshape(bias, [1, O, ...y.shape.slice(2).map(() => 1)]); // a view of bias
      try {
        return this.add(y, b);
      } finally {
        this.free(y);
        if (b.buffer !== bias.buffer) this.free(b);
      }
    }
    const g = windowGeometry(x.shape.slice(2), { kernel: w.shape.slice(2), ...options }, 'conv');
    const two = r === 2;
    const win = window2d(x.shape.slice(2), g);
    // 1-D as 2-D of height 1: a unit axis of stride 0 before the last one
    const as2d = (v: NDArray): Strided<Float32Array> => {
      const d = this.strided(v) as Strided<Float32Array>;
      if (two) return d;
      const [s0, s1, s2] = v.strides as [number, number, number];
      return { ...d, shape: [v.shape[0]!, v.shape[1]!, 1, v.shape[2]!], strides: [s0, s1, 0, s2] };
    };
    const wd = as2d(w);
    const [swc, , swh, sww] = wd.strides as [number, number, number, number];
    for (let c = 0; c < C; c++)
      for (let i = 0; i < win.kh; i++)
        for (let j = 0; j < win.kw; j++)
          if (!Number.isFinite(wd.data[wd.offset + c * swc + i * swh + j * sww]!)) return super.conv(x, w, options);
    const out = this.allocate(N * C * win.OH * win.OW, 'float32');
    depthwiseConvKernel(as2d(x), wd, win, N, C, this.data(out) as Float32Array);
    return viewOf(out, [N, C, ...g.output]);
  }

  /** Philox4x32-10 uniforms straight into the buffer (hal/src/core/philox.ts: 32-bit integer math, round inlined). */
  protected override randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    philoxUniformFill(this.data(out) as Float32Array, s);
  }

  /** Fused Adam/AdamW: one in-place pass over param, m and v (operands validated by adamStep). */
  protected override adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    adamKernel(
      this.data(param) as Float32Array,
      this.strided(grad) as Strided<Float32Array>,
      this.data(m) as Float32Array,
      this.data(v) as Float32Array,
      p,
    );
  }

  /** Fused SGD with momentum and weight decay, in place (operands validated by sgdStep). */
  protected override sgdStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    velocity: DeviceBuffer | null,
    p: SgdStepParams,
  ): void {
    sgdKernel(
      this.data(param) as Float32Array,
      this.strided(grad) as Strided<Float32Array>,
      velocity ? (this.data(velocity) as Float32Array) : null,
      p,
    );
  }

  /** Unscale and overflow check: one in-place pass per gradient (operands validated by nonFiniteCheckAndUnscale). */
  protected override nonFiniteCheckAndUnscaleKernel(
    grads: readonly DeviceBuffer[],
    foundInf: DeviceBuffer,
    invScale: number,
  ): void {
    const data = grads.map((g) => this.data(g) as Float32Array);
    if (unscaleKernel(data, invScale)) (this.data(foundInf) as Float32Array)[0] = 1;
  }

  /** Fused, numerically stable softmax cross-entropy (one pass per row, float64 sums; label-0 rule of ops.ts). */
  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return this.fusedSoftmaxCrossEntropy(
      logits,
      labels,
      withGrad,
      (z, y, loss, grad) =>
        softmaxCrossEntropyKernel(
          this.strided(z) as Strided<Float32Array>,
          this.strided(y) as Strided<Float32Array>,
          this.data(loss) as Float32Array,
          grad ? (this.data(grad) as Float32Array) : null,
        ),
      false,
    );
  }

  /** The hostStorage hook: a buffer's typed array, so float64 runs on the HAL's host kernels. */
  protected override hostStorage(buffer: DeviceBuffer): StorageArray {
    return this.data(buffer);
  }

  /** The typed array behind a live buffer (no copy). For kernels and fused ops of this backend. */
  data(buffer: DeviceBuffer): StorageArray {
    const d = this.store.get(buffer.id);
    if (!d) this.checkBuffer(buffer, 'data');
    return d!;
  }

  private strided(x: NDArray): Strided {
    return { data: this.data(x.buffer), shape: x.shape, strides: x.strides, offset: x.offset };
  }
}
