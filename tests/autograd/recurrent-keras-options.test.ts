// The recurrent layers' Keras-style options, on every backend: `returnSequences: false` (the last layer's final
// state, as tfjs's `lstm({ units })`: each direction's own last step) checked against the whole output sequence
// of an identical layer; `kernelInitializer`, `recurrentInitializer`, `biasInitializer` (tfjs's LSTM defaults
// glorotUniform, orthogonal, zeros) checked by the properties of the drawn weights; and fit on int32 token ids
// through an Embedding (the ids reach the model as int32).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const [T, B, I, H] = [5, 3, 4, 6];
const xs = Float32Array.from({ length: T * B * I }, (_, i) => Math.sin(i * 0.37));

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`recurrent options on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    for (const bidirectional of [false, true])
      for (const Layer of [ag.LSTM, ag.GRU, ag.RNN])
        test(`${Layer.name}${bidirectional ? ' bidirectional' : ''}, 2 layers, returnSequences false`, async () => {
          const opts = { backend: be, numLayers: 2, bidirectional, batchFirst: true, rng: 7 };
          const full = new Layer(I, H, opts);
          const last = new Layer(I, H, { ...opts, returnSequences: false });
          const x = ag.Tensor.fromArray(be, xs, [B, T, I]);
          const seq = await full.forward(x).data(); // [B, T, D·H]
          const out = last.forward(x);
          const D = bidirectional ? 2 : 1;
          expect(out.shape).toEqual([B, D * H]);
          // forward direction: step T − 1; reverse direction: step 0 (where its pass ends)
          const want = Array.from({ length: B * D * H }, (_, i) => {
            const [b, f] = [Math.floor(i / (D * H)), i % (D * H)];
            return seq[(b * T + (f < H ? T - 1 : 0)) * D * H + f]!;
          });
          const got = Array.from(await out.data());
          got.forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 6));
          expect(last.getConfig()).toMatchObject({ returnSequences: false });
          // unbatched x [T, I] → [D·H]
          expect(last.forward(ag.Tensor.fromArray(be, xs.subarray(0, T * I), [T, I])).shape).toEqual([D * H]);
          for (const t of [x, out]) t.dispose();
          full.dispose();
          last.dispose();
        });

    test("LSTM with tfjs's initializers: glorotUniform kernel, orthogonal recurrent kernel, zero biases", async () => {
      const lstm = new ag.LSTM(I, H, {
        backend: be,
        kernelInitializer: 'glorotUniform',
        recurrentInitializer: 'orthogonal',
        biasInitializer: 'zeros',
        rng: 3,
      });
      const s = lstm.stateDict();
      const wih = Array.from(await s['weight_ih_l0']!.data()); // [4H, I]: fanIn I, fanOut 4H
      const bound = Math.sqrt(6 / (I + 4 * H));
      expect(Math.max(...wih.map(Math.abs))).toBeLessThanOrEqual(bound);
      expect(Math.max(...wih.map(Math.abs))).toBeGreaterThan(bound / 2);
      const whh = Array.from(await s['weight_hh_l0']!.data()); // [4H, H]: orthonormal columns
      for (let p = 0; p < H; p++)
        for (let q = 0; q < H; q++) {
          let dot = 0;
          for (let r = 0; r < 4 * H; r++) dot += whh[r * H + p]! * whh[r * H + q]!;
          expect(dot).toBeCloseTo(p === q ? 1 : 0, 5);
        }
      for (const b of ['bias_ih_l0', 'bias_hh_l0'])
        expect(Array.from(await s[b]!.data())).toEqual(Array(4 * H).fill(0));
      lstm.dispose();
      expect(() => new ag.LSTM(I, H, { backend: be, returnSequences: 'no' as unknown as boolean })).toThrow(
        InvalidArgumentError,
      );
    });

    test('fit on int32 token ids through an Embedding: the ids stay int32, the loss falls', async () => {
      // label = whether token 1 occurs in the sequence
      const [N, L, V] = [64, 6, 8];
      const ids = Int32Array.from({ length: N * L }, (_, i) => (i * 7 + Math.floor(i / L) * 3) % V);
      const y = Float32Array.from({ length: N }, (_, n) => (ids.subarray(n * L, n * L + L).includes(1) ? 1 : 0));
      const model = new ag.Sequential(
        new ag.Embedding(V, 8, { backend: be, rng: 1 }),
        new ag.GRU(8, 8, { backend: be, batchFirst: true, returnSequences: false, rng: 2 }),
        new ag.Linear(8, 1, { backend: be, rng: 3 }),
      );
      const h = await ag.fit(
        model,
        { x: { data: ids, shape: [N, L] }, y: { data: y, shape: [N, 1] } },
        { loss: 'binaryCrossentropy', optimizer: new ag.Adam(model.parameters(), { lr: 0.05 }), epochs: 8 },
      );
      expect(h.history.loss.at(-1)!).toBeLessThan(h.history.loss[0]! * 0.7);
      const out = await ag.predict(model, { data: ids, shape: [N, L] });
      expect(out.shape).toEqual([N, 1]);
      out.dispose();
      model.dispose();
    });
  });
}
