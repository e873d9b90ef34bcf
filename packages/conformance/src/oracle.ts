/**
 * The float64 oracle: an independent, deliberately plain implementation of every HAL op on contiguous
 * float64 arrays (index arithmetic per element, no strides tricks, no code shared with any backend; the
 * elementwise ops' reference values are the op table's float64 references, hal/src/ops/).
 * Results carry a `scale` per element — the magnitude the error is judged against (Σ|terms| for sums
 * and dot products, |y| for mod, |result| otherwise) — and are rounded to float32 by the comparison.
 */
import {
  BINARY_OP_DEFS,
  type BinaryOpDef,
  type DType,
  REDUCE_OP_DEFS,
  type ReduceOpDef,
  UNARY_OP_DEFS,
  type UnaryOpDef,
} from '@polyhal/hal';
import { oIntRange, oIsFloat, oIsInt, oStoreInt } from './oracle-dtype.js';

/** An oracle value: a row-major float64 array with the shape and dtype the backend's result must have. */
export interface Ref {
  /** The result's shape. */
  shape: number[];
  /** The exact (float64) values, row-major; compared after rounding to `dtype`. */
  data: Float64Array;
  /** The dtype the backend's result must have. */
  dtype: DType;
  /** Error scale per element; absent = |data|. */
  scale?: Float64Array;
}

/** A Ref of `shape` holding `values` (row-major, copied), of `dtype` (default float32). */
export function ref(shape: number[], values: ArrayLike<number>, dtype: DType = 'float32'): Ref {
  return { shape: [...shape], data: Float64Array.from(values), dtype };
}

/** Elements of a shape. */
export function numel(shape: readonly number[]): number {
  return shape.reduce((p, d) => p * d, 1);
}

/** Multi-index of flat position `i` in a row-major shape. */
export function unravel(i: number, shape: readonly number[]): number[] {
  const idx = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = i % shape[d]!;
    i = Math.floor(i / shape[d]!);
  }
  return idx;
}

/** Flat row-major position of multi-index `idx` in `shape`. */
export function ravel(idx: readonly number[], shape: readonly number[]): number {
  let f = 0;
  for (let d = 0; d < shape.length; d++) f = f * shape[d]! + idx[d]!;
  return f;
}

/** Builds a new Ref of `shape` whose element at index `idx` is `x` at `source(idx)`. */
function gather(x: Ref, shape: number[], source: (idx: number[]) => number[] | null, fill = 0): Ref {
  const out = new Float64Array(numel(shape));
  for (let i = 0; i < out.length; i++) {
    const src = source(unravel(i, shape));
    out[i] = src === null ? fill : x.data[ravel(src, x.shape)]!;
  }
  return { shape, data: out, dtype: x.dtype };
}

/** NumPy's broadcast shape of a and b; throws (a plain Error: a bad case) when they do not broadcast. */
export function oBroadcastShape(a: readonly number[], b: readonly number[]): number[] {
  const r = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < r; i++) {
    const da = i - (r - a.length) >= 0 ? a[i - (r - a.length)]! : 1;
    const db = i - (r - b.length) >= 0 ? b[i - (r - b.length)]! : 1;
    if (da !== db && da !== 1 && db !== 1) throw new Error(`oracle: cannot broadcast [${a}] and [${b}]`);
    out.push(da === 1 ? db : da);
  }
  return out;
}

/** The oracle of expand: x broadcast to `shape` (size-1 and missing leading dims repeated). */
export function oExpand(x: Ref, shape: number[]): Ref {
  const lead = shape.length - x.shape.length;
  return gather(x, shape, (idx) => idx.slice(lead).map((v, d) => (x.shape[d] === 1 ? 0 : v)));
}

const toI32 = (v: number): number => v | 0;

/** The op table's entry for an elementwise op; the oracle's reference values come from it. */
function unaryDef(op: string): UnaryOpDef {
  const d = (UNARY_OP_DEFS as Record<string, UnaryOpDef>)[op];
  if (!d) throw new Error(`oracle: unknown unary op ${op}`);
  return d;
}

function binaryDef(op: string): BinaryOpDef {
  const d = (BINARY_OP_DEFS as Record<string, BinaryOpDef>)[op];
  if (!d) throw new Error(`oracle: unknown binary op ${op}`);
  return d;
}

/**
 * An elementwise unary op on every element: the op table's float64 (or int32) reference; int8 and uint8
 * results kept modulo 2^8 (float16 results are rounded by the comparison, as float32 ones).
 */
export function oUnary(op: string, x: Ref): Ref {
  const d = unaryDef(op);
  const f = oIsInt(x.dtype) ? d.i32 : d.f64;
  if (!f) throw new Error(`oracle: ${op} takes no ${x.dtype}`);
  const data = x.data.map((v) => oStoreInt(x.dtype, f(v)));
  return { shape: [...x.shape], data, dtype: x.dtype };
}

