/**
 * fusedElementwiseKernel: a chain of elementwise steps on float32 in one generated kernel
 * (kernels/fused-elementwise.ts), four elements per invocation where the view allows, else one; the binary
 * steps' numbers are params after the dims, so one pipeline serves every chain of the same ops.
 */
import type { DeviceBuffer, ElementwiseStep, NDArray } from '@polyhal/hal';
import { dispatchOneOperand, type ElementwiseContext } from './dispatch-elementwise.js';
import { fusedKey, fusedVec4Wgsl, fusedWgsl } from './kernels/fused-elementwise.js';
import { floatBits } from './layout.js';

export function dispatchFused(
  ctx: ElementwiseContext,
  x: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
): void {
  const key = fusedKey(steps);
  dispatchOneOperand(ctx, 'fusedElementwise', x, out, {
    keys: [`fused4/${key}`, `fused/${key}`],
    dtypes: ['float32'],
    word3: 0,
    tail: steps.flatMap((s) => ('scalar' in s ? [floatBits(s.scalar)] : [])),
    vec4: (v) => fusedVec4Wgsl(steps, v),
    flat: (contig, R) => fusedWgsl(steps, contig, R),
  });
}
