/**
 * The implementer's interface: the hooks a backend built on BaseBackend implements. BaseBackend does
 * everything user-facing — argument validation, broadcasting, typed errors, buffer bookkeeping, memory
 * limits, composites — and calls these hooks only with arguments it has already checked. The guide is
 * docs/WRITING-A-BACKEND.md; backends/reference is a backend written against these hooks alone.
 *
 * Shared conventions of every kernel hook:
 * - `out` is a live buffer of this backend; for op kernels it is freshly allocated, contiguous and has
 *   exactly the output's element count and dtype (its contents are unspecified: write every element).
 * - Input views (`NDArray`: buffer, shape, strides, offset, in elements) are live, belong to this
 *   backend instance and lie inside their buffers; strides may be 0 (broadcast), negative (reversed)
 *   or any permutation. Read them through their strides; never assume they are contiguous.
 * - float32 results are rounded to float32 (the HAL's float32 contract: ops.ts and the conformance
 *   tolerances); int32 arithmetic wraps modulo 2^32.
 * - int8, uint8 and float16 reach every hook as their storage dtype (int32, int32, float32; narrow.ts),
 *   except as copyKernel's `out`, where the backend narrows (saturate or wrap; round to float16).
 * - bool is stored as an int32 0 or 1: treat a bool buffer as int32 in every kernel (copy, gather, fill,
 *   reduce max/min, the logical ops on 0/1). The comparisons write 0 or 1 into a bool `out` whatever
 *   their operands' dtype; gather's out-of-range fill for bool is 1. A bool buffer never holds another value.
 * - A hook that cannot do its work throws a PolyHalError subclass (OutOfMemoryError when memory runs out,
 *   UnsupportedOpError for an op it does not know); if an op kernel throws, BaseBackend frees `out`.
 */

/** One hook: its name, its TypeScript signature and its contract in one line. */
export interface HookSpec {
  readonly name: string;
  readonly signature: string;
  readonly contract: string;
}

