import {
  type AdamStepParams,
  type BackendCapabilities,
  type ComputeBackend,
  type DeviceType,
  type ElementwiseStep,
  type FamilyMethods,
  type Operand,
  type SgdStepParams,
  STRICT_CAPABILITIES,
} from './backend.js';
import {
  adamStepComposite,
  logSoftmaxComposite,
  logsumexpComposite,
  sgdStepComposite,
  softmaxComposite,
  softmaxCrossEntropyComposite,
} from './families/composite/composites.js';
import { checkUnscaleOperands, nonFiniteCheckAndUnscaleComposite } from './families/composite/unscale.js';
import {
  attentionBackwardComposite,
  attentionComposite,
  checkAttentionOperands,
} from './families/composite/attention.js';
import {
  attentionBackwardPackedComposite,
  checkPackedAttentionOperands,
} from './families/composite/attention-packed.js';
import { type DType, DTYPE_LIST, dtypeDescriptor, isDType, isIntDType, isNarrow, storageDType } from './core/dtype.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError, UnsupportedOpError } from './core/errors.js';
import {
  type DeviceBuffer,
  expandView,
  isWholeBuffer,
  type NDArray,
  permuteView,
  reshapeView,
  shrinkView,
  strideView,
  viewOf,
} from './core/ndarray.js';
import {
  type BinaryOp,
  binaryResult,
  binaryTakes,
  dtypeTaken,
  type ReduceOp,
  reduceTakes,
  type UnaryOp,
  unaryTakes,
} from './ops/index.js';
import { broadcastShapes, contiguousStrides, normalizeAxes, sizeOf } from './core/shape.js';
import { softmaxCrossEntropyFrame } from './families/loss/fused.js';
import { checkSteps, fusedElementwiseComposite } from './families/elementwise/fused.js';
import { StorageBackend } from './contract/storage-backend.js';
import { withTemps } from './core/temps.js';
import { type PhiloxStream, philoxUniformFill } from './core/philox.js';
import { RANDOM_METHODS } from './families/random/sampling.js';
import { type ScatterCompositeHost, scatterKernelComposite } from './families/indexing/scatter-composite.js';
import { integerMatmulComposite } from './families/matmul/integer-matmul.js';
import { addBias, checkMatmulBias, matmulBiasWide } from './families/matmul/matmul-bias.js';
import { ELEMENTWISE_METHODS, REDUCE_METHODS } from './contract/table-methods.js';
import { defineFamilyMethods } from './contract/family-table.js';
import { ARG_REDUCE_METHODS } from './families/indexing/argreduce.js';
import { CONV_METHODS } from './families/conv/conv-methods.js';
import { INDEXING_METHODS, type ScatterReduction } from './families/indexing/indexing.js';
import { INDEXING_ND_METHODS } from './families/indexing/indexing-nd.js';
import { LAYOUT_METHODS, type LayoutHost, type PadMode, padArray } from './families/layout/layout.js';
import { LOGIC_METHODS } from './families/logic/logic.js';
import { QUANT_METHODS } from './families/quant/quantize.js';
import { LOSS_METHODS } from './families/loss/losses.js';
import { NORM_METHODS } from './families/norm/norm.js';
import { SCAN_METHODS } from './families/scan/scan.js';
import {
  BINARY_OP_SET,
  checkAdamParams,
  checkAxesArg,
  checkAxis,
  checkBoolean,
  checkIntList,
  checkPairs,
  checkSgdParams,
  checkSoftmaxCrossEntropyOperands,
  checkStepBuffers,
  describeValue,
  matmulDims,
  REDUCE_OP_SET,
  sgdVelocity,
  UNARY_OP_SET,
} from './contract/validate.js';

import type { HookArgs, HookResult } from './contract/hooks.js';
export {
  type BackendHooks,
  type HookSpec,
  missingHooks,
  OPTIONAL_HOOKS,
  type OptionalBackendHooks,
  REQUIRED_HOOKS,
} from './contract/hooks.js';
export type { BaseBackendOptions } from './contract/storage-backend.js';

/**
 * The HAL implemented once over a small set of kernels. A backend extends this class and implements
 * the hooks of BackendHooks (hal/src/contract/hooks.ts): four storage hooks and ten kernels (unary, binary,
 * reduce, copy, copyInto, fill, gather, scatterAdd, matmul, where); every user-facing op — validation,
 * broadcasting, typed errors, composites such as softmax — comes from here, so all backends behave
 * alike. Composites and optimizer steps (OptionalBackendHooks) may be overridden with fused kernels. Guide:
 * docs/WRITING-A-BACKEND.md.
 *
 * Every op calls its kernels through one routing step, `this.route` (kernel-router.ts), which hands each
 * hook the dtypes it takes: int8, uint8 and float16 as their storage dtype, narrowed after computing; float64
 * to host kernels (each dtype's route is in its descriptor, core/dtype.ts).
 *
 * Kernel contracts: `out` is a fresh contiguous buffer of the output's size (except `assign` and
 * in-place optimizer steps); input views already have the output's shape (broadcast with stride 0)
 * for unary/binary; reduce axes are sorted and unique. The constructor throws BackendHookError naming
 * every required hook the subclass lacks (a plain-JS subclass is checked the same way).
 * Buffer bookkeeping, construction and checks (allocate, free, read, write, fromArray, full, check,
 * checkBuffer...) come from StorageBackend (storage-backend.ts), as do the required hooks' abstract
 * declarations; the ops and composites are here.
 */
