// The MNIST ConvNet's two twins from the same start: the PolyHAL model gets the tfjs model's initial weights
// (conv kernels [kh, kw, C, O] → [O, C, kh, kw]; the dense kernel's rows from tfjs's channels-last flatten to
// PolyHAL's channels-first one) and both train on the same batches in order (no shuffle), with Adam's ε set to
// tfjs's 1e-7. Whatever then differs between the two comes from the libraries (layers, gradients, loss, Adam,
// batching), not from the random draws: the per-epoch figures and the largest weight difference after training.
// The start itself is seeded (tfjs's own varianceScaling initializer, seed 1, 2, ... per kernel, as the example's
// layers draw them unseeded), so a run gives the same figures every time: from unseeded starts the largest weight
// difference after the small run ranged from 1.6e-7 to 3.5e-4.
//   node examples/tfjs-ports/same-start.mjs [--size small|bench] [--backend cpu|wasm]
// prints one JSON object. tests/examples/tfjs-ports.test.ts runs it at the small size.
import * as ag from '@polyhal/autograd';
import * as tf from '@tensorflow/tfjs';
import { mnistData } from './data.mjs';
import * as mnistTfjs from './mnist.tfjs.mjs';
import { backends } from './run.mjs';

/** The sizes: `small` for CI (seconds), `bench` as run.mjs's MNIST bench size. */
export const SAME_START_SIZES = {
  small: { data: { trainSize: 192, testSize: 128 }, epochs: 2, batchSize: 32 },
  bench: { data: { trainSize: 1200, testSize: 400 }, epochs: 3, batchSize: 64 },
};

/** tfjs's conv kernel [kh, kw, C, O] as PolyHAL's weight [O, C, kh, kw]. */
function convWeight({ shape: [kh, kw, c, o], values }) {
  const out = new Float32Array(values.length);
  for (let a = 0; a < kh; a++)
    for (let b = 0; b < kw; b++)
      for (let i = 0; i < c; i++)
        for (let j = 0; j < o; j++) out[((j * c + i) * kh + a) * kw + b] = values[((a * kw + b) * c + i) * o + j];
  return out;
}

/** tfjs's dense kernel [h·w·c, O] over a channels-last flatten as PolyHAL's weight [O, c·h·w] (channels first). */
function denseWeight({ shape: [, o], values }, [h, w, c]) {
  const out = new Float32Array(values.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let i = 0; i < c; i++)
        for (let j = 0; j < o; j++) out[j * h * w * c + (i * h + y) * w + x] = values[((y * w + x) * c + i) * o + j];
  return out;
}

const given = (values) => ({ name: 'tfjs', sample: () => values });
const tfWeights = (model) => model.getWeights().map((t) => ({ shape: t.shape, values: t.dataSync().slice() }));

/** The PolyHAL twin of `tfModel` (mnist.polyhal.mjs's layers) holding its current weights. */
function polyhalFrom(backend, tfModel) {
  const [k1, b1, k2, b2, k3, b3] = tfWeights(tfModel);
  const layer = (k, b) => ({ backend, kernelInitializer: given(k), biasInitializer: given(b.values) });
  return new ag.Sequential(
    new ag.Conv2d(1, 8, 5, { ...layer(convWeight(k1), b1), stride: 1 }),
    new ag.ReLU(),
    new ag.MaxPool2d(2, { stride: 2 }),
    new ag.Conv2d(8, 16, 5, { ...layer(convWeight(k2), b2), stride: 1 }),
    new ag.ReLU(),
    new ag.MaxPool2d(2, { stride: 2 }),
    new ag.Flatten(),
    new ag.Linear(256, 10, layer(denseWeight(k3, [4, 4, 16]), b3)),
  );
}

/**
 * Trains both twins from the tfjs model's initial weights on the same batches: { size, tfjs, polyhal } with each
 * twin's { loss, accuracy, valLoss, valAccuracy } per epoch, and `maxWeightDiff`, the largest |difference| of
 * any weight after training (PolyHAL's against tfjs's, in PolyHAL's layout), with `maxWeight`, the largest |weight|.
 */
export async function sameStart(backend, size = 'small') {
  const s = SAME_START_SIZES[size];
  const data = mnistData(s.data);
  const tfModel = mnistTfjs.getModel();
  // seeded kernels from the layers' own initializer (biases stay zeros)
  tfModel.setWeights(
    tfModel
      .getWeights()
      .map((w, i) => (w.shape.length > 1 ? tf.initializers.varianceScaling({ seed: i + 1 }).apply(w.shape) : w)),
  );
  const model = polyhalFrom(backend, tfModel);
  const set = (d) => [tf.tensor4d(d.images, [d.size, 28, 28, 1]), tf.oneHot(tf.tensor1d(d.labels, 'int32'), 10)];
  const [xs, ys] = set(data.train);
  const [vx, vy] = set(data.test);
  const fitOpts = { batchSize: s.batchSize, epochs: s.epochs, shuffle: false };
  const tfHistory = await tfModel.fit(xs, ys, { ...fitOpts, validationData: [vx, vy] });
  const host = (d) => ({ x: { data: d.images, shape: [d.size, 1, 28, 28] }, y: { data: d.labels, shape: [d.size] } });
  const optimizer = new ag.Adam(model.parameters(), { lr: 0.001, eps: 1e-7 });
  const agHistory = await ag.fit(model, host(data.train), {
    ...fitOpts,
    loss: 'crossEntropy',
    optimizer,
    metrics: ['accuracy'],
    validationData: host(data.test),
  });
  const after = polyhalFrom(backend, tfModel); // tfjs's trained weights, in PolyHAL's layout
  let maxWeightDiff = 0;
  let maxWeight = 0;
  const ours = model.parameters();
  const theirs = after.parameters();
  for (let p = 0; p < ours.length; p++) {
    const [a, b] = await Promise.all([ours[p].data(), theirs[p].data()]);
    for (let i = 0; i < a.length; i++) {
      maxWeightDiff = Math.max(maxWeightDiff, Math.abs(a[i] - b[i]));
      maxWeight = Math.max(maxWeight, Math.abs(b[i]));
    }
  }
  tf.dispose([xs, ys, vx, vy]);
  tfModel.dispose();
  model.dispose();
  after.dispose();
  return {
    size: { ...s.data, epochs: s.epochs, batchSize: s.batchSize },
    tfjs: mnistTfjs.figures(tfHistory),
    polyhal: {
      loss: agHistory.history.loss,
      accuracy: agHistory.history.accuracy,
      valLoss: agHistory.history.val_loss,
      valAccuracy: agHistory.history.val_accuracy,
    },
    maxWeightDiff,
    maxWeight,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { Command } = await import('commander');
  const o = new Command()
    .option('--backend <name>', 'cpu or wasm (PolyHAL and tfjs alike)', 'cpu')
    .option('--size <size>', 'small (CI) or bench', 'small')
    .parse()
    .opts();
  if (!SAME_START_SIZES[o.size]) throw new Error(`--size must be small or bench, got ${o.size}`);
  const be = await backends(o.backend);
  console.log(JSON.stringify({ backend: o.backend, ...(await sameStart(be, o.size)) }));
  be.dispose();
  process.exit(0);
}
