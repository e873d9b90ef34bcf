/**
 * Scaled dot-product attention as one recorded op (PyTorch's `scaled_dot_product_attention` without a mask, a
 * FlashAttention-style fused kernel where the backend has one): the forward is the HAL's `attention`, the gradient
 * rule its `attentionBackward` (P recomputed from q and k, FlashAttention-2's backward), so a GPU step runs one
 * kernel forward and one or two backward per attention instead of a dozen composed ops and their head copies.
 * scaledDotProductAttention (attention.ts) takes this path without a mask or causal masking.
 */
import type { NDArray } from '@polyhal/hal';
import { isAutocastEnabled } from './autocast.js';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/**
 * Whether `attentionOp` applies: float32 q [..., L, d], k [..., S, d], v [..., S, dv] of one rank ≥ 2 with the
 * same leading dims (the op does not broadcast), outside autocast (whose policy runs the products in float16).
 */
export function attentionOpApplies(q: Tensor, k: Tensor, v: Tensor): boolean {
  const r = q.rank;
  const lead = q.shape.slice(0, r - 2);
  return (
    !isAutocastEnabled() &&
    r >= 2 &&
    [q, k, v].every((t) => t.dtype === 'float32' && t.rank === r && lead.every((n, i) => t.shape[i] === n))
  );
}

/**
 * softmax(q·kᵀ·scale)·v as one op: q [..., L, d], k [..., S, d], v [..., S, dv] float32 with the same leading
 * dims (see attentionOpApplies) → [..., L, dv]; gradients dq, dk, dv from the HAL's attentionBackward. Errors are
 * the HAL's (ShapeMismatchError, DTypeError, InvalidArgumentError for a scale that is not finite).
 */
export function attentionOp(q: Tensor, k: Tensor, v: Tensor, scale: number): Tensor {
  return record(
    'attention',
    [q, k, v],
    (be, [a, b, c]) => be.attention(a!, b!, c!, scale),
    (be, g, xs, _out, needs) => {
      const grads: (NDArray | null)[] = be.attentionBackward(xs[0]!, xs[1]!, xs[2]!, g, scale);
      return grads.map((gi, i) => {
        if (needs[i]) return gi;
        be.free(gi!);
        return null;
      });
    },
  );
}
