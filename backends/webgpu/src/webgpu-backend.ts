import {
  type BinaryOp,
  type ConvOptions,
  type ConvTransposeOptions,
  type DeviceBuffer,
  type ElementwiseStep,
  type NDArray,
  type ReduceOp,
  type ResizeOptions,
  type ScatterReduction,
  type UnaryOp,
  viewOf,
} from '@polyhal/hal';
import { GATHER_FILL, isContiguous, type PhiloxStream } from '@polyhal/hal/internal';
import { dispatchCopyMany } from './dispatch-copy-many.js';
import { dispatchPhilox } from './dispatch-random.js';
import {
  dispatchBinary,
  dispatchBinaryScalar,
  dispatchCopy,
  dispatchFill,
  dispatchReduce,
  dispatchUnary,
} from './dispatch-elementwise.js';
import { dispatchFused } from './dispatch-fused.js';
import { dispatchOneHot, dispatchQuantize, dispatchScatter, dispatchTuplePositions } from './dispatch-index.js';
import { dispatchArgReduce, dispatchTopk } from './dispatch-select.js';
import { dispatchMatmul } from './dispatch-matmul.js';
import { dispatchIntMatmul, packsOperands } from './dispatch-matmul-int.js';
import { dispatchHalfMatmul, halfMatmulCrops, takesHalfSubgroupMatrix } from './dispatch-matmul-f16.js';
import { isHalf, narrowedInto, widened } from './dispatch-half.js';
import { copyBytes, fillBytes, isBytesArray, viaInt32, withBytes } from './dispatch-int8.js';
import { type ConvContext, convOnWebGpu, convTransposeOnWebGpu, resizeOnWebGpu } from './dispatch-conv.js';
import { type SoftmaxContext, softmaxOnGpu } from './dispatch-softmax.js';
import { softmaxCrossEntropyWgsl } from './kernels/fused.js';
import { GATHER_WORDS, gatherWgsl } from './kernels/gather.js';
import { whereWgsl, whereWords } from './kernels/where.js';
import { flat, rowMajor, stridedParams } from './kernel-params.js';
import { floatBits } from './layout.js';
import { WebGpuFusedHooks } from './webgpu-backend-fused.js';

export { GpuError } from './gpu-error.js';

/**
 * WebGPU backend: WGSL compute shaders on buffers of the device. Ops only encode work; command buffers
 * are submitted in batches (and before any read, write or synchronize); `read` maps a staging buffer
 * asynchronously; there is no readSync. Pipelines are cached per kernel specialization; freed buffers
 * return to a pool keyed by size class. Validation and out-of-memory errors (error scopes) fail the
 * submission they occur in (submissions.ts): every array it wrote, and every array computed from
 * those, rejects on read with a GpuError naming the op, for as long as it holds that result; the
 * next synchronize() rejects with it once. A lost device makes every later call fail.
 *
 * The kernel hooks are here, most a call of a dispatch-*.ts file with its context; the fused ones (optimizers,
 * unscale, attention, layerNorm) are WebGpuFusedHooks' (webgpu-backend-fused.ts); the device, storage, reads,
 * captures and the contexts are WebGpuBackendBase's (webgpu-backend-base.ts).
 */
export class WebGpuBackend extends WebGpuFusedHooks {
  // ---- kernels ----
  /** A chain of elementwise steps on float32 in one generated kernel (dispatch-fused.ts). */
  protected override fusedElementwiseKernel(x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): void {
    if (this.fusion.fused(x, steps, out)) return;
    dispatchFused(this.contexts.elementwise, x, steps, out, {
      allocate: (size) => this.allocate(size, 'float32'),
      free: (b) => this.deallocate(b),
    });
  }

  /** withBytes (dispatch-int8.ts) on this backend's byte storage: false when nothing is in bytes (nothing run). */
  private viaBytes(inputs: (NDArray | null)[], out: DeviceBuffer | null, run: (w: NDArray[], o: DeviceBuffer) => void) {
    return withBytes(this.contexts.int8, inputs, out, run);
  }

