// tfjs-examples' polynomial-regression-core (index.js): learn a, b, c, d of y = a·x³ + b·x² + c·x + d with
// tf.variable scalars, SGD (lr 0.5) and optimizer.minimize, 75 iterations. As it runs in Node: the coefficients
// start from given values (the example draws them with Math.random(), which two libraries cannot share) and the
// plots are gone. Its PolyHAL port, line for line: polynomial.polyhal.mjs.
import * as tf from '@tensorflow/tfjs';

// port:begin
export async function learnCoefficients(data, { numIterations = 75, learningRate = 0.5, onIteration } = {}) {
  const a = tf.variable(tf.scalar(data.init.a));
  const b = tf.variable(tf.scalar(data.init.b));
  const c = tf.variable(tf.scalar(data.init.c));
  const d = tf.variable(tf.scalar(data.init.d));
  const optimizer = tf.train.sgd(learningRate);
  function predict(x) {
    // y = a * x ^ 3 + b * x ^ 2 + c * x + d
    return tf.tidy(() =>
      a
        .mul(x.pow(tf.scalar(3, 'int32')))
        .add(b.mul(x.square()))
        .add(c.mul(x))
        .add(d),
    );
  }
  function loss(prediction, labels) {
    return prediction.sub(labels).square().mean();
  }
  const xs = tf.tensor1d(data.xs);
  const ys = tf.tensor1d(data.ys);
  for (let iter = 0; iter < numIterations; iter++) {
    const cost = optimizer.minimize(() => loss(predict(xs), ys), true);
    onIteration?.(iter, (await cost.data())[0]);
    cost.dispose();
  }
  const coefficients = { a: a.dataSync()[0], b: b.dataSync()[0], c: c.dataSync()[0], d: d.dataSync()[0] };
  tf.dispose([a, b, c, d, xs, ys]);
  return coefficients;
}
// port:end