// The op families' methods (FamilyMethods) are defined on the prototype from FAMILIES (end of file).
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: methods defined on the prototype
export abstract class BaseBackend extends StorageBackend implements ComputeBackend {
  abstract readonly deviceName: string;
  abstract readonly deviceType: DeviceType;
  /** The strict class unless a backend declares otherwise (see ArithmeticClass). */
  readonly capabilities: BackendCapabilities = STRICT_CAPABILITIES;

  // ---- elementwise ----
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray {
    if (typeof a === 'number' && typeof b === 'number')
      throw new InvalidArgumentError(`${op}: at least one operand must be an array`);
    if (typeof a !== 'number') this.check(a, op, 'a');
    if (typeof b !== 'number') this.check(b, op, 'b');
    const dtype = typeof a === 'number' ? (b as NDArray).dtype : a.dtype;
    if (typeof a !== 'number' && typeof b !== 'number' && a.dtype !== b.dtype) {
      throw new DTypeError(`${op}: operands have dtypes ${a.dtype} and ${b.dtype}; cast one explicitly`);
    }
    if (!BINARY_OP_SET.has(op))
      throw new UnsupportedOpError(String(op), dtype, this.name, `binary ops: ${[...BINARY_OP_SET].join(', ')}`);
    if (!dtypeTaken(binaryTakes(op), dtype)) throw new UnsupportedOpError(op, dtype, this.name);
    const value = typeof a === 'number' ? a : typeof b === 'number' ? b : undefined;
    if (value !== undefined && dtype === 'float32' && this.binaryScalarKernel) {
      // the number as a kernel parameter: no 0-d array, no fill
      const x = (typeof a === 'number' ? b : a) as NDArray;
      const out = this.allocate(sizeOf(x.shape), binaryResult(op, dtype));
      this.guard(out, () => this.binaryScalarKernel!(op, x, Math.fround(value), typeof a === 'number', out));
      return viewOf(out, x.shape);
    }
    const temps: NDArray[] = [];
    const arr = (v: Operand): NDArray => {
      if (typeof v !== 'number') return v;
      const s = this.full([], v, dtype);
      temps.push(s);
      return s;
    };
    try {
      const va = arr(a);
      const vb = arr(b);
      const shape = broadcastShapes(va.shape, vb.shape);
      const out = this.allocate(sizeOf(shape), binaryResult(op, dtype));
      this.guard(out, () => this.route.binary(op, expandView(va, shape), expandView(vb, shape), out));
      return viewOf(out, shape);
    } finally {
      for (const t of temps) this.free(t);
    }
  }

  fusedElementwise(x: NDArray, steps: readonly ElementwiseStep[]): NDArray {
    this.check(x, 'fusedElementwise');
    const checked = checkSteps(steps, x, this.name, (a, arg) => this.check(a, 'fusedElementwise', arg));
    if (!this.fusedElementwiseKernel || x.dtype !== 'float32') return fusedElementwiseComposite(this, x, checked);
    const out = this.allocate(sizeOf(x.shape), x.dtype);
    this.guard(out, () => this.fusedElementwiseKernel!(x, checked, out));
    return viewOf(out, x.shape);
  }

  unary(op: UnaryOp, x: NDArray): NDArray {
    this.check(x, op);
    if (!UNARY_OP_SET.has(op))
      throw new UnsupportedOpError(String(op), x.dtype, this.name, `unary ops: ${[...UNARY_OP_SET].join(', ')}`);
    if (!dtypeTaken(unaryTakes(op), x.dtype)) throw new UnsupportedOpError(op, x.dtype, this.name);
    const out = this.allocate(sizeOf(x.shape), x.dtype);
    this.guard(out, () => this.route.unary(op, x, out));
    return viewOf(out, x.shape);
  }

