// The PolyHAL port of tfjs-examples' MNIST ConvNet (mnist.tfjs.mjs), line for line: the same layers, initializers
// (varianceScaling kernels, zero biases), optimizer (Adam, lr 0.001), loss, batch size and epochs. PolyHAL's layers
// are channels-first (x [N, 1, 28, 28]) and the model ends in logits: crossEntropy applies the softmax. tfjs draws
// the initial weights and each epoch's shuffle from unseeded generators; here `seed` picks them: the layers share
// one stream (each continues where the previous one stopped, as tfjs's layers do), and fit shuffles with `seed`.
import * as ag from '@polyhal/autograd';

// port:begin
export function getModel(backend, seed = 0) {
  const init = { backend, rng: ag.toRng(seed), kernelInitializer: 'varianceScaling', biasInitializer: 'zeros' };
  const IMAGE_CHANNELS = 1;
  return new ag.Sequential(
    new ag.Conv2d(IMAGE_CHANNELS, 8, 5, { ...init, stride: 1 }),
    new ag.ReLU(),
    new ag.MaxPool2d(2, { stride: 2 }),
    new ag.Conv2d(8, 16, 5, { ...init, stride: 1 }),
    new ag.ReLU(),
    new ag.MaxPool2d(2, { stride: 2 }),
    new ag.Flatten(),
    new ag.Linear(null, 10, init), // in-features from the first batch, as tfjs's dense infers them
  );
}

export async function train(model, data, { epochs = 10, batchSize = 512, seed = 0, onEpochEnd } = {}) {
  const x = (set) => ({ data: set.images, shape: [set.size, 1, 28, 28] });
  const y = (set) => ({ data: set.labels, shape: [set.size] });
  return ag.fit(
    model,
    { x: x(data.train), y: y(data.train) },
    {
      loss: 'crossEntropy',
      optimizer: 'adam',
      metrics: ['accuracy'],
      batchSize,
      validationData: { x: x(data.test), y: y(data.test) },
      epochs,
      shuffle: true,
      seed,
      callbacks: [{ onEpochEnd }],
    },
  );
}
// port:end

/** The history's per-epoch figures in one shape for both twins: { loss, accuracy, valLoss, valAccuracy }. */
export const figures = (history) => ({
  loss: history.history.loss,
  accuracy: history.history.accuracy,
  valLoss: history.history.val_loss,
  valAccuracy: history.history.val_accuracy,
});
