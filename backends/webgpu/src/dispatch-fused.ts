/**
 * fusedElementwiseKernel: a chain of elementwise steps on float32 in one generated kernel
 * (kernels/fused-elementwise.ts), four elements per invocation where the view allows, else one; the binary
 * steps' numbers are params, so one pipeline serves every chain of the same ops.
 */
import type { DeviceBuffer, ElementwiseStep, NDArray } from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import type { ElementwiseContext } from './dispatch-elementwise.js';
import { flat, stridedParams } from './kernel-params.js';
import { elementwiseWords } from './kernels/elementwise.js';
import { vec4Key, vec4Plan } from './kernels/elementwise-vec4.js';
import { fusedKey, fusedVec4Wgsl, fusedWgsl, fusedWords } from './kernels/fused-elementwise.js';
import { floatBits } from './layout.js';

/** The unary kernels' params (n, 0, offset, 0, shape and strides, padded to elementwiseWords), then the numbers. */
function params(n: number, offset: number, dims: number[], R: number, scalars: number[]): number[] {
  const head = [n, 0, offset, 0, ...dims];
  while (head.length < elementwiseWords(R)) head.push(0);
  return [...head, ...scalars];
}

export function dispatchFused(
  ctx: ElementwiseContext,
  x: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
): void {
  const n = out.size;
  if (n === 0) return;
  const scalars = steps.flatMap((s) => ('scalar' in s ? [floatBits(s.scalar)] : []));
  const key = fusedKey(steps);
  const v = vec4Plan(x.shape, [x], ['float32']);
  if (v) {
    ctx.batch.dispatch(
      'fusedElementwise',
      `fused4/${key}/${vec4Key(v)}`,
      () => fusedVec4Wgsl(steps, v),
      fusedWords(steps, v.R),
      params(n, x.offset, v.words, v.R, scalars),
      [ctx.gpu(x.buffer), ctx.gpu(out)],
      flat(n / 4),
    );
    return;
  }
  const contig = isContiguous(x);
  const { R, words } = stridedParams(x.shape, [x]);
  ctx.batch.dispatch(
    'fusedElementwise',
    `fused/${key}/${contig}/${R}`,
    () => fusedWgsl(steps, contig, R),
    fusedWords(steps, R),
    params(n, x.offset, words, R, scalars),
    [ctx.gpu(x.buffer), ctx.gpu(out)],
    flat(n),
  );
}