  // ---- reductions ----
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    this.check(x, op);
    if (!REDUCE_OP_SET.has(op))
      throw new UnsupportedOpError(
        String(op),
        x.dtype,
        this.name,
        `reductions: ${[...REDUCE_OP_SET].join(', ')}, and mean()`,
      );
    if (!dtypeTaken(reduceTakes(op), x.dtype))
      throw new UnsupportedOpError(op, x.dtype, this.name, x.dtype === 'bool' ? 'use any() or all()' : undefined);
    checkAxesArg(axes, op, x);
    checkBoolean(keepdims, op, 'keepdims');
    const ax = normalizeAxes(axes, x.shape.length);
    const kept = x.shape.filter((_, i) => !ax.includes(i));
    const shape = keepdims ? x.shape.map((d, i) => (ax.includes(i) ? 1 : d)) : kept;
    // max and min over nothing in a narrow integer dtype (int8, uint8): its minimum and maximum (int32's
    // would wrap to 0, −1)
    const range = isNarrow(x.dtype) ? dtypeDescriptor(x.dtype).range : undefined;
    if (range && (op === 'max' || op === 'min') && sizeOf(x.shape) === 0)
      return this.full(shape, range[op === 'max' ? 0 : 1], x.dtype);
    const out = this.allocate(sizeOf(kept), x.dtype);
    this.guard(out, () => this.route.reduce(op, x, ax, out));
    return viewOf(out, shape);
  }

  /** Mean over axes: sum / n; the mean over an empty axis is NaN. float32 and float64. */
  mean(x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    this.check(x, 'mean');
    if (x.dtype !== 'float32' && x.dtype !== 'float64') throw new UnsupportedOpError('mean', x.dtype, this.name);
    checkAxesArg(axes, 'mean', x);
    checkBoolean(keepdims, 'mean', 'keepdims');
    const ax = normalizeAxes(axes, x.shape.length);
    const n = ax.reduce((p, a) => p * x.shape[a]!, 1);
    const s = this.sum(x, ax, keepdims);
    try {
      return n === 0 ? this.mul(s, NaN) : this.div(s, n);
    } finally {
      this.free(s);
    }
  }

  // ---- movement ----
  reshape(x: NDArray, shape: readonly number[]): NDArray {
    this.check(x, 'reshape');
    checkIntList(shape, 'reshape', 'shape', x);
    const view = reshapeView(x, shape);
    if (view) return view;
    const c = this.contiguous(x);
    return reshapeView(c, shape)!;
  }

  permute(x: NDArray, perm: readonly number[]): NDArray {
    this.check(x, 'permute');
    checkIntList(perm, 'permute', 'perm', x);
    return permuteView(x, perm);
  }
  expand(x: NDArray, shape: readonly number[]): NDArray {
    this.check(x, 'expand');
    checkIntList(shape, 'expand', 'shape', x);
    return expandView(x, shape);
  }
  shrink(x: NDArray, bounds: readonly (readonly [number, number])[]): NDArray {
    this.check(x, 'shrink');
    checkPairs(bounds, 'shrink', 'bounds', x, '[start, end]');
    return shrinkView(x, bounds);
  }
  stride(x: NDArray, steps: readonly number[]): NDArray {
    this.check(x, 'stride');
    checkIntList(steps, 'stride', 'steps', x);
    return strideView(x, steps);
  }

  pad(x: NDArray, pads: readonly (readonly [number, number])[], value = 0, mode: PadMode = 'constant'): NDArray {
    return padArray(this as unknown as LayoutHost, x, pads, value, mode);
  }

  contiguous(x: NDArray): NDArray {
    this.check(x, 'contiguous');
    return this.copyAs(x, x.dtype);
  }

  /**
   * x converted to `dtype` (same shape; a copy even when the dtype is x's). The rules, element by element
   * (the copyKernel hook does the numeric ones; cpu, wasm, webgpu and reference alike, bit for bit):
   * - float (float32, float16) → integer (int32, int8, uint8): truncate toward zero, then saturate at the
   *   dtype's range; NaN → 0 (Rust's `as`, ONNX's saturating casts; NumPy and PyTorch leave it undefined).
   * - integer → narrower integer (int32 → int8/uint8, int8 ↔ uint8): wrap modulo 2^8, two's complement
   *   (NumPy's and PyTorch's astype/to); integer → wider integer: the same value.
   * - → float32: exact from float16, int8 and uint8; int32 rounds to nearest even.
   * - → float16: round to nearest, ties to even, |v| ≥ 65520 → ±Inf, NaN stays NaN, ±0 and the sign of
   *   an underflow kept, subnormals (multiples of 2^-24) exact (IEEE 754; NumPy's astype(float16)).
   * - → bool: x ≠ 0 (NaN is true, as NumPy); bool → any: 1 or 0.
   * DTypeError for an unknown dtype.
   */
  cast(x: NDArray, dtype: DType): NDArray {
    this.check(x, 'cast');
    if (!isDType(dtype)) throw new DTypeError(`cast: unknown dtype ${describeValue(dtype)} (expected ${DTYPE_LIST})`);
    if (dtype === x.dtype || (dtype !== 'bool' && x.dtype !== 'bool')) return this.copyAs(x, dtype);
    // to bool: x ≠ 0 (NaN is true, as NumPy); from bool: 1 or 0 in the new dtype.
    if (dtype === 'bool') return this.binary('notEqual', x, 0);
    return withTemps(this, (t) => this.where(x, t(this.full([], 1, dtype)), t(this.full([], 0, dtype))));
  }

  // Materialization is copyIntoKernel (a view written at row-major strides); copyKernel only converts dtypes.
  private copyAs(x: NDArray, dtype: DType): NDArray {
    const out = this.allocate(sizeOf(x.shape), dtype);
    if (dtype !== x.dtype) this.guard(out, () => this.route.copy(x, out));
    else if (out.size > 0) this.guard(out, () => this.route.copyInto(x, out, contiguousStrides(x.shape), 0));
    return viewOf(out, x.shape);
  }

  assign(target: DeviceBuffer, value: NDArray): void {
    this.checkBuffer(target, 'assign', 'target');
    this.check(value, 'assign', 'value');
    if (sizeOf(value.shape) !== target.size) {
      throw new ShapeMismatchError(
        `assign: value has ${sizeOf(value.shape)} elements, the target holds ${target.size}`,
        [value.shape],
      );
    }
    if (value.dtype !== target.dtype)
      throw new DTypeError(`assign: value is ${value.dtype}, the target is ${target.dtype}`);
    if (value.buffer === target && isWholeBuffer(value)) return;
    if (value.buffer === target) {
      const tmp = this.contiguous(value);
      try {
        this.route.copyInto(tmp, target, contiguousStrides(tmp.shape), 0);
      } finally {
        this.free(tmp);
      }
      return;
    }
    if (target.size > 0) this.route.copyInto(value, target, contiguousStrides(value.shape), 0);
  }

  // ---- matmul ----
  matmul(a: NDArray, b: NDArray, bias?: NDArray | null): NDArray {
    this.check(a, 'matmul', 'a');
    this.check(b, 'matmul', 'b');
    const int = a.dtype === b.dtype && isIntDType(a.dtype);
    const float = (d: DType): boolean => d === 'float32' || d === 'float16';
    if (float(a.dtype) && float(b.dtype) && a.dtype !== b.dtype)
      throw new DTypeError(`matmul: operands have dtypes ${a.dtype} and ${b.dtype}; cast one explicitly`);
    if (!int && !float(a.dtype)) throw new UnsupportedOpError('matmul', a.dtype, this.name);
    if (!int && !float(b.dtype)) throw new UnsupportedOpError('matmul', b.dtype, this.name);
    const [m, k, n] = matmulDims(a, b);
    const batch = broadcastShapes(a.shape.slice(0, -2), b.shape.slice(0, -2));
    const outShape = [...batch, m, n];
    if (bias != null) {
      this.check(bias, 'matmul', 'bias');
      checkMatmulBias(bias, outShape, a.dtype);
    }
    if (int) {
      // NumPy and PyTorch: the operands' integer dtype, wrapping (int8/uint8: the int32 result wrapped).
      const c = this.integerMatmul(a, b);
      const r = a.dtype === 'int32' ? c : withTemps(this, (t) => this.cast(t(c), a.dtype));
      return bias != null ? addBias(this, r, bias) : r;
    }
    // [..., M, K] · [K, N] with batch rows that merge into M (a Linear layer on a batch of sequences):
    // one [B·M, K] · [K, N] product instead of B small ones — the same values, row-major alike. The row
    // count is B·M, the batch's size times M: never divided out of the output's size, where N may be 0.
    const rows = sizeOf(batch) * m;
    let flat = b.shape.length === 2 && a.shape.length > 2 ? reshapeView(a, [rows, k]) : null;
    const fused = bias != null && this.matmulBiasKernel ? expandView(bias, outShape) : null;
    const flatBias = fused && flat ? reshapeView(fused, [rows, n]) : null;
    if (fused && !flatBias) flat = null;
    const ea = flat ?? expandView(a, [...batch, m, k]);
    const eb = flat ? b : expandView(b, [...batch, k, n]);
    // float16 (the kernels compute in float32): the product, or product + bias, rounded once to float16 —
    // in the fused hook's store, else into a float32 product that matmulBiasWide adds the bias to.
    const wide = bias != null && !fused && isNarrow(a.dtype);
    const out = this.allocate(sizeOf(outShape), wide ? storageDType(a.dtype) : a.dtype);
    if (n > 0 && fused) this.guard(out, () => this.route.matmulBias(ea, eb, flatBias ?? fused, out));
    else if (n > 0 || !flat) this.guard(out, () => this.route.matmul(ea, eb, out));
    const r = viewOf(out, outShape);
    if (bias == null || fused) return r;
    return wide ? matmulBiasWide(this, r, bias) : addBias(this, r, bias);
  }

  /**
   * Optional hook: out = a @ b + bias on float32 operands as matmulKernel takes them, bias a view of the
   * kernel's output shape (hal/src/families/matmul/matmul-bias.ts). Without it, matmul with a bias is matmul then add.
   */
  protected matmulBiasKernel?(...args: HookArgs<'matmulBiasKernel'>): HookResult<'matmulBiasKernel'>;
  /** The optional hook `binaryScalarKernel`: its contract is its docstring in OptionalBackendHooks (hooks.ts). */
  protected binaryScalarKernel?(...args: HookArgs<'binaryScalarKernel'>): HookResult<'binaryScalarKernel'>;
  /** The optional hook `fusedElementwiseKernel`: its contract is its docstring in OptionalBackendHooks (hooks.ts). */
  protected fusedElementwiseKernel?(...args: HookArgs<'fusedElementwiseKernel'>): HookResult<'fusedElementwiseKernel'>;
  /** Optional: several copyIntoKernel calls in one, for concat and stack (hooks.ts; false declines). */
  protected copyIntoManyKernel?(...args: HookArgs<'copyIntoManyKernel'>): HookResult<'copyIntoManyKernel'>;

  /**
   * Integer matmul with an int32 result, exact modulo 2^32, of int32, int8 or uint8 operands (each its
   * own dtype; checked by the caller): the optional integerMatmulKernel hook, else the composite of
   * integer-matmul.ts on int32 casts. Used by matmul and matmulInteger (quantize.ts).
   */
  protected integerMatmul(a: NDArray, b: NDArray): NDArray {
    const [m, k, n] = matmulDims(a, b);
    const batch = broadcastShapes(a.shape.slice(0, -2), b.shape.slice(0, -2));
    const [ea, eb] = [expandView(a, [...batch, m, k]), expandView(b, [...batch, k, n])];
    if (!this.integerMatmulKernel)
      return withTemps(this, (t) =>
        integerMatmulComposite(
          this,
          ea.dtype === 'int32' ? ea : t(this.cast(ea, 'int32')),
          eb.dtype === 'int32' ? eb : t(this.cast(eb, 'int32')),
        ),
      );
    const outShape = [...batch, m, n];
    const out = this.allocate(sizeOf(outShape), 'int32');
    this.guard(out, () => this.integerMatmulKernel!(ea, eb, out));
    return viewOf(out, outShape);
  }
  /** Optional integer matmul (hooks.ts); without it, integer matmul is the composite of integer-matmul.ts. */
  protected integerMatmulKernel?(...args: HookArgs<'integerMatmulKernel'>): HookResult<'integerMatmulKernel'>;

  // ---- composites (override with fused kernels where it pays) ----
  /** softmax along `axis` (default -1). Throws InvalidArgumentError for an axis out of range. */
  softmax(x: NDArray, axis = -1): NDArray {
    this.check(x, 'softmax');
    checkAxis(axis, 'softmax', x);
    return softmaxComposite(this, x, axis);
  }
  /** log-softmax along `axis` (default -1). Throws InvalidArgumentError for an axis out of range. */
  logSoftmax(x: NDArray, axis = -1): NDArray {
    this.check(x, 'logSoftmax');
    checkAxis(axis, 'logSoftmax', x);
    return logSoftmaxComposite(this, x, axis);
  }
  /** log Σ exp(x) over the axes (all when absent), float32 or float64; the rule in composites.ts. */
  logsumexp(x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
    this.check(x, 'logsumexp');
    if (x.dtype !== 'float32' && x.dtype !== 'float64') throw new UnsupportedOpError('logsumexp', x.dtype, this.name);
    checkAxesArg(axes, 'logsumexp', x);
    checkBoolean(keepdims, 'logsumexp', 'keepdims');
    return logsumexpComposite(this, x, normalizeAxes(axes, x.shape.length), keepdims);
  }
  /** Validated here; backends with a fused kernel override it and call `fusedSoftmaxCrossEntropy`. */
  softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    this.checkSoftmaxCrossEntropy(logits, labels, withGrad);
    return softmaxCrossEntropyComposite(this, logits, labels, withGrad);
  }
  /**
   * One Adam/AdamW step, in place. Validates hyper-parameters (checkAdamParams: finite, lr ≥ 0,
   * betas in [0, 1), eps ≥ 0, weightDecay ≥ 0, integer step ≥ 1) and operands (live, float32,
   * distinct buffers of the gradient's size) before `adamStepKernel` touches anything.
   */
  adamStep(param: DeviceBuffer, grad: NDArray, m: DeviceBuffer, v: DeviceBuffer, p: AdamStepParams): void {
    checkAdamParams(p);
    this.checkStepOperands('adamStep', param, grad, [m, v]);
    this.adamStepKernel(param, grad, m, v, p);
  }
  /**
   * One SGD step, in place. Validates hyper-parameters (checkSgdParams: finite, lr, momentum and
   * weightDecay ≥ 0) and operands; momentum > 0 needs a velocity buffer (null means no momentum).
   */
  sgdStep(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void {
    checkSgdParams(p);
    const vel = sgdVelocity(velocity, p);
    this.checkStepOperands('sgdStep', param, grad, vel ? [vel] : []);
    this.sgdStepKernel(param, grad, vel, p);
  }
  /**
   * Unscales gradients in place and flags an Inf or NaN in foundInf (PyTorch's
   * `_amp_foreach_non_finite_check_and_unscale_`). Validates every operand (checkUnscaleOperands: live, float32,
   * distinct, foundInf of one element, invScale finite) before `nonFiniteCheckAndUnscaleKernel` touches anything.
   */
  nonFiniteCheckAndUnscale(grads: readonly DeviceBuffer[], foundInf: DeviceBuffer, invScale: number): void {
    checkUnscaleOperands(grads, foundInf, invScale, (b, arg) => this.checkBuffer(b, 'nonFiniteCheckAndUnscale', arg));
    if (grads.length > 0) this.nonFiniteCheckAndUnscaleKernel(grads, foundInf, invScale);
  }

  /**
   * softmax(q·kᵀ·scale)·v (PyTorch's scaled_dot_product_attention without a mask). Validated here
   * (checkAttentionOperands); a backend's `attentionKernel` runs it where it accepts the shape, else the composite.
   * The fused result over two leading dims [N, H] is laid out as [N, L, H, dv] in memory (strides
   * [L·H·dv, dv, H·dv, 1], as PyTorch's flash attention returns it), so that merging the heads — permute
   * [0, 2, 1, 3], reshape [N, L, H·dv] — is a view, not a copy; otherwise, and from the composite, contiguous.
   */
  attention(q: NDArray, k: NDArray, v: NDArray, scale: number): NDArray {
    const { lead, L, S, d, dv } = checkAttentionOperands('attention', q, k, v, 'forward', scale, (x, arg) =>
      this.check(x, 'attention', arg),
    );
    const shape = [...lead, L, dv];
    if (this.attentionKernel && sizeOf(shape) > 0 && S > 0 && d > 0) {
      const out = this.allocate(sizeOf(shape), 'float32');
      const H = lead[1]!;
      const strides = lead.length === 2 ? [L * H * dv, dv, H * dv, 1] : contiguousStrides(shape);
      let ran: boolean | void = false;
      this.guard(out, () => {
        ran = this.attentionKernel!(q, k, v, Math.fround(scale), out, strides);
      });
      if (ran !== false) return { buffer: out, dtype: 'float32', shape, strides, offset: 0 };
      this.deallocate(out);
    }
    return attentionComposite(this, q, k, v, scale);
  }
  /** attention's gradients [dq, dk, dv] (FlashAttention-2's backward); validated as attention, then the hook. */
  attentionBackward(q: NDArray, k: NDArray, v: NDArray, dOut: NDArray, scale: number): [NDArray, NDArray, NDArray] {
    const op = 'attentionBackward';
    const { lead, L, S, d, dv } = checkAttentionOperands(op, q, k, v, dOut, scale, (x, arg) => this.check(x, op, arg));
    const shapes = [
      [...lead, L, d],
      [...lead, S, d],
      [...lead, S, dv],
    ];
    if (this.attentionBackwardKernel && shapes.every((s) => sizeOf(s) > 0) && dv > 0) {
      const outs: DeviceBuffer[] = [];
      let ran: boolean | void = false;
      try {
        for (const s of shapes) outs.push(this.allocate(sizeOf(s), 'float32'));
        ran = this.attentionBackwardKernel(q, k, v, dOut, Math.fround(scale), outs[0]!, outs[1]!, outs[2]!);
      } catch (e) {
        for (const b of outs) this.deallocate(b);
        throw e;
      }
      if (ran !== false) return [viewOf(outs[0]!, shapes[0]), viewOf(outs[1]!, shapes[1]), viewOf(outs[2]!, shapes[2])];
      for (const b of outs) this.deallocate(b);
    }
    return attentionBackwardComposite(this, q, k, v, dOut, scale);
  }
  /**
   * attentionBackward on a packed projection qkv [N, L, 3, H, D] (q, k, v its slices along dim 2 as [N, H, L, D]
   * views) → dq, dk, dv stacked in qkv's layout [N, L, 3, H, D]; validated, then the hook, else the composite.
   */
  attentionBackwardPacked(qkv: NDArray, dOut: NDArray, scale: number): NDArray {
    const op = 'attentionBackwardPacked';
    const [q, k, v] = checkPackedAttentionOperands(this, op, qkv, dOut, scale, (x, arg) => this.check(x, op, arg));
    const size = sizeOf(qkv.shape);
    if (this.attentionBackwardPackedKernel && size > 0) {
      const out = this.allocate(size, 'float32');
      let ran: boolean | void = false;
      this.guard(out, () => {
        ran = this.attentionBackwardPackedKernel!(q, k, v, dOut, Math.fround(scale), out);
      });
      if (ran !== false) return viewOf(out, qkv.shape);
      this.deallocate(out);
    }
    return attentionBackwardPackedComposite(this, q, k, v, dOut, scale);
  }

  /** The Adam update on validated operands; the default is the composite. Fused backends override it. */
  protected adamStepKernel(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    p: AdamStepParams,
  ): void {
    adamStepComposite(this, param, grad, m, v, p);
  }
  /** The SGD update on validated operands; the default is the composite. Fused backends override it. */
  protected sgdStepKernel(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void {
    sgdStepComposite(this, param, grad, velocity, p);
  }
  /** The unscale and check on validated operands (a non-empty list); the default is the composite. */
  protected nonFiniteCheckAndUnscaleKernel(
    grads: readonly DeviceBuffer[],
    foundInf: DeviceBuffer,
    invScale: number,
  ): void {
    nonFiniteCheckAndUnscaleComposite(this, grads, foundInf, invScale);
  }
  /**
   * Fills `out` with the uniforms of a Philox stream (randomUniform; hal/src/core/philox.ts). The default
   * computes them on the host and writes them; backends override it with a kernel of the same bits.
   */
  /**
   * scatter's kernel (hooks.ts, OPTIONAL_HOOKS): 'add' on scatterAddKernel, 'none' composed from the
   * required hooks (scatter-composite.ts), 'mul' UnsupportedOpError; backends override it with a kernel.
   */
  protected scatterKernel(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: ScatterReduction,
  ): void {
    scatterKernelComposite(this as unknown as ScatterCompositeHost, target, indices, updates, out, reduction);
  }
  /**
   * Optional (hooks.ts): the storage of `buffer` as a typed array the host reads and writes synchronously,
   * no copy, element 0 first. With it the backend has float64, whose kernels run on the host
   * (host-float64.ts); without it creating a float64 array throws UnsupportedOpError.
   */
  protected hostStorage?(...args: HookArgs<'hostStorage'>): HookResult<'hostStorage'>;
  /**
   * Optional (hooks.ts): true to store float16 in 2 bytes per element (IEEE binary16), the kernels reading
   * and writing binary16 in the float32 storage alias; without it float16 lives in float32 storage.
   */
  protected packedFloat16?(...args: HookArgs<'packedFloat16'>): HookResult<'packedFloat16'>;
  /**
   * Optional (hooks.ts): true to store int8 and uint8 in 1 byte per element (four to a word, little-endian), the
   * kernels reading and writing bytes in the int32 storage alias; without it int8 and uint8 live in int32 storage.
   */
  protected packedInt8?(...args: HookArgs<'packedInt8'>): HookResult<'packedInt8'>;
  /** Optional fused cumsum (hooks.ts); without it, cumsum is the blocked-scan composite of scan.ts. */
  protected cumsumKernel?(...args: HookArgs<'cumsumKernel'>): HookResult<'cumsumKernel'>;
  /** Optional fused topk (hooks.ts; false declines); without it, topk is the tournament composite of scan.ts. */
  protected topkKernel?(...args: HookArgs<'topkKernel'>): HookResult<'topkKernel'>;
  /** Optional fused argmax/argmin along axis 1 of [O, n, I] (hooks.ts); without it, argreduce.ts's composite. */
  protected argReduceKernel?(...args: HookArgs<'argReduceKernel'>): HookResult<'argReduceKernel'>;
  /** Optional fused oneHot: indices [N] → out [N, depth] float32 (hooks.ts); without it, a gather of the identity. */
  protected oneHotKernel?(...args: HookArgs<'oneHotKernel'>): HookResult<'oneHotKernel'>;
  /** Optional fused per-tensor quantizeLinear: x [n] → out [n] int8/uint8 (hooks.ts); without it, 3–4 kernels. */
  protected quantizeKernel?(...args: HookArgs<'quantizeKernel'>): HookResult<'quantizeKernel'>;
  /**
   * Optional int8 product with a rescaling store: a [...B, M, K] · b [...B, K, N] int8 → out float32,
   * f32(Σ a·b) · (aScale · bScale[n]) + bias[n] (hooks.ts); without it, matmulIntegerToFloat is 4 ops.
   */
  protected integerMatmulToFloatKernel?(
    ...args: HookArgs<'integerMatmulToFloatKernel'>
  ): HookResult<'integerMatmulToFloatKernel'>;
  /** Optional fused flat positions of gatherND/scatterND index tuples [L, q] into out [L] (hooks.ts). */
  protected tuplePositionsKernel?(...args: HookArgs<'tuplePositionsKernel'>): HookResult<'tuplePositionsKernel'>;
  /** Optional fused attention (hooks.ts; false declines); without it, the composite of composite/attention.ts. */
  protected attentionKernel?(...args: HookArgs<'attentionKernel'>): HookResult<'attentionKernel'>;
  /** Optional fused attentionBackward (hooks.ts; false declines); without it, the composite. */
  protected attentionBackwardKernel?(
    ...args: HookArgs<'attentionBackwardKernel'>
  ): HookResult<'attentionBackwardKernel'>;
  /** Optional attentionBackwardPacked into qkv's layout (hooks.ts; false declines); without it, the composite. */
  protected attentionBackwardPackedKernel?(
    ...args: HookArgs<'attentionBackwardPackedKernel'>
  ): HookResult<'attentionBackwardPackedKernel'>;
  /** Optional fused layerNorm on [rows, D] views (hooks.ts); without it, the composite of norm.ts. */
  protected layerNormKernel?(...args: HookArgs<'layerNormKernel'>): HookResult<'layerNormKernel'>;
  /** Optional fused layerNormBackward on [rows, D] views (hooks.ts); without it, the composite of norm.ts. */
  protected layerNormBackwardKernel?(
    ...args: HookArgs<'layerNormBackwardKernel'>
  ): HookResult<'layerNormBackwardKernel'>;
  /**
   * The default of the optional randomUniformKernel hook (hooks.ts): the Philox uniforms computed on the host
   * and written into `out`. A backend overrides it to fill on the device (the same bits).
   */
  protected randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    const host = new Float32Array(out.size);
    philoxUniformFill(host, s);
    this.writeStorage(out, host);
  }

  // ---- helpers shared by fused overrides ----
  /** `x` itself when it is a whole contiguous buffer, else a contiguous copy (`temp`: free it after use). */
  protected whole(x: NDArray): { view: NDArray; temp: boolean } {
    return isWholeBuffer(x) ? { view: x, temp: false } : { view: this.contiguous(x), temp: true };
  }

  /** Validates the operands of an in-place optimizer step (live, float32, distinct, sizes matching the gradient). */
  protected checkStepOperands(op: string, param: DeviceBuffer, grad: NDArray, state: readonly DeviceBuffer[]): void {
    this.check(grad, op, 'grad');
    checkStepBuffers(op, param, grad, state, (b, arg) => this.checkBuffer(b, op, arg));
  }

  /**
   * Validates softmax cross-entropy operands: live float32 logits and labels of one shape [N, C]
   * (ShapeMismatchError, DTypeError) and a boolean `withGrad`.
   */
  protected checkSoftmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad: unknown): void {
    this.check(logits, 'softmaxCrossEntropy', 'logits');
    this.check(labels, 'softmaxCrossEntropy', 'labels');
    checkSoftmaxCrossEntropyOperands(logits, labels, withGrad);
  }

  /**
   * The frame of a fused softmax cross-entropy: validates the operands, hands `kernel` contiguous
   * float32 [N, C] logits and labels plus fresh loss [N] and grad [N, C] buffers, and frees
   * temporaries — and the outputs if the kernel throws. `needWhole: false` passes the views as they
   * are (kernels that read strides). Kernels follow the rule of ops.ts (label-0 terms).
   */
  protected fusedSoftmaxCrossEntropy(
    logits: NDArray,
    labels: NDArray,
    withGrad: boolean,
    kernel: (z: NDArray, y: NDArray, loss: DeviceBuffer, grad: DeviceBuffer | null) => void,
    needWhole = true,
  ): { loss: NDArray; grad?: NDArray } {
    this.checkSoftmaxCrossEntropy(logits, labels, withGrad);
    return softmaxCrossEntropyFrame(this, logits, labels, withGrad, kernel, needWhole ? (x) => this.whole(x) : null);
  }
}

