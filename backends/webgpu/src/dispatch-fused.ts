/**
 * fusedElementwiseKernel: a chain of elementwise steps on float32 in one generated kernel
 * (kernels/fused-elementwise.ts), four elements per invocation where x and every array operand allow, else one;
 * the binary steps' numbers are params after the dims, so one pipeline serves every chain of the same ops, and
 * the array operands are bound as storage buffers of their own. A chain of more array operands than a kernel
 * binds (MAX_FUSED_ARRAYS, within WebGPU's default of 8 storage buffers per stage) runs as several kernels,
 * through scratch buffers.
 */
import type { DeviceBuffer, ElementwiseStep, NDArray } from '@polyhal/hal';
import { contiguousStrides } from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import { describeChain, type ElementwiseContext } from './dispatch-elementwise.js';
import { flat, stridedParams } from './kernel-params.js';
import { vec4Key, vec4Plan } from './kernels/elementwise-vec4.js';
import { fusedHead, fusedKey, fusedVec4Wgsl, fusedWgsl } from './kernels/fused-elementwise.js';
import { floatBits } from './layout.js';

/** Array operands one kernel binds (with x and out: 8 storage buffers, WebGPU's default per stage). */
export const MAX_FUSED_ARRAYS = 6;

/** Scratch float32 buffers for a chain split into several kernels. */
export interface FusedScratch {
  allocate(size: number): DeviceBuffer;
  free(buffer: DeviceBuffer): void;
}

export function dispatchFused(
  ctx: ElementwiseContext,
  x: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
  scratch?: FusedScratch,
): void {
  if (out.size === 0) return;
  const parts = splitChain(steps);
  if (parts.length === 1 || !scratch) {
    if (parts.length > 1) throw new Error('dispatchFused: a chain of this many arrays needs scratch buffers');
    dispatchChain(ctx, x, steps, out);
    return;
  }
  let cur = x;
  let held: DeviceBuffer | null = null;
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    const dst = last ? out : scratch.allocate(out.size);
    dispatchChain(ctx, cur, part, dst);
    if (held) scratch.free(held);
    held = last ? null : dst;
    cur = { buffer: dst, shape: x.shape, strides: contiguousStrides(x.shape), offset: 0, dtype: 'float32' };
  });
}

/** The chain in parts of at most MAX_FUSED_ARRAYS array operands each. */
function splitChain(steps: readonly ElementwiseStep[]): ElementwiseStep[][] {
  const parts: ElementwiseStep[][] = [[]];
  let k = 0;
  for (const s of steps) {
    if ('array' in s && ++k > MAX_FUSED_ARRAYS) {
      parts.push([]);
      k = 1;
    }
    parts[parts.length - 1]!.push(s);
  }
  return parts;
}

/** One kernel: x and the chain's arrays (views of x's shape) into out. */
function dispatchChain(
  ctx: ElementwiseContext,
  x: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
): void {
  const n = out.size;
  const arrays = steps.flatMap((s) => ('array' in s ? [s.array] : []));
  const operands = [x, ...arrays];
  const k = arrays.length;
  const key = fusedKey(steps);
  const head = new Array<number>(fusedHead(k)).fill(0);
  head[0] = n;
  operands.forEach((o, j) => {
    head[2 + j] = o.offset;
  });
  const tail = steps.flatMap((s) => ('scalar' in s ? [floatBits(s.scalar)] : []));
  const buffers = [...operands.map((o) => ctx.gpu(o.buffer)), ctx.gpu(out)];
  const v = vec4Plan(x.shape, operands, ['float32']);
  if (v) {
    const params = [...head, ...v.words, ...tail];
    const source = (): string => fusedVec4Wgsl(steps, v);
    ctx.batch.dispatch(
      'fusedElementwise',
      `fused4/${key}/${vec4Key(v)}`,
      source,
      params.length,
      params,
      buffers,
      flat(n / 4),
    );
    describeChain(ctx, x, steps, out);
    return;
  }
  const contig = operands.every((o) => isContiguous(o));
  const { R, words } = stridedParams(x.shape, operands);
  const params = [...head, ...words, ...tail];
  const source = (): string => fusedWgsl(steps, contig, R);
  ctx.batch.dispatch(
    'fusedElementwise',
    `fused/${key}/${contig}/${R}`,
    source,
    params.length,
    params,
    buffers,
    flat(n),
  );
  describeChain(ctx, x, steps, out);
}
