/**
 * The implementer's interface: the hooks a backend built on BaseBackend implements, declared once here as
 * two TypeScript interfaces, {@link BackendHooks} (required) and {@link OptionalBackendHooks}, each hook's
 * contract its docstring. Everything else about the hooks is derived from them: BaseBackend's abstract and
 * optional members take their parameter and result types from these interfaces (HookArgs, HookResult),
 * `REQUIRED_HOOKS` and `OPTIONAL_HOOKS` (what `missingHooks` checks and BackendHookError prints) and the hook
 * tables of docs/WRITING-A-BACKEND.md are rendered from them by `node scripts/hooks-doc.mjs` (into
 * hook-specs.ts and the guide; tests/contract/backend-hooks.test.ts holds both in sync).
 *
 * BaseBackend does everything user-facing — argument validation, broadcasting, typed errors, buffer
 * bookkeeping, memory limits, composites — and calls these hooks only with arguments it has already
 * checked, through one routing step (kernel-router.ts) that handles the dtypes no backend kernel sees.
 * The guide is docs/WRITING-A-BACKEND.md; backends/reference is a backend written against these hooks alone.
 *
 * Shared conventions of every kernel hook:
 * - `out` is a live buffer of this backend; for op kernels it is freshly allocated, contiguous and has
 *   exactly the output's element count and dtype (its contents are unspecified: write every element).
 * - Input views (`NDArray`: buffer, shape, strides, offset, in elements) are live, belong to this
 *   backend instance and lie inside their buffers; strides may be 0 (broadcast), negative (reversed)
 *   or any permutation. Read them through their strides; never assume they are contiguous.
 * - float32 results are rounded to float32 (the HAL's float32 contract: ops.ts and the conformance
 *   tolerances); int32 arithmetic wraps modulo 2^32.
 * - int8, uint8 and float16 reach every hook as their storage dtype (int32, int32, float32; their dtype
 *   descriptors, core/dtype.ts, routed by kernel-router.ts), except as copyKernel's `out`, where the backend
 *   narrows (saturate or wrap; round to float16). float64 never reaches a kernel hook (host-float64.ts).
 * - bool is stored as an int32 0 or 1: treat a bool buffer as int32 in every kernel (copy, gather, fill,
 *   reduce max/min, the logical ops on 0/1). The comparisons write 0 or 1 into a bool `out` whatever
 *   their operands' dtype; gather's out-of-range fill for bool is 1. A bool buffer never holds another value.
 * - A hook that cannot do its work throws a PolyHalError subclass (OutOfMemoryError when memory runs out,
 *   UnsupportedOpError for an op it does not know); if an op kernel throws, BaseBackend frees `out`.
 */
import type { AdamStepParams, ElementwiseStep, SgdStepParams } from '../backend.js';
import type { DType, StorageArray } from '../core/dtype.js';
import type { DeviceBuffer, NDArray } from '../core/ndarray.js';
import type { PhiloxStream } from '../core/philox.js';
import type { BinaryOp, ReduceOp, UnaryOp } from '../ops/index.js';
import { OPTIONAL_HOOK_SPECS, REQUIRED_HOOK_SPECS } from './hook-specs.js';

/**
 * The hooks every BaseBackend subclass implements, as methods of the class (or of its prototype chain):
 * four storage hooks and ten kernels. In TypeScript the compiler reports a missing one (they are abstract
 * in BaseBackend); a plain-JS subclass gets BackendHookError from BaseBackend's constructor (missingHooks).
 * The hook tables of docs/WRITING-A-BACKEND.md are rendered from these docstrings (scripts/hooks-doc.mjs).
 */
