import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { mulberry32 } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

// Repeated runs are bit-exact on each backend (seed 000's deterministic-precision test): the same ops
// give the same bits, and the same short training run gives the same per-step losses.

async function trainLosses(factory: () => Promise<import('@polyhal/hal').ComputeBackend>): Promise<number[]> {
  const be = await factory();
  const model = new ag.Sequential(
    new ag.Linear(16, 32, { backend: be, rng: 3 }),
    new ag.Tanh(),
    new ag.Linear(32, 4, { backend: be, rng: 4 }),
  );
  const opt = new ag.Adam(model.parameters(), { lr: 0.01 });
  const x = ag.Tensor.fromArray(
    be,
    Array.from({ length: 8 * 16 }, (_, i) => Math.cos(i * 0.37)),
    [8, 16],
  );
  const y = ag.Tensor.fromArray(
    be,
    Array.from({ length: 32 }, (_, i) => (i % 5 === 0 ? 1 : 0)),
    [8, 4],
  );
  const losses: number[] = [];
  for (let s = 0; s < 10; s++) {
    losses.push(
      await ag.scope(async () => {
        const l = ag.crossEntropy(model.forward(x), y);
        opt.zeroGrad();
        l.backward();
        opt.step();
        return l.item();
      }),
    );
  }
  opt.zeroGrad();
  opt.dispose();
  model.dispose();
  x.dispose();
  y.dispose();
  be.dispose();
  return losses;
}

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`determinism on ${name}`, () => {
    test('the same ops twice give bit-identical outputs', async () => {
      const be = await factory();
      try {
        const rng = mulberry32(9);
        const data = Array.from({ length: 100000 }, () => rng() * 2 - 1);
        const runOnce = async (): Promise<number[][]> => {
          const x = be.fromArray(data.slice(0, 33 * 513), [33, 513]);
          const w = be.fromArray(data.slice(0, 513 * 7), [513, 7]);
          const big = be.fromArray(data, [100000]);
          const outs = [be.matmul(x, w), be.sum(big), be.softmax(be.reshape(x, [33, 513])), be.exp(x), be.mean(x, 0)];
          const bits = await Promise.all(outs.map(async (o) => Array.from(new Int32Array((await be.read(o)).buffer))));
          for (const t of [...outs, x, w, big]) be.free(t);
          return bits;
        };
        const [a, b] = [await runOnce(), await runOnce()];
        expect(b).toEqual(a);
      } finally {
        be.dispose();
      }
    }, 60_000);

    test('the same training run twice gives identical per-step losses', async () => {
      const [a, b] = [await trainLosses(factory), await trainLosses(factory)];
      expect(b).toEqual(a);
      expect(a[9]!).toBeLessThan(a[0]!);
    }, 60_000);
  });
}

// scatterAdd sums duplicate indices in index order on every backend (hal/src/ops/index-ops.ts): the
// same bits across backends, not only from run to run — here 2000 updates of mixed magnitude into 7
// rows, where any other summation order would round differently.
test('scatterAdd gives bit-identical sums on every backend', async () => {
  const rng = mulberry32(11);
  const idx = Array.from({ length: 2000 }, () => Math.floor(rng() * 9) - 1); // −1 … 7: 7 out of range
  const upd = Array.from({ length: 2000 * 3 }, () => (rng() - 0.5) * 10 ** Math.floor(rng() * 8 - 4));
  const bits: number[][] = [];
  for (const factory of Object.values(REPO_BACKENDS)) {
    const be = await factory();
    const t = be.fromArray(new Float32Array(7 * 3), [7, 3]);
    const i = be.fromArray(Int32Array.from(idx), [2000], 'int32');
    const u = be.fromArray(Float32Array.from(upd), [2000, 3]);
    const out = be.scatterAdd(t, i, u, 0);
    const got = await be.read(out);
    bits.push(Array.from(new Int32Array(got.buffer, got.byteOffset, got.length)));
    be.dispose();
  }
  for (const b of bits.slice(1)) expect(b).toEqual(bits[0]);
});