// Compile-time: the defaults BaseBackend gives five optional hooks have their interface's parameters
// (overrides are checked against these declarations; the other hooks are declared through HookArgs).
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Holds<T extends true> = T;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never used
type DefaultHooksTyped = Holds<
  | Same<Parameters<BaseBackend['adamStepKernel']>, HookArgs<'adamStepKernel'>>
  | Same<Parameters<BaseBackend['sgdStepKernel']>, HookArgs<'sgdStepKernel'>>
  | Same<Parameters<BaseBackend['nonFiniteCheckAndUnscaleKernel']>, HookArgs<'nonFiniteCheckAndUnscaleKernel'>>
  | Same<Parameters<BaseBackend['scatterKernel']>, HookArgs<'scatterKernel'>>
  | Same<Parameters<BaseBackend['randomUniformKernel']>, HookArgs<'randomUniformKernel'>>
>;

/**
 * The op families BaseBackend is composed of, in one table: for each family, the functions that implement its
 * methods interface (FamilyMethods, backend.ts), from the family's folder (hal/src/families/<family>/, and
 * contract/table-methods.ts for the two derived from the op table). The compiler holds each entry to its
 * interface (each is a FamilyTable: every method, with its parameters and result) and the table as a whole to
 * FamilyMethods (no method missing, none extra); defineFamilyMethods defines them on BaseBackend's prototype
 * when this module is evaluated, and refuses a name defined twice.
 */
