/**
 * The index dispatches of the WebGPU backend beyond gather: scatter in stages over a per-position chain of
 * its updates (kernels/scatter.ts), the optional hooks oneHotKernel and tuplePositionsKernel
 * (kernels/index-nd.ts), and quantizeKernel (kernels/quantize.ts). Operands come as
 * hal/src/families/indexing/indexing.ts shapes them (float16 already widened).
 */
import { contiguousStrides, type DeviceBuffer, type NDArray, type ScatterReduction, sizeOf } from '@polyhal/hal';
import type { SelectContext } from './dispatch-select.js';
import { ONE_HOT_WORDS, oneHotWgsl, positionsWgsl, positionsWords } from './kernels/index-nd.js';
import { QUANTIZE_WORDS, quantizeWgsl } from './kernels/quantize.js';
import { SCATTER_WORDS, type ScatterStage, scatterWgsl } from './kernels/scatter.js';
import { flat } from './kernel-params.js';

/** target [O, D, I], indices [K], updates [O, K, I] → out [O, D, I]: updates applied in index order. */
export function dispatchScatter(
  ctx: SelectContext,
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  out: DeviceBuffer,
  reduction: ScatterReduction,
): void {
  const [, dim, n] = target.shape as [number, number, number];
  const K = indices.shape[0]!;
  const params = [out.size, K, n, dim, target.offset, ...target.strides];
  params.push(indices.offset, indices.strides[0]!, updates.offset, ...updates.strides);
  const chained = reduction !== 'none';
  const head = ctx.allocate(dim, 'int32');
  const next = chained ? ctx.allocate(Math.max(K, 1), 'int32') : null;
  try {
    const run = (stage: ScatterStage, buffers: GPUBuffer[], count: number): void => {
      const key = `scatter/${stage}/${stage === 'apply' ? target.dtype : ''}/${stage === 'sort' ? '' : reduction}`;
      const source = () => scatterWgsl(stage, target.dtype, reduction);
      ctx.batch.dispatch('scatter', key, source, SCATTER_WORDS, params, buffers, flat(count));
    };
    const [h, ix] = [ctx.gpu(head), ctx.gpu(indices.buffer)];
    const nx = next ? [ctx.gpu(next)] : [];
    run('init', [h], dim);
    if (K > 0) run('link', [ix, h, ...nx], K);
    if (chained && K > 1) run('sort', [h, ...nx], dim);
    run('apply', [ctx.gpu(target.buffer), ctx.gpu(updates.buffer), h, ...nx, ctx.gpu(out)], out.size);
  } finally {
    ctx.deallocate(head);
    if (next) ctx.deallocate(next);
  }
}

/** indices [N] int32 → out [N, depth] float32, one invocation per output element. */
export function dispatchOneHot(ctx: SelectContext, indices: NDArray, depth: number, out: DeviceBuffer): void {
  const params = [out.size, depth, indices.offset, indices.strides[0]!];
  const buffers = [ctx.gpu(indices.buffer), ctx.gpu(out)];
  ctx.batch.dispatch('oneHot', 'oneHot', oneHotWgsl, ONE_HOT_WORDS, params, buffers, flat(out.size));
}

/** Index tuples [L, q] into dims Q of `batch` batches → flat int32 positions [L] (hooks.ts contract). */
export function dispatchTuplePositions(
  ctx: SelectContext,
  indices: NDArray,
  dims: readonly number[],
  batch: number,
  out: DeviceBuffer,
): void {
  const [L, q] = indices.shape as [number, number];
  const strides = contiguousStrides(dims);
  const inner = sizeOf(dims);
  const params = [L, q, indices.offset, ...indices.strides, L / batch, inner, batch * inner, ...dims, ...strides];
  const buffers = [ctx.gpu(indices.buffer), ctx.gpu(out)];
  const source = () => positionsWgsl(q);
  ctx.batch.dispatch('tuplePositions', `positions/${q}`, source, positionsWords(q), params, buffers, flat(L));
}

/** Per-tensor quantizeLinear: x [n] float32 → out [n] int8/uint8 (hooks.ts contract), one invocation each. */
export function dispatchQuantize(
  ctx: SelectContext,
  x: NDArray,
  scale: NDArray,
  zeroPoint: NDArray | null,
  out: DeviceBuffer,
): void {
  const [lo, hi] = out.dtype === 'int8' ? [-128, 127] : [0, 255];
  const params = [out.size, x.offset, x.strides[0]!, scale.offset, zeroPoint ? zeroPoint.offset : -1, lo, hi];
  const z = zeroPoint ? zeroPoint.buffer : scale.buffer; // an unread stand-in when there is no zero point
  const buffers = [ctx.gpu(x.buffer), ctx.gpu(scale.buffer), ctx.gpu(z), ctx.gpu(out)];
  ctx.batch.dispatch('quantizeLinear', 'quantize', quantizeWgsl, QUANTIZE_WORDS, params, buffers, flat(out.size));
}
