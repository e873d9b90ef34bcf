/**
 * Automatic mixed precision: `autocast('float16', fn)` runs the products of `fn` (matmul, Linear, the
 * attention products) in float16 and the ops that need range or precision (reductions, softmax, norms,
 * losses, the exponentials) in float32, as PyTorch's `torch.autocast` does on CUDA
 * (https://pytorch.org/docs/stable/amp.html#autocast-op-reference). The policy lives here as data; the
 * casts are recorded by `record` (ops.ts) as ordinary `cast` ops of the graph, so gradients flow back
 * through them to the float32 parameters (the "master weights": nothing is copied outside the graph).
 * Outside autocast nothing changes.
 */
import { type DType, InvalidArgumentError, type NDArray } from '@polyhal/hal';
import { keep } from './scope.js';
import { isGradEnabled, Tensor } from './tensor.js';

/** The dtypes autocast can lower products to: float16 (the HAL has no bfloat16). */
export type AutocastDType = 'float16';

/** Options of `autocast`. */
export interface AutocastOptions {
  /** false runs `fn` without autocast (a float32 region inside an autocast one, as PyTorch's `enabled`). */
  enabled?: boolean;
  /**
   * false: each op casts the weights it uses again (no weight-cast cache in this region), as PyTorch's
   * `cache_enabled=False`. Default true.
   */
  cacheEnabled?: boolean;
}

/**
 * Ops autocast runs in the lower dtype (their float32 operands are cast to float16): PyTorch's
 * "lower_precision_fp" list restricted to what the HAL computes in float16 — `matmul` (so Linear,
 * `scaledDotProductAttention`'s q·kᵀ and p·v, MultiHeadAttention's projections). Convolutions stay in
 * float32: the HAL's conv, convTranspose and pooling take float32 only (docs/DTYPES.md).
 */
export const AUTOCAST_FLOAT16_OPS: readonly string[] = ['matmul'];

/**
 * Ops autocast runs in float32 (their float16 operands are cast up): PyTorch's float32 list (softmax,
 * logSoftmax, logsumexp, sum, prod, cumsum, layer and group norms, the losses, exp, log, pow and the other
 * transcendentals whose range float16 lacks), plus the ops the HAL takes in float32 only (convolutions,
 * pooling, dropout's mask product).
 */
export const AUTOCAST_FLOAT32_OPS: readonly string[] = [
  'softmax',
  'logSoftmax',
  'logsumexp',
  'sum',
  'prod',
  'cumsum',
  'layerNorm',
  'softmaxCrossEntropy',
  'crossEntropy',
  'nllLoss',
  'binaryCrossEntropyWithLogits',
  'exp',
  'expm1',
  'log',
  'log2',
  'log1p',
  'recip',
  'pow',
  'softplus',
  'sinh',
  'cosh',
  'tan',
  'asin',
  'acos',
  'conv',
  'conv1d',
  'conv2d',
  'convTranspose',
  'convTranspose2d',
  'maxPool',
  'maxPool2d',
  'avgPool',
  'avgPool2d',
  'dropout',
];

/**
 * Ops whose floating operands autocast brings to one dtype, the widest (PyTorch's "promote" list and its
 * type promotion): the elementwise binary ops, `where`, `concat` and `stack`. A float16 and a float32
 * operand (a residual x + attention(x)) give float32; operands of one dtype are left as they are.
 */
const PROMOTE = new Set([
  'add',
  'sub',
  'mul',
  'div',
  'maximum',
  'minimum',
  'mod',
  'fmod',
  'cmplt',
  'equal',
  'notEqual',
  'less',
  'lessEqual',
  'greater',
  'greaterEqual',
  'floorDiv',
  'truncDiv',
  'where',
  'concat',
  'stack',
]);

const FLOAT16 = new Set(AUTOCAST_FLOAT16_OPS);
const FLOAT32 = new Set(AUTOCAST_FLOAT32_OPS);

let active: AutocastDType | null = null;
/** Open autocast regions (enabled or not): the weight-cast cache is cleared when the outermost one exits. */
let depth = 0;

/** Whether the current region caches the float16 copies of the weights (its `cacheEnabled`). */
let cacheEnabled = true;

/** A weight's cached float16 copies: the float32 value they were cast from, and one copy per view layout. */
interface CachedCasts {
  source: NDArray;
  copies: Map<string, Tensor>;
}
const castCache = new Map<Tensor, CachedCasts>();

/** Leaves an autocast region: the last one out frees the cached weight copies (their uses keep their buffers). */
function exitRegion(prev: AutocastDType | null, prevCache: boolean): void {
  active = prev;
  cacheEnabled = prevCache;
  if (--depth > 0) return;
  for (const { copies } of castCache.values()) for (const c of copies.values()) c.dispose();
  castCache.clear();
}

/**
 * Runs `fn` (sync or async) with autocast to `dtype` ('float16'): inside, the ops of AUTOCAST_FLOAT16_OPS
 * cast their float32 operands to float16 and return float16; the ops of AUTOCAST_FLOAT32_OPS cast float16
 * operands to float32 and return float32; binary ops, where, concat and stack promote mixed float16/float32
 * operands to float32; every other op runs in its operands' dtype. The casts are in the graph: gradients
 * reach float32 leaves as float32. Regions nest (the innermost wins; `{ enabled: false }` turns it off).
 * Backward needs no autocast: each gradient rule runs in its forward's dtypes. Weight-cast cache (PyTorch's
 * autocast cache): a float32 parameter (a leaf that requires grad, or Linear's view Wᵀ of one) used by several
 * float16 ops is cast once per region, the copy freed when the outermost region exits (`cacheEnabled: false`
 * turns it off); so do not update weights inside a region — step the optimizer after it, as in PyTorch. Views
 * of a weight are cached only while gradients are recorded (under noGrad, only the weight itself). Only the ops
 * recorded by `@polyhal/autograd` are affected, not direct HAL calls. InvalidArgumentError for another dtype or
 * a non-function `fn`. As `noGrad`, an async `fn` keeps the region until its promise settles, so do not
 * interleave it with other work.
 */
