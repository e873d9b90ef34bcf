// The PolyHAL port of tfjs-examples' polynomial-regression-core (polynomial.tfjs.mjs), line for line: four scalar
// tensors with requiresGrad in place of tf.variable, SGD (lr 0.5) and optimizer.minimize, ag.scope for tf.tidy.
import * as ag from '@polyhal/autograd';

// port:begin
export async function learnCoefficients(backend, data, { numIterations = 75, learningRate = 0.5, onIteration } = {}) {
  const a = ag.Tensor.fromArray(backend, [data.init.a], [], { requiresGrad: true });
  const b = ag.Tensor.fromArray(backend, [data.init.b], [], { requiresGrad: true });
  const c = ag.Tensor.fromArray(backend, [data.init.c], [], { requiresGrad: true });
  const d = ag.Tensor.fromArray(backend, [data.init.d], [], { requiresGrad: true });
  const optimizer = new ag.SGD([a, b, c, d], { lr: learningRate });
  function predict(x) {
    // y = a * x ^ 3 + b * x ^ 2 + c * x + d
    return a
      .mul(x.pow(3))
      .add(b.mul(x.pow(2)))
      .add(c.mul(x))
      .add(d);
  }
  function loss(prediction, labels) {
    return prediction.sub(labels).pow(2).mean();
  }
  const xs = ag.Tensor.fromArray(backend, data.xs, [data.xs.length]);
  const ys = ag.Tensor.fromArray(backend, data.ys, [data.ys.length]);
  for (let iter = 0; iter < numIterations; iter++) {
    const cost = await ag.scope(() => optimizer.minimize(() => loss(predict(xs), ys)).item());
    onIteration?.(iter, cost);
  }
  const coefficients = { a: await a.item(), b: await b.item(), c: await c.item(), d: await d.item() };
  for (const t of [a, b, c, d, xs, ys]) t.dispose();
  return coefficients;
}
// port:end
