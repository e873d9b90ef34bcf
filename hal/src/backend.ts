import type { DType, HostArray } from './core/dtype.js';
import type { DeviceBuffer, NDArray } from './core/ndarray.js';
import { InvalidArgumentError } from './core/errors.js';
import type { RandomMethods } from './families/random/sampling.js';
import type { ArgReduceMethods } from './families/indexing/argreduce.js';
import type { ConvMethods } from './families/conv/conv-methods.js';
import type { LogicMethods } from './families/logic/logic.js';
import type { QuantMethods } from './families/quant/quantize.js';
import type { IndexingMethods } from './families/indexing/indexing.js';
import type { IndexingNDMethods } from './families/indexing/indexing-nd.js';
import type { BinaryOp, ReduceOp, UnaryOp } from './ops/index.js';
import type { LayoutMethods, PadMode } from './families/layout/layout.js';
import type { LossMethods } from './families/loss/losses.js';
import type { NormMethods } from './families/norm/norm.js';
import type { ScanMethods } from './families/scan/scan.js';

/** `cpu` for backends that compute on the host CPU (pure JS, WASM); `gpu` for GPU adapters. */
export type DeviceType = 'cpu' | 'gpu';

/**
 * The float32 arithmetic a backend implements; the conformance suite picks its tolerances from this
 * class, never from the backend's name.
 * - `ieee-correctly-rounded` (the strict class, and the default when a backend declares nothing):
 *   add, sub, mul, div, sqrt, recip correctly rounded as IEEE 754 requires; transcendentals within a
 *   few ulp; sums with float64 or pairwise accuracy; subnormals kept. JavaScript and WebAssembly.
 * - `wgsl`: the accuracy floors of the WGSL specification — x/y as x·(1/y) (2.5 ulp), exp/exp2 within
 *   3 + 2·|x| ulp, sin/cos within 2^-11 absolute on [-π, π] only, float32 accumulation. GPUs.
 */
export type ArithmeticClass = 'ieee-correctly-rounded' | 'wgsl';
export const ARITHMETIC_CLASSES: readonly ArithmeticClass[] = ['ieee-correctly-rounded', 'wgsl'];

/** What a backend declares about its arithmetic (see ArithmeticClass). */
export interface BackendCapabilities {
  readonly arithmetic: ArithmeticClass;
  /** Whether a·b + c may be computed with one rounding (a fused multiply-add) in matmul or elementwise code. */
  readonly fusedMultiplyAdd: boolean;
  /** Whether subnormal float32 inputs or results may be flushed to ±0. */
  readonly flushesSubnormals: boolean;
}

/** The strict class: what a backend that declares no capabilities is held to. */
export const STRICT_CAPABILITIES: BackendCapabilities = Object.freeze({
  arithmetic: 'ieee-correctly-rounded',
  fusedMultiplyAdd: false,
  flushesSubnormals: false,
});

/**
 * The capabilities a backend declares, completed with the strict defaults; throws
 * InvalidArgumentError for an arithmetic class that does not exist (a typo must not loosen anything).
 */
export function capabilitiesOf(be: { readonly capabilities?: Partial<BackendCapabilities> }): BackendCapabilities {
  const c = be.capabilities;
  if (c === undefined || c === null) return STRICT_CAPABILITIES;
  const arithmetic = c.arithmetic ?? STRICT_CAPABILITIES.arithmetic;
  if (!ARITHMETIC_CLASSES.includes(arithmetic)) {
    throw new InvalidArgumentError(
      `capabilities.arithmetic '${String(arithmetic)}' is not one of ${ARITHMETIC_CLASSES.join(', ')}`,
    );
  }
  return { arithmetic, fusedMultiplyAdd: c.fusedMultiplyAdd === true, flushesSubnormals: c.flushesSubnormals === true };
}

/** An operand of a binary op: an array, or a JS number broadcast as a scalar of the other operand's dtype. */
export type Operand = NDArray | number;

/**
 * A queued read (seed 000's async forward handle): `wait()` resolves with the data, `tryRecv()` returns
 * it if it has arrived (undefined otherwise; rethrows a failure), `poll()` says whether it has settled.
 */
