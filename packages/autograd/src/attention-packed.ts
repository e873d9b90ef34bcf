/**
 * Self-attention on packed projections as one recorded op: MultiHeadAttention's in-projection x·Wᵀ + b [N, L, 3E]
 * viewed by head as qkv [N, L, 3, H, D] goes in whole, q, k and v are its three slices along dim 2 read as strided
 * views (no copy) by the HAL's `attention`, and the gradient rule — the HAL's attentionBackwardPacked — returns dq,
 * dk and dv in qkv's layout: one gradient array for the in-projection (on webgpu written there by the backward's
 * own kernel; elsewhere attentionBackward and a stack). Taken as three views of qkv, q, k and v would each pad its
 * gradient to qkv's shape and the three would be summed (eight kernels); PyTorch's MultiheadAttention fast path
 * (_native_multi_head_attention) likewise takes the packed projection.
 */
import { packedHeads } from '@polyhal/hal/internal';
import { isAutocastEnabled } from './autocast.js';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** Whether packedSelfAttention applies to `qkv`: float32, outside autocast (whose policy runs products in float16). */
export function packedSelfAttentionApplies(qkv: Tensor): boolean {
  return qkv.dtype === 'float32' && !isAutocastEnabled();
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
      const [q, k, v] = packedHeads(be, x!);
      return be.attention(q, k, v, scale);
    },
    (be, g, [x]) => [be.attentionBackwardPacked(x!, g, scale)],
  );
}
