/**
 * binaryScalarKernel on webgpu: a number operand of a float32 binary op is a kernel parameter, not a filled
 * 0-d array. Every binary op that takes float32, the number on either side, special values on both sides,
 * contiguous (four-wide kernel) and strided views (per-element kernel): the results are the same bits as the
 * same op with the number as a 0-d array (the path every backend without the hook takes), and one kernel
 * is dispatched instead of two.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { BINARY_OP_DEFS, BINARY_OPS, type BinaryOp, type NDArray } from '@polyhal/hal';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';

const X = [-Infinity, -3.5, -1, -0, 0, 0.5, 1, 2, 7.25, Infinity, Number.NaN, 1e-40, -2.5, 3, 100, -100];
const NUMBERS = [2, -0.5, 0, -0, Number.NaN, Infinity, -Infinity, 1e-40, 3.4e38, 0.1];
const takesFloat32 = (op: BinaryOp): boolean => {
  const takes = (BINARY_OP_DEFS[op] as { takes?: readonly string[] }).takes;
  return !takes || takes.includes('float32');
};

let be: WebGpuBackend;
beforeAll(async () => {
  be = await createWebGpuBackend();
});
afterAll(() => be.dispose());

const bits = (a: ArrayLike<number>): number[] =>
  Array.from(a instanceof Float32Array ? new Int32Array(a.buffer, a.byteOffset, a.length) : a);

describe('webgpu binary ops with a number operand', () => {
  const ops = BINARY_OPS.filter(takesFloat32);
  test.each(ops)('%s: the bits of the 0-d array path, the number first or second', async (op) => {
    const x = be.fromArray(X, [16]);
    const strided = be.permute(be.reshape(x, [4, 4]), [1, 0]); // a view: the per-element kernel
    try {
      for (const v of NUMBERS) {
        const s = be.full([], v);
        for (const input of [x, strided] as NDArray[]) {
          for (const first of [false, true]) {
            const before = be.kernelStats().dispatches;
            const got = first ? be.binary(op, v, input) : be.binary(op, input, v);
            expect(be.kernelStats().dispatches - before).toBe(1);
            const want = first ? be.binary(op, s, input) : be.binary(op, input, s);
            expect(got.dtype).toBe(want.dtype);
            expect(got.shape).toEqual(want.shape);
            expect(bits(await be.read(got))).toEqual(bits(await be.read(want)));
            be.free(got);
            be.free(want);
          }
        }
        be.free(s);
      }
    } finally {
      be.free(x);
    }
  });
});
