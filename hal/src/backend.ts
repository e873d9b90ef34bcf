import type { DType, HostArray } from './core/dtype.js';
import type { DeviceBuffer, NDArray } from './core/ndarray.js';
import type { CaptureMethods } from './capture.js';
import { InvalidArgumentError } from './core/errors.js';
import type { BinaryOp, ReduceOp, UnaryOp } from './ops/index.js';
import type { ConvMethods } from './families/conv/conv-methods.js';
import type { ArgReduceMethods } from './families/indexing/argreduce.js';
import type { IndexingMethods } from './families/indexing/indexing.js';
import type { IndexingNDMethods } from './families/indexing/indexing-nd.js';
import type { LayoutMethods, PadMode } from './families/layout/layout.js';
import type { LogicMethods } from './families/logic/logic.js';
import type { LossMethods } from './families/loss/losses.js';
import type { NormMethods } from './families/norm/norm.js';
import type { QuantMethods } from './families/quant/quantize.js';
import type { RandomMethods } from './families/random/sampling.js';
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
/** Every ArithmeticClass, strictest first: what `capabilitiesOf` accepts for `capabilities.arithmetic`. */
export const ARITHMETIC_CLASSES: readonly ArithmeticClass[] = ['ieee-correctly-rounded', 'wgsl'];

/** What a backend declares about its arithmetic (see ArithmeticClass). */
export interface BackendCapabilities {
  /** The class of float32 arithmetic (its accuracy rules); the conformance tolerances follow it. */
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
  /** Resolves with the data once the read completes; rejects with the read's typed error. */
  wait(): Promise<T>;
  /** The data if it has arrived, else undefined; rethrows the read's error if it failed. Never blocks. */
  tryRecv(): T | undefined;
  /** Whether the read has settled (arrived or failed). Never blocks. */
  poll(): boolean;
}

/** Hyper-parameters of one Adam/AdamW step (Kingma & Ba 2015; Loshchilov & Hutter 2019 for AdamW). */
export interface AdamStepParams {
  /** Learning rate, finite and ≥ 0. */
  lr: number;
  /** Decay of the first moment m (mean of gradients), in [0, 1); 0.9 is the usual choice. */
  beta1: number;
  /** Decay of the second moment v (mean of squared gradients), in [0, 1); 0.999 is the usual choice. */
  beta2: number;
  /** Added to √v̂ in the denominator, ≥ 0 (1e-8 usually): keeps the step finite where v̂ is 0. */
  eps: number;
  /** Decoupled weight decay (AdamW) when > 0: p ← p − lr·wd·p before the Adam update. */
  weightDecay: number;
  /** Step number t ≥ 1, for bias correction. */
  step: number;
}

/** Hyper-parameters of one SGD step: v ← momentum·v + (g + wd·p); p ← p − lr·v. */
export interface SgdStepParams {
  /** Learning rate, finite and ≥ 0. */
  lr: number;
  /** Momentum factor, finite and ≥ 0; 0 means plain SGD (no velocity buffer needed). */
  momentum: number;
  /** L2 weight decay added to the gradient (g + wd·p), finite and ≥ 0. */
  weightDecay: number;
}

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

/**
 * The op families, one interface each, in one list: the methods derived from the op table (ElementwiseMethods,
 * ReduceMethods) and those of each folder of hal/src/families/ (layout, indexing, argmax/argmin, conv and
 * pooling, bool ops, quantization, losses, normalization, scans, random arrays). ComputeBackend has all of
 * them; BaseBackend gets them from its table of families (FAMILIES, base.ts), which the compiler checks
 * against this list.
 */
export interface FamilyMethods
  extends ElementwiseMethods,
    ReduceMethods,
    LayoutMethods,
    IndexingMethods,
    IndexingNDMethods,
    ArgReduceMethods,
    ConvMethods,
    LogicMethods,
    QuantMethods,
    LossMethods,
    NormMethods,
    ScanMethods,
    RandomMethods {}

/**
 * One step of `fusedElementwise`: a unary op, a binary op with a number as its other operand, or a binary op
 * with an array as its other operand (of the chain's dtype, broadcasting to the chain's shape).
 */
