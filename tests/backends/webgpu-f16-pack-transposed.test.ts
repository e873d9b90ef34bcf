// The pack of a transposed float16 operand for the tensor-core product (backends/webgpu/src/kernels/
// pack-f16-transposed.ts: 64×64 blocks through workgroup memory), and the choice of it (dispatch-matmul-f16-pack.ts
// packOperand). lavapipe has no subgroup matrices, so the product does not run here; the pack is dispatched on
// float16 arrays made here and every word of its output is checked against a pack computed here from the float16
// bits (float16Bits of the same values): element (r, c) of copy z at offset + (z / items)·outer + (z % items)·inner
// + r + c·s1, zero outside [R, C], two halves to a word, low half first; words past the copies keep their bits.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type DeviceBuffer, float16Bits, type NDArray } from '@polyhal/hal';
import type { HalfMatmulContext } from '../../backends/webgpu/src/dispatch-matmul-f16.js';
import { packOperand } from '../../backends/webgpu/src/dispatch-matmul-f16-pack.js';
import { PACK_HALF_WORDS } from '../../backends/webgpu/src/kernels/matmul-subgroup-matrix-f16.js';
import { PACK_BLOCK, packHalfTransposedWgsl } from '../../backends/webgpu/src/kernels/pack-f16-transposed.js';

interface Internals {
  batch: {
    dispatch(op: string, key: string, src: () => string, words: number, p: number[], b: GPUBuffer[], g: number[]): void;
  };
  reader: { read(b: DeviceBuffer): Promise<Float32Array | Int32Array> };
  gpu(b: DeviceBuffer, half?: boolean): GPUBuffer;
}

const values = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => {
    const u = Math.sin((i + 1) * 12.9898 + seed * 78.233) * 43758.5453;
    return (u - Math.floor(u)) * 8 - 4;
  });

let be: WebGpuBackend;
let inner: Internals;
beforeAll(async () => {
  be = await createWebGpuBackend();
  inner = be as unknown as Internals;
});
afterAll(() => be?.dispose());

/** [R, C, Rp, Cp, offset, s1, copies, inner, items, outer] */
type Case = [string, number[]];
const CASES: Case[] = [
  ['one block exactly', [64, 64, 64, 64, 0, 64, 1, 0, 1, 0]],
  ['odd sizes and offset, padded to [128, 64]', [70, 45, 128, 64, 3, 71, 1, 0, 1, 0]],
  ['a weight gradient shape, K padded to 32', [96, 300, 128, 320, 0, 96, 1, 0, 1, 0]],
  ['three copies over two levels (attention-like kᵀ)', [40, 37, 64, 64, 5, 40, 6, 1480, 3, 4441]],
  ['a broadcast operand: one copy', [33, 65, 64, 96, 0, 33, 1, 0, 1, 0]],
];

describe('float16 pack of a transposed operand, 64×64 blocks', () => {
  test.each(CASES)('%s', async (_, dims) => {
    const [R, C, Rp, Cp, off, s1, copies, inn, items, outer] = dims as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    // the source: enough halves for every copy's last element
    const last = off + Math.floor((copies - 1) / items) * outer + ((copies - 1) % items) * inn + (R - 1) + (C - 1) * s1;
    const src = values(last + 1, R + C);
    const x = be.fromArray(src, [src.length], 'float16');
    const words = (copies * Rp * Cp) / 2;
    const sentinel = 0x5a5a5a5a;
    const out = be.fromArray(new Int32Array(words + 16).fill(sentinel), [words + 16], 'int32');
    inner.batch.dispatch(
      'matmul',
      'matmul/pack-f16-t',
      packHalfTransposedWgsl,
      PACK_HALF_WORDS,
      [R, C, off, 1, s1, Cp, Rp, inn, items, outer],
      [inner.gpu(x.buffer, true), inner.gpu(out.buffer)],
      [Math.ceil(Cp / PACK_BLOCK), Math.ceil(Rp / PACK_BLOCK), copies],
    );
    const got = Array.from((await be.read(out)) as Int32Array, (w) => w >>> 0);
    const want: number[] = [];
    for (let z = 0; z < copies; z++) {
      const base = off + Math.floor(z / items) * outer + (z % items) * inn;
      const h = (r: number, c: number): number => (r < R && c < C ? float16Bits(src[base + r + c * s1]!) : 0);
      for (let r = 0; r < Rp; r++) for (let c = 0; c < Cp; c += 2) want.push((h(r, c) | (h(r, c + 1) << 16)) >>> 0);
    }
    for (let i = 0; i < 16; i++) want.push(sentinel);
    expect(got).toEqual(want);
    be.free(x);
    be.free(out);
  });
});

describe('packOperand: which pack', () => {
  /** The key packOperand dispatches for x (a fake batch records it), and the params. */
  function keyOf(x: NDArray): { key: string; params: number[]; groups: number[] } {
    let seen: { key: string; params: number[]; groups: number[] } | null = null;
    const ctx = {
      batch: {
        dispatch: (
          _o: string,
          key: string,
          _s: () => string,
          _w: number,
          params: number[],
          _b: unknown,
          g: number[],
        ) => {
          seen = { key, params, groups: g };
        },
      },
      gpu: () => ({}) as GPUBuffer,
    } as unknown as HalfMatmulContext;
    const [R, C] = x.shape.slice(-2) as [number, number];
    packOperand(ctx, x, [x.offset, 0, 1, 0], 1, {} as GPUBuffer, [R, C, 128, 128]);
    return seen!;
  }
  const view = (shape: number[], strides: number[], offset = 0): NDArray =>
    ({ shape, strides, offset, dtype: 'float16', buffer: { id: 1 } }) as unknown as NDArray;
  test('a transposed view takes the blocked pack, over [Cp / 64, Rp / 64] workgroups', () => {
    const t = keyOf(view([100, 120], [1, 100], 4));
    expect(t.key).toBe('matmul/pack-f16-t');
    expect(t.groups).toEqual([2, 2, 1]);
    expect(t.params.slice(0, 7)).toEqual([100, 120, 4, 1, 100, 128, 128]);
  });
  test('rows, a strided view, one row and one column take the word pack', () => {
    expect(keyOf(view([100, 120], [120, 1])).key).toBe('matmul/pack-f16');
    expect(keyOf(view([100, 120], [240, 2])).key).toBe('matmul/pack-f16');
    expect(keyOf(view([1, 120], [1, 1])).key).toBe('matmul/pack-f16');
    expect(keyOf(view([100, 1], [1, 1])).key).toBe('matmul/pack-f16');
  });
});
