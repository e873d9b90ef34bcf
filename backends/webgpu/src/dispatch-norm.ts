/**
 * The layer-norm hooks of the WebGPU backend (hal/src/families/norm/norm.ts calls them on [rows, D] views): the
 * forward kernel (kernels/layer-norm.ts), and the backward's dx and parameter kernels
 * (kernels/layer-norm-backward.ts, kernels/layer-norm-params.ts). The forward and the backward's dx: a workgroup
 * per row on hardware adapters (kernels/layer-norm-rows.ts, kernels/layer-norm-backward-rows.ts), an invocation
 * per row on software ones; the parameter sums: an invocation per column and chunk of rows, then per column over
 * the chunks, 64 to a workgroup.
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import type { CommandBatch } from './encoder.js';
import type { BufferPool } from './pool.js';
import { LAYER_NORM_BACKWARD_WORDS, layerNormBackwardWgsl } from './kernels/layer-norm-backward.js';
import { layerNormBackwardRowsFusedWgsl, layerNormBackwardRowsWgsl } from './kernels/layer-norm-backward-rows.js';
import { LAYER_NORM_WORDS, layerNormWgsl, NORM_THREADS } from './kernels/layer-norm.js';
import { layerNormRowsWgsl } from './kernels/layer-norm-rows.js';
import {
  LAYER_NORM_FUSED_WORDS,
  LAYER_NORM_PARAMS_SUM_WORDS,
  layerNormBackwardFusedWgsl,
  layerNormParamsChunk,
  layerNormParamsSumWgsl,
} from './kernels/layer-norm-params.js';
import { floatBits, grid } from './layout.js';

/** What the layer-norm dispatches need of the backend. */
export interface NormContext {
  readonly batch: CommandBatch;
  /** The GPU buffer of a HAL buffer. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
  /** A small buffer bound where an optional operand is absent. */
  readonly dummy: GPUBuffer;
  /** Storage buffers (the parameter gradients' partial sums come from it). */
  readonly pool: BufferPool;
  /**
   * The forward and the backward's dx run a workgroup per row (layer-norm-rows.ts, layer-norm-backward-rows.ts:
   * hardware adapters), else an invocation per row.
   */
  readonly rowPerWorkgroup: boolean;
  /** The row-per-workgroup kernels add their row sums through subgroup operations (kernels/workgroup-sum.ts). */
  readonly subgroups: boolean;
}

const groups = (n: number): [number, number, number] => [...grid(Math.ceil(n / NORM_THREADS)), 1];

export function dispatchLayerNorm(
  ctx: NormContext,
  x: NDArray,
  weight: NDArray | null,
  bias: NDArray | null,
  eps: number,
  y: DeviceBuffer,
  mean: DeviceBuffer,
  rstd: DeviceBuffer,
): void {
  const [rows, D] = x.shape as [number, number];
  const params = [rows, D, floatBits(eps), (weight ? 1 : 0) | (bias ? 2 : 0), x.offset, ...x.strides];
  params.push(weight?.offset ?? 0, weight?.strides[0] ?? 0, bias?.offset ?? 0, bias?.strides[0] ?? 0);
  const opt = (a: NDArray | null): GPUBuffer => (a ? ctx.gpu(a.buffer) : ctx.dummy);
  const buffers = [ctx.gpu(x.buffer), opt(weight), opt(bias), ctx.gpu(y), ctx.gpu(mean), ctx.gpu(rstd)];
  if (ctx.rowPerWorkgroup) {
    const g = grid(rows);
    const [key, sg] = ctx.subgroups ? ['layerNorm/rows/subgroups', true] : ['layerNorm/rows', false];
    ctx.batch.dispatch('layerNorm', key, () => layerNormRowsWgsl(sg), LAYER_NORM_WORDS, params, buffers, [...g, 1]);
  } else
    ctx.batch.dispatch('layerNorm', 'layerNorm', () => layerNormWgsl, LAYER_NORM_WORDS, params, buffers, groups(rows));
}