export type ElementwiseStep =
  | {
      /** The unary op applied to the running value. */
      readonly op: UnaryOp;
    }
  | {
      /** The binary op applied to the running value and `scalar`. */
      readonly op: BinaryOp;
      /** The other operand (rounded to the dtype, as a number operand of `binary` is). */
      readonly scalar: number;
      /** op(scalar, value) instead of op(value, scalar). */
      readonly scalarFirst?: boolean;
    }
  | {
      /** The binary op applied to the running value and the element of `array` at the same position. */
      readonly op: BinaryOp;
      /** The other operand: an array of x's dtype whose shape broadcasts to x's (NumPy rules). */
      readonly array: NDArray;
      /** op(array, value) instead of op(value, array). */
      readonly arrayFirst?: boolean;
    };

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
 *
 * Its members: the storage, movement, matmul, composite and optimizer methods declared here, and the methods
 * of every op family (FamilyMethods).
 */
export interface ComputeBackend extends FamilyMethods, CaptureMethods {
  /** Registry name: `cpu`, `wasm`, `webgpu`, ... */
  readonly name: string;
  /** Unique per instance (`cpu#1`); buffers remember it. */
  readonly id: string;
  /** Human-readable device, e.g. "JavaScript (V8 11.3, 2 cores)" or the GPU adapter's description. */
  readonly deviceName: string;
  /** Where it computes: `cpu` (JavaScript, WASM) or `gpu` (a WebGPU adapter). */
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
  memoryStats(): {
    /** Bytes held by live buffers now. */
    liveBytes: number;
    /** The highest `liveBytes` since the backend was created. */
    peakBytes: number;
    /** Number of live buffers (as liveBufferCount()). */
    liveBuffers: number;
  };

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
  /** The seed's name for `write`: the same call, the same checks and errors. */
  copyToDevice(buffer: DeviceBuffer, data: HostArray): void;
  /**
   * Copies an array (any view) or a whole buffer back to the host (copy from device), after queued
   * work completes. Rejects with InvalidArgumentError for anything else, UseAfterFreeError if freed.
   */
  read(x: NDArray | DeviceBuffer): Promise<HostArray>;
  /** The seed's name for `read`: the same call, the same checks and errors. */
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
  /**
   * Binary op `op` of the op table (BINARY_OPS) on a and b broadcast together (NumPy rules; a number is a
   * scalar of the other operand's dtype) → a new array of the broadcast shape, of the operands' dtype (bool
   * for comparisons). ShapeMismatchError when the shapes do not broadcast; DTypeError for mixed dtypes;
   * UnsupportedOpError for an op outside the table or a dtype the op does not take (`binaryTakes`).
   */
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray;
  /**
   * Unary op `op` of the op table (UNARY_OPS) elementwise → a new array of x's shape and dtype.
   * UnsupportedOpError for an op outside the table or a dtype the op does not take (`unaryTakes`).
   */
  unary(op: UnaryOp, x: NDArray): NDArray;

