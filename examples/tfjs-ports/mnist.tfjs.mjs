// tfjs-examples' MNIST ConvNet (the "handwritten digit recognition with CNNs" codelab of tfjs-examples/mnist:
// getModel and train), as it runs in Node: the data comes in as arrays instead of MnistData's sprite sheet, and
// the UI's tfvis callbacks are a plain `onEpochEnd`. Its PolyHAL port, line for line: mnist.polyhal.mjs.
import * as tf from '@tensorflow/tfjs';

// port:begin
export function getModel() {
  const model = tf.sequential();
  const [IMAGE_WIDTH, IMAGE_HEIGHT, IMAGE_CHANNELS] = [28, 28, 1];
  model.add(
    tf.layers.conv2d({
      inputShape: [IMAGE_WIDTH, IMAGE_HEIGHT, IMAGE_CHANNELS],
      kernelSize: 5,
      filters: 8,
      strides: 1,
      activation: 'relu',
      kernelInitializer: 'varianceScaling',
    }),
  );
  model.add(tf.layers.maxPooling2d({ poolSize: [2, 2], strides: [2, 2] }));
  model.add(
    tf.layers.conv2d({
      kernelSize: 5,
      filters: 16,
      strides: 1,
      activation: 'relu',
      kernelInitializer: 'varianceScaling',
    }),
  );
  model.add(tf.layers.maxPooling2d({ poolSize: [2, 2], strides: [2, 2] }));
  model.add(tf.layers.flatten());
  const NUM_OUTPUT_CLASSES = 10;
  model.add(
    tf.layers.dense({ units: NUM_OUTPUT_CLASSES, kernelInitializer: 'varianceScaling', activation: 'softmax' }),
  );
  const optimizer = tf.train.adam();
  model.compile({ optimizer, loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
  return model;
}

export async function train(model, data, { epochs = 10, batchSize = 512, onEpochEnd } = {}) {
  const [trainXs, trainYs] = tf.tidy(() => [
    tf.tensor4d(data.train.images, [data.train.size, 28, 28, 1]),
    tf.oneHot(tf.tensor1d(data.train.labels, 'int32'), 10),
  ]);
  const [testXs, testYs] = tf.tidy(() => [
    tf.tensor4d(data.test.images, [data.test.size, 28, 28, 1]),
    tf.oneHot(tf.tensor1d(data.test.labels, 'int32'), 10),
  ]);
  return model.fit(trainXs, trainYs, {
    batchSize,
    validationData: [testXs, testYs],
    epochs,
    shuffle: true,
    callbacks: { onEpochEnd },
  });
}
// port:end

/** The history's per-epoch figures in one shape for both twins: { loss, accuracy, valLoss, valAccuracy }. */
export const figures = (history) => ({
  loss: history.history.loss,
  accuracy: history.history.acc,
  valLoss: history.history.val_loss,
  valAccuracy: history.history.val_acc,
});
