// Runs each port's two twins in one process on the same data: the tfjs original on TensorFlow.js's backend of the
// same name, the PolyHAL port on a PolyHAL backend; reports lines, per-epoch figures and time per epoch.
//   node examples/tfjs-ports/run.mjs [--example mnist,polynomial,sentiment] [--backend cpu|wasm] [--size small|bench]
// prints one JSON object per example. benches/suites/tfjs-ports.mjs runs the bench sizes into benches/results;
// tests/examples/tfjs-ports.test.ts runs the small ones.
import { countPort } from './lines.mjs';
import { mnistData, polynomialData, sentimentData } from './data.mjs';
import * as mnistPolyhal from './mnist.polyhal.mjs';
import * as mnistTfjs from './mnist.tfjs.mjs';
import * as polyPolyhal from './polynomial.polyhal.mjs';
import * as polyTfjs from './polynomial.tfjs.mjs';
import * as sentPolyhal from './sentiment.polyhal.mjs';
import * as sentTfjs from './sentiment.tfjs.mjs';

/**
 * Each example's sizes: `small` for CI (seconds), `bench` for benches/suites/tfjs-ports.mjs, the examples' own
 * hyperparameters where tfjs-cpu finishes in minutes on 2 cores. MNIST: 1,200 digits, batch 64, 3 epochs (the
 * codelab: 5,500, batch 512, 10 epochs; tfjs-cpu takes some 30–45 ms per digit per epoch). Sentiment: 1,500
 * reviews of 20 tokens, a vocabulary of 100, embedding 32, batch 32, 6 epochs (the example: IMDB's 25,000 of 100
 * tokens, 10,000 words, embedding 128, batch 128, 10 epochs; tfjs-cpu's embedding gradient grows with the
 * vocabulary: one epoch of 320 reviews × 40 tokens over 1,000 words at embedding 128 took it 136 s).
 */
export const SIZES = {
  mnist: {
    small: { data: { trainSize: 256, testSize: 128 }, epochs: 2, batchSize: 16 },
    bench: { data: { trainSize: 1200, testSize: 400 }, epochs: 3, batchSize: 64 },
  },
  polynomial: {
    small: { data: { numPoints: 100 }, numIterations: 75, learningRate: 0.5 },
    bench: { data: { numPoints: 100 }, numIterations: 75, learningRate: 0.5 },
  },
  sentiment: {
    small: {
      data: { trainSize: 600, testSize: 300, maxLen: 10, vocabSize: 100 },
      embeddingSize: 16,
      epochs: 8,
      batchSize: 16,
    },
    bench: {
      data: { trainSize: 1500, testSize: 500, maxLen: 20, vocabSize: 100 },
      embeddingSize: 32,
      epochs: 6,
      batchSize: 32,
    },
  },
};