export interface BackendHooks {
  /**
   * Make storage for `buffer.size` elements of `buffer.dtype` (size and the memory limit already checked;
   * `dtype` is the array's own dtype, `buffer.dtype` its storage dtype — a backend that stores float16 in
   * 2 bytes, see `packedFloat16`, or int8 and uint8 in 1, see `packedInt8`,
   * needs it). Throw `OutOfMemoryError` if the device refuses.
   * @group storage
   */
  createStorage(buffer: DeviceBuffer, dtype: DType): void;
  /**
   * Release the storage of a buffer. Called once per buffer (by `free`, `deallocate` or `dispose`).
   * @group storage
   */
  destroyStorage(buffer: DeviceBuffer): void;
  /**
   * Copy `data` into the buffer: a `Float32Array` for float32, an `Int32Array` for int32 and for bool (0 or
   * 1 each), a `Float64Array` for float64, of exactly `buffer.size` elements (checked).
   * @group storage
   */
  writeStorage(buffer: DeviceBuffer, data: StorageArray): void;
  /**
   * Resolve with a copy of the whole buffer (`Float32Array`, `Int32Array` for int32 and bool,
   * `Float64Array` for float64) once queued work is done. `read` of a view copies it into a temporary
   * (`copyIntoKernel`), then calls this.
   * @group storage
   */
  readStorage(buffer: DeviceBuffer): Promise<StorageArray>;
  /**
   * `out` has `x`'s element count; `out[i] = op(x[i])` with `i` running over `x.shape` in row-major order.
   * The op and dtype are already checked (int32: `INT32_UNARY_OPS`).
   * @group kernels
   */
  unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void;
  /**
   * `a` and `b` already have the output's shape (broadcast dimensions have stride 0) and one dtype;
   * `out[i] = op(a[i], b[i])`. A number operand arrives as a 0-d array broadcast the same way. The
   * comparisons (`equal` … `greaterEqual`) write 1 or 0 into a bool `out` whatever the operands' dtype; the
   * logical ops take and give bool 0/1.
   * @group kernels
   */
  binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void;
  /**
   * `op` is one of `REDUCE_OPS` (`sum`, `max`, `min`, `prod`: the reductions of the op table,
   * `hal/src/ops/reduce.ts`); `axes` are sorted, unique, non-negative and in range; `out` holds the kept
   * dimensions in row-major order (`keepdims` is a view made afterwards). An empty reduction gives the
   * entry's identity (`sum` 0, `prod` 1, `max` −Inf, `min` +Inf; int32 −2^31 and 2^31 − 1). `mean` is
   * composed by the HAL.
   * @group kernels
   */
  reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void;
  /**
   * Write `x` row-major into `out` of the other dtype (same element count), converting: float32→int32
   * truncates toward zero, saturates, NaN → 0; int32→float32 rounds to nearest even. When `out` is int8
   * or uint8 (int32 storage), from float32 truncate and saturate at −128…127 / 0…255 (NaN → 0), from int32
   * wrap modulo 2^8; when `out` is float16 (float32 storage), round each value (an int32 one first to
   * float32) to the nearest float16, ties to even, ±Inf from 65520, subnormals exact — `x` is float32 or
   * int32 there (`narrowCast` gives each rule). Serves `cast` and the narrowing after computing kernels:
   * every same-dtype copy (`contiguous`, `reshape` of non-viewable strides, `assign`, `read` of views,
   * `pad`, `concat`, …) is `copyIntoKernel`.
   * @group kernels
   */
  copyKernel(x: NDArray, out: DeviceBuffer): void;
  /**
   * Write the non-empty view `x` into the live buffer `out` (same dtype): element `(i0, i1, ...)` of `x`
   * goes to `out[offset + Σ ik·strides[k]]`. The positions are distinct and inside `out`, and `x` never
   * views `out`. Serves `pad` in every mode (after a `fillKernel` for `constant`), `concat`, `stack`,
   * `tile` and `trilu` (hal/src/families/layout/layout.ts).
   * @group kernels
   */
  copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void;
  /**
   * Every element of `out` = `value` (float32: rounded; int32: JavaScript's ToInt32, so NaN → 0). Serves
   * `full` and number operands.
   * @group kernels
   */
  fillKernel(out: DeviceBuffer, value: number): void;
  /**
   * `x: [O, D, I]` (any strides), `indices`: int32 `[K]` (any stride) → `out: [O, K, I]` row-major,
   * `out[o, k, i] = x[o, j, i]` with `j = indices[k]`, plus `D` when negative; where `j` is outside
   * `[0, D)` write the fill: NaN for float32, −2^31 for int32, 1 for bool (values are copied bit for bit,
   * so one 32-bit kernel serves both dtypes). `D` may be 0 (every index out of range). The HAL folds
   * `gather`'s axis into the middle dim (hal/src/families/indexing/indexing.ts).
   * @group kernels
   */
  gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void;
  /**
   * `target: [O, D, I]`, `indices`: int32 `[K]`, `updates: [O, K, I]` (one dtype with `target`) →
   * `out: [O, D, I]` = `target`, then `updates[o, k, i]` added at `[o, j, i]` (`j` as for gather; out of
   * range: skipped) for k = 0, 1, … in that order, rounding (float32) or wrapping (int32) after each
   * addition — so results are identical on every backend. Without float atomics, one invocation per
   * output element looping over k gives that order.
   * @group kernels
   */
  scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void;
  /**
   * `a: [...B, M, K]`, `b: [...B, K, N]` with batch dimensions already broadcast to one shape `B` (stride
   * 0 where repeated); `out: [...B, M, N]`, float32. Transposed operands arrive as views
   * (`transposeView`), not copies. `K = 0` gives zeros.
   * @group kernels
   */
  matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void;
  /**
   * `cond` (bool, stored as int32 0/1), `x` and `y` (of `out`'s dtype) already have the output's shape
   * (broadcast dimensions have stride 0); `out[i] = cond[i] ? x[i] : y[i]` in row-major order, copied bit
   * for bit (one 32-bit kernel serves every dtype). Serves `where` and the casts from bool.
   * @group kernels
   */
  whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void;
}