/** The hooks every BaseBackend subclass must implement (as methods of the class). */
export const REQUIRED_HOOKS: readonly HookSpec[] = Object.freeze([
  {
    name: 'createStorage',
    signature: 'createStorage(buffer: DeviceBuffer, dtype: DType): void',
    contract:
      'make storage for buffer.size elements of buffer.dtype (size and the memory limit already ' +
      "checked; `dtype` is the array's own, buffer.dtype its storage dtype); OutOfMemoryError if the device cannot",
  },
  {
    name: 'destroyStorage',
    signature: 'destroyStorage(buffer: DeviceBuffer): void',
    contract: 'release the storage of a buffer (called once per buffer: free, deallocate, dispose)',
  },
  {
    name: 'writeStorage',
    signature: 'writeStorage(buffer: DeviceBuffer, data: StorageArray): void',
    contract:
      'copy data (a Float32Array for float32, an Int32Array for int32 and for bool — 0 or 1 each —, a ' +
      'Float64Array for float64, of exactly buffer.size elements) into the buffer',
  },
  {
    name: 'readStorage',
    signature: 'readStorage(buffer: DeviceBuffer): Promise<StorageArray>',
    contract:
      'resolve with a copy of the whole buffer (Float32Array, Int32Array for int32 and bool, Float64Array ' +
      'for float64) once queued work is done',
  },
  {
    name: 'unaryKernel',
    signature: 'unaryKernel(op: UnaryOp, x: NDArray, out: DeviceBuffer): void',
    contract:
      "out[i] = op(x[i]) over x's shape in row-major order; op and dtype already checked (int32: INT32_UNARY_OPS)",
  },
  {
    name: 'binaryKernel',
    signature: 'binaryKernel(op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void',
    contract: "out[i] = op(a[i], b[i]); a and b already broadcast to the output's shape (stride 0) and of one dtype",
  },
  {
    name: 'reduceKernel',
    signature: 'reduceKernel(op: ReduceOp, x: NDArray, axes: readonly number[], out: DeviceBuffer): void',
    contract:
      'sum or max over axes (sorted, unique, in range) into the kept dims in row-major order; empty: ' +
      'sum 0, max -Inf (int32 -2^31)',
  },
  {
    name: 'copyKernel',
    signature: 'copyKernel(x: NDArray, out: DeviceBuffer): void',
    contract:
      'cast: x row-major into out of the other dtype (float32→int32 truncates, saturates, NaN→0; ' +
      'int32→float32 rounds to nearest even; into int8/uint8: saturate from float32, wrap from int32; ' +
      'into float16: round to nearest even); same-dtype copies go through copyIntoKernel',
  },
  {
    name: 'copyIntoKernel',
    signature: 'copyIntoKernel(x: NDArray, out: DeviceBuffer, strides: readonly number[], offset: number): void',
    contract:
      'write x (non-empty, same dtype) into out: element i of x to out[offset + Σ i_k·strides[k]]; ' +
      'positions distinct, inside out, x.buffer ≠ out (pad, concat, tile, trilu)',
  },
  {
    name: 'fillKernel',
    signature: 'fillKernel(out: DeviceBuffer, value: number): void',
    contract: 'set every element of out to value (float32: rounded; int32: ToInt32, so NaN → 0)',
  },
  {
    name: 'gatherKernel',
    signature: 'gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void',
    contract:
      'x [O, D, I], indices int32 [K] → out [O, K, I] = x[o, i(k), i]; i(k) = indices[k] (+ D if negative); ' +
      'outside [0, D): NaN (float32) or INT32_MIN (int32)',
  },
  {
    name: 'scatterAddKernel',
    signature: 'scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void',
    contract:
      'out [O, D, I] = target, then updates[o, k, i] added at [o, i(k), i] for k = 0, 1, ... in order ' +
      '(indices as gather; out of range: skipped)',
  },
  {
    name: 'matmulKernel',
    signature: 'matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void',
    contract: 'a [...B, M, K] · b [...B, K, N] → out [...B, M, N], float32; batch dims already broadcast to one shape',
  },
  {
    name: 'whereKernel',
    signature: 'whereKernel(cond: NDArray, x: NDArray, y: NDArray, out: DeviceBuffer): void',
    contract:
      "out[i] = cond[i] ? x[i] : y[i] over out's shape in row-major order, bit for bit; cond is bool " +
      "(stored as int32 0/1), x and y have out's dtype, all three already broadcast to out's shape",
  },
]);

/**
 * Hooks with a default in BaseBackend that a backend may override with a fused kernel (same
 * validation before the call): the optimizer steps are composites of the HAL ops by default, the
 * random fill computes on the host and writes the buffer, scatter composes its replace form from
 * gather (hal/src/families/indexing/scatter-composite.ts).
 */
