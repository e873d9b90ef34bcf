// tfjs-examples' text classification (sentiment/train.js: buildModel's 'lstm' type and main's compile, fit and
// evaluate): embedding → LSTM(32) → dense(1, sigmoid), binaryCrossentropy, Adam, validationSplit 0.2. As it runs
// in Node without tfjs-node: the data is data.mjs's synthetic reviews, not IMDB (which cannot be downloaded
// here). Its PolyHAL port, line for line: sentiment.polyhal.mjs.
import * as tf from '@tensorflow/tfjs';

// port:begin
export function buildModel(maxLen, vocabularySize, embeddingSize) {
  const model = tf.sequential();
  model.add(tf.layers.embedding({ inputDim: vocabularySize, outputDim: embeddingSize, inputLength: maxLen }));
  model.add(tf.layers.lstm({ units: 32 }));
  model.add(tf.layers.dense({ units: 1, activation: 'sigmoid' }));
  return model;
}

export async function train(model, data, { epochs = 10, batchSize = 128, validationSplit = 0.2, onEpochEnd } = {}) {
  model.compile({ loss: 'binaryCrossentropy', optimizer: 'adam', metrics: ['acc'] });
  const xTrain = tf.tensor2d(data.train.x, [data.train.size, data.maxLen], 'int32');
  const yTrain = tf.tensor2d(data.train.y, [data.train.size, 1]);
  const xTest = tf.tensor2d(data.test.x, [data.test.size, data.maxLen], 'int32');
  const yTest = tf.tensor2d(data.test.y, [data.test.size, 1]);
  const history = await model.fit(xTrain, yTrain, { epochs, batchSize, validationSplit, callbacks: { onEpochEnd } });
  const [testLoss, testAcc] = model.evaluate(xTest, yTest, { batchSize });
  return { history, testLoss: (await testLoss.data())[0], testAcc: (await testAcc.data())[0] };
}
// port:end

/** The per-epoch figures in one shape for both twins: { loss, accuracy, valLoss, valAccuracy }. */
export const figures = ({ history }) => ({
  loss: history.history.loss,
  accuracy: history.history.acc,
  valLoss: history.history.val_loss,
  valAccuracy: history.history.val_acc,
});