export interface ReadHandle<T> {
  wait(): Promise<T>;
  tryRecv(): T | undefined;
  poll(): boolean;
}

/** Hyper-parameters of one Adam/AdamW step (Kingma & Ba 2015; Loshchilov & Hutter 2019 for AdamW). */
export interface AdamStepParams {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled weight decay (AdamW) when > 0: p ← p − lr·wd·p before the Adam update. */
  weightDecay: number;
  /** Step number t ≥ 1, for bias correction. */
  step: number;
}

/** Hyper-parameters of one SGD step: v ← momentum·v + (g + wd·p); p ← p − lr·v. */
export interface SgdStepParams {
  lr: number;
  momentum: number;
  weightDecay: number;
}

/**
 * The contract every backend fulfils. User-facing ops take NDArrays (strided views) and return new
 * contiguous NDArrays that the caller owns and frees with `free`/`deallocate`. Ops enqueue and return
 * at once; `read` resolves with the data once queued work is done; `synchronize()` waits for all of it.
 *
 * Errors: ShapeMismatchError, DTypeError, OutOfMemoryError, UseAfterFreeError, DeviceMismatchError,
 * InvalidArgumentError, UnsupportedOpError — always thrown before any output is allocated or any
 * input is touched. Every argument is validated (BaseBackend, hal/src/contract/validate.ts): null, undefined or
 * a wrong type where an array, buffer, shape, axis list, pair list, number or boolean is expected is
 * an InvalidArgumentError naming the op and the argument (never a bare TypeError); a view reaching
 * outside its buffer is an InvalidArgumentError; an op name outside UNARY_OPS/BINARY_OPS/REDUCE_OPS is
 * an UnsupportedOpError naming op, dtype and backend. Async methods (`read`) reject with these errors.
 */
/**
 * One method per elementwise op of the op table (hal/src/ops/): `be.exp(x)` is `be.unary('exp', x)`,
 * `be.add(a, b)` is `be.binary('add', a, b)`. Derived from the table, so a new op gets its method.
 */
export type ElementwiseMethods = { [K in UnaryOp]: (x: NDArray) => NDArray } & {
  [K in BinaryOp]: (a: Operand, b: Operand) => NDArray;
};

/**
 * One method per reduction of the op table: `be.prod(x, axes, keepdims)` is `be.reduce('prod', x, axes,
 * keepdims)`. Axes: an integer, an array of integers (negative count from the end; out of range or
 * repeated: InvalidArgumentError) or undefined for all; keepdims a boolean.
 */
export type ReduceMethods = {
  [K in ReduceOp]: (x: NDArray, axes?: number | readonly number[], keepdims?: boolean) => NDArray;
};

export interface ComputeBackend extends ElementwiseMethods, ReduceMethods, LayoutMethods {
  /** Registry name: `cpu`, `wasm`, `webgpu`, ... */
  readonly name: string;
  /** Unique per instance (`cpu#1`); buffers remember it. */
  readonly id: string;
  /** Human-readable device, e.g. "JavaScript (V8 11.3, 2 cores)" or the GPU adapter's description. */
  readonly deviceName: string;
  readonly deviceType: DeviceType;
  /**
   * The arithmetic this backend implements (tolerances of the conformance suite follow it). Optional:
   * a backend without it is held to the strict class, STRICT_CAPABILITIES.
   */
  readonly capabilities?: BackendCapabilities;

  /** Bytes that can still be allocated (the configured limit minus live buffers, or less where the device says so). */
  memoryAvailable(): number;
  /** Number of live (allocated, not freed) buffers; used by leak checks. */
  liveBufferCount(): number;
  /** Bytes held by live buffers, and the highest value that has reached since creation. */
  memoryStats(): { liveBytes: number; peakBytes: number; liveBuffers: number };

