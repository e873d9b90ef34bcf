// matmul of float16 tensors in autograd, forward and backward, on every repo backend: the gradients
// (g·bᵀ, aᵀ·g — float16 matmuls — and the bias's sum) are float16 and equal the float32 gradients of the
// same values rounded to float16, within one float16 ulp plus the float32 sums' bound.
import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { type ComputeBackend, type DType, roundFloat16 } from '@polyhal/hal';
import { REPO_BACKENDS, openBackend } from '../support/backends.js';

const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => roundFloat16((((i + 1) * 2654435761 + seed * 40503) >>> 0) / 2 ** 31 - 1));
const ulp16 = (w: number): number => 2 ** Math.max(Math.floor(Math.log2(Math.abs(w) || 2 ** -24)) - 10, -24);

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`float16 matmul gradients on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => {
      be = b;
    });

    // a: [2, 7, 24] · b: [24, 6] (+ bias [6]); b given as is or as the transpose of a [6, 24] weight
    // (a Linear layer's weightᵀ: autograd's (gᵀ·a)ᵀ path); loss Σ (a·b + bias) ⊙ w.
    for (const transposed of [false, true])
      test(`${transposed ? 'transposed ' : ''}b with a bias: float16 grads = round16(float32 grads)`, async () => {
        const [da, db, dc, dw] = [values(2 * 7 * 24, 1), values(24 * 6, 2), values(6, 3), values(2 * 7 * 6, 4)];
        const run = async (dtype: DType) => {
          const t = (d: number[], s: number[], requiresGrad = true) =>
            Tensor.fromArray(be!, d, s, { dtype, requiresGrad });
          const a = t(da, [2, 7, 24]);
          const bLeaf = t(db, transposed ? [6, 24] : [24, 6]);
          const c = t(dc, [6]);
          const y = ag.matmul(a, transposed ? ag.transpose(bLeaf) : bLeaf, c);
          expect(y.dtype).toBe(dtype);
          const loss = ag.sum(ag.mul(y, t(dw, [2, 7, 6], false)));
          loss.backward();
          const out = {
            y: Array.from(await y.data()),
            ga: Array.from(await a.grad!.data()),
            gb: Array.from(await bLeaf.grad!.data()),
            gc: Array.from(await c.grad!.data()),
            dtypes: [a.grad!.dtype, bLeaf.grad!.dtype, c.grad!.dtype],
          };
          for (const x of [a, bLeaf, c, y, loss]) x.dispose();
          return out;
        };
        const h = await run('float16');
        const f = await run('float32');
        expect(h.dtypes).toEqual(['float16', 'float16', 'float16']);
        // the sums: K = 24 for y, 6 for ∂a, 14 (the batch rows) for ∂b and ∂bias; terms ≤ 1 in magnitude
        const check = (got: number[], want: number[], k: number) => {
          expect(got.length).toBe(want.length);
          for (let i = 0; i < got.length; i++) {
            const w = roundFloat16(want[i]!);
            expect([i, Math.abs(got[i]! - w) <= ulp16(w) + 2 * k * 2 ** -24 * k]).toEqual([i, true]);
          }
        };
        check(h.y, f.y, 25);
        check(h.ga, f.ga, 6);
        check(h.gb, f.gb, 14);
        check(h.gc, f.gc, 14);
      });
  });
}
