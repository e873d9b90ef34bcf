// Metrics against TensorFlow.js's (tf.metrics on its cpu backend, an independent peer): accuracy with int32
// and one-hot labels, binary precision and recall, MSE and MAE; top-k and the macro averages against
// float64 counts written here (tfjs has no top-k metric). On every backend; a metric fed batch by batch
// equals the metric of the whole set.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { type ComputeBackend, DTypeError, InvalidArgumentError, mulberry32, ShapeMismatchError } from '@polyhal/hal';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { metrics as tfMetrics } from '@tensorflow/tfjs-layers';
import { REPO_BACKENDS } from '../support/backends.js';

const rng = mulberry32(11);
const N = 60;
const C = 4;
const LOGITS = Array.from({ length: N * C }, () => Math.fround(rng() * 4 - 2));
const LABELS = Int32Array.from({ length: N }, () => Math.floor(rng() * C));
const ONE_HOT = Array.from({ length: N * C }, (_, i) => (LABELS[Math.floor(i / C)] === i % C ? 1 : 0));
const PROBS = Array.from({ length: N }, () => Math.fround(rng()));
const BINARY = Array.from({ length: N }, () => (rng() < 0.5 ? 1 : 0));
const TARGETS = Array.from({ length: N * C }, () => Math.fround(rng() * 2 - 1));

const peer = (f: (t: tf.Tensor, p: tf.Tensor) => tf.Tensor, yTrue: tf.Tensor, yPred: tf.Tensor): number =>
  tf.tidy(() => tf.mean(f(yTrue, yPred)).dataSync()[0]!);

/** float64 per-class counts: [tp, fp, fn] for class j, predictions = argmax of LOGITS. */
function counts(j: number): [number, number, number] {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (let i = 0; i < N; i++) {
    const row = LOGITS.slice(i * C, i * C + C);
    const p = row.indexOf(Math.max(...row));
    if (p === j && LABELS[i] === j) tp++;
    else if (p === j) fp++;
    else if (LABELS[i] === j) fn++;
  }
  return [tp, fp, fn];
}