  /**
   * Allocates `size` elements of `dtype` (contents unspecified). InvalidArgumentError unless `size` is a
   * non-negative integer; DTypeError for an unknown dtype; OutOfMemoryError over the limit.
   */
  allocate(size: number, dtype?: DType): DeviceBuffer;
  /** Frees a buffer. UseAfterFreeError on a double free; InvalidArgumentError if it is not a DeviceBuffer. */
  deallocate(buffer: DeviceBuffer): void;
  /** Frees the buffer behind an array (views of it become invalid). */
  free(x: NDArray): void;
  /**
   * Copies host data into a buffer (copy to device): a Float32Array for a float32 buffer, an Int32Array
   * for an int32 one (any other typed array or a plain Array: DTypeError), of the buffer's length
   * (ShapeMismatchError otherwise).
   */
  write(buffer: DeviceBuffer, data: HostArray): void;
  copyToDevice(buffer: DeviceBuffer, data: HostArray): void;
  /**
   * Copies an array (any view) or a whole buffer back to the host (copy from device), after queued
   * work completes. Rejects with InvalidArgumentError for anything else, UseAfterFreeError if freed.
   */
  read(x: NDArray | DeviceBuffer): Promise<HostArray>;
  copyFromDevice(x: NDArray | DeviceBuffer): Promise<HostArray>;
  /** Starts a read of everything queued so far and returns a handle to poll or await; bad arguments throw at once. */
  readHandle(x: NDArray | DeviceBuffer): ReadHandle<HostArray>;
  /** Synchronous read where the backend can (CPU, WASM); undefined otherwise. */
  readonly readSync?: (x: NDArray | DeviceBuffer) => HostArray;
  /**
   * Whether arrays of `dtype` can be created on this backend; where not, allocate (and so fromArray,
   * full, cast) throws UnsupportedOpError naming the dtype. Absent: every dtype but float64.
   */
  supportsDType?(dtype: DType): boolean;
  /** Resolves when all queued work has finished. */
  synchronize(): Promise<void>;
  /** Frees every buffer and releases the device. Later calls throw. */
  dispose(): void;

  /**
   * Uploads host data (an Array, a typed array or an array-like of numbers) as a new contiguous array
   * of `shape`. ShapeMismatchError unless the length equals the shape's size; DTypeError for an unknown
   * dtype or BigInt data. The dtype defaults to int32 for an Int32Array, else float32.
   */
  fromArray(data: ArrayLike<number>, shape: readonly number[], dtype?: DType): NDArray;
  /** A new array of `shape` filled with `value` (a number; int32 truncates, NaN → 0). */
  full(shape: readonly number[], value: number, dtype?: DType): NDArray;

  // Elementwise ops: `binary(op, a, b)` with NumPy broadcasting and `unary(op, x)`, plus one method per
  // op of the op table (`add(a, b)`, `exp(x)`, ...: ElementwiseMethods). Semantics: docs/OPS.md.
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray;
  unary(op: UnaryOp, x: NDArray): NDArray;

