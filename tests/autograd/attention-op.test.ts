// scaledDotProductAttention without a mask runs as one recorded op (packages/autograd/src/attention-op.ts: the
// HAL's attention forward, attentionBackward as its gradient) on cpu, wasm and webgpu: its gradients against
// central differences (gradCheck), and its output and gradients against the eager twin composed from autograd
// ops (the same call with an all-zero mask, which keeps the composition), with the heads as permuted views.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';
import { type Check, gradCheckTests } from './gradchecks.js';

const inp = (shape: number[], seed: number, hi = 1): ag.GradCheckInput => ({
  shape,
  values: Array.from({ length: shape.reduce((p, d) => p * d, 1) }, (_, i) => hi * Math.sin(i * 1.7 + seed * 3.1)),
});
/** [N, T, H, D] → the heads [N, H, T, D] as a view. */
const heads = (x: Tensor): Tensor => ag.permute(x, [0, 2, 1, 3]);

const CHECKS: Check[] = [
  [
    'attention op (L ≠ S, d ≠ dv)',
    ([q, k, v]) => ag.scaledDotProductAttention(q!, k!, v!),
    [inp([2, 3, 4], 1), inp([2, 5, 4], 2), inp([2, 5, 3], 3)],
  ],
  [
    'attention op (permuted heads, a scale)',
    ([q, k, v]) => ag.scaledDotProductAttention(heads(q!), heads(k!), heads(v!), { scale: 0.8 }),
    [inp([1, 4, 2, 3], 4), inp([1, 6, 2, 3], 5), inp([1, 6, 2, 3], 6)],
  ],
  [
    'attention op (one query)',
    ([q, k, v]) => ag.scaledDotProductAttention(q!, k!, v!),
    [inp([1, 4], 7), inp([3, 4], 8), inp([3, 2], 9)],
  ],
];

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`attention op on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    gradCheckTests(() => be, CHECKS);

    test('one recorded op; output and gradients match the composition from autograd ops', async () => {
      const base = be.liveBufferCount();
      await ag.scope(async () => {
        const [N, T, S, H, D] = [2, 17, 9, 4, 16]; // the main job's ViT heads (17 tokens, heads of 16), S ≠ L
        const make = (shape: number[], seed: number) => {
          const x = inp(shape, seed, 2);
          return Tensor.fromArray(be, x.values, x.shape, { requiresGrad: true });
        };
        const [q, k, v] = [make([N, T, H, D], 1), make([N, S, H, D], 2), make([N, S, H, D], 3)];
        const w = Tensor.fromArray(be, inp([N, H, T, D], 4).values, [N, H, T, D]);
        const run = async (mask?: Tensor) => {
          const out = ag.scaledDotProductAttention(heads(q), heads(k), heads(v), { mask });
          const op = out.node?.op; // read before backward drops the graph
          ag.sum(ag.mul(out, w)).backward();
          const grads = await Promise.all([q, k, v].map(async (t) => Array.from(await t.grad!.data())));
          for (const t of [q, k, v]) {
            t.grad?.dispose();
            t.grad = null;
          }
          return { op, out: Array.from(await out.data()), grads };
        };
        const fused = await run();
        const composed = await run(Tensor.fromArray(be, new Float32Array(T * S), [T, S]));
        expect(fused.op).toBe('attention');
        expect(composed.op).not.toBe('attention');
        const close = (a: number[], b: number[]): void => {
          const worst = Math.max(...a.map((x, i) => Math.abs(x - b[i]!) / (1e-5 + 1e-4 * Math.abs(b[i]!))));
          expect(worst).toBeLessThanOrEqual(1);
        };
        close(fused.out, composed.out);
        for (let i = 0; i < 3; i++) close(fused.grads[i]!, composed.grads[i]!);
        // the gradients are not all zero (the weighting reaches every input)
        for (const g of fused.grads) expect(Math.max(...g.map(Math.abs))).toBeGreaterThan(1e-3);
      });
      expect(be.liveBufferCount()).toBe(base);
    });

    test('a mask, causal or broadcast leading dims keep the composition', async () => {
      await ag.scope(async () => {
        const q = Tensor.fromArray(be, inp([2, 3, 4], 1).values, [2, 3, 4], { requiresGrad: true });
        const k = Tensor.fromArray(be, inp([1, 3, 4], 2).values, [1, 3, 4]);
        expect(ag.scaledDotProductAttention(q, q, q, { causal: true }).node?.op).not.toBe('attention');
        expect(ag.scaledDotProductAttention(q, k, k).node?.op).not.toBe('attention');
        expect(ag.scaledDotProductAttention(q, q, q).node?.op).toBe('attention');
      });
    });
  });
}