/** An elementwise binary op with NumPy broadcasting: the op table's references and error scale. */
export function oBinary(op: string, a: Ref, b: Ref): Ref {
  const d = binaryDef(op);
  const shape = oBroadcastShape(a.shape, b.shape);
  const A = oExpand(a, shape);
  const B = oExpand(b, shape);
  const f = oIsFloat(a.dtype) ? d.f64 : d.i32; // bool: the int32 reference on 0/1
  if (!f) throw new Error(`oracle: ${op} takes no ${a.dtype}`);
  const dtype = d.returns ?? a.dtype;
  const n = numel(shape);
  const data = new Float64Array(n);
  const scale = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = A.data[i]!;
    const y = B.data[i]!;
    const r = oStoreInt(dtype, f(x, y));
    data[i] = r;
    scale[i] =
      d.scale === 'operands'
        ? Math.abs(x) + Math.abs(y)
        : d.scale === 'divisor' && Number.isFinite(y)
          ? Math.abs(y)
          : Math.abs(r);
  }
  return { shape, data, dtype, scale };
}

/**
 * A reduction by its op table entry's float64 (or int32) fold, in index order from the identity; `mean`
 * is the float64 sum / n. Error scale: Σ|finite terms| for sums and means, |result| otherwise. int8 and
 * uint8: the int32 fold kept modulo 2^8; max and min over nothing give the dtype's minimum and maximum.
 */
export function oReduce(op: string, x: Ref, axes: number[], keepdims: boolean): Ref {
  const d = (REDUCE_OP_DEFS as Record<string, ReduceOpDef>)[op === 'mean' ? 'sum' : op]!;
  const isInt = oIsInt(x.dtype);
  const fold = isInt ? d.i32! : d.f64;
  const [lo, hi] = oIntRange(x.dtype);
  const identity = !isInt ? d.identity.float32 : op === 'max' ? lo : op === 'min' ? hi : d.identity.int32!;
  const rank = x.shape.length;
  const ax = axes.map((a) => (a < 0 ? a + rank : a));
  const keptShape = x.shape.map((s, i) => (ax.includes(i) ? 1 : s));
  const n = numel(keptShape);
  const data = new Float64Array(n).fill(identity);
  const scale = new Float64Array(n);
  const count = ax.reduce((p, a) => p * x.shape[a]!, 1);
  for (let i = 0; i < x.data.length; i++) {
    const idx = unravel(i, x.shape);
    const o = ravel(
      idx.map((v, k) => (ax.includes(k) ? 0 : v)),
      keptShape,
    );
    const v = x.data[i]!;
    data[o] = fold(data[o]!, v);
    if (d.scale === 'terms' && Number.isFinite(v)) scale[o]! += Math.abs(v);
  }
  for (let o = 0; o < n; o++) {
    if (op === 'mean') {
      data[o] = count === 0 ? NaN : data[o]! / count;
      scale[o] = count === 0 ? 0 : scale[o]! / count;
    } else if (d.scale === 'result') scale[o] = Math.abs(data[o]!);
    if (isInt) data[o] = oStoreInt(x.dtype, toI32(data[o]!));
  }
  const shape = keepdims ? keptShape : x.shape.filter((_, i) => !ax.includes(i));
  return { shape, data, dtype: x.dtype, scale };
}

/** The oracle of reshape: the same row-major values as `shape` (no −1: the runner resolves it). */
export function oReshape(x: Ref, shape: number[]): Ref {
  return { shape: [...shape], data: x.data.slice(), dtype: x.dtype };
}

/** The oracle of permute: out[idx] = x[idx permuted back], out.shape[d] = x.shape[perm[d]]. */
export function oPermute(x: Ref, perm: number[]): Ref {
  const shape = perm.map((p) => x.shape[p]!);
  return gather(x, shape, (idx) => {
    const src = new Array<number>(perm.length);
    perm.forEach((p, d) => (src[p] = idx[d]!));
    return src;
  });
}

/** The oracle of shrink: [start, end) of each dim. */
export function oShrink(x: Ref, bounds: [number, number][]): Ref {
  return gather(
    x,
    bounds.map(([s, e]) => e - s),
    (idx) => idx.map((v, d) => v + bounds[d]![0]),
  );
}

/** The oracle of stride: every steps[d]-th element of dim d, from the end for a negative step. */
export function oStride(x: Ref, steps: number[]): Ref {
  const shape = x.shape.map((d, i) => Math.ceil(d / Math.abs(steps[i]!)));
  return gather(x, shape, (idx) =>
    idx.map((v, d) => (steps[d]! > 0 ? v * steps[d]! : x.shape[d]! - 1 + v * steps[d]!)),
  );
}