export const FAMILIES = Object.freeze({
  elementwise: ELEMENTWISE_METHODS, // exp, add, ...: one per elementwise op of the op table
  reduce: REDUCE_METHODS, // sum, prod, max, min: one per reduction of the op table
  layout: LAYOUT_METHODS, // concat, stack, split, tile, flip, trilu
  indexing: INDEXING_METHODS, // gather, scatterAdd, scatter, oneHot
  indexingND: INDEXING_ND_METHODS, // gatherND, scatterND, scatterElements
  argReduce: ARG_REDUCE_METHODS, // argmax, argmin
  conv: CONV_METHODS, // conv, convTranspose, maxPool, avgPool, resize
  logic: LOGIC_METHODS, // where, any, all, isnan, isinf, isfinite, logicalNot, bitwiseNot
  quant: QUANT_METHODS, // quantizeLinear, dequantizeLinear, matmulInteger, convInteger, matmulIntegerToFloat
  loss: LOSS_METHODS, // nllLoss, crossEntropy, binaryCrossEntropyWithLogits
  norm: NORM_METHODS, // layerNorm, layerNormBackward
  scan: SCAN_METHODS, // cumsum, topk
  random: RANDOM_METHODS, // randomUniform, randomNormal, bernoulli
});

// Compile-time: FAMILIES defines exactly the methods of FamilyMethods.
type TableKeys<T> = { [F in keyof T]: keyof T[F] }[keyof T];
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never used
type FamiliesComplete = Holds<Same<TableKeys<typeof FAMILIES>, keyof FamilyMethods>>;

export interface BaseBackend extends FamilyMethods {}
defineFamilyMethods(BaseBackend.prototype, FAMILIES);
