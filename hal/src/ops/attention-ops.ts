/**
 * Table entries of fused scaled-dot-product attention (hal/src/families/composite/attention.ts): attention and its
 * backward pass, after PyTorch's `scaled_dot_product_attention` without a mask and FlashAttention-2's backward
 * (Dao 2023). They join ARRAY_OP_DEFS (array-ops.ts) as composites: every backend inherits them; a backend may run
 * them as fused kernels (the attentionKernel and attentionBackwardKernel hooks).
 *
 * Error: the scores s = q·k·scale carry a dot product's rounding, relative to A = max_j Σ_d |q_d·k_jd|·|scale|
 * (the row's absolute score scale), and exp turns an error δ in a score into a relative error δ in its
 * probability; the oracle's error scale of each output element is therefore its absolute sum (Σ_j P·|v| for the
 * forward, the same over |dS| terms for the backward) times (1 + A). The float32 bound is then about twice a
 * product's (matmul: 4e-6, once in the scores and once after) plus softmax's (2e-6): 1e-5 relative, 1e-6 absolute.
 */
import type { ArrayOpDef } from './types.js';

const F32 = ['float32'] as const;

const ERRORS =
  'DTypeError unless every operand is float32; ShapeMismatchError unless q is [..., L, d], k [..., S, d], ' +
  'v [..., S, dv] (dOut [..., L, dv]) with the same leading dims (no broadcast) and rank ≥ 2; ' +
  'InvalidArgumentError for a scale that is not a finite number';

const ACCURACY = {
  float32: { abs: 1e-6, rel: 1e-5 },
  wgsl: { accuracy: { abs: 2e-6, rel: 3e-5 }, why: 'WGSL: exp (3 + 2·|x| ulp) and division (2.5 ulp)' },
} as const;

export const ATTENTION_OP_DEFS = {
  attention: {
    kind: 'composite',
    signature: 'attention(q: [..., L, d], k: [..., S, d], v: [..., S, dv], scale) → [..., L, dv]',
    semantics:
      'softmax(q·kᵀ·scale)·v over the last axis (PyTorch scaled_dot_product_attention without a mask, ' +
      'FlashAttention’s forward): any strides (the heads may arrive as permuted views); softmax subtracts each ' +
      'row’s largest score, so large scores do not overflow; a NaN in a row makes its output NaN; S = 0 gives ' +
      'zeros (an empty sum). A fused kernel’s result over two leading dims [N, H] is the [N, H, L, dv] view of ' +
      '[N, L, H, dv] in memory (as PyTorch’s flash attention returns it), so that merging the heads is a view; ' +
      `otherwise contiguous. ${ERRORS}.`,
    dtypes: F32,
    accuracy: ACCURACY,
    grad: 'autograd attention-op.ts (attentionBackward)',
    composition: 'matmul (q·kᵀ), mul by scale, softmax, matmul (·v)',
  },
  attentionBackward: {
    kind: 'composite',
    signature: 'attentionBackward(q, k, v, dOut: [..., L, dv], scale) → [dq: q.shape, dk: k.shape, dv: v.shape]',
    semantics:
      'The gradients of attention for an upstream gradient dOut, recomputing P = softmax(q·kᵀ·scale) ' +
      '(FlashAttention-2’s backward): dv = Pᵀ·dOut, dP = dOut·vᵀ, D = rowsum(dP ∘ P), dS = P ∘ (dP − D), ' +
      `dq = dS·k·scale, dk = dSᵀ·q·scale; the outputs are contiguous. ${ERRORS}.`,
    dtypes: F32,
    accuracy: ACCURACY,
    grad: null,
    composition: 'matmul, mul, softmax (P); matmul (dv, dP), mul, sum, sub, mul, mul (dS); matmul (dq, dk)',
  },
  attentionBackwardPacked: {
    kind: 'composite',
    signature: 'attentionBackwardPacked(qkv: [N, L, 3, H, D], dOut: [N, H, L, D], scale) → [N, L, 3, H, D]',
    semantics:
      'attentionBackward of q, k and v the slices 0, 1, 2 of qkv along dim 2 read as [N, H, L, D] views ' +
      '(multi-head attention’s packed in-projection), the gradients stacked in qkv’s layout, contiguous ' +
      '(flash-attn’s qkvpacked backward): element (n, l, i, h, c) is dq, dk or dv (i = 0, 1, 2) at (n, h, l, c). ' +
      'DTypeError unless qkv and dOut are float32; ShapeMismatchError unless qkv is [N, L, 3, H, D] and dOut ' +
      '[N, H, L, D]; InvalidArgumentError for a scale that is not a finite number.',
    dtypes: F32,
    accuracy: ACCURACY,
    grad: null,
    composition: 'attentionBackward of the three views, stack of the permuted gradients along dim 2',
  },
} as const satisfies Record<string, ArrayOpDef>;
