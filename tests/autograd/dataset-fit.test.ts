// fit and evaluate on a Dataset or a DataLoader: the same history as fit on the equivalent host arrays with the same
// seed (a random-access Dataset is shuffled with the same permutation), a falling loss on a streamed Dataset, and the
// typed errors of options that do not apply; on every backend.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError, mulberry32 } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const rng = mulberry32(21);
const M = 60;
const CX = Float32Array.from({ length: M * 4 }, () => rng() * 2 - 1);
const CY = Int32Array.from({ length: M }, (_, i) => (CX[i * 4]! > 0.3 ? 2 : CX[i * 4 + 1]! > 0 ? 1 : 0));
const train = { x: { data: CX.subarray(0, 48 * 4), shape: [48, 4] }, y: { data: CY.subarray(0, 48), shape: [48] } };
const valid = { x: { data: CX.subarray(48 * 4), shape: [12, 4] }, y: { data: CY.subarray(48), shape: [12] } };

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`fit on a Dataset, ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());
    const options = {
      loss: 'crossEntropy' as const,
      epochs: 4,
      batchSize: 10,
      seed: 3,
      metrics: ['accuracy' as const],
    };

    test('a random-access Dataset gives the history of the same arrays (same seed, shuffled), also val', async () => {
      const run = async (data: ag.FitData | ag.FitSource, validationData: ag.FitData | ag.FitSource) => {
        const model = new ag.Linear(4, 3, { backend: be, rng: 8 });
        const h = await ag.fit(model, data, {
          ...options,
          optimizer: new ag.SGD(model.parameters(), { lr: 0.5 }),
          validationData,
        });
        return { h: h.history, w: Array.from(await model.weight.data()) };
      };
      const a = await run(train, valid);
      const b = await run(ag.Dataset.fromSlices(train), ag.Dataset.fromSlices(valid));
      expect(b).toEqual(a);
      expect(a.h['loss']!.at(-1)!).toBeLessThan(a.h['loss']![0]!);
      expect(Object.keys(b.h)).toEqual(['loss', 'accuracy', 'val_loss', 'val_accuracy', 'lr']);
      const model = new ag.Linear(4, 3, { backend: be, rng: 8 });
      const onArrays = await ag.evaluate(model, valid, { loss: 'crossEntropy', metrics: ['accuracy'] });
      const onDataset = await ag.evaluate(model, ag.Dataset.fromSlices(valid), {
        loss: 'crossEntropy',
        metrics: ['accuracy'],
      });
      expect(onDataset).toEqual(onArrays);
    });

    test('a streamed Dataset (generator, buffer shuffle, map) and a DataLoader train: the loss falls', async () => {
      const samples = ag.Dataset.from(function* () {
        for (let i = 0; i < 48; i++) yield { x: CX.subarray(i * 4, i * 4 + 4), y: Int32Array.of(CY[i]!) };
      });
      const stream = samples.shuffle(16, { seed: 1 }).map((s) => ({ x: s.x, y: { data: s.y, shape: [] } }));
      const model = new ag.Linear(4, 3, { backend: be, rng: 8 });
      const h = await ag.fit(model, stream, {
        ...options,
        epochs: 6,
        optimizer: new ag.SGD(model.parameters(), { lr: 0.5 }),
      });
      const loss = h.history['loss']!;
      expect(loss.at(-1)!).toBeLessThan(loss[0]! * 0.9);
      const loader = new ag.DataLoader(ag.Dataset.fromSlices(train), { backend: be, batchSize: 12, shuffle: true });
      const m2 = new ag.Linear(4, 3, { backend: be, rng: 8 });
      const h2 = await ag.fit(m2, loader, {
        loss: 'crossEntropy',
        optimizer: new ag.SGD(m2.parameters(), { lr: 0.5 }),
        epochs: 6,
      });
      expect(h2.history['loss']!.at(-1)!).toBeLessThan(h2.history['loss']![0]! * 0.9);
    });

    test('options that do not apply to streamed data are InvalidArgumentError', async () => {
      const model = new ag.Linear(4, 3, { backend: be, rng: 8 });
      const ds = ag.Dataset.fromSlices(train);
      const loader = new ag.DataLoader(ds, { backend: be, batchSize: 8 });
      const base = { loss: 'crossEntropy' as const, optimizer: 'sgd' as const };
      await expect(ag.fit(model, ds, { ...base, validationSplit: 0.2 })).rejects.toThrow(InvalidArgumentError);
      await expect(ag.fit(model, loader, { ...base, batchSize: 4 })).rejects.toThrow(
        /batchSize belong to the DataLoader/,
      );
      const stream = ds.filter(() => true);
      await expect(ag.fit(model, stream, { ...base, shuffle: true })).rejects.toThrow(/shuffle a stream/);
    });
  });
}