let want: Record<string, number>;
beforeAll(async () => {
  await tf.setBackend('cpu');
  const logits = tf.tensor2d(LOGITS, [N, C]);
  const binPred = tf.tensor1d(PROBS.map((p) => (p > 0.5 ? 1 : 0)));
  const binTrue = tf.tensor1d(BINARY);
  const topK = (k: number): number =>
    [...LABELS].filter((y, i) => {
      const row = LOGITS.slice(i * C, i * C + C);
      return row.filter((v) => v > row[y]!).length < k;
    }).length / N;
  const macro = (pick: (c: [number, number, number]) => number): number =>
    [0, 1, 2, 3].reduce((s, j) => s + pick(counts(j)), 0) / C;
  want = {
    accuracy: peer(tfMetrics.categoricalAccuracy, tf.tensor2d(ONE_HOT, [N, C]), logits),
    sparse: peer(tfMetrics.sparseCategoricalAccuracy, tf.tensor1d(Array.from(LABELS)), logits),
    precision: peer(tfMetrics.precision, binTrue, binPred),
    recall: peer(tfMetrics.recall, binTrue, binPred),
    binaryAccuracy: peer(tfMetrics.binaryAccuracy, binTrue, binPred),
    mse: peer(tfMetrics.meanSquaredError, tf.tensor2d(TARGETS, [N, C]), logits),
    mae: peer(tfMetrics.meanAbsoluteError, tf.tensor2d(TARGETS, [N, C]), logits),
    top2: topK(2),
    macroPrecision: macro(([tp, fp]) => (tp + fp ? tp / (tp + fp) : 0)),
    macroRecall: macro(([tp, , fn]) => (tp + fn ? tp / (tp + fn) : 0)),
    class2Precision: ((c) => c[0] / (c[0] + c[1]))(counts(2)),
  };
  expect(want['accuracy']).toBeCloseTo(want['sparse']!, 6); // the two label forms agree in tfjs too
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`metrics on ${name}`, () => {
    let be: ComputeBackend;
    let t: Record<string, Tensor>;
    beforeAll(async () => {
      be = await factory();
      t = {
        logits: Tensor.fromArray(be, LOGITS, [N, C]),
        labels: Tensor.fromArray(be, LABELS, [N]),
        oneHot: Tensor.fromArray(be, ONE_HOT, [N, C]),
        probs: Tensor.fromArray(be, PROBS, [N, 1]),
        binary: Tensor.fromArray(be, BINARY, [N, 1]),
        targets: Tensor.fromArray(be, TARGETS, [N, C]),
      };
    });
    afterAll(() => {
      for (const x of Object.values(t)) x.dispose();
      be.dispose();
    });

    test('accuracy (int32 and one-hot labels), binary precision/recall/accuracy, MSE and MAE match tfjs', async () => {
      const { logits, labels, oneHot, probs, binary, targets } = t as Record<string, Tensor>;
      expect(await ag.accuracy(logits!, labels!)).toBeCloseTo(want['accuracy']!, 6);
      expect(await ag.accuracy(logits!, oneHot!)).toBeCloseTo(want['accuracy']!, 6);
      expect(await ag.precision(probs!, binary!)).toBeCloseTo(want['precision']!, 6);
      expect(await ag.recall(probs!, binary!)).toBeCloseTo(want['recall']!, 6);
      expect(await ag.accuracy(probs!, binary!)).toBeCloseTo(want['binaryAccuracy']!, 6);
      expect(await ag.meanSquaredError(logits!, targets!)).toBeCloseTo(want['mse']!, 5);
      expect(await ag.meanAbsoluteError(logits!, targets!)).toBeCloseTo(want['mae']!, 5);
    });

    test('top-k accuracy and macro / per-class precision and recall match float64 counts', async () => {
      const { logits, labels } = t as Record<string, Tensor>;
      expect(await ag.topKAccuracy(logits!, labels!, 2)).toBeCloseTo(want['top2']!, 12);
      expect(await ag.topKAccuracy(logits!, labels!, C)).toBe(1);
      expect(await ag.precision(logits!, labels!)).toBeCloseTo(want['macroPrecision']!, 12);
      expect(await ag.recall(logits!, labels!)).toBeCloseTo(want['macroRecall']!, 12);
      expect(await ag.precision(logits!, labels!, { classId: 2 })).toBeCloseTo(want['class2Precision']!, 12);
    });
  });
}

test('a metric fed in batches equals the metric of the whole set', () => {
  const whole = new ag.Precision();
  const batched = new ag.Precision();
  const batch = (from: number, to: number): ag.MetricBatch => ({
    pred: LOGITS.slice(from * C, to * C),
    predShape: [to - from, C],
    labels: LABELS.slice(from, to),
    labelShape: [to - from],
    labelDtype: 'int32',
  });
  whole.update(batch(0, N));
  for (let s = 0; s < N; s += 16) batched.update(batch(s, Math.min(N, s + 16)));
  expect(batched.result()).toBe(whole.result());
  batched.reset();
  expect(batched.result()).toBeNaN();
});

test('float32 class indices, mismatched shapes and unknown names are typed errors', () => {
  const m = new ag.Accuracy();
  const b = { pred: LOGITS, predShape: [N, C], labels: Float32Array.from(LABELS), labelShape: [N] };
  expect(() => m.update({ ...b, labelDtype: 'float32' })).toThrow(DTypeError);
  expect(() => m.update({ ...b, labelDtype: 'float32' })).toThrow(/int32/);
  expect(() => m.update({ ...b, labelShape: [N - 1], labels: LABELS.slice(1), labelDtype: 'int32' })).toThrow(
    ShapeMismatchError,
  );
  expect(() => m.update({ ...b, labels: Int32Array.from(LABELS, () => C), labelDtype: 'int32' })).toThrow(
    InvalidArgumentError,
  );
  expect(() => ag.toMetric('f1' as never)).toThrow(InvalidArgumentError);
  expect(() => new ag.TopKAccuracy(0)).toThrow(InvalidArgumentError);
});
