/**
 * attention's backward on a packed QKV projection (ops/attention-ops.ts), after flash-attn's `qkvpacked` functions
 * (Dao 2023): multi-head attention's in-projection x·Wᵀ + b [N, L, 3E] viewed by head is qkv [N, L, 3, H, D];
 * q, k and v are its three slices along dim 2 read as [N, H, L, D] views (no copy), and the gradients dq, dk and dv
 * come back stacked into qkv's own layout — one array, the in-projection's gradient. A backend with the optional
 * hook `attentionBackwardPackedKernel` (hooks.ts) writes them there in the backward's own kernel; the default is
 * attentionBackward (fused where the backend has it) followed by a stack (one more copy of 3·N·L·H·D floats).
 */
import type { ComputeBackend } from '../../backend.js';
import { DTypeError, ShapeMismatchError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { checkAttentionOperands } from './attention.js';

const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;

/**
 * q, k and v [N, H, L, D] as views of qkv [N, L, 3, H, D] (its buffer, no copy): slice i along dim 2, that dim
 * dropped, the heads' dim moved before the tokens'.
 */
export function packedHeads(be: ComputeBackend, qkv: NDArray): [NDArray, NDArray, NDArray] {
  const [N, L, , H, D] = qkv.shape as [number, number, number, number, number];
  const views = [0, 1, 2].map((i) => {
    const part = be.shrink(qkv, [
      [0, N],
      [0, L],
      [i, i + 1],
      [0, H],
      [0, D],
    ]);
    return be.permute(be.reshape(part, [N, L, H, D]), [0, 2, 1, 3]); // dropping a size-1 dim: a view
  });
  return views as [NDArray, NDArray, NDArray];
}

/**
 * Checks attentionBackwardPacked's operands: qkv float32 [N, L, 3, H, D] (DTypeError; ShapeMismatchError for another
 * rank or a dim 2 other than 3), dOut float32 [N, H, L, D], scale finite (as attentionBackward's checks: `live`
 * checks that each is a live NDArray of the backend). Returns q, k and v as views of qkv; nothing is allocated.
 */
export function checkPackedAttentionOperands(
  be: ComputeBackend,
  op: string,
  qkv: NDArray,
  dOut: NDArray,
  scale: number,
  live: (x: NDArray, arg: string) => void,
): [NDArray, NDArray, NDArray] {
  live(qkv, 'qkv');
  if (qkv.dtype !== 'float32') throw new DTypeError(`${op}: qkv must be float32, got ${qkv.dtype}`);
  if (qkv.shape.length !== 5 || qkv.shape[2] !== 3)
    throw new ShapeMismatchError(`${op}: qkv must be [N, L, 3, H, D], got ${shp(qkv.shape)}`, [qkv.shape]);
  const [q, k, v] = packedHeads(be, qkv);
  checkAttentionOperands(op, q, k, v, dOut, scale, (x, arg) => live(x, arg === 'dOut' ? 'dOut' : 'qkv'));
  return [q, k, v];
}

/**
 * The default on validated operands: attentionBackward of the views, then dq, dk and dv permuted back to
 * [N, L, H, D] and stacked along dim 2 → [N, L, 3, H, D], contiguous.
 */
export function attentionBackwardPackedComposite(
  be: ComputeBackend,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  dOut: NDArray,
  scale: number,
): NDArray {
  const grads = be.attentionBackward(q, k, v, dOut, scale);
  try {
    return be.stack(
      grads.map((d) => be.permute(d, [0, 2, 1, 3])),
      2,
    );
  } finally {
    for (const d of grads) be.free(d);
  }
}
