// fit, evaluate and predict against float64 oracles written here: full-batch gradient descent on a linear
// model (the parameters and each epoch's loss), a classifier's validation loss and accuracy recomputed
// from its parameters, and the callbacks (early stopping, schedules, checkpoints, progress events); on
// every backend.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type ComputeBackend, DTypeError, InvalidArgumentError, mulberry32, ShapeMismatchError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const rng = mulberry32(3);
const rand = (n: number): number[] => Array.from({ length: n }, () => Math.fround(rng() * 2 - 1));
const close = (got: ArrayLike<number>, want: ArrayLike<number>, tol: number): void => {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++)
    expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(want[i]!)));
};

// Regression: N samples of 3 features, targets from a fixed linear map.
const N = 16;
const X = rand(N * 3);
const Y = Array.from({ length: N }, (_, i) => 0.5 * X[i * 3]! - X[i * 3 + 1]! + 0.25 * X[i * 3 + 2]! + 0.1);

/** Full-batch gradient descent on mean((x·w + b − y)²) in float64: the weights after `epochs` and each epoch's loss. */
function gdOracle(w0: number[], b0: number, lr: number, epochs: number): { w: number[]; b: number; losses: number[] } {
  const w = [...w0];
  let b = b0;
  const losses: number[] = [];
  for (let e = 0; e < epochs; e++) {
    const gw = [0, 0, 0];
    let gb = 0;
    let loss = 0;
    for (let i = 0; i < N; i++) {
      const r = X[i * 3]! * w[0]! + X[i * 3 + 1]! * w[1]! + X[i * 3 + 2]! * w[2]! + b - Y[i]!;
      loss += r * r;
      for (let k = 0; k < 3; k++) gw[k]! += (2 * r * X[i * 3 + k]!) / N;
      gb += (2 * r) / N;
    }
    losses.push(loss / N);
    for (let k = 0; k < 3; k++) w[k]! -= lr * gw[k]!;
    b -= lr * gb;
  }
  return { w, b, losses };
}

// Classification: 3 classes of 4 features, int32 labels.
const M = 40;
const CX = rand(M * 4);
const CY = Int32Array.from({ length: M }, (_, i) => (CX[i * 4]! > 0.3 ? 2 : CX[i * 4 + 1]! > 0 ? 1 : 0));