export const OPTIONAL_HOOKS: readonly HookSpec[] = Object.freeze([
  {
    name: 'adamStepKernel',
    signature:
      'adamStepKernel(param: DeviceBuffer, grad: NDArray, m: DeviceBuffer, v: DeviceBuffer, p: AdamStepParams): void',
    contract: 'one Adam/AdamW update in place; operands and hyper-parameters already validated',
  },
  {
    name: 'sgdStepKernel',
    signature:
      'sgdStepKernel(param: DeviceBuffer, grad: NDArray, velocity: DeviceBuffer | null, p: SgdStepParams): void',
    contract: 'one SGD update in place; operands and hyper-parameters already validated',
  },
  {
    name: 'matmulBiasKernel',
    signature: 'matmulBiasKernel(a: NDArray, b: NDArray, bias: NDArray, out: DeviceBuffer): void',
    contract:
      "out = a @ b + bias, float32: a and b as matmulKernel takes them, bias a view of out's shape (strides " +
      'may be 0); each element the product rounded, then the sum rounded (matmul-bias.ts)',
  },
  {
    name: 'scatterKernel',
    signature:
      "scatterKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer, reduction: 'none' | " +
      "'add' | 'mul'): void",
    contract:
      'as scatterAddKernel, each update replacing (none: the last in index order wins), added to or multiplied ' +
      "into out[o, i(k), i] for k = 0, 1, ...; default: 'add' on scatterAddKernel, 'none' composed (O(K·D) " +
      "int32 temporaries), 'mul' UnsupportedOpError",
  },
  {
    name: 'cumsumKernel',
    signature: 'cumsumKernel(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void',
    contract:
      'running sums of x [O, n, I] along axis 1 into out [O, n, I] (float32 or int32, int32 wrapping); ' +
      "default: cumsum's blocked-scan composite (hal/src/families/scan/scan.ts); host-memory backends: hostCumsum",
  },
  {
    name: 'topkKernel',
    signature:
      'topkKernel(x: NDArray, k: number, largest: boolean, values: DeviceBuffer, indices: DeviceBuffer): ' +
      'boolean | void',
    contract:
      'the k best of x [O, n, I] along axis 1 into values and int32 indices [O, k, I], best first, NaN above ' +
      'every number, the lower position among equals; returning false declines (nothing written: the ' +
      "composite runs); default: topk's tournament composite; host: hostTopk",
  },
  {
    name: 'argReduceKernel',
    signature: "argReduceKernel(op: 'argmax' | 'argmin', x: NDArray, lastIndex: boolean, out: DeviceBuffer): void",
    contract:
      'the int32 position of the largest (argmax) or smallest (argmin) element of x [O, n, I] (float32 or ' +
      'int32, n ≥ 1) along axis 1 into out [O, I]: the first among equals (the last with lastIndex), a NaN ' +
      "the extreme in both modes; default: argmax's composite (hal/src/families/indexing/argreduce.ts); host: " +
      'hostArgReduce',
  },
  {
    name: 'oneHotKernel',
    signature: 'oneHotKernel(indices: NDArray, depth: number, out: DeviceBuffer): void',
    contract:
      'int32 indices [N] (depth ≥ 1, N ≥ 1) → out [N, depth] float32: 1 at position i (i + depth when ' +
      'negative), 0 elsewhere; a row of zeros for an index outside [−depth, depth); default: a gather of ' +
      'the identity, then 0.5 < row (two passes over the output)',
  },
  {
    name: 'tuplePositionsKernel',
    signature:
      'tuplePositionsKernel(indices: NDArray, dims: readonly number[], batch: number, out: DeviceBuffer): void',
    contract:
      'int32 index tuples [L, q] (L ≥ 1, a multiple of batch) into dims Q [q] → out [L] int32: ' +
      '(l div (L / batch))·ΠQ + Σ_m c_m·stride_m (c_m + Q_m when negative, row-major strides of Q), or ' +
      'batch·ΠQ when a component lies outside [−Q_m, Q_m); default: gatherND/scatterND compose it from ' +
      'about 5 kernels per component (indexing-nd.ts)',
  },
  {
    name: 'quantizeKernel',
    signature: 'quantizeKernel(x: NDArray, scale: NDArray, zeroPoint: NDArray | null, out: DeviceBuffer): void',
    contract:
      'x [n] float32 (n ≥ 1, any stride), scale [] float32, zeroPoint [] int8/uint8 or null → out [n] of ' +
      "out's dtype (int8 or uint8, int32 storage): saturate(round_half_even(x / scale) + zeroPoint), NaN → 0, " +
      'the same bits as the composite (the float32 quotient of the div op, round, add, cast); per-tensor ' +
      'quantizeLinear only; default: that composite (quantize.ts)',
  },
  {
    name: 'integerMatmulToFloatKernel',
    signature:
      'integerMatmulToFloatKernel(a: NDArray, b: NDArray, aScale: NDArray, bScale: NDArray, bias: NDArray | null, ' +
      'out: DeviceBuffer): void',
    contract:
      'a [...B, M, K] · b [...B, K, N] int8 (int32 storage, batch dims already broadcast, any strides, M, N, K ' +
      '≥ 1), aScale [] float32, bScale [] or [N] float32, bias [N] float32 or null (any offset and stride) → ' +
      'out [...B, M, N] float32: f32(Σ_k a·b) · (aScale · bScale[n]) + bias[n], the sum exact in int32, each ' +
      'product and sum rounded to float32 (a multiply-add may be fused); default: matmulInteger, cast, mul and ' +
      'add (quantize.ts), which zero points and uint8 operands always take',
  },
  {
    name: 'integerMatmulKernel',
    signature: 'integerMatmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void',
    contract:
      'a [...B, M, K] · b [...B, K, N] → out [...B, M, N] int32, exact modulo 2^32; a and b int32, int8 or ' +
      'uint8 (their own dtype, int32 storage: a kernel may pack int8 operands); batch ' +
      "dims already broadcast to one shape; default: integer-matmul.ts's composite (int32 mul + sum over " +
      'K slabs); host-memory backends: hostIntMatmul',
  },
  {
    name: 'hostStorage',
    signature: 'hostStorage(buffer: DeviceBuffer): StorageArray',
    contract:
      "buffer's storage as a typed array the host reads and writes synchronously, no copy, element 0 first " +
      '(Float64Array for float64); with it the backend has float64, every kernel touching it run on the host ' +
      '(host-float64.ts); without it creating a float64 array throws UnsupportedOpError',
  },
  {
    name: 'packedFloat16',
    signature: 'packedFloat16(): boolean',
    contract:
      'true: float16 is stored in 2 bytes per element (IEEE binary16 bits, element i at byte 2i; ' +
      'byteLength = 2·size); kernels receive such buffers as their float32 storage alias (the same id, ' +
      "createStorage's dtype says which) and read and write binary16 there, unary and binary kernels " +
      'rounding float16 results themselves (nearest, ties to even); default: float16 in float32 storage',
  },
  {
    name: 'layerNormKernel',
    signature:
      'layerNormKernel(x: NDArray, weight: NDArray | null, bias: NDArray | null, eps: number, y: DeviceBuffer, ' +
      'mean: DeviceBuffer, rstd: DeviceBuffer): void',
    contract:
      'per row of x [rows, D]: mean, rstd = 1/√(biased var + eps) into mean and rstd [rows], y = (x − mean)·rstd·' +
      'weight + bias; default: the composite of hal/src/families/norm/norm.ts',
  },
  {
    name: 'layerNormBackwardKernel',
    signature:
      'layerNormBackwardKernel(g: NDArray, x: NDArray, mean: NDArray, rstd: NDArray, weight: NDArray | null, ' +
      'dx: DeviceBuffer, dweight: DeviceBuffer | null, dbias: DeviceBuffer | null): void',
    contract:
      'per row of [rows, D], x̂ = (x − mean)·rstd, ĝ = g·weight: dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)); dweight ' +
      'and dbias [D] (when given) = Σ over rows of g·x̂ and g; default: the composite of hal/src/families/norm/norm.ts',
  },
  {
    name: 'randomUniformKernel',
    signature: 'randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void',
    contract:
      'out[i] = (word >>> 8)·2^-24 of Philox4x32-10 word (s.skip + i) mod 4 of block s.block + ' +
      'floor((s.skip + i) / 4), key s.key (hal/src/core/philox.ts): exact integer math, the same bits as ' +
      'the default (host) fill',
  },
]);

/** The required hooks that `backend` (an instance, during or after construction) lacks as functions. */
export function missingHooks(backend: object): HookSpec[] {
  const o = backend as Record<string, unknown>;
  return REQUIRED_HOOKS.filter((h) => typeof o[h.name] !== 'function');
}
