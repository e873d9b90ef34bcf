// The PolyHAL port of tfjs-examples' text classification LSTM (sentiment.tfjs.mjs), line for line, with tfjs's
// initializers named (Embedding U(±0.05); LSTM glorotUniform, orthogonal and zero biases; Dense glorotUniform
// and zeros), since PolyHAL's layers default to PyTorch's. The Embedding needs no maxLen (tfjs's inputLength). The
// model ends in a logit: binaryCrossentropy applies the sigmoid, and accuracy thresholds the logit at 0.
import * as ag from '@polyhal/autograd';

// port:begin
export function buildModel(backend, vocabularySize, embeddingSize) {
  const tfjs = { kernelInitializer: 'glorotUniform', recurrentInitializer: 'orthogonal', biasInitializer: 'zeros' };
  const embedding = new ag.Embedding(vocabularySize, embeddingSize, { backend, embeddingsInitializer: 'uniform' });
  const lstm = new ag.LSTM(embeddingSize, 32, { backend, ...tfjs, batchFirst: true, returnSequences: false });
  return new ag.Sequential(embedding, lstm, new ag.Linear(32, 1, { backend, ...tfjs }));
}

export async function train(model, data, { epochs = 10, batchSize = 128, validationSplit = 0.2, onEpochEnd } = {}) {
  const compiled = { loss: 'binaryCrossentropy', optimizer: 'adam', metrics: [new ag.Accuracy(0)], batchSize };
  const set = (s) => ({ x: { data: s.x, shape: [s.size, data.maxLen] }, y: { data: s.y, shape: [s.size, 1] } });
  const callbacks = [{ onEpochEnd }];
  const history = await ag.fit(model, set(data.train), { ...compiled, epochs, validationSplit, callbacks });
  const { loss: testLoss, accuracy: testAcc } = await ag.evaluate(model, set(data.test), compiled);
  return { history, testLoss, testAcc };
}
// port:end

/** The per-epoch figures in one shape for both twins: { loss, accuracy, valLoss, valAccuracy }. */
export const figures = ({ history }) => ({
  loss: history.history.loss,
  accuracy: history.history.accuracy,
  valLoss: history.history.val_loss,
  valAccuracy: history.history.val_accuracy,
});