export function dispatchLayerNormBackward(
  ctx: NormContext,
  g: NDArray,
  x: NDArray,
  mean: NDArray,
  rstd: NDArray,
  weight: NDArray | null,
  dx: DeviceBuffer,
  dweight: DeviceBuffer | null,
  dbias: DeviceBuffer | null,
): void {
  const [rows, D] = x.shape as [number, number];
  const params = [rows, D, weight ? 1 : 0, 0, g.offset, ...g.strides, x.offset, ...x.strides];
  params.push(
    mean.offset,
    mean.strides[0]!,
    rstd.offset,
    rstd.strides[0]!,
    weight?.offset ?? 0,
    weight?.strides[0] ?? 0,
  );
  const inputs = [g, x, mean, rstd].map((a) => ctx.gpu(a.buffer));
  inputs.push(weight ? ctx.gpu(weight.buffer) : ctx.dummy);
  const op = 'layerNormBackward';
  const perRow = ctx.rowPerWorkgroup;
  const sg = perRow && ctx.subgroups;
  const tag = perRow ? `-rows${sg ? '/subgroups' : ''}` : '';
  if (!dweight || !dbias) {
    ctx.batch.dispatch(
      op,
      `layerNormBackward/dx${tag}`,
      perRow ? () => layerNormBackwardRowsWgsl(sg) : () => layerNormBackwardWgsl,
      LAYER_NORM_BACKWARD_WORDS,
      params,
      [...inputs, ctx.gpu(dx)],
      perRow ? [...grid(rows), 1] : groups(rows),
    );
    return;
  }
  // dx and the parameters' sums in one dispatch: dx's workgroups first, then the sums' (layer-norm-params.ts)
  const fused = (partial: boolean): string =>
    perRow ? layerNormBackwardRowsFusedWgsl(partial, sg) : layerNormBackwardFusedWgsl(partial);
  const dxGroups = perRow ? rows : Math.ceil(rows / NORM_THREADS);
  const columnGroups = Math.ceil(D / NORM_THREADS);
  const chunk = layerNormParamsChunk(rows, D);
  const fusedGrid = (sums: number): [number, number, number] => {
    const [x, y] = grid(dxGroups + sums);
    return [x, y, 1];
  };
  if (chunk === 0) {
    ctx.batch.dispatch(
      op,
      `layerNormBackward/dx-params${tag}`,
      () => fused(false),
      LAYER_NORM_FUSED_WORDS,
      [...params, dxGroups, columnGroups],
      [...inputs, ctx.gpu(dx), ctx.gpu(dweight), ctx.gpu(dbias)],
      fusedGrid(columnGroups),
    );
    return;
  }
  const chunks = Math.ceil(rows / chunk);
  params[3] = chunk;
  const partialBytes = 2 * chunks * D * 4;
  const partial = ctx.pool.acquire(partialBytes);
  const scratch = ctx.batch.scratchKey();
  ctx.batch.keys.set(partial, scratch);
  try {
    ctx.batch.dispatch(
      op,
      `layerNormBackward/dx-params-partial${tag}`,
      () => fused(true),
      LAYER_NORM_FUSED_WORDS,
      [...params, dxGroups, columnGroups],
      [...inputs, ctx.gpu(dx), partial],
      fusedGrid(columnGroups * chunks),
    );
    ctx.batch.dispatch(
      op,
      'layerNormBackward/params-sum',
      () => layerNormParamsSumWgsl,
      LAYER_NORM_PARAMS_SUM_WORDS,
      [D, chunks],
      [partial, ctx.gpu(dweight), ctx.gpu(dbias)],
      groups(D),
    );
  } finally {
    // later commands run after these in queue order, so the buffer may be handed out again at once
    ctx.batch.keys.delete(partial);
    ctx.batch.tracker.forget(scratch);
    ctx.pool.release(partial, partialBytes);
  }
}