/** Mean cross-entropy and accuracy of a linear classifier W [3, 4], b [3] on samples [from, to), in float64. */
function classOracle(W: ArrayLike<number>, b: ArrayLike<number>, from: number, to: number) {
  let loss = 0;
  let hits = 0;
  for (let i = from; i < to; i++) {
    const z = [0, 1, 2].map((c) => b[c]! + [0, 1, 2, 3].reduce((s, k) => s + W[c * 4 + k]! * CX[i * 4 + k]!, 0));
    const m = Math.max(...z);
    const lse = m + Math.log(z.reduce((s, v) => s + Math.exp(v - m), 0));
    loss += lse - z[CY[i]!]!;
    if (z.indexOf(m) === CY[i]) hits++;
  }
  return { loss: loss / (to - from), accuracy: hits / (to - from) };
}

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`fit on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test('full-batch SGD fit matches gradient descent in float64: parameters and every epoch loss', async () => {
      const model = new ag.Linear(3, 1, { backend: be, rng: 4 });
      const w0 = Array.from(await model.weight.data());
      const b0 = (await model.bias!.data())[0]!;
      const history = await ag.fit(
        model,
        { x: { data: X, shape: [N, 3] }, y: { data: Y, shape: [N, 1] } },
        { loss: 'mse', optimizer: new ag.SGD(model.parameters(), { lr: 0.2 }), epochs: 6, batchSize: N },
      );
      const want = gdOracle(w0, b0, 0.2, 6);
      close(history.history['loss']!, want.losses, 2e-5);
      close(await model.weight.data(), want.w, 2e-5);
      close(await model.bias!.data(), [want.b], 2e-5);
      expect(history.epoch).toEqual([0, 1, 2, 3, 4, 5]);
      expect(history.history['lr']).toEqual(new Array(6).fill(0.2));
      const pred = await ag.predict(model, { data: X, shape: [N, 3] }, { batchSize: 5 });
      expect(pred.shape).toEqual([N, 1]);
      const wantPred = Array.from({ length: N }, (_, i) =>
        [0, 1, 2].reduce((s, k) => s + want.w[k]! * X[i * 3 + k]!, want.b),
      );
      close(await pred.data(), wantPred, 2e-5);
      const ev = await ag.evaluate(
        model,
        { x: { data: X, shape: [N, 3] }, y: { data: Y, shape: [N, 1] } },
        {
          loss: 'mse',
          metrics: ['mae'],
        },
      );
      const res = wantPred.map((p, i) => p - Y[i]!);
      close(
        [ev['loss']!, ev['mae']!],
        [res.reduce((s, r) => s + r * r, 0) / N, res.reduce((s, r) => s + Math.abs(r), 0) / N],
        2e-5,
      );
      pred.dispose();
      model.dispose();
    });

    test('int32 labels, accuracy, validationSplit: val_ values match the classifier in float64', async () => {
      const model = new ag.Linear(4, 3, { backend: be, rng: 9 });
      const events: { phase: string; fraction: number }[] = [];
      const target = new EventTarget();
      target.addEventListener('progress', (e) => events.push((e as CustomEvent).detail));
      const saved: Uint8Array[] = [];
      const history = await ag.fit(
        model,
        { x: { data: CX, shape: [M, 4] }, y: { data: CY, shape: [M] } },
        {
          loss: 'crossEntropy',
          optimizer: 'adam',
          metrics: ['accuracy'],
          epochs: 3,
          batchSize: 8,
          validationSplit: 0.25,
          callbacks: [ag.progressEvents(target), ag.modelCheckpoint({ save: (bytes) => void saved.push(bytes) })],
        },
      );
      expect(Object.keys(history.history).sort()).toEqual(['accuracy', 'loss', 'lr', 'val_accuracy', 'val_loss']);
      const o = classOracle(await model.weight.data(), await model.bias!.data(), 30, 40);
      close([history.history['val_loss']![2]!, history.history['val_accuracy']![2]!], [o.loss, o.accuracy], 2e-5);
      expect(history.history['lr']).toEqual([1e-3, 1e-3, 1e-3]);
      // 30 training samples in batches of 8: 4 batch events and 1 epoch event per epoch.
      expect(events.filter((e) => e.phase === 'batch')).toHaveLength(12);
      expect(events.filter((e) => e.phase === 'epoch').map((e) => e.fraction)).toEqual([1 / 3, 2 / 3, 1]);
      expect(saved).toHaveLength(3);
      const loaded = ag.loadSafetensors(saved[2]!, be);
      close(await loaded.tensors['weight']!.data(), await model.weight.data(), 0);
      for (const t of Object.values(loaded.tensors)) t.dispose();
      model.dispose();
    });

    test('validationData: the last epoch val_ values equal evaluate on the same data after training', async () => {
      const model = new ag.Linear(4, 3, { backend: be, rng: 2 });
      const split = (from: number, to: number): ag.FitData => ({
        x: ag.Tensor.fromArray(be, CX.slice(from * 4, to * 4), [to - from, 4]),
        y: { data: CY.slice(from, to), shape: [to - from] },
      });
      const [train, val] = [split(0, 30), split(30, 40)];
      const opts = { loss: 'crossEntropy', metrics: ['accuracy', 'precision'] } as const;
      const history = await ag.fit(model, train, { ...opts, optimizer: 'rmsprop', epochs: 2, validationData: val });
      const ev = await ag.evaluate(model, val, opts);
      const o = classOracle(await model.weight.data(), await model.bias!.data(), 30, 40);
      close([ev['loss']!, ev['accuracy']!], [o.loss, o.accuracy], 2e-5);
      for (const k of ['loss', 'accuracy', 'precision']) expect(history.history[`val_${k}`]![1]).toBeCloseTo(ev[k]!, 6);
      (train.x as ag.Tensor).dispose();
      (val.x as ag.Tensor).dispose();
      model.dispose();
    });

    test('earlyStopping stops after `patience` epochs without improvement; a schedule sets lr per epoch', async () => {
      const model = new ag.Linear(3, 1, { backend: be, rng: 4 });
      const opt = new ag.SGD(model.parameters(), { lr: 0.1 });
      const flat = (p: ag.Tensor): ag.Tensor => ag.mean(ag.mul(p, 0)); // a loss that never improves
      const history = await ag.fit(
        model,
        { x: { data: X, shape: [N, 3] }, y: { data: Y, shape: [N, 1] } },
        {
          loss: flat,
          optimizer: opt,
          epochs: 10,
          batchSize: 4,
          callbacks: [
            ag.earlyStopping({ monitor: 'loss', patience: 2 }),
            ag.learningRateScheduler(new ag.ExponentialLR(opt, 0.5)),
          ],
        },
      );
      expect(history.epoch).toEqual([0, 1, 2]);
      expect(history.history['lr']).toEqual([0.1, 0.05, 0.025]);
      model.dispose();
    });

    test('restoreBestWeights puts back the best epoch; ReduceLROnPlateau and clipGradNorm run inside fit', async () => {
      const model = new ag.Linear(3, 1, { backend: be, rng: 4 });
      const opt = new ag.SGD(model.parameters(), { lr: 0.05 });
      const best: number[][] = [];
      let epoch = 0;
      // Loss falls for two epochs then is forced up: the weights after epoch 1 are the best.
      const loss = (p: ag.Tensor, y: ag.Tensor): ag.Tensor => ag.add(ag.mseLoss(p, y), epoch >= 2 ? 100 : 0);
      const history = await ag.fit(
        model,
        { x: { data: X, shape: [N, 3] }, y: { data: Y, shape: [N, 1] } },
        {
          loss,
          optimizer: opt,
          epochs: 6,
          batchSize: N,
          shuffle: false,
          clipGradNorm: 0.5,
          callbacks: [
            {
              onEpochEnd: async (e) => {
                if (e === 1) best.push(Array.from(await model.weight.data()));
                epoch = e + 1;
              },
            },
            ag.earlyStopping({ monitor: 'loss', patience: 2, restoreBestWeights: true }),
            ag.learningRateScheduler(new ag.ReduceLROnPlateau(opt, { patience: 0, factor: 0.5 }), { monitor: 'loss' }),
          ],
        },
      );
      expect(history.epoch).toEqual([0, 1, 2, 3]); // epochs 2 and 3 do not improve: stop after 3
      close(await model.weight.data(), best[0]!, 0);
      expect(history.history['lr']).toEqual([0.05, 0.05, 0.05, 0.025]); // logged before the schedule's step
      expect(opt.lr).toBe(0.0125);
      model.dispose();
    });

    test('float32 class indices, mismatched N and bad options are typed errors before any step', async () => {
      const model = new ag.Linear(4, 3, { backend: be, rng: 9 });
      const data = { x: { data: CX, shape: [M, 4] }, y: { data: Float32Array.from(CY), shape: [M] } };
      await expect(ag.fit(model, data, { loss: 'crossEntropy', optimizer: 'sgd' })).rejects.toThrow(DTypeError);
      await expect(ag.fit(model, data, { loss: 'crossEntropy', optimizer: 'sgd' })).rejects.toThrow(/int32/);
      const short = { x: { data: CX.slice(0, 8), shape: [2, 4] }, y: { data: CY, shape: [M] } };
      await expect(ag.fit(model, short, { loss: 'crossEntropy', optimizer: 'sgd' })).rejects.toThrow(
        ShapeMismatchError,
      );
      const ok = { x: data.x, y: { data: CY, shape: [M] } };
      for (const bad of [
        { epochs: 0 },
        { batchSize: 1.5 },
        { validationSplit: 1 },
        { optimizer: 'lion' },
        { loss: 'hinge' },
      ])
        await expect(ag.fit(model, ok, { loss: 'crossEntropy', optimizer: 'sgd', ...bad } as never)).rejects.toThrow(
          InvalidArgumentError,
        );
      await expect(
        ag.fit(model, ok, { loss: 'crossEntropy', optimizer: 'sgd', metrics: ['f1' as never] }),
      ).rejects.toThrow(/unknown metric "f1"/);
      model.dispose();
    });
  });
}

test('progressBar draws a cli-progress bar per epoch with the logs (the bar is backend-independent)', async () => {
  const be = await REPO_BACKENDS['cpu']!();
  const out: string[] = [];
  const stream = { isTTY: false, write: (s: string) => out.push(s) > 0, on() {}, removeListener() {} };
  const model = new ag.Linear(3, 1, { backend: be, rng: 4 });
  await ag.fit(
    model,
    { x: { data: X, shape: [N, 3] }, y: { data: Y, shape: [N, 1] } },
    { loss: 'mse', optimizer: 'sgd', epochs: 2, batchSize: 8, callbacks: [ag.progressBar({ stream })] },
  );
  const text = out.join('');
  expect(text).toMatch(/epoch 1\/2 \[█+\] 2\/2 \| loss \d+\.\d{4} \| lr 1\.00e-2 \| \d+ samples\/s/);
  expect(text).toMatch(/epoch 2\/2 \[█+\] 2\/2/);
  model.dispose();
  be.dispose();
});
