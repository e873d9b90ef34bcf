/**
 * Self-attention on packed projections as one recorded op: MultiHeadAttention's in-projection x·Wᵀ + b [N, L, 3E]
 * viewed by head as qkv [N, L, 3, H, D] goes in whole, q, k and v are its three slices along dim 2 read as strided
 * views (no copy) by the HAL's `attention`, and the gradient rule — the HAL's attentionBackward — stacks dq, dk
 * and dv back into qkv's layout: one gradient array for the in-projection (three copies). Taken as three views
 * of qkv, q, k and v would each pad its gradient to qkv's shape and the three would be summed (eight kernels);
 * PyTorch's MultiheadAttention fast path (_native_multi_head_attention) likewise takes the packed projection.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { isAutocastEnabled } from './autocast.js';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** Whether packedSelfAttention applies to `qkv`: float32, outside autocast (whose policy runs products in float16). */
export function packedSelfAttentionApplies(qkv: Tensor): boolean {
  return qkv.dtype === 'float32' && !isAutocastEnabled();
}

/** q, k and v [N, H, L, D] as views of qkv [N, L, 3, H, D] (its buffer, no copy). */
function heads(be: ComputeBackend, qkv: NDArray): NDArray[] {
  const [N, L, , H, D] = qkv.shape as [number, number, number, number, number];
  return [0, 1, 2].map((i) => {
    const part = be.shrink(qkv, [
      [0, N],
      [0, L],
      [i, i + 1],
      [0, H],
      [0, D],
    ]);
    return be.permute(be.reshape(part, [N, L, H, D]), [0, 2, 1, 3]); // dropping a size-1 dim: a view
  });
}

/**
 * softmax(q·kᵀ·scale)·v per head, q, k and v the slices 0, 1 and 2 of qkv [N, L, 3, H, D] float32 along dim 2 →
 * [N, H, L, D]; gradient [N, L, 3, H, D] (dq, dk and dv stacked). Errors are the HAL's (ShapeMismatchError,
 * DTypeError, InvalidArgumentError for a scale that is not finite).
 */
export function packedSelfAttention(qkv: Tensor, scale: number): Tensor {
  return record(
    'attention',
    [qkv],
    (be, [x]) => {
      const [q, k, v] = heads(be, x!) as [NDArray, NDArray, NDArray];
      return be.attention(q, k, v, scale);
    },
    (be, g, [x]) => {
      const [q, k, v] = heads(be, x!) as [NDArray, NDArray, NDArray];
      const grads = be.attentionBackward(q, k, v, g, scale);
      try {
        return [
          be.stack(
            grads.map((d) => be.permute(d, [0, 2, 1, 3])),
            2,
          ),
        ];
      } finally {
        for (const d of grads) be.free(d);
      }
    },
  );
}