/**
 * Hooks a backend may implement: fused kernels in place of BaseBackend's composites (same validation
 * before the call, the same oracle and tolerances after), and three storage capabilities (`packedFloat16`,
 * `packedInt8`, `hostStorage`). Where BaseBackend has a default (the optimizer steps, `scatterKernel`,
 * `randomUniformKernel`) an override replaces it; otherwise BaseBackend composes the op from the required
 * hooks when the hook is absent.
 */
export interface OptionalBackendHooks {
  /**
   * One Adam/AdamW update in place; hyper-parameters and operands already validated (`checkAdamParams`,
   * distinct live float32 buffers of the gradient's size). Default: the composite of HAL ops.
   * @group fused
   */
  adamStepKernel?(param: DeviceBuffer, grad: NDArray, m: DeviceBuffer, v: DeviceBuffer, p: AdamStepParams): void;
  /**
   * One SGD update in place, validated the same way. Default: the composite of HAL ops.
   * @group fused
   */
  sgdStepKernel?(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void;
  /**
   * `nonFiniteCheckAndUnscale` on validated operands: a non-empty list of distinct live float32 buffers, foundInf
   * a float32 buffer of one element distinct from them, invScale finite. Each gradient multiplied in place by
   * f32(invScale), each product rounded to float32 (the bits of `mul`); foundInf[0] set to 1 when an element is
   * Inf or NaN before or after the multiply, never cleared. Default: the composite of HAL ops.
   * @group fused
   */
  nonFiniteCheckAndUnscaleKernel?(grads: readonly DeviceBuffer[], foundInf: DeviceBuffer, invScale: number): void;
  /**
   * `attention` on validated operands: `q: [..., L, d]`, `k: [..., S, d]`, `v: [..., S, dv]` float32 views of
   * any strides with the same leading dims (the heads' permuted views arrive as they are), no dim 0; fill
   * `out: [..., L, dv]`, element (i0, ..., l, c) at Σ index·outStrides from 0, with softmax(q·kᵀ·scale)·v, each
   * row's largest score subtracted (the HAL's `attention` picks the strides: [N, L, H, dv] in memory over two
   * leading dims, so that merging the heads is a view; contiguous otherwise). Returning
   * `false` declines (write nothing: the composite runs; webgpu declines shapes past its workgroup memory).
   * Default: the composite of HAL ops (families/composite/attention.ts).
   * @group fused
   */
  attentionKernel?(
    q: NDArray,
    k: NDArray,
    v: NDArray,
    scale: number,
    out: DeviceBuffer,
    outStrides: readonly number[],
  ): boolean | void;
  /**
   * `attentionBackward` on validated operands as `attentionKernel` takes them, with `dOut: [..., L, dv]`: fill the
   * contiguous `dq`, `dk` and `dv` (q's, k's and v's shapes) with FlashAttention-2's gradients (P
   * recomputed, D = rowsum(dOut ∘ out) or rowsum(dP ∘ P)). Returning `false` declines, as for attentionKernel.
   * Default: the composite of HAL ops.
   * @group fused
   */
  attentionBackwardKernel?(
    q: NDArray,
    k: NDArray,
    v: NDArray,
    dOut: NDArray,
    scale: number,
    dq: DeviceBuffer,
    dk: DeviceBuffer,
    dv: DeviceBuffer,
  ): boolean | void;
  /**
   * `attentionBackwardPacked` on validated operands: q, k and v the [N, H, L, D] views of a packed qkv
   * [N, L, 3, H, D] (slices 0, 1, 2 of its dim 2), dOut [N, H, L, D]: fill the contiguous `out` [N, L, 3, H, D] with
   * dq, dk and dv at (n, l, 0, h, :), (n, l, 1, h, :) and (n, l, 2, h, :) (attentionBackwardKernel's gradients).
   * Returning `false` declines (write nothing: the composite runs, attentionBackward and a stack). Default: the
   * composite.
   * @group fused
   */
  attentionBackwardPackedKernel?(
    q: NDArray,
    k: NDArray,
    v: NDArray,
    dOut: NDArray,
    scale: number,
    out: DeviceBuffer,
  ): boolean | void;
  /**
   * `out[i] = op(x[i], value)`, or `op(value, x[i])` where `scalarFirst`, for `binary` with one number
   * operand on float32: `x` has the output's shape, `value` is already rounded to float32, and `out`'s dtype
   * is the op's result (bool for the comparisons). The same values as `binaryKernel` with the number as a
   * broadcast 0-d array, which is what BaseBackend passes when this hook is absent (a `full` first: one
   * array and, on a GPU, one more kernel per number operand).
   * @group fused
   */
  binaryScalarKernel?(op: BinaryOp, x: NDArray, value: number, scalarFirst: boolean, out: DeviceBuffer): void;
  /**
   * `out[i]` = the chain `steps` applied to `x[i]` (`fusedElementwise`), for float32 `x` of any view: each
   * step's scalar already rounded to float32, each step's array a float32 view of x's shape (broadcast strides
   * 0, any offset), every step checked to take and give float32; each step rounded to
   * float32 as the separate ops round it (a GPU may contract a multiply and an add into a fused multiply-add, as
   * its arithmetic class allows). Without it, BaseBackend runs the steps as separate ops.
   * @group fused
   */
  fusedElementwiseKernel?(x: NDArray, steps: readonly ElementwiseStep[], out: DeviceBuffer): void;
  /**
   * `out = a @ b + bias` for `matmul(a, b, bias)` on float32: `a` and `b` as `matmulKernel` takes them,
   * `bias` a view of `out`'s shape (broadcast strides may be 0); each element is the product rounded to
   * float32, then the sum rounded once more (matmul-bias.ts); float16 operands arrive as storage views, as
   * for `matmulKernel`, and the router rounds `out` once to float16. Without it, matmul with a bias is
   * matmul then add.
   * @group fused
   */
  matmulBiasKernel?(a: NDArray, b: NDArray, bias: NDArray, out: DeviceBuffer): void;
  /**
   * Several `copyIntoKernel` calls in one: each non-empty view `xs[i]` (two or more, one dtype, as the router
   * hands `copyIntoKernel` its views) written into `out` at the shared `strides` from `offsets[i]`, so
   * `concat` and `stack` cost one kernel, not one per input, where kernels are dispatched (after NumPy's
   * concatenate). The positions of all the views are distinct and inside `out`, and none views `out`.
   * Returning `false` declines (write nothing: one `copyIntoKernel` per view runs; webgpu declines float16 in
   * 2-byte storage). float64 never reaches it. Without it, `concat` is one `copyIntoKernel` per input.
   * @group fused
   */
  copyIntoManyKernel?(
    xs: readonly NDArray[],
    out: DeviceBuffer,
    strides: readonly number[],
    offsets: readonly number[],
  ): boolean | void;
  /**
   * `out: [O, D, I]` = `target`, then for k = 0, 1, … in that order each `updates[o, k, i]` whose index is
   * in range (as for gather) replaces (`'none'`: so the last one wins), is added to or multiplies
   * `out[o, j, i]`, rounding (float32) or wrapping (int32) after each step. Default: `'add'` on
   * `scatterAddKernel`, `'none'` composed from the required hooks (scatter-composite.ts: O(K·D) int32
   * temporaries), `'mul'` `UnsupportedOpError`.
   * @group scatter
   */
  scatterKernel?(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    out: DeviceBuffer,
    reduction: 'none' | 'add' | 'mul',
  ): void;
  /**
   * For each row of `x: [rows, D]` (any strides): mean, the biased variance of the centred values, rstd =
   * 1/√(var + eps), into `mean` and `rstd: [rows]`, and `y: [rows, D]` = (x − mean)·rstd·weight + bias
   * (`weight`, `bias`: `[D]` or null). Default: the composite of hal/src/families/norm/norm.ts.
   * @group norm
   */
  layerNormKernel?(
    x: NDArray,
    weight: NDArray | null,
    bias: NDArray | null,
    eps: number,
    y: DeviceBuffer,
    mean: DeviceBuffer,
    rstd: DeviceBuffer,
  ): void;
  /**
   * With x̂ = (x − mean)·rstd and ĝ = g·weight per row of `[rows, D]`: `dx` = rstd·(ĝ − mean(ĝ) −
   * x̂·mean(ĝ·x̂)); when given, `dweight` and `dbias: [D]` = Σ over rows of g·x̂ and of g. Default: the
   * composite of hal/src/families/norm/norm.ts.
   * @group norm
   */
  layerNormBackwardKernel?(
    g: NDArray,
    x: NDArray,
    mean: NDArray,
    rstd: NDArray,
    weight: NDArray | null,
    dx: DeviceBuffer,
    dweight: DeviceBuffer | null,
    dbias: DeviceBuffer | null,
  ): void;
  /**
   * Fill the fresh float32 `out` with the uniforms of a Philox4x32-10 stream (`hal/src/core/philox.ts`):
   * `out[i]` is (word >>> 8)·2^-24 of word (s.skip + i) mod 4 of block `s.block` + floor((s.skip + i) / 4)
   * (counter [block low, block high, 0, 0]), key `s.key`: exact integer math, the same bits as the default
   * (host) fill.
   * @group random
   */
  randomUniformKernel?(out: DeviceBuffer, s: PhiloxStream): void;
  /**
   * Running sums of `x: [O, n, I]` (any strides) along axis 1 into the contiguous `out: [O, n, I]`,
   * float32 or int32 (wrapping); without it, `cumsum` is the blocked-scan composite of
   * `hal/src/families/scan/scan.ts`. A backend whose buffers the host can address may call `hostCumsum`
   * (`hal/src/host/host-scan.ts`), as cpu and wasm do.
   * @group scan
   */
  cumsumKernel?(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void;
  /**
   * The k best of `x: [O, n, I]` along axis 1 into `values` (x's dtype) and int32 `indices`, both
   * `[O, k, I]`, best first, NaN above every number, the lower position among equals; returning `false`
   * declines (write nothing: the composite runs; webgpu declines k > 64); without it, `topk` is the
   * tournament composite; `hostTopk` serves host memory.
   * @group scan
   */
  topkKernel?(x: NDArray, k: number, largest: boolean, values: DeviceBuffer, indices: DeviceBuffer): boolean | void;
  /**
   * The int32 position of the largest (argmax) or smallest (argmin) element of `x: [O, n, I]` (float32 or
   * int32, n ≥ 1) along axis 1 into `out: [O, I]`: the first among equals (the last with `lastIndex`), a
   * NaN the extreme in both modes (its first NaN, or last with `lastIndex`); without it, argmax/argmin are
   * the composite of `hal/src/families/indexing/argreduce.ts` (about ten kernels); `hostArgReduce` serves
   * host memory.
   * @group scan
   */
  argReduceKernel?(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void;
  /**
   * int32 `indices: [N]` (N ≥ 1, depth ≥ 1) → `out: [N, depth]` float32: 1 at position i (i + depth when
   * negative), 0 elsewhere, a row of zeros for an index outside [−depth, depth); without it, oneHot
   * gathers rows of the identity and compares them with 0.5 (two passes over the output). `hostOneHot`
   * serves host memory.
   * @group scan
   */
  oneHotKernel?(indices: NDArray, depth: number, out: DeviceBuffer): void;
  /**
   * int32 index tuples `indices: [L, q]` (L ≥ 1, a multiple of `batch`) into dims Q `[q]` → `out: [L]`
   * int32: (l div (L / batch))·ΠQ + Σ_m c_m·stride_m, with c_m + Q_m for a negative component and the
   * row-major strides of Q, or batch·ΠQ (one past the end: gather reads its fill, scatter drops the
   * update) when a component lies outside [−Q_m, Q_m); gatherND and scatterND use it, and without it
   * compose the positions from about five kernels per component
   * (`hal/src/families/indexing/indexing-nd.ts`). `hostTuplePositions` serves host memory.
   * @group scan
   */
  tuplePositionsKernel?(indices: NDArray, dims: readonly number[], batch: number, out: DeviceBuffer): void;
  /**
   * Per-tensor quantizeLinear in one pass: `x: [n]` float32 (n ≥ 1, any stride), `scale: []` float32,
   * `zeroPoint: []` int8/uint8 or null → `out: [n]` int8 or uint8 (int32 storage):
   * saturate(round_half_even(x / scale) + zeroPoint), NaN → 0, the same bits as the composite (div,
   * round, add, cast: 3–4 kernels, `hal/src/families/quant/quantize.ts`), which per-axis parameters always
   * take. webgpu implements it (`kernels/quantize.ts`).
   * @group integer
   */
  quantizeKernel?(x: NDArray, scale: NDArray, zeroPoint: NDArray | null, out: DeviceBuffer): void;
  /**
   * matmulIntegerToFloat of int8 operands without zero points in one product: `a: [...B, M, K]` ·
   * `b: [...B, K, N]` int8 (int32 storage, batch dims already broadcast, any strides, M, N, K ≥ 1),
   * `aScale: []`, `bScale: []` or `[N]`, `bias: [N]` or null (float32, any offset and stride) →
   * `out: [...B, M, N]` float32: f32(Σ a·b) · (aScale · bScale[n]) + bias[n], the sum exact in int32, each
   * product and the sum rounded to float32 (a fused multiply-add is allowed); without it, matmulInteger,
   * cast, mul and add (`hal/src/families/quant/quantize.ts`), which zero points and uint8 operands always
   * take. webgpu implements it in the stores of its int8 kernels (`dispatch-matmul-int.ts`).
   * @group integer
   */
  integerMatmulToFloatKernel?(
    a: NDArray,
    b: NDArray,
    aScale: NDArray,
    bScale: NDArray,
    bias: NDArray | null,
    out: DeviceBuffer,
  ): void;
  /**
   * `a: [...B, M, K]` · `b: [...B, K, N]` (int32, int8 or uint8: each its own dtype in int32 storage, or in
   * bytes with `packedInt8`; a kernel may pack int8 operands; batch dims already broadcast, any strides) into the
   * contiguous int32
   * `out: [...B, M, N]`, exact modulo 2^32; without it, `matmul` of integers is the composite of
   * `hal/src/families/matmul/integer-matmul.ts` (int32 products of K slabs, summed). `hostIntMatmul`
   * (`hal/src/host/host-matmul-int.ts`) serves host memory, as cpu uses it (wasm has an i32x4 kernel);
   * webgpu packs int8 operands for tensor cores or `dot4I8Packed` (from their bytes, or reading a byte-stored A as
   * it is).
   * @group integer
   */
  integerMatmulKernel?(a: NDArray, b: NDArray, out: DeviceBuffer): void;
  /**
   * Return true to store float16 in 2 bytes per element (IEEE binary16 bits, element i at byte 2i,
   * `byteLength` = 2·size; the memory limit counts 2). Your kernels then receive float16 buffers as their
   * float32 storage alias (same id; `createStorage`'s `dtype` tells you which ids are float16), read
   * binary16 there, and your unary, binary, matmul and matmulBias kernels write float16 results themselves,
   * rounded to nearest even once (ties to even, ±Inf from 65520; a product with its bias added in float32 first)
   * — `copyKernel` rounds casts into float16 as before. `writeStorage`
   * and `readStorage` still exchange `Float32Array`s of float16 values. webgpu does this
   * (`backends/webgpu/src/dispatch-half.ts`); without it float16 lives in float32 storage.
   * @group capabilities
   */
  packedFloat16?(): boolean;
  /**
   * Return true to store int8 and uint8 in 1 byte per element (four to a 32-bit word, element i at byte i,
   * little-endian, two's complement for int8; `byteLength` = size; the memory limit counts 1). Your kernels then
   * receive int8/uint8 buffers as their int32 storage alias (same id; `createStorage`'s `dtype` tells you which
   * ids hold bytes) and must read and write bytes there (or widen to an int32 temporary and narrow back, wrapping
   * modulo 2^8); a write into a view never changes the bytes of the word outside it. `writeStorage` and
   * `readStorage` still exchange `Int32Array`s of the values. webgpu does this
   * (`backends/webgpu/src/dispatch-int8.ts`); without it int8 and uint8 live in int32 storage.
   * @group capabilities
   */
  packedInt8?(): boolean;
  /**
   * The storage of `buffer` as a typed array the host reads and writes synchronously, without a copy,
   * element 0 first (`Float32Array`, `Int32Array`, or `Float64Array` for float64). With it your backend
   * has float64: `BaseBackend` runs every kernel that touches a float64 array on the host
   * (`hal/src/contract/host-float64.ts`: the op table's float64 definitions), so none of your kernels sees
   * float64; without it creating a float64 array throws `UnsupportedOpError` (webgpu). cpu returns its
   * typed array, wasm a view of linear memory, reference its `Float64Array`.
   * @group capabilities
   */
  hostStorage?(buffer: DeviceBuffer): StorageArray;
}

/** Every hook, required or optional, by name. */
export type AnyHooks = BackendHooks & Required<OptionalBackendHooks>;
/** The parameters of hook `K` as a labelled tuple: BaseBackend declares each hook with them. */
export type HookArgs<K extends keyof AnyHooks> = Parameters<AnyHooks[K]>;
/** The result type of hook `K`. */
export type HookResult<K extends keyof AnyHooks> = ReturnType<AnyHooks[K]>;

/** One hook: its name, its TypeScript signature and its contract in one line (rendered from its docstring). */
export interface HookSpec {
  /** The hook's method name (`createStorage`, `unaryKernel`, ...). */
  readonly name: string;
  /** Its TypeScript signature, as a backend author writes it. */
  readonly signature: string;
  /** What it must do, in one line (from its docstring). */
  readonly contract: string;
}

const specList = (table: Record<string, { signature: string; contract: string }>): readonly HookSpec[] =>
  Object.freeze(Object.entries(table).map(([name, s]) => Object.freeze({ name, ...s })));

/** The hooks every BaseBackend subclass must implement ({@link BackendHooks}, in declaration order). */
export const REQUIRED_HOOKS: readonly HookSpec[] = specList(REQUIRED_HOOK_SPECS);

/**
 * The hooks a backend may implement ({@link OptionalBackendHooks}, in declaration order): fused kernels in
 * place of BaseBackend's composites and defaults, and the storage capabilities packedFloat16,
 * packedInt8 and hostStorage.
 */
export const OPTIONAL_HOOKS: readonly HookSpec[] = specList(OPTIONAL_HOOK_SPECS);

/** The required hooks that `backend` (an instance, during or after construction) lacks as functions. */
export function missingHooks(backend: object): HookSpec[] {
  const o = backend as Record<string, unknown>;
  return REQUIRED_HOOKS.filter((h) => typeof o[h.name] !== 'function');
}
