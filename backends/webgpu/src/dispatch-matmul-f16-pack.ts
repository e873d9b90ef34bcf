/**
 * The operands of the float16 tensor-core product (dispatch-matmul-f16.ts): whether one is read where it is, and
 * its packed copy where not.
 */
import type { NDArray } from '@polyhal/hal';
import type { HalfMatmulContext } from './dispatch-matmul-f16.js';
import { flat } from './kernel-params.js';
import { PACK_HALF_WORDS, packHalfWgsl } from './kernels/matmul-subgroup-matrix-f16.js';
import { PACK_BLOCK, packHalfTransposedWgsl } from './kernels/pack-f16-transposed.js';

/**
 * Whether a [.., R, C] operand is read by the product as it is: rows contiguous, R and C multiples of the padding,
 * its offset and item strides multiples of 8 halves (the kernel's vec4 loads).
 */
export function readsDirect(
  x: NDArray,
  R: number,
  C: number,
  Rp: number,
  Cp: number,
  offsets: readonly number[],
): boolean {
  const r = x.shape.length;
  const rows = R === 1 || x.strides[r - 2] === C;
  return R === Rp && C === Cp && x.strides[r - 1] === 1 && rows && offsets.every((o) => o % 8 === 0);
}

/**
 * Encodes the pack of operand x [.., R, C] into `dst`, row-major [Rp, Cp] per copy (`copies` over the grid's z:
 * copy z from element offset + (z / items)·outer + (z % items)·inner, given as [offset, inner, items, outer]):
 * through 64×64 blocks in workgroup memory where its rows are its stride-1 dim (a transposed view:
 * kernels/pack-f16-transposed.ts), else one invocation per word.
 */
export function packOperand(
  ctx: HalfMatmulContext,
  x: NDArray,
  [off, inner, items, outer]: [number, number, number, number],
  copies: number,
  dst: GPUBuffer,
  [R, C, Rp, Cp]: [number, number, number, number],
): void {
  const s = x.shape.length;
  const params = [R, C, off, x.strides[s - 2]!, x.strides[s - 1]!, Cp, Rp, inner, items, outer];
  if (R > 1 && C > 1 && x.strides[s - 2] === 1) {
    const blocks: [number, number, number] = [Math.ceil(Cp / PACK_BLOCK), Math.ceil(Rp / PACK_BLOCK), copies];
    const buffers = [ctx.gpu(x.buffer), dst];
    ctx.batch.dispatch('matmul', 'matmul/pack-f16-t', packHalfTransposedWgsl, PACK_HALF_WORDS, params, buffers, blocks);
    return;
  }
  const [gx, gy] = flat((Rp * Cp) / 2);
  ctx.batch.dispatch(
    'matmul',
    'matmul/pack-f16',
    packHalfWgsl,
    PACK_HALF_WORDS,
    params,
    [ctx.gpu(x.buffer), dst],
    [gx, gy, copies],
  );
}