  /** Whether any argument of a public op (not yet checked: anything) is an array in byte storage. */
  private inBytes(...args: unknown[]): boolean {
    return args.some((a) => isBytesArray(this.contexts.int8, a));
  }

  protected unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
    if (this.viaBytes([x], out, ([w], o) => this.unaryKernel(op, w!, o))) return;
    if (this.fusion.unary(op, x, out)) return;
    dispatchUnary(this.contexts.elementwise, op, x, out);
  }

  protected binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
    if (this.viaBytes([a, b], out, ([wa, wb], o) => this.binaryKernel(op, wa!, wb!, o))) return;
    if (this.fusion.binary(op, a, b, out)) return;
    dispatchBinary(this.contexts.elementwise, op, a, b, out);
  }

  /** A number operand as a kernel parameter (dispatch-elementwise.ts): no 0-d array and no fill kernel. */
  protected override binaryScalarKernel(
    op: BinaryOp,
    x: NDArray,
    value: number,
    scalarFirst: boolean,
    out: DeviceBuffer,
  ): void {
    if (this.fusion.binaryScalar(op, x, value, scalarFirst, out)) return;
    dispatchBinaryScalar(this.contexts.elementwise, op, x, value, scalarFirst, out);
  }

  protected reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void {
    if (this.viaBytes([x], out, ([w], o) => this.reduceKernel(op, w!, axes, o))) return;
    dispatchReduce(this.contexts.elementwise, op, x, axes, out);
  }

  /** Casts (out of any dtype, a narrowing one into int8/uint8); byte storage on either side: dispatch-int8.ts. */
  protected copyKernel(x: NDArray, out: DeviceBuffer): void {
    this.copyIntoKernel(x, out, rowMajor(x.shape), 0);
  }

  protected copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void {
    const ctx = this.contexts.elementwise;
    if (this.anyBytes(x.buffer, out))
      copyBytes(this.contexts.int8, x, out, strides, offset, (w, o, s, at) => dispatchCopy(ctx, w, o, s, at));
    else dispatchCopy(ctx, x, out, strides, offset);
  }

  /** concat and stack: every view in one dispatch per as many as the storage bindings allow (dispatch-copy-many.ts). */
  protected override copyIntoManyKernel(
    xs: readonly NDArray[],
    out: DeviceBuffer,
    strides: readonly number[],
    offsets: readonly number[],
  ): boolean {
    const limit = this.device.limits.maxStorageBuffersPerShaderStage;
    const ctx = this.contexts.elementwise;
    if (!this.anyBytes(out, ...xs.map((x) => x.buffer))) return dispatchCopyMany(ctx, limit, xs, out, strides, offsets);
    // int8/uint8 in bytes: every view and out there (else one copyInto each), the bytes written atomically
    if (!xs.every((x) => this.anyBytes(x.buffer)) || !this.anyBytes(out)) return false;
    return dispatchCopyMany(ctx, limit, xs, out, strides, offsets, this.contexts.int8);
  }

  protected fillKernel(out: DeviceBuffer, value: number): void {
    if (this.anyBytes(out)) fillBytes(this.contexts.int8, out, value);
    else dispatchFill(this.contexts.elementwise, out, value);
  }

  /**
   * float32 product (dispatch-matmul.ts); float16 operands in 2-byte storage on tensor cores where the device has
   * them (dispatch-matmul-f16.ts), else read as float32 copies.
   */
  protected matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    const r = a.shape.length;
    if (
      this.anyHalf(a.buffer) &&
      this.anyHalf(b.buffer) &&
      takesHalfSubgroupMatrix(this.contexts.halfMatmul, a.shape[r - 2]!, b.shape[r - 1]!, a.shape[r - 1]!)
    ) {
      // a product that crops its padded result crops straight into a float16 output (one pass, not crop + cast)
      if (isHalf(this.contexts.half, out) && halfMatmulCrops(this.contexts.halfMatmul, a, b))
        dispatchHalfMatmul(this.contexts.halfMatmul, a, b, out, this.float16Conversions);
      else narrowedInto(this.contexts.half, out, (o) => dispatchHalfMatmul(this.contexts.halfMatmul, a, b, o));
      return;
    }
    if (this.anyHalf(a.buffer, b.buffer, out)) {
      widened(this.contexts.half, [a, b], ([wa, wb]) =>
        narrowedInto(this.contexts.half, out, (o) => dispatchMatmul(this.contexts.matmul, wa!, wb!, o)),
      );
      return;
    }
    dispatchMatmul(this.contexts.matmul, a, b, out);
  }

  /** a @ b + bias: added in the GEMM's store (dispatch-matmul.ts), else the product then an add kernel. */
  protected override matmulBiasKernel(a: NDArray, b: NDArray, bias: NDArray, out: DeviceBuffer): void {
    const r = a.shape.length;
    const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
    if (
      this.anyHalf(a.buffer) &&
      this.anyHalf(b.buffer) &&
      takesHalfSubgroupMatrix(this.contexts.halfMatmul, M, N, K)
    ) {
      // float16 on the tensor cores (float32 accumulation), then the bias added in float32 and rounded once
      const product = this.allocate(out.size, 'float32');
      try {
        dispatchHalfMatmul(this.contexts.halfMatmul, a, b, product);
        this.binaryKernel('add', viewOf(product, bias.shape), bias, out);
      } finally {
        this.deallocate(product);
      }
      return;
    }
    if (this.anyHalf(a.buffer, b.buffer, bias.buffer, out)) {
      widened(this.contexts.half, [a, b, bias], ([wa, wb, wbias]) =>
        narrowedInto(this.contexts.half, out, (o) => this.matmulBiasKernel(wa!, wb!, wbias!, o)),
      );
      return;
    }
    if (dispatchMatmul(this.contexts.matmul, a, b, out, bias)) return;
    const product = this.allocate(out.size, 'float32');
    try {
      dispatchMatmul(this.contexts.matmul, a, b, product);
      this.binaryKernel('add', viewOf(product, bias.shape), bias, out);
    } finally {
      this.deallocate(product);
    }
  }

  /** Integer matmul (dispatch-matmul-int.ts): int8 packed on tensor cores or dot4I8Packed, else int32 tiles. */
  protected override integerMatmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void {
    // int8 in bytes goes to the packed kernels as it is (dispatch-matmul-int.ts); the other paths read it widened
    const packs = packsOperands(this.contexts.intMatmul, a, b);
    if (!packs && this.viaBytes([a, b], null, ([wa, wb]) => this.integerMatmulKernel(wa!, wb!, out))) return;
    dispatchIntMatmul(this.contexts.intMatmul, a, b, out);
  }

  /** int8 product whose stores rescale and add the bias (hooks.ts; dispatch-matmul-int.ts): 3 kernels fewer. */
  protected override integerMatmulToFloatKernel(
    a: NDArray,
    b: NDArray,
    aScale: NDArray,
    bScale: NDArray,
    bias: NDArray | null,
    out: DeviceBuffer,
  ): void {
    const wide = ([wa, wb]: NDArray[]): void => this.integerMatmulToFloatKernel(wa!, wb!, aScale, bScale, bias, out);
    if (!packsOperands(this.contexts.intMatmul, a, b) && this.viaBytes([a, b], null, wide)) return;
    dispatchIntMatmul(this.contexts.intMatmul, a, b, out, { aScale, bScale, bias });
  }

  /** gather: one invocation per output element (kernels/gather.ts); operands [O, D, I], [K] → [O, K, I]. */
  protected gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void {
    if (this.viaBytes([x, indices], out, ([w, i], o) => this.gatherKernel(w!, i!, o))) return;
    if (this.anyHalf(x.buffer, out)) {
      widened(this.contexts.half, [x], ([w]) =>
        narrowedInto(this.contexts.half, out, (o) => this.gatherKernel(w!, indices, o)),
      );
      return;
    }
    const fill = x.dtype === 'float32' ? 0x7fc00000 : GATHER_FILL[x.dtype]; // NaN's bits, INT32_MIN, 1 (bool)
    const [, dim, n] = x.shape as [number, number, number];
    const params = [out.size, indices.shape[0]!, n, dim, x.offset, ...x.strides];
    params.push(indices.offset, indices.strides[0]!, fill);
    const buffers = [this.gpu(x.buffer), this.gpu(indices.buffer), this.gpu(out)];
    this.batch.dispatch('gather', 'gather', gatherWgsl, GATHER_WORDS, params, buffers, flat(out.size));
  }

  /** argmax/argmin: one pass per row, long rows in chunks (dispatch-select.ts). */
  protected override argReduceKernel(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void {
    if (this.viaBytes([x], null, ([w]) => this.argReduceKernel(op, w!, lastIndex, out))) return;
    dispatchArgReduce(this.contexts.select, op, x, lastIndex, out);
  }

  /** topk for k ≤ 64: a sorted buffer of k per row (dispatch-select.ts); larger k declines to the composite. */
  protected override topkKernel(
    x: NDArray,
    k: number,
    largest: boolean,
    values: DeviceBuffer,
    indices: DeviceBuffer,
  ): boolean {
    if (this.anyBytes(x.buffer, values))
      return viaInt32(this.contexts.int8, [x], values, ([w], o) => this.topkKernel(w!, k, largest, o, indices));
    return dispatchTopk(this.contexts.select, x, k, largest, values, indices);
  }

  /** where: one invocation per output element copying x's or y's 32-bit word (kernels/where.ts). */
  protected whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void {
    const n = out.size;
    if (n === 0) return;
    if (this.viaBytes([cond, x, y], out, ([c, wx, wy], o) => this.whereKernel(c!, wx!, wy!, o))) return;
    if (this.anyHalf(x.buffer, y.buffer, out)) {
      widened(this.contexts.half, [x, y], ([wx, wy]) =>
        narrowedInto(this.contexts.half, out, (o) => this.whereKernel(cond, wx!, wy!, o)),
      );
      return;
    }
    const contig = isContiguous(cond) && isContiguous(x) && isContiguous(y);
    const { R, words } = stridedParams(cond.shape, [cond, x, y]);
    this.batch.dispatch(
      'where',
      `where/${contig}/${R}`,
      () => whereWgsl(contig, R),
      whereWords(R),
      [n, cond.offset, x.offset, y.offset, ...words],
      [this.gpu(cond.buffer), this.gpu(x.buffer), this.gpu(y.buffer), this.gpu(out)],
      flat(n),
    );
  }

  protected scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void {
    this.runScatter(target, indices, updates, out, 'add');
  }

  /** scatter: the updates chained per position, then one invocation per output element (dispatch-index.ts). */
  protected override scatterKernel(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    this.runScatter(target, indices, updates, out, reduction);
  }

  private runScatter(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    const run = ([t, i, u]: NDArray[], o: DeviceBuffer): void => this.runScatter(t!, i!, u!, o, reduction);
    if (this.viaBytes([target, indices, updates], out, run)) return;
    if (this.anyHalf(target.buffer, updates.buffer, out)) {
      widened(this.contexts.half, [target, updates], ([t, u]) =>
        narrowedInto(this.contexts.half, out, (o) => this.runScatter(t!, indices, u!, o, reduction)),
      );
      return;
    }
    dispatchScatter(this.contexts.select, target, indices, updates, out, reduction);
  }

  /** oneHot: one invocation per output element (dispatch-index.ts). */
  protected override oneHotKernel(indices: NDArray, depth: number, out: DeviceBuffer): void {
    if (this.viaBytes([indices], null, ([i]) => this.oneHotKernel(i!, depth, out))) return;
    dispatchOneHot(this.contexts.select, indices, depth, out);
  }

  /** Per-tensor quantizeLinear in one kernel (dispatch-index.ts, kernels/quantize.ts). */
  protected override quantizeKernel(x: NDArray, scale: NDArray, zeroPoint: NDArray | null, out: DeviceBuffer): void {
    if (this.viaBytes([x, scale, zeroPoint], out, ([w, s, z], o) => this.quantizeKernel(w!, s!, z ?? null, o))) return;
    dispatchQuantize(this.contexts.select, x, scale, zeroPoint, out);
  }

  /** gatherND/scatterND positions: one invocation per tuple (dispatch-index.ts). */
  protected override tuplePositionsKernel(
    indices: NDArray,
    dims: readonly number[],
    batch: number,
    out: DeviceBuffer,
  ): void {
    if (this.viaBytes([indices], null, ([i]) => this.tuplePositionsKernel(i!, dims, batch, out))) return;
    dispatchTuplePositions(this.contexts.select, indices, dims, batch, out);
  }

  /**
   * conv in one kernel (dispatch-conv.ts): depthwise per output element, otherwise an implicit GEMM over the
   * windows (register blocks on a software adapter unless `matmulTile` forces tiles, as for matmul); 3-D windows
   * and empty shapes fall back to the HAL's composite.
   */
  override conv(x: NDArray, w: NDArray, options: ConvOptions = {}): NDArray {
    if (this.inBytes(x, w)) return super.conv(x, w, options); // the composite, on routed kernels
    this.convContext ??= {
      ...this.contexts.select,
      software: this.isSoftware && !this.contexts.matmul.forcedTile,
      dummy: this.dummy,
    };
    return convOnWebGpu(this, this.convContext, x, w, options) ?? super.conv(x, w, options);
  }
  private convContext?: ConvContext;

  /** convTranspose in one kernel gathering each output's taps (dispatch-conv.ts); 3-D falls back to the composite. */
  override convTranspose(x: NDArray, w: NDArray, options: ConvTransposeOptions = {}): NDArray {
    if (this.inBytes(x, w)) return super.convTranspose(x, w, options);
    return convTransposeOnWebGpu(this, this.contexts.select, x, w, options) ?? super.convTranspose(x, w, options);
  }

  /** Nearest resize in one gather kernel, the composite's indices in its params (dispatch-conv.ts); else composite. */
  override resize(x: NDArray, options: ResizeOptions): NDArray {
    if (this.inBytes(x)) return super.resize(x, options);
    return resizeOnWebGpu(this, this.contexts.select, x, options) ?? super.resize(x, options);
  }

  /** Philox4x32-10 uniforms: one dispatch, one invocation per block of four (kernels/random.ts). */
  protected override randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    dispatchPhilox(this.contexts.live, out, s);
  }

  /** float32 softmax over the last axis of a row-major array in one kernel (dispatch-softmax.ts), else composite. */
  override softmax(x: NDArray, axis = -1): NDArray {
    this.softmaxContext ??= {
      batch: this.batch,
      check: (a, op, arg) => this.check(a, op, arg),
      allocate: (size, dtype) => this.allocate(size, dtype),
      deallocate: (b) => this.deallocate(b),
      gpu: (b) => this.gpu(b),
    };
    return softmaxOnGpu(this.softmaxContext, x, axis) ?? super.softmax(x, axis);
  }
  /** softmax's one-kernel form (dispatch-softmax.ts), made at the first softmax. */
  private softmaxContext?: SoftmaxContext;

  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return this.fusedSoftmaxCrossEntropy(logits, labels, withGrad, (z, y, loss, grad) => {
      const [n, c] = z.shape as [number, number];
      if (n === 0) return;
      this.batch.dispatch(
        'softmaxCrossEntropy',
        'softmaxCrossEntropy',
        softmaxCrossEntropyWgsl,
        4,
        [n, c, grad ? 1 : 0, floatBits(-Infinity)],
        [this.gpu(z.buffer), this.gpu(y.buffer), this.gpu(loss), grad ? this.gpu(grad) : this.dummy],
        flat(n),
      );
    });
  }
}