/** The oracle of constant pad: `pads[d] = [before, after]` elements of `value` around each dim. */
export function oPad(x: Ref, pads: [number, number][], value: number): Ref {
  const shape = x.shape.map((d, i) => d + pads[i]![0] + pads[i]![1]);
  return gather(
    x,
    shape,
    (idx) => {
      const src = idx.map((v, d) => v - pads[d]![0]);
      return src.every((v, d) => v >= 0 && v < x.shape[d]!) ? src : null;
    },
    value,
  );
}

/**
 * cast: float (float32, float16) → integer truncates toward zero and saturates at the dtype's range
 * (NaN → 0); integer or bool → int8/uint8 keeps the value modulo 2^8; → float32/float16 the value (the
 * comparison rounds it); to bool x ≠ 0 (NaN true).
 */
export function oCast(x: Ref, dtype: DType): Ref {
  const [lo, hi] = oIntRange(dtype);
  const data = x.data.map((v) =>
    dtype === 'bool'
      ? v !== 0
        ? 1
        : 0
      : oIsInt(dtype)
        ? oIsFloat(x.dtype)
          ? Number.isNaN(v)
            ? 0
            : Math.max(lo, Math.min(hi, Math.trunc(v)))
          : oStoreInt(dtype, v)
        : v,
  );
  return { shape: [...x.shape], data, dtype };
}

/** Batched matmul with batch broadcasting: naive triple loop in float64. */
export function oMatmul(a: Ref, b: Ref): Ref {
  const M = a.shape[a.shape.length - 2]!;
  const K = a.shape[a.shape.length - 1]!;
  const N = b.shape[b.shape.length - 1]!;
  const batch = oBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const A = oExpand(a, [...batch, M, K]);
  const B = oExpand(b, [...batch, K, N]);
  const nb = numel(batch);
  const data = new Float64Array(nb * M * N);
  if (a.dtype === 'int32' || a.dtype === 'int8' || a.dtype === 'uint8') {
    // Exact in BigInt, then wrapped to the dtype (the HAL's integer matmul is exact modulo 2^32, then
    // wraps to int8/uint8 as NumPy does).
    for (let t = 0; t < nb; t++)
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++) {
          let s = 0n;
          for (let k = 0; k < K; k++)
            s += BigInt(A.data[t * M * K + i * K + k]!) * BigInt(B.data[t * K * N + k * N + j]!);
          const wrapped = a.dtype === 'uint8' ? BigInt.asUintN(8, s) : BigInt.asIntN(a.dtype === 'int8' ? 8 : 32, s);
          data[t * M * N + i * N + j] = Number(wrapped);
        }
    return { shape: [...batch, M, N], data, dtype: a.dtype };
  }
  const scale = new Float64Array(nb * M * N);
  for (let t = 0; t < nb; t++) {
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = 0;
        let m = 0;
        for (let k = 0; k < K; k++) {
          const p = A.data[t * M * K + i * K + k]! * B.data[t * K * N + k * N + j]!;
          s += p;
          m += Math.abs(p);
        }
        data[t * M * N + i * N + j] = s;
        scale[t * M * N + i * N + j] = m;
      }
    }
  }
  // float16 operands give a float16 result (the exact sum here; compare rounds it to float16)
  return { shape: [...batch, M, N], data, dtype: a.dtype === 'float16' ? 'float16' : 'float32', scale };
}

/**
 * matmul's bias: product + bias broadcast to the product's shape. float32 and float16: exact in float64,
 * judged against the product's Σ|terms| plus |bias|; integers: the sum wrapped to the dtype (as add).
 */
export function oMatmulBias(product: Ref, bias: Ref): Ref {
  if (product.dtype !== 'float32' && product.dtype !== 'float16') return oBinary('add', product, bias);
  const c = oExpand(bias, product.shape);
  const scale = product.scale ?? product.data.map(Math.abs);
  return {
    shape: product.shape,
    data: product.data.map((v, i) => v + c.data[i]!),
    dtype: product.dtype,
    scale: scale.map((v, i) => v + Math.abs(c.data[i]!)),
  };
}

/** softmax / log-softmax along the last axis of a 2-D or N-D array, in float64. */
export function oSoftmax(x: Ref, log: boolean): Ref {
  const C = x.shape[x.shape.length - 1]!;
  const rows = x.data.length / C;
  const data = new Float64Array(x.data.length);
  for (let r = 0; r < rows; r++) {
    const row = x.data.subarray(r * C, (r + 1) * C);
    const m = Math.max(...row);
    let s = 0;
    for (const v of row) s += Math.exp(v - m);
    for (let c = 0; c < C; c++) data[r * C + c] = log ? row[c]! - m - Math.log(s) : Math.exp(row[c]! - m) / s;
  }
  return { shape: [...x.shape], data, dtype: 'float32', scale: data.map((v) => Math.max(Math.abs(v), 1)) };
}