  // Reductions over any set of axes: an integer, an array of integers (negative count from the end;
  // out of range or repeated: InvalidArgumentError) or undefined for all; keepdims a boolean. Plus one
  // method per reduction of the op table (`sum`, `max`, `min`, `prod`: ReduceMethods).
  mean(x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;

  // Movement: views without a copy (reshape copies only when the strides do not allow a view).
  reshape(x: NDArray, shape: readonly number[]): NDArray;
  permute(x: NDArray, perm: readonly number[]): NDArray;
  expand(x: NDArray, shape: readonly number[]): NDArray;
  shrink(x: NDArray, bounds: readonly (readonly [number, number])[]): NDArray;
  stride(x: NDArray, steps: readonly number[]): NDArray;
  /**
   * Pads each dimension with `pads[i] = [before, after]` elements (a new array): `value` in mode
   * `constant` (the default), else NumPy's `edge`, `reflect` or `wrap` (these need a non-empty dim where
   * they pad). `pads` has one pair of non-negative integers per dimension (InvalidArgumentError otherwise).
   */
  pad(x: NDArray, pads: readonly (readonly [number, number])[], value?: number, mode?: PadMode): NDArray;
  /** Materializes any view into a new contiguous array. */
  contiguous(x: NDArray): NDArray;
  /** Converts dtype: float32→int32 truncates toward zero, saturating; NaN → 0. */
  cast(x: NDArray, dtype: DType): NDArray;
  /** Copies `value` (broadcast to the target's size as a flat array) into an existing buffer, in place. */
  assign(target: DeviceBuffer, value: NDArray): void;

  /**
   * Batched matmul: a: [..., M, K], b: [..., K, N] → [..., M, N], float32 (or int32, int8, uint8, wrapping);
   * batch dims broadcast. Transposed operands are passed as views (`transposeView`) and are not copied.
   * With `bias` (the product's dtype, broadcast to [..., M, N] without widening it): a @ b + bias, as
   * tfjs's fused.matMul or ONNX Gemm's C; a backend may add it in the GEMM's store (matmul-bias.ts).
   * Throws ShapeMismatchError if K differs, batch dims do not broadcast or bias does not fit; DTypeError
   * when bias has another dtype.
   */
  matmul(a: NDArray, b: NDArray, bias?: NDArray | null): NDArray;

  // Composite ops: built once from primitives; a backend may override any of them with a fused kernel.
  softmax(x: NDArray, axis?: number): NDArray;
  logSoftmax(x: NDArray, axis?: number): NDArray;
  /** float32 x → log Σ exp(x) over the axes (all when absent), stably; −Inf over an empty axis. */
  logsumexp(x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  /**
   * Softmax cross-entropy, numerically stable: logits [N, C], labels [N, C] (one-hot or probabilities)
   * → per-row loss [N] and, when `withGrad`, d(loss_i)/d(logits) = softmax(logits) − labels [N, C].
   * Terms whose label is 0 contribute 0 (a masked −Inf logit keeps the loss finite); see ops.ts.
   * ShapeMismatchError unless both are [N, C]; DTypeError unless both are float32.
   */
  softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad?: boolean): { loss: NDArray; grad?: NDArray };
  /**
   * One Adam/AdamW update, in place on param, m and v (distinct float32 buffers of the gradient's size).
   * InvalidArgumentError, before anything is written, unless every hyper-parameter is finite with
   * lr ≥ 0, 0 ≤ beta1, beta2 < 1, eps ≥ 0, weightDecay ≥ 0 and step an integer ≥ 1.
   */
  adamStep(param: DeviceBuffer, grad: NDArray, m: DeviceBuffer, v: DeviceBuffer, p: AdamStepParams): void;
  /**
   * One SGD update with momentum and weight decay, in place on param and velocity (null: no momentum).
   * InvalidArgumentError unless lr, momentum and weightDecay are finite and ≥ 0, and when momentum > 0
   * without a velocity buffer.
   */
  sgdStep(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void;
}

/**
 * Random arrays from the Philox4x32-10 stream of a seed, the same on every backend: `randomUniform`,
 * `randomNormal`, `bernoulli` (RandomMethods, hal/src/families/random/sampling.ts).
 */
export interface ComputeBackend extends RandomMethods {}
/** gather, scatterAdd, scatter and oneHot (IndexingMethods, hal/src/families/indexing/indexing.ts). */
export interface ComputeBackend extends IndexingMethods {}
/** gatherND, scatterND and scatterElements (IndexingNDMethods, hal/src/families/indexing/indexing-nd.ts). */
export interface ComputeBackend extends IndexingNDMethods {}
/** argmax and argmin (ArgReduceMethods, hal/src/families/indexing/argreduce.ts). */
export interface ComputeBackend extends ArgReduceMethods {}
/** conv, convTranspose, maxPool and avgPool (ConvMethods, hal/src/families/conv/conv-methods.ts). */
export interface ComputeBackend extends ConvMethods {}
/** where, any, all, isnan, isinf, isfinite, logicalNot and bitwiseNot (LogicMethods, families/logic/logic.ts). */
export interface ComputeBackend extends LogicMethods {}

/**
 * quantizeLinear, dequantizeLinear, matmulInteger, convInteger and matmulIntegerToFloat (QuantMethods,
 * hal/src/families/quant/quantize.ts).
 */
export interface ComputeBackend extends QuantMethods {}
/** nllLoss, crossEntropy and binaryCrossEntropyWithLogits (LossMethods, hal/src/families/loss/losses.ts). */
export interface ComputeBackend extends LossMethods {}
/** layerNorm and layerNormBackward (NormMethods, hal/src/families/norm/norm.ts). */
export interface ComputeBackend extends NormMethods {}
/** cumsum and topk (ScanMethods, hal/src/families/scan/scan.ts). */
export interface ComputeBackend extends ScanMethods {}
