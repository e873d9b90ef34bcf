/**
 * The selection hooks of the WebGPU backend: argReduceKernel and topkKernel on x [O, n, I]
 * (kernels/select.ts). One invocation per row; when the rows are fewer than a workgroup and long, each
 * is cut into chunks (at least 256 positions, and at least k) scanned by a first pass, and a second pass
 * picks from the chunks' candidates.
 */
import type { DeviceBuffer, DType, NDArray } from '@polyhal/hal';
import type { CommandBatch } from './encoder.js';
import { argReduceWgsl, SELECT_WORDS, topkWgsl } from './kernels/select.js';
import { flat } from './kernel-params.js';

/** What the selection dispatches need of the backend. */
export interface SelectContext {
  readonly batch: CommandBatch;
  gpu(buffer: DeviceBuffer): GPUBuffer;
  allocate(size: number, dtype: DType): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
}

/** topk's largest k served by the kernel (a sorted buffer of k per row); beyond it the composite runs. */
export const TOPK_KERNEL_MAX_K = 64;
/** Rows below which long rows are cut into chunks (one workgroup's invocations). */
const FEW_ROWS = 256;
const MIN_CHUNK = 256;

/** Chunks per row: enough rows to fill a workgroup, each chunk at least max(MIN_CHUNK, k) long. */
function chunksOf(rows: number, n: number, k: number): number {
  if (rows >= FEW_ROWS) return 1;
  return Math.max(1, Math.min(Math.ceil(FEW_ROWS / rows), Math.floor(n / Math.max(MIN_CHUNK, k))));
}

export function dispatchArgReduce(
  ctx: SelectContext,
  op: 'argmax' | 'argmin',
  x: NDArray,
  lastIndex: boolean,
  out: DeviceBuffer,
): void {
  const [O, n, I] = x.shape as [number, number, number];
  const rows = O * I;
  if (rows === 0) return;
  const float = x.dtype === 'float32';
  const C = chunksOf(rows, n, 1);
  const chunk = Math.ceil(n / C);
  const params = (count: number) => [count, chunk, I, x.offset, ...x.strides, C, n];
  const key = (indirect: boolean) => `argreduce/${op}/${float}/${lastIndex}/${indirect}`;
  const xb = ctx.gpu(x.buffer);
  if (C === 1) {
    const source = () => argReduceWgsl(op, float, lastIndex, false);
    ctx.batch.dispatch(op, key(false), source, SELECT_WORDS, params(rows), [xb, ctx.gpu(out)], flat(rows));
    return;
  }
  const cand = ctx.allocate(rows * C, 'int32');
  try {
    const first = () => argReduceWgsl(op, float, lastIndex, false);
    const firstBuffers = [xb, ctx.gpu(cand)];
    ctx.batch.dispatch(op, key(false), first, SELECT_WORDS, params(rows * C), firstBuffers, flat(rows * C));
    const second = () => argReduceWgsl(op, float, lastIndex, true);
    const buffers = [xb, ctx.gpu(cand), ctx.gpu(out)];
    ctx.batch.dispatch(op, key(true), second, SELECT_WORDS, params(rows), buffers, flat(rows));
  } finally {
    ctx.deallocate(cand);
  }
}

/** false (declined) for k above TOPK_KERNEL_MAX_K. */
export function dispatchTopk(
  ctx: SelectContext,
  x: NDArray,
  k: number,
  largest: boolean,
  values: DeviceBuffer,
  indices: DeviceBuffer,
): boolean {
  if (k > TOPK_KERNEL_MAX_K) return false;
  const [O, n, I] = x.shape as [number, number, number];
  const rows = O * I;
  if (rows === 0 || k === 0) return true;
  const float = x.dtype === 'float32';
  const C = chunksOf(rows, n, k);
  const chunk = Math.ceil(n / C);
  const params = (count: number) => [count, chunk, I, x.offset, ...x.strides, C, n, k];
  const key = (indirect: boolean) => `topk/${float}/${largest}/${indirect}`;
  const xb = ctx.gpu(x.buffer);
  const outs = [ctx.gpu(values), ctx.gpu(indices)];
  if (C === 1) {
    const source = () => topkWgsl(float, largest, false);
    ctx.batch.dispatch('topk', key(false), source, SELECT_WORDS, params(rows), [xb, ...outs], flat(rows));
    return true;
  }
  const cv = ctx.allocate(rows * C * k, x.dtype);
  try {
    const ci = ctx.allocate(rows * C * k, 'int32');
    try {
      const first = () => topkWgsl(float, largest, false);
      const firstBuffers = [xb, ctx.gpu(cv), ctx.gpu(ci)];
      ctx.batch.dispatch('topk', key(false), first, SELECT_WORDS, params(rows * C), firstBuffers, flat(rows * C));
      const second = () => topkWgsl(float, largest, true);
      const buffers = [ctx.gpu(cv), ctx.gpu(ci), ...outs];
      ctx.batch.dispatch('topk', key(true), second, SELECT_WORDS, params(rows), buffers, flat(rows));
    } finally {
      ctx.deallocate(ci);
    }
  } finally {
    ctx.deallocate(cv);
  }
  return true;
}
