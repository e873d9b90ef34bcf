/**
 * Table entry of mixed precision's gradient unscaling (hal/src/families/composite/unscale.ts):
 * nonFiniteCheckAndUnscale, after PyTorch's `torch._amp_foreach_non_finite_check_and_unscale_`, the op behind
 * `GradScaler.unscale_`. It joins ARRAY_OP_DEFS (array-ops.ts) as an in-place optimizer op: every backend
 * inherits the composite; a backend may run it as fused kernels (the nonFiniteCheckAndUnscaleKernel hook).
 */
import type { ArrayOpDef } from './types.js';
import { ULP1 } from './types.js';

export const AMP_OP_DEFS = {
  nonFiniteCheckAndUnscale: {
    kind: 'optimizer',
    signature: 'nonFiniteCheckAndUnscale(grads: DeviceBuffer[], foundInf: DeviceBuffer [1], invScale) → in place',
    semantics:
      'Each gradient g ← g·invScale in place (invScale rounded to float32 first, each product rounded to ' +
      'float32, as mul with a number operand), and foundInf[0] ← 1 when any element of any gradient is Inf or ' +
      'NaN before or after the multiply; foundInf is otherwise left as it was (it accumulates over calls, as ' +
      'PyTorch’s found_inf). An empty list or empty gradients change nothing. Before anything is written: ' +
      'InvalidArgumentError for grads that is not an array, a buffer listed twice or that is foundInf, or an ' +
      'invScale that is not a finite number; DTypeError unless every buffer is float32; ShapeMismatchError ' +
      'unless foundInf holds one element.',
    dtypes: ['float32'],
    accuracy: { float32: ULP1 },
    grad: null,
    composition:
      'per gradient: mul by invScale, isfinite of the operand and of the product, all; logicalAnd over the ' +
      'gradients, then where(all finite, foundInf, 1) into foundInf (assign)',
  },
} as const satisfies Record<string, ArrayOpDef>;