/**
 * log Σ exp(x) over `axes` (all when absent) in float64: NaN if a term is NaN, +Inf if one is +Inf,
 * −Inf if every term is −Inf or there are none, else m + log Σ exp(x − m). Scale max(|v|, 1).
 */
export function oLogsumexp(x: Ref, axes: number[] | undefined, keepdims: boolean): Ref {
  const r = x.shape.length;
  const ax = (axes ?? x.shape.map((_, i) => i)).map((a) => (a < 0 ? a + r : a));
  const kept = x.shape.map((d, i) => (ax.includes(i) ? 1 : d));
  const groups: number[][] = Array.from({ length: numel(kept) }, () => []);
  for (let i = 0; i < x.data.length; i++) {
    const idx = unravel(i, x.shape);
    groups[
      ravel(
        idx.map((v, d) => (ax.includes(d) ? 0 : v)),
        kept,
      )
    ]!.push(x.data[i]!);
  }
  const data = Float64Array.from(groups, (g) => {
    if (g.some(Number.isNaN)) return NaN;
    const m = g.reduce((a, v) => Math.max(a, v), -Infinity);
    if (m === Infinity || m === -Infinity) return m;
    return m + Math.log(g.reduce((s, v) => s + Math.exp(v - m), 0));
  });
  const shape = keepdims ? kept : x.shape.filter((_, i) => !ax.includes(i));
  return { shape, data, dtype: x.dtype, scale: data.map((v) => Math.max(Math.abs(v), 1)) };
}

/** xlogy(y, log p): 0 where the label y is 0 and log p is not NaN, else y·log p (hal/src/ops/index.ts). */
function xlogy(y: number, logp: number): number {
  return y === 0 && !Number.isNaN(logp) ? 0 : y * logp;
}

/** Per-row softmax cross-entropy −Σ xlogy(labels, softmax(logits)) (label-0 terms are 0, see ops.ts). */
export function oSoftmaxCrossEntropy(logits: Ref, labels: Ref): Ref {
  const ls = oSoftmax(logits, true);
  const [N, C] = logits.shape as [number, number];
  const data = new Float64Array(N);
  for (let n = 0; n < N; n++)
    for (let c = 0; c < C; c++) data[n]! -= xlogy(labels.data[n * C + c]!, ls.data[n * C + c]!);
  return { shape: [N], data, dtype: 'float32', scale: data.map((v) => Math.max(Math.abs(v), 1)) };
}

/** One Adam/AdamW step in float64 → [param, m, v]. Decoupled weight decay: p·(1 − lr·wd). */
export function oAdamStep(p: Ref, g: Ref, m: Ref, v: Ref, h: Record<string, number>): Ref[] {
  const [lr, b1, b2, eps, wd, t] = [h['lr']!, h['beta1']!, h['beta2']!, h['eps']!, h['weightDecay']!, h['step']!];
  const m2 = m.data.map((mi, i) => b1 * mi + (1 - b1) * g.data[i]!);
  const v2 = v.data.map((vi, i) => b2 * vi + (1 - b2) * g.data[i]! ** 2);
  const upd = m2.map((mi, i) => (lr * (mi / (1 - b1 ** t))) / (Math.sqrt(v2[i]! / (1 - b2 ** t)) + eps));
  const p2 = p.data.map((pi, i) => pi * (1 - lr * wd) - upd[i]!);
  const scale = p.data.map((pi, i) => Math.abs(pi) + Math.abs(upd[i]!));
  return [
    { shape: [...p.shape], data: p2, dtype: 'float32', scale },
    { shape: [...p.shape], data: m2, dtype: 'float32' },
    { shape: [...p.shape], data: v2, dtype: 'float32' },
  ];
}

/** One SGD step in float64: d = g + wd·p; v = μ·v + d (with momentum); p − lr·(v or d) → [param, (velocity)]. */
export function oSgdStep(p: Ref, g: Ref, vel: Ref, h: Record<string, number>): Ref[] {
  const [lr, mu, wd] = [h['lr']!, h['momentum']!, h['weightDecay']!];
  const d = p.data.map((pi, i) => g.data[i]! + wd * pi);
  const v2 = mu > 0 ? d.map((di, i) => mu * vel.data[i]! + di) : d;
  const p2 = p.data.map((pi, i) => pi - lr * v2[i]!);
  const scale = p.data.map((pi, i) => Math.abs(pi) + Math.abs(lr * v2[i]!));
  const out: Ref[] = [{ shape: [...p.shape], data: p2, dtype: 'float32', scale }];
  if (mu > 0)
    out.push({
      shape: [...p.shape],
      data: v2,
      dtype: 'float32',
      scale: v2.map((_x, i) => Math.abs(mu * vel.data[i]!) + Math.abs(d[i]!)),
    });
  return out;
}