export function autocast<T>(dtype: AutocastDType, fn: () => T, options: AutocastOptions = {}): T {
  if (dtype !== 'float16')
    throw new InvalidArgumentError(`autocast: dtype must be 'float16' (the HAL has no bfloat16), got ${String(dtype)}`);
  if (typeof fn !== 'function') throw new InvalidArgumentError('autocast: fn must be a function');
  const prev = active;
  const prevCache = cacheEnabled;
  active = options.enabled === false ? null : dtype;
  cacheEnabled = options.cacheEnabled ?? true;
  depth++;
  try {
    const r = fn();
    if (r instanceof Promise) return r.finally(() => exitRegion(prev, prevCache)) as T;
    exitRegion(prev, prevCache);
    return r;
  } catch (e) {
    exitRegion(prev, prevCache);
    throw e;
  }
}

/** Whether ops run under autocast now (PyTorch's `torch.is_autocast_enabled`). */
export function isAutocastEnabled(): boolean {
  return active !== null;
}

/** The dtype autocast lowers products to now, or null outside autocast. */
export function getAutocastDType(): AutocastDType | null {
  return active;
}

const isFloat = (d: DType): boolean => d === 'float32' || d === 'float16';

/**
 * The dtype each operand of `op` takes under the current autocast (null: leave it), for the operands'
 * `dtypes`; null for all of them outside autocast or for an op the policy leaves alone. Internal: `record`
 * (ops.ts) applies it.
 */
export function autocastTargets(op: string, dtypes: readonly DType[]): (DType | null)[] | null {
  if (active === null) return null;
  let to: DType | null = null;
  if (FLOAT16.has(op)) to = active;
  else if (FLOAT32.has(op)) to = 'float32';
  else if (PROMOTE.has(op) && dtypes.includes('float16') && dtypes.includes('float32')) to = 'float32';
  if (to === null) return null;
  const targets = dtypes.map((d) => (isFloat(d) && d !== to ? to : null));
  return targets.some((t) => t !== null) ? targets : null;
}

/** The parameter x is or views: a float32 leaf that requires grad, or one view op of one (Linear's Wᵀ). */
function weightOf(x: Tensor): Tensor | null {
  if (x.requiresGrad && x.gradFn === null) return x;
  const src = x.node?.inputs.length === 1 ? x.node.inputs[0]! : null;
  return src?.requiresGrad && src.gradFn === null && src.value.buffer === x.value.buffer ? src : null;
}

/**
 * x as an operand of dtype `dtype` under autocast: `cast(x, dtype)` (a `cast` op of the graph), except for a
 * float32 parameter (a leaf that requires grad, or a view of one such as Linear's Wᵀ) going to float16: its
 * float16 copy is made once per autocast region and layout (PyTorch's autocast cache) and handed to each op
 * that uses it as a tensor of its own, a `cast` node of x sharing the copy's buffer. So each use's gradient is
 * cast back to float32 and summed into the weight's `.grad` as without the cache — the same gradients, bit for
 * bit — with one forward cast kernel per weight and region instead of one per use. The copy is made again when
 * the weight's value was replaced (moveTo). Internal: `record` (ops.ts) calls it for each operand
 * autocastTargets names.
 */
export function autocastOperand(x: Tensor, dtype: DType, cast: (x: Tensor, dtype: DType) => Tensor): Tensor {
  const weight = depth > 0 && cacheEnabled && dtype === 'float16' && x.dtype === 'float32' ? weightOf(x) : null;
  if (!weight) return cast(x, dtype);
  const be = x.backend;
  let entry = castCache.get(weight);
  if (!entry || entry.source !== weight.value) {
    for (const c of entry?.copies.values() ?? []) c.dispose();
    entry = { source: weight.value, copies: new Map() };
    castCache.set(weight, entry);
  }
  const v = x.value;
  const layout = `${v.offset}:${v.shape.join(',')}:${v.strides.join(',')}`;
  let copy = entry.copies.get(layout);
  if (!copy || copy.isDisposed) {
    copy = keep(new Tensor(be, be.cast(v, dtype)));
    entry.copies.set(layout, copy);
  }
  const from = x.dtype;
  const graph = isGradEnabled() && x.requiresGrad;
  return new Tensor(be, copy.value, {
    storage: copy.sharedStorage(),
    requiresGrad: graph,
    node: graph ? { op: 'cast', inputs: [x], backward: (g, tracked = be) => [tracked.cast(g, from)] } : null,
  });
}

/** What autocastFloat32 takes: a tensor-like value with a dtype and a cast. */
export interface AutocastOperand<T> {
  /** The value's dtype. */
  readonly dtype: DType;
  /** The value converted to `dtype`. */
  cast(dtype: DType): T;
}

/**
 * x cast to float32 when autocast is on and x is float16, else x itself: the entry of the composite ops of
 * the float32 list (layerNorm, rmsNorm, groupNorm), which record no op of their own to hook.
 */
export function autocastFloat32<T extends AutocastOperand<T>>(x: T): T {
  return active !== null && x.dtype === 'float16' ? x.cast('float32') : x;
}
