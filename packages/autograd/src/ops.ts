/**
 * Differentiable ops. Each op is its forward (a HAL call) and, beside it in ONE table, its gradient
 * rule written with HAL ops — never inside a backend — so every backend gets every gradient. Rules
 * receive the upstream gradient `g` and the saved input/output arrays, and return new arrays or views
 * of g (the engine, backward.ts, takes them over and frees them). Broadcast gradients are summed back
 * to the input's shape.
 */
import {
  BINARY_OP_DEFS,
  type BinaryOp,
  type ComputeBackend,
  type DType,
  InvalidArgumentError,
  type NDArray,
  normalizeAxes,
  normalizeAxis,
  REDUCE_OP_DEFS,
  type ReduceGradRule,
  type ReduceOp,
  UNARY_OP_DEFS,
  type UnaryOp,
  withTemps,
} from '@polyhal/hal';
import { autocastOperand, autocastTargets, isAutocastEnabled } from './autocast.js';
import { commonBackend, isGradEnabled, Tensor } from './tensor.js';

/** A gradient rule; `needs[i]` is false when input i needs no gradient (the rule may skip it). */
type Rule = (be: ComputeBackend, g: NDArray, xs: NDArray[], out: NDArray, needs: boolean[]) => (NDArray | null)[];

/** Sums a gradient of a broadcast result back to `shape` (leading dims and size-1 dims). */
export function unbroadcast(be: ComputeBackend, g: NDArray, shape: readonly number[]): NDArray {
  if (g.shape.length === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const lead = g.shape.length - shape.length;
  const axes: number[] = [];
  g.shape.forEach((d, i) => {
    if (i < lead || (shape[i - lead] === 1 && d !== 1)) axes.push(i);
  });
  const s = be.sum(g, axes, true);
  const r = be.reshape(s, shape);
  if (r.buffer !== s.buffer) be.free(s);
  return r;
}

/** Gradient rules of the elementwise ops: the op table's (hal/src/ops/), written with HAL ops. */
const UNARY_GRADS = UNARY_OP_DEFS as Readonly<Record<UnaryOp, { grad: Rule }>>;
const BINARY_GRADS = BINARY_OP_DEFS as Readonly<Record<BinaryOp, { grad: Rule | null }>>;

/**
 * Records an op: runs `forward` on the HAL, and attaches `rule` when any input requires grad.
 * `release` frees what the op saved for its rule (beyond its inputs and output); the engine calls it
 * when the graph drops the node (after backward, unless the graph is retained, or on dispose).
 */
export function record(
  op: string,
  inputs: Tensor[],
  forward: (be: ComputeBackend, xs: NDArray[]) => NDArray,
  rule: Rule | null,
  release?: () => void,
): Tensor {
  const be = commonBackend(op, inputs);
  // Under autocast (autocast.ts), operands the policy names are cast first: the casts are ops of the graph.
  const targets = isAutocastEnabled()
    ? autocastTargets(
        op,
        inputs.map((t) => t.dtype),
      )
    : null; // outside autocast (every op, every step): no dtype list made
  // (a weight's float16 copy is made once per region: autocastOperand's cache)
  if (targets) inputs = inputs.map((t, i) => (targets[i] ? autocastOperand(t, targets[i], autocastCast) : t));
  const xs = inputs.map((t) => t.value);
  const out = forward(be, xs);
  const source = inputs.find((t) => t.value.buffer === out.buffer);
  const requiresGrad = rule !== null && isGradEnabled() && inputs.some((t) => t.requiresGrad);
  const result = new Tensor(be, out, {
    storage: source?.sharedStorage(),
    requiresGrad,
    node: requiresGrad
      ? {
          op,
          inputs,
          backward: (g, tracked = be) =>
            rule!(
              tracked,
              g,
              xs,
              out,
              inputs.map((t) => t.requiresGrad),
            ),
          release,
        }
      : null,
  });
  // Without a graph, autocast's casts are needed no longer (with one, they live as the op's inputs, as any).
  if (targets && !requiresGrad) inputs.forEach((t, i) => targets[i] && t.dispose());
  return result;
}

/** x cast between float32 and float16 for autocast, recorded as `cast` (gradient: g cast back to x's dtype). */
function autocastCast(x: Tensor, dtype: DType): Tensor {
  return record(
    'cast',
    [x],
    (be, [v]) => be.cast(v!, dtype),
    (be, g, [v]) => [be.cast(g, v!.dtype)],
  );
}

/** A binary op's operand: a tensor, or a number taken as a constant of the other operand's dtype. */
export type Scalarish = Tensor | number;

/** An elementwise binary op of the table on tensors (a number operand becomes a constant); gradient from the table. */
export function binaryOp(op: BinaryOp, a: Scalarish, b: Scalarish): Tensor {
  if (typeof a === 'number' && typeof b === 'number')
    throw new InvalidArgumentError(`${op}: at least one operand must be a tensor`);
  // A number becomes a constant 0-d tensor of the other operand's dtype (freed by the enclosing scope or with
  // the graph).
  const like = (typeof a === 'number' ? b : a) as Tensor;
  const ta = typeof a === 'number' ? Tensor.full(like.backend, [], a, { dtype: like.dtype }) : a;
  const tb = typeof b === 'number' ? Tensor.full(like.backend, [], b, { dtype: like.dtype }) : b;
  const rule = BINARY_GRADS[op].grad;
  const out = record(
    op,
    [ta, tb],
    (be, [x, y]) => be.binary(op, x!, y!),
    rule &&
      ((be, g, xs, o, needs) => {
        const [ga, gb] = rule(be, g, xs, o, needs);
        const shapes = [ta.shape, tb.shape];
        return [ga, gb].map((gi, k) => {
          if (!gi) return null;
          if (!needs[k]) {
            if (gi !== g) be.free(gi);
            return null;
          }
          const r = unbroadcast(be, gi, shapes[k]!);
          if (r !== gi && gi !== g) be.free(gi);
          return r;
        });
      }),
  );
  if (typeof a === 'number' && !out.node) ta.dispose();
  if (typeof b === 'number' && !out.node) tb.dispose();
  return out;
}

/** a + b elementwise, broadcast (NumPy rules); a number operand is a constant of the tensor's dtype. */
export const add = (a: Scalarish, b: Scalarish): Tensor => binaryOp('add', a, b);
/** a − b elementwise, broadcast. */
export const sub = (a: Scalarish, b: Scalarish): Tensor => binaryOp('sub', a, b);
/** a · b elementwise, broadcast. */
export const mul = (a: Scalarish, b: Scalarish): Tensor => binaryOp('mul', a, b);
/** a / b elementwise, broadcast; IEEE division (x/0 = ±Inf, 0/0 = NaN). */
export const div = (a: Scalarish, b: Scalarish): Tensor => binaryOp('div', a, b);
/** The larger of a and b elementwise, broadcast; NaN if either is NaN. */
export const maximum = (a: Scalarish, b: Scalarish): Tensor => binaryOp('maximum', a, b);
/** a mod b elementwise, broadcast: floored, the result takes b's sign (NumPy %, Python %). */
export const mod = (a: Scalarish, b: Scalarish): Tensor => binaryOp('mod', a, b);
/** a < b → 1, else 0 (no gradient). */
export const cmplt = (a: Scalarish, b: Scalarish): Tensor => binaryOp('cmplt', a, b);
/** The smaller of a and b elementwise, broadcast; NaN if either is NaN. */
export const minimum = (a: Scalarish, b: Scalarish): Tensor => binaryOp('minimum', a, b);
/** a^b with IEEE special values (docs/OPS.md); gradients b·a^(b−1) and a^b·log a. */
export const pow = (a: Scalarish, b: Scalarish): Tensor => binaryOp('pow', a, b);

/** An elementwise unary op of the table on a tensor; gradient from the table. */
export function unaryOp(op: UnaryOp, x: Tensor): Tensor {
  return record(op, [x], (be, [v]) => be.unary(op, v!), UNARY_GRADS[op].grad);
}

/** −x elementwise. */
export const neg = (x: Tensor): Tensor => unaryOp('neg', x);
/** e^x elementwise. */
export const exp = (x: Tensor): Tensor => unaryOp('exp', x);
/** Natural logarithm elementwise: log(0) = −Inf, log(x < 0) = NaN. */
export const log = (x: Tensor): Tensor => unaryOp('log', x);
/** max(x, 0) elementwise (gradient 0 at x ≤ 0). */
export const relu = (x: Tensor): Tensor => unaryOp('relu', x);
/** 1/(1 + e^−x) elementwise, without overflow. */
export const sigmoid = (x: Tensor): Tensor => unaryOp('sigmoid', x);
/** Hyperbolic tangent elementwise. */
export const tanh = (x: Tensor): Tensor => unaryOp('tanh', x);
/** √x elementwise; √(−1) = NaN. */
export const sqrt = (x: Tensor): Tensor => unaryOp('sqrt', x);
/** 1/x elementwise; 1/0 = Inf. */
export const recip = (x: Tensor): Tensor => unaryOp('recip', x);
/** 2^x elementwise. */
export const exp2 = (x: Tensor): Tensor => unaryOp('exp2', x);
/** Base-2 logarithm elementwise. */
export const log2 = (x: Tensor): Tensor => unaryOp('log2', x);
/** Sine elementwise (radians). */
export const sin = (x: Tensor): Tensor => unaryOp('sin', x);
/** Cosine elementwise (radians). */
export const cos = (x: Tensor): Tensor => unaryOp('cos', x);
/** |x| elementwise. */
export const abs = (x: Tensor): Tensor => unaryOp('abs', x);
/** −1, 0 or 1 (gradient 0, as for floor, ceil, round and trunc). */
export const sign = (x: Tensor): Tensor => unaryOp('sign', x);
/** Largest integer ≤ x, elementwise (gradient 0). */
export const floor = (x: Tensor): Tensor => unaryOp('floor', x);
/** Smallest integer ≥ x, elementwise (gradient 0). */
export const ceil = (x: Tensor): Tensor => unaryOp('ceil', x);
/** To the nearest integer, ties to even (np.round). */
export const round = (x: Tensor): Tensor => unaryOp('round', x);
/** x rounded toward zero, elementwise (gradient 0). */
export const trunc = (x: Tensor): Tensor => unaryOp('trunc', x);
/** The error function elementwise. */
export const erf = (x: Tensor): Tensor => unaryOp('erf', x);
/** log(1 + x) elementwise, accurate near 0. */
export const log1p = (x: Tensor): Tensor => unaryOp('log1p', x);
/** e^x − 1 elementwise, accurate near 0. */
export const expm1 = (x: Tensor): Tensor => unaryOp('expm1', x);
/** log(1 + e^x), without overflow. */
export const softplus = (x: Tensor): Tensor => unaryOp('softplus', x);
/** Exact GELU x·Φ(x) (PyTorch's default). */
export const gelu = (x: Tensor): Tensor => unaryOp('gelu', x);
/** GELU's tanh approximation (PyTorch's approximate='tanh'). */
export const geluTanh = (x: Tensor): Tensor => unaryOp('geluTanh', x);
/** SiLU (swish) x·sigmoid(x). */
export const silu = (x: Tensor): Tensor => unaryOp('silu', x);
/** Hard swish x·relu6(x + 3)/6 (MobileNetV3; PyTorch's hardswish, ONNX HardSwish). */
export const hardSwish = (x: Tensor): Tensor => unaryOp('hardSwish', x);
/** Tangent elementwise (radians). */
export const tan = (x: Tensor): Tensor => unaryOp('tan', x);
/** Arcsine elementwise; NaN outside [−1, 1]. */
export const asin = (x: Tensor): Tensor => unaryOp('asin', x);
/** Arccosine elementwise; NaN outside [−1, 1]. */
export const acos = (x: Tensor): Tensor => unaryOp('acos', x);
/** Arctangent elementwise. */
export const atan = (x: Tensor): Tensor => unaryOp('atan', x);
/** Hyperbolic sine elementwise. */
export const sinh = (x: Tensor): Tensor => unaryOp('sinh', x);
/** Hyperbolic cosine elementwise. */
export const cosh = (x: Tensor): Tensor => unaryOp('cosh', x);
/** Inverse hyperbolic sine elementwise. */
export const asinh = (x: Tensor): Tensor => unaryOp('asinh', x);
/** Inverse hyperbolic cosine elementwise; NaN below 1. */
export const acosh = (x: Tensor): Tensor => unaryOp('acosh', x);
/** Inverse hyperbolic tangent elementwise; ±Inf at ±1, NaN beyond. */
export const atanh = (x: Tensor): Tensor => unaryOp('atanh', x);

/**
 * A reduced gradient `g` (a fresh array, taken over) expanded back over the reduced axes: a broadcast
 * view of it (or of its reshaped copy), which the engine owns through its buffer.
 */
function spread(be: ComputeBackend, g: NDArray, inShape: readonly number[], axes: number[]): NDArray {
  const kept = inShape.map((d, i) => (axes.includes(i) ? 1 : d));
  const r = be.reshape(g, kept);
  if (r.buffer !== g.buffer) be.free(g);
  return be.expand(r, inShape);
}

/** Gradient rules of the reductions: the op table's (hal/src/ops/reduce.ts), on keepdims-shaped g and out. */
const REDUCE_GRADS = REDUCE_OP_DEFS as Readonly<Record<ReduceOp, { grad: ReduceGradRule | null }>>;

/** A reduction of the op table over axes (default all); its gradient rule from the table. */
export function reduceOp(op: ReduceOp, x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor {
  const ax = normalizeAxes(axes, x.rank);
  const rule = REDUCE_GRADS[op].grad;
  return record(
    op,
    [x],
    (be, [v]) => be.reduce(op, v!, ax, keepdims),
    rule &&
      ((be, g, [v], out) =>
        withTemps(be, (t) => {
          // keepdims views of g and out (a reshape copies only when the strides demand it)
          const kept = v!.shape.map((d, i) => (ax.includes(i) ? 1 : d));
          const view = (a: NDArray): NDArray => {
            const r = be.reshape(a, kept);
            return r.buffer === a.buffer ? r : t(r);
          };
          return [rule(be, view(g), v!, view(out), ax)];
        })),
  );
}

/** Σ over axes (default all). Gradient: g broadcast back. */
export const sum = (x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor =>
  reduceOp('sum', x, axes, keepdims);
/** Max over axes. Gradient: g to every element equal to the max (ties all receive it, as in tfjs). */
export const max = (x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor =>
  reduceOp('max', x, axes, keepdims);
/** Min over axes. Gradient: g to every element equal to the min (ties all receive it). */
export const min = (x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor =>
  reduceOp('min', x, axes, keepdims);
/** Π over axes. Gradient: the product of the other elements (exact where elements are zero). */
export const prod = (x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor =>
  reduceOp('prod', x, axes, keepdims);

/** Mean over axes. Gradient: g / n broadcast back. */
export function mean(x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor {
  const ax = normalizeAxes(axes, x.rank);
  const n = ax.reduce((p, a) => p * x.shape[a]!, 1);
  return record(
    'mean',
    [x],
    (be, [v]) => be.mean(v!, ax, keepdims),
    (be, g, [v]) => [spread(be, be.div(g, n), v!.shape, ax)],
  );
}

/**
 * Batched matmul a: [..., M, K] × b: [..., K, N] → [..., M, N], plus `bias` (broadcast to [..., M, N]) when
 * given: one backend call, which webgpu runs as one kernel (a Linear layer's forward). Gradients g·bᵀ and
 * aᵀ·g use transposed views (no copies); the bias's is g summed to its shape.
 */
export function matmul(a: Tensor, b: Tensor, bias?: Tensor | null): Tensor {
  return record(
    'matmul',
    bias ? [a, b, bias] : [a, b],
    (be, [x, y, c]) => be.matmul(x!, y!, c),
    (be, g, [x, y, c], _out, needs) => {
      const T = (v: NDArray): NDArray =>
        be.permute(
          v,
          [...v.shape.keys()].map((i, _, all) => (i < all.length - 2 ? i : all.length * 2 - 3 - i)),
        );
      const reduce = (gi: NDArray, shape: readonly number[]): NDArray => {
        const r = unbroadcast(be, gi, shape);
        if (r !== gi) be.free(gi);
        return r;
      };
      // A 2-D b (a Linear layer): under batched a (on sequences), the batch sum of aᵀ·g is one product of
      // the batch-merged operands, [K, B·M] · [B·M, N], instead of B products and a reduction. When b is
      // a transposed matrix (Linear's weightᵀ), the gradient is computed as (gᵀ·a)ᵀ: the transpose's
      // gradient is then the contiguous gᵀ·a itself, with no copy.
      const flatGradB = (): NDArray =>
        withTemps(be, (t) => {
          const rows = x!.shape.slice(0, -1).reduce((p, d) => p * d, 1);
          const keep = (v: NDArray, r: NDArray): NDArray => (r.buffer === v.buffer ? r : t(r));
          const a2 = keep(x!, be.reshape(x!, [rows, x!.shape.at(-1)!]));
          const g2 = keep(g, be.reshape(g, [rows, g.shape.at(-1)!]));
          const transposed = y!.strides[0] === 1 && y!.strides[1] === y!.shape[0] && y!.shape[0]! > 1;
          return transposed ? T(be.matmul(T(g2), a2)) : be.matmul(T(a2), g2);
        });
      return [
        needs[0] ? reduce(be.matmul(g, T(y!)), x!.shape) : null,
        needs[1]
          ? y!.shape.length === 2 && x!.shape.length >= 2
            ? flatGradB()
            : reduce(be.matmul(T(x!), g), y!.shape)
          : null,
        // The bias: g summed over the dims it was broadcast along (g itself when it has the product's shape).
        ...(c ? [needs[2] ? unbroadcast(be, g, c.shape) : null] : []),
      ];
    },
  );
}

/** softmax along `axis` (default last). Gradient: y·(g − Σ g·y). */
export function softmax(x: Tensor, axis = -1): Tensor {
  const ax = normalizeAxis(axis, x.rank);
  return record(
    'softmax',
    [x],
    (be, [v]) => be.softmax(v!, ax),
    (be, g, _x, y) =>
      withTemps(be, (t) => {
        const s = t(be.sum(t(be.mul(g, y)), ax, true));
        return [be.mul(y, t(be.sub(g, s)))];
      }),
  );
}

/** log-softmax along `axis`. Gradient: g − softmax·Σ g. */
export function logSoftmax(x: Tensor, axis = -1): Tensor {
  const ax = normalizeAxis(axis, x.rank);
  return record(
    'logSoftmax',
    [x],
    (be, [v]) => be.logSoftmax(v!, ax),
    (be, g, _x, y) =>
      withTemps(be, (t) => {
        const s = t(be.sum(g, ax, true));
        return [be.sub(g, t(be.mul(t(be.exp(y)), s)))];
      }),
  );
}

/**
 * log Σ exp(x) over axes (default all), stably (HAL logsumexp). Gradient: g · exp(x − logsumexp), the
 * softmax over the axes.
 */
export function logsumexp(x: Tensor, axes?: number | readonly number[], keepdims = false): Tensor {
  const ax = normalizeAxes(axes, x.rank);
  return record(
    'logsumexp',
    [x],
    (be, [v]) => be.logsumexp(v!, ax, keepdims),
    (be, g, [v], out) =>
      withTemps(be, (t) => {
        const kept = v!.shape.map((d, i) => (ax.includes(i) ? 1 : d));
        const view = (a: NDArray): NDArray => {
          const r = be.reshape(a, kept);
          return r.buffer === a.buffer ? r : t(r);
        };
        return [be.mul(view(g), t(be.exp(t(be.sub(v!, view(out))))))];
      }),
  );
}

/**
 * Fused, numerically stable softmax cross-entropy: logits [N, C], labels [N, C] (one-hot or
 * probabilities) → per-row loss [N]. Gradients: logits g[:, None]·(softmax − labels), computed by
 * the backend's fused kernel in the forward pass; labels −g[:, None]·logSoftmax(logits).
 */
export function softmaxCrossEntropy(logits: Tensor, labels: Tensor): Tensor {
  let saved: Tensor | undefined; // softmax − labels from the fused forward, tracked like any tensor
  const t = record(
    'softmaxCrossEntropy',
    [logits, labels],
    (be, [z, y]) => {
      const wantGrad = isGradEnabled() && logits.requiresGrad;
      const { loss, grad } = be.softmaxCrossEntropy(z!, y!, wantGrad);
      if (grad) saved = new Tensor(be, grad);
      return loss;
    },
    (be, g, [z]) => {
      const col = be.reshape(g, [g.shape[0]!, 1]);
      try {
        const dLogits = saved ? be.mul(saved.value, col) : null;
        const dLabels = labels.requiresGrad
          ? withTemps(be, (t) => be.neg(t(be.mul(t(be.logSoftmax(z!, 1)), col))))
          : null;
        return [dLogits, dLabels];
      } finally {
        if (col.buffer !== g.buffer) be.free(col);
      }
    },
    () => {
      saved?.dispose();
      saved = undefined;
    },
  );
  if (!t.node) saved?.dispose();
  return t;
}