const median = (xs) => {
  const s = [...xs].sort((p, q) => p - q);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** `twin()`, or { error } when it throws (tfjs-wasm lacks Conv2DBackpropFilter and UnsortedSegmentSum). */
async function guarded(twin) {
  try {
    return await twin();
  } catch (e) {
    return { error: String(e.message ?? e).split('\n')[0] };
  }
}

/** Runs `train(onEpochEnd)` and returns its result with each epoch's wall time (ms, from the previous epoch's end). */
async function timed(train) {
  const times = [];
  let last = performance.now();
  const onEpochEnd = () => {
    const now = performance.now();
    times.push(now - last);
    last = now;
  };
  const result = await train(onEpochEnd);
  return { result, epochMs: times };
}

/** The MNIST ConvNet, both twins on the same digits: per-epoch figures and epoch times. */
export async function runMnist(backend, size = 'bench') {
  const s = SIZES.mnist[size];
  const data = mnistData(s.data);
  const opts = { epochs: s.epochs, batchSize: s.batchSize };
  const tf = await guarded(async () => {
    const tfModel = mnistTfjs.getModel();
    const t = await timed((onEpochEnd) => mnistTfjs.train(tfModel, data, { ...opts, onEpochEnd }));
    tfModel.dispose();
    return { ...mnistTfjs.figures(t.result), epochMs: t.epochMs };
  });
  const model = mnistPolyhal.getModel(backend);
  const ph = await timed((onEpochEnd) => mnistPolyhal.train(model, data, { ...opts, onEpochEnd }));
  model.dispose();
  return {
    example: 'mnist',
    size: { ...s.data, epochs: s.epochs, batchSize: s.batchSize },
    lines: countPort('mnist'),
    tfjs: tf,
    polyhal: { ...mnistPolyhal.figures(ph.result), epochMs: ph.epochMs },
  };
}

/** Polynomial regression, both twins from the same coefficients: loss per iteration, final coefficients, time. */
export async function runPolynomial(backend, size = 'bench', { repeats = 5 } = {}) {
  const s = SIZES.polynomial[size];
  const data = polynomialData(s.data);
  const opts = { numIterations: s.numIterations, learningRate: s.learningRate };
  const run = async (twin) => {
    const ms = [];
    let out;
    for (let r = 0; r < repeats; r++) {
      const loss = [];
      const t0 = performance.now();
      const coefficients = await twin({ ...opts, onIteration: (_, l) => loss.push(l) });
      ms.push(performance.now() - t0);
      out = { coefficients, loss };
    }
    return { ...out, runMs: ms };
  };
  return {
    example: 'polynomial',
    size: { ...s.data, numIterations: s.numIterations, learningRate: s.learningRate },
    init: data.init,
    target: data.target,
    lines: countPort('polynomial'),
    tfjs: await guarded(() => run((o) => polyTfjs.learnCoefficients(data, o))),
    polyhal: await run((o) => polyPolyhal.learnCoefficients(backend, data, o)),
  };
}

/** The sentiment LSTM, both twins on the same synthetic reviews: per-epoch figures, test accuracy, epoch times. */
export async function runSentiment(backend, size = 'bench') {
  const s = SIZES.sentiment[size];
  const data = sentimentData(s.data);
  const opts = { epochs: s.epochs, batchSize: s.batchSize };
  const args = [data.maxLen, data.vocabSize, s.embeddingSize];
  const twin = (t, f) => ({
    ...f(t.result),
    testLoss: t.result.testLoss,
    testAccuracy: t.result.testAcc,
    epochMs: t.epochMs,
  });
  const tf = await guarded(async () => {
    const tfModel = sentTfjs.buildModel(...args);
    const t = await timed((onEpochEnd) => sentTfjs.train(tfModel, data, { ...opts, onEpochEnd }));
    tfModel.dispose();
    return twin(t, sentTfjs.figures);
  });
  const model = sentPolyhal.buildModel(backend, data.vocabSize, s.embeddingSize);
  const ph = await timed((onEpochEnd) => sentPolyhal.train(model, data, { ...opts, onEpochEnd }));
  model.dispose();
  return {
    example: 'sentiment',
    size: { ...s.data, embeddingSize: s.embeddingSize, epochs: s.epochs, batchSize: s.batchSize },
    lines: countPort('sentiment'),
    tfjs: tf,
    polyhal: twin(ph, sentPolyhal.figures),
  };
}

export const EXAMPLES = { mnist: runMnist, polynomial: runPolynomial, sentiment: runSentiment };
export { median };

/** A PolyHAL backend by name, and TensorFlow.js set to its backend of the same name. */
export async function backends(name) {
  const tf = await import('@tensorflow/tfjs');
  if (name === 'wasm') await import('@tensorflow/tfjs-backend-wasm');
  await tf.setBackend(name);
  await tf.ready();
  if (name === 'cpu') return new (await import('@polyhal/backend-cpu')).CpuBackend();
  if (name === 'wasm') return (await import('@polyhal/backend-wasm')).createWasmBackend({ threads: 1 });
  throw new Error(`backend must be cpu or wasm, got ${name}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { Command } = await import('commander');
  const o = new Command()
    .option('--example <names>', 'comma list of mnist, polynomial, sentiment', 'mnist,polynomial,sentiment')
    .option('--backend <name>', 'cpu or wasm (PolyHAL and tfjs alike)', 'cpu')
    .option('--size <size>', 'small (CI) or bench (benches/suites/tfjs-ports.mjs)', 'small')
    .parse()
    .opts();
  const be = await backends(o.backend);
  for (const name of o.example.split(',')) {
    if (!EXAMPLES[name]) throw new Error(`unknown example ${name}`);
    console.log(JSON.stringify({ backend: o.backend, ...(await EXAMPLES[name](be, o.size)) }));
  }
  be.dispose();
  process.exit(0);
}
