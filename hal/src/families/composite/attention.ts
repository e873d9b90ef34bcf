/**
 * Scaled dot-product attention as one op (ops/attention-ops.ts), after PyTorch's `scaled_dot_product_attention`
 * without a mask: `attention(q, k, v, scale)` = softmax(q·kᵀ·scale)·v, and `attentionBackward` its gradients,
 * recomputing the probabilities as FlashAttention-2's backward does (Dao 2023): with P = softmax(q·kᵀ·scale),
 * dv = Pᵀ·dOut, dP = dOut·vᵀ, D = rowsum(dP ∘ P), dS = P ∘ (dP − D), dq = dS·k·scale, dk = dSᵀ·q·scale.
 *
 * The operands are validated here, before anything is allocated; the default kernels are composed from HAL ops
 * (matmul reads the strided views as they are); a backend with the optional hooks `attentionKernel` /
 * `attentionBackwardKernel` (hooks.ts) runs them fused, and a hook may decline a shape (return false).
 */
import type { ComputeBackend } from '../../backend.js';
import { DTypeError, describeValue, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { type NDArray, transposeView } from '../../core/ndarray.js';
import { withTemps } from '../../core/temps.js';

const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;

/** The sizes of validated attention operands: B (the leading dims' product), L, S, d, dv and the leading dims. */
export interface AttentionDims {
  lead: number[];
  B: number;
  L: number;
  S: number;
  d: number;
  dv: number;
}

/**
 * Checks attention's operands: q [..., L, d], k [..., S, d], v [..., S, dv] (and dOut [..., L, dv] for the
 * backward; 'forward' for none), float32 (DTypeError), rank ≥ 2 with the same leading dims, no broadcast
 * (ShapeMismatchError), scale a finite number (InvalidArgumentError); `live` checks that each is a live NDArray of
 * the backend. Nothing is allocated.
 */
export function checkAttentionOperands(
  op: string,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  dOut: NDArray | 'forward',
  scale: number,
  live: (x: NDArray, arg: string) => void,
): AttentionDims {
  const named: [string, NDArray][] = [
    ['q', q],
    ['k', k],
    ['v', v],
  ];
  if (dOut !== 'forward') named.push(['dOut', dOut]);
  for (const [arg, x] of named) {
    live(x, arg);
    if (x.dtype !== 'float32') throw new DTypeError(`${op}: ${arg} must be float32, got ${x.dtype}`);
  }
  if (typeof scale !== 'number' || !Number.isFinite(scale))
    throw new InvalidArgumentError(`${op}: scale must be a finite number, got ${describeValue(scale)}`);
  const r = q.shape.length;
  const lead = q.shape.slice(0, r - 2);
  const bad = (why: string): never => {
    const shapes = named.map(([, x]) => x.shape);
    throw new ShapeMismatchError(
      `${op}: q [..., L, d], k [..., S, d], v [..., S, dv]${dOut !== 'forward' ? ', dOut [..., L, dv]' : ''} ` +
        `with the same leading dims needed (${why}), got ${named.map(([a, x]) => `${a} ${shp(x.shape)}`).join(', ')}`,
      shapes,
    );
  };
  if (r < 2) bad('rank ≥ 2');
  for (const [arg, x] of named)
    if (x.shape.length !== r || x.shape.slice(0, r - 2).some((n, i) => n !== lead[i]))
      bad(`${arg}'s leading dims differ from q's`);
  const [L, d] = [q.shape[r - 2]!, q.shape[r - 1]!];
  const [S, dk] = [k.shape[r - 2]!, k.shape[r - 1]!];
  const [Sv, dv] = [v.shape[r - 2]!, v.shape[r - 1]!];
  if (dk !== d) bad(`k's last dim ${dk} is not q's ${d}`);
  if (Sv !== S) bad(`v has ${Sv} rows, k ${S}`);
  if (dOut !== 'forward' && (dOut.shape[r - 2] !== L || dOut.shape[r - 1] !== dv))
    bad(`dOut must be ${shp([...lead, L, dv])}`);
  return { lead, B: lead.reduce((p, n) => p * n, 1), L, S, d, dv };
}

/** softmax(q·kᵀ·scale) [..., L, S], from HAL ops (matmul, mul, softmax). */
function probabilities(be: ComputeBackend, q: NDArray, k: NDArray, scale: number, t: <A extends NDArray>(a: A) => A) {
  return be.softmax(t(be.mul(t(be.matmul(q, transposeView(k))), scale)), -1);
}

/** The default forward on validated operands: matmul, mul, softmax, matmul (four kernels on a GPU). */
export function attentionComposite(be: ComputeBackend, q: NDArray, k: NDArray, v: NDArray, scale: number): NDArray {
  return withTemps(be, (t) => be.matmul(t(probabilities(be, q, k, scale, t)), v));
}

/**
 * The default backward on validated operands, from HAL ops: P recomputed (matmul, mul, softmax), dv = Pᵀ·dOut,
 * dP = dOut·vᵀ, D = Σ_j dP ∘ P, dS = P ∘ (dP − D)·scale, dq = dS·k, dk = dSᵀ·q. Returns [dq, dk, dv], contiguous.
 */
export function attentionBackwardComposite(
  be: ComputeBackend,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  dOut: NDArray,
  scale: number,
): [NDArray, NDArray, NDArray] {
  return withTemps(be, (t) => {
    const p = t(probabilities(be, q, k, scale, t));
    const dP = t(be.matmul(dOut, transposeView(v)));
    const D = t(be.sum(t(be.mul(dP, p)), [p.shape.length - 1], true));
    const dS = t(be.mul(t(be.mul(p, t(be.sub(dP, D)))), scale));
    const out: NDArray[] = [];
    try {
      out.push(be.matmul(dS, k));
      out.push(be.matmul(transposeView(dS), q));
      out.push(be.matmul(transposeView(p), dOut));
    } catch (e) {
      for (const a of out) be.free(a);
      throw e;
    }
    return [out[0]!, out[1]!, out[2]!];
  });
}