  // Reductions over any set of axes: an integer, an array of integers (negative count from the end;
  // out of range or repeated: InvalidArgumentError) or undefined for all; keepdims a boolean. Plus one
  // method per reduction of the op table (`sum`, `max`, `min`, `prod`: ReduceMethods).
  /**
   * Mean over `axes` (sum × 1/n; NaN over an empty axis), float32 or float64 (UnsupportedOpError otherwise).
   * Reduced dims are dropped, or kept as size 1 with `keepdims`.
   */
  mean(x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  /**
   * Reduction `op` of the op table (REDUCE_OPS: sum, prod, max, min) over `axes` (all when undefined):
   * sum of nothing is 0, prod 1, max −Inf, min +Inf; NaN propagates. Reduced dims are dropped, or kept as
   * size 1 with `keepdims`. UnsupportedOpError for an op outside the table or a dtype it does not take.
   */
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;

  // Movement: views without a copy (reshape copies only when the strides do not allow a view).
  /**
   * The same elements in row-major order as `shape` (one dim may be -1, inferred): a view when the strides
   * allow, else a contiguous copy. ShapeMismatchError when the element counts differ.
   */
  reshape(x: NDArray, shape: readonly number[]): NDArray;
  /**
   * A view with dims reordered, no copy: out.shape[i] = x.shape[perm[i]]. InvalidArgumentError unless perm is
   * a permutation of 0..rank−1.
   */
  permute(x: NDArray, perm: readonly number[]): NDArray;
  /**
   * A view broadcast to `shape` (NumPy rules: new leading dims, size-1 dims repeated with stride 0), no copy.
   * ShapeMismatchError when a dim is neither equal to the target's nor 1.
   */
  expand(x: NDArray, shape: readonly number[]): NDArray;
  /**
   * A view keeping `[start, end)` of each dim (`bounds[i] = [start, end]`, 0 ≤ start ≤ end ≤ dim), no copy.
   * InvalidArgumentError unless there is one valid pair per dimension.
   */
  shrink(x: NDArray, bounds: readonly (readonly [number, number])[]): NDArray;
  /**
   * A view taking every `steps[i]`-th element of dim i (`x[::2]`; negative walks backwards, `x[::-1]`), no copy.
   * InvalidArgumentError for a step of 0 or not one step per dimension.
   */
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
   * Batched matmul: a: [..., M, K], b: [..., K, N] → [..., M, N] of the operands' dtype: float32, float16
   * (summed in float32, each element rounded once to float16), or int32, int8, uint8 (wrapping);
   * batch dims broadcast. Transposed operands are passed as views (`transposeView`) and are not copied.
   * With `bias` (the product's dtype, broadcast to [..., M, N] without widening it): a @ b + bias, as
   * tfjs's fused.matMul or ONNX Gemm's C; a backend may add it in the GEMM's store (matmul-bias.ts);
   * float16: the float32 product plus bias in float32, rounded once to float16, on every backend.
   * Throws ShapeMismatchError if K differs, batch dims do not broadcast or bias does not fit; DTypeError
   * when the operands are float32 and float16 or bias has another dtype; UnsupportedOpError for other dtypes.
   */
  matmul(a: NDArray, b: NDArray, bias?: NDArray | null): NDArray;
  /**
   * A chain of elementwise ops in one pass where the backend can (webgpu: one generated kernel; wasm: one
   * blocked loop; elsewhere the ops one after another): y = x, then for each step y = op(y), op(y, scalar)
   * (op(scalar, y) where `scalarFirst`) or op(y, array) (op(array, y) where `arrayFirst`; `array` broadcast to
   * x's shape), each result rounded to x's dtype as the separate ops round it. Same shape and dtype as x (a
   * float32 or int32 array); the intermediates are never materialized. Every step must keep the dtype (no
   * comparison or logical op: InvalidArgumentError), take x's dtype (UnsupportedOpError) and be known
   * (UnsupportedOpError); InvalidArgumentError for no steps, a scalar that is not a number or an array that is
   * not a live NDArray of this backend; DTypeError for an array of another dtype; ShapeMismatchError for an
   * array that does not broadcast to x's shape. The fused elementwise kernels of XLA and TVM; an ONNX session
   * fuses its chains of unary nodes and binary nodes with a constant or a broadcast tensor into it.
   */
  fusedElementwise(x: NDArray, steps: readonly ElementwiseStep[]): NDArray;

  // Composite ops: built once from primitives; a backend may override any of them with a fused kernel.
  /**
   * exp(x − max) / Σ exp(x − max) along `axis` (default −1), for float x: same shape and dtype as x.
   * InvalidArgumentError for an axis out of range.
   */
  softmax(x: NDArray, axis?: number): NDArray;
  /**
   * (x − max) − log Σ exp(x − max) along `axis` (default −1), for float x: same shape and dtype as x, stable
   * for large logits. InvalidArgumentError for an axis out of range.
   */
  logSoftmax(x: NDArray, axis?: number): NDArray;
  /** float32 x → log Σ exp(x) over the axes (all when absent), stably; −Inf over an empty axis. */
  logsumexp(x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  /**
   * Softmax cross-entropy, numerically stable: logits [N, C], labels [N, C] (one-hot or probabilities)
   * → per-row loss [N] and, when `withGrad`, d(loss_i)/d(logits) = softmax(logits) − labels [N, C].
   * Terms whose label is 0 contribute 0 (a masked −Inf logit keeps the loss finite); see ops.ts.
   * ShapeMismatchError unless both are [N, C]; DTypeError unless both are float32.
   */
  softmaxCrossEntropy(
    logits: NDArray,
    labels: NDArray,
    withGrad?: boolean,
  ): {
    /** Per-row loss, [N]. */
    loss: NDArray;
    /** softmax(logits) − labels, [N, C]; present only with `withGrad`. */
    grad?: NDArray;
  };
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
  /**
   * Mixed precision's unscale and overflow check, after PyTorch's `_amp_foreach_non_finite_check_and_unscale_`:
   * every gradient (a whole float32 buffer, any size) multiplied in place by invScale (rounded to float32, each
   * product rounded to float32: the bits of `mul(g, invScale)`), and foundInf[0] (a float32 buffer of one
   * element) set to 1 when any element of any gradient is Inf or NaN, before or after the multiply; otherwise
   * foundInf is left as it was, so calls accumulate into one flag. An empty list changes nothing. Before anything
   * is written: InvalidArgumentError for a buffer listed twice or that is foundInf, or an invScale that is not
   * finite; DTypeError unless every buffer is float32; ShapeMismatchError unless foundInf holds one element.
   * Inside a capture invScale is the traced call's at every replay (it is not a live value).
   */
  nonFiniteCheckAndUnscale(grads: readonly DeviceBuffer[], foundInf: DeviceBuffer, invScale: number): void;
  /**
   * Scaled dot-product attention without a mask, after PyTorch's `scaled_dot_product_attention` (FlashAttention's
   * forward): softmax(q·kᵀ·scale)·v for float32 q [..., L, d], k [..., S, d], v [..., S, dv] with the same leading
   * dims (no broadcast), of any strides (permuted heads are read in place) → [..., L, dv]. Stable for large scores
   * (each row's largest is subtracted). DTypeError unless float32; ShapeMismatchError for other shapes;
   * InvalidArgumentError unless scale is a finite number. A GPU may run it as one kernel (attentionKernel).
   */
  attention(q: NDArray, k: NDArray, v: NDArray, scale: number): NDArray;
  /**
   * attention's gradients for an upstream gradient dOut [..., L, dv], recomputing P = softmax(q·kᵀ·scale)
   * (FlashAttention-2's backward): dv = Pᵀ·dOut, dS = P ∘ (dOut·vᵀ − rowsum(dOut·vᵀ ∘ P)), dq = dS·k·scale,
   * dk = dSᵀ·q·scale → [dq, dk, dv] of q's, k's and v's shapes (contiguous). Errors as attention's.
   */
  attentionBackward(q: NDArray, k: NDArray, v: NDArray, dOut: NDArray, scale: number): [NDArray, NDArray, NDArray];
  /**
   * attentionBackward on a packed projection, after flash-attn's `qkvpacked` backward: q, k and v are the slices
   * 0, 1, 2 along dim 2 of qkv float32 [N, L, 3, H, D] (multi-head attention's in-projection viewed by head), read as
   * [N, H, L, D] views; dOut float32 [N, H, L, D] → dq, dk, dv stacked in qkv's layout: [N, L, 3, H, D], contiguous
   * (the in-projection's gradient as one array). DTypeError unless float32; ShapeMismatchError unless qkv is
   * [N, L, 3, H, D] and dOut [N, H, L, D]; InvalidArgumentError unless scale is a finite number. A GPU may write the
   * gradients there from its backward kernel (attentionBackwardPackedKernel); otherwise attentionBackward and a
   * stack.
   */
  attentionBackwardPacked(qkv: NDArray, dOut: NDArray, scale: number): NDArray;
}
