import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { type ComputeBackend, DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';
import { LOSS_CHECKS } from './gradcheck-losses.js';
import { gradCheckTests } from './gradchecks.js';

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`losses on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    gradCheckTests(() => be, LOSS_CHECKS);

    test('crossEntropy with class indices equals the one-hot form; labels out of range give NaN', async () => {
      await ag.scope(async () => {
        const z = Tensor.fromArray(be, [1, 2, 3, -1, 0, 4], [2, 3]);
        const byIndex = await ag.crossEntropy(z, Tensor.fromArray(be, [2, 0], [2], { dtype: 'int32' })).item();
        const byProb = await ag.crossEntropy(z, Tensor.fromArray(be, [0, 0, 1, 1, 0, 0], [2, 3])).item();
        expect(byIndex).toBeCloseTo(byProb, 5);
        const bad = ag.nllLoss(z, Tensor.fromArray(be, [3, -2], [2], { dtype: 'int32' }), { reduction: 'none' });
        expect(Array.from(await bad.data()).every(Number.isNaN)).toBe(true);
      });
    });

    test('class weights and posWeight are constants: requiresGrad is refused', async () => {
      await ag.scope(async () => {
        const z = Tensor.fromArray(be, [1, 2, 3, -1, 0, 4], [2, 3], { requiresGrad: true });
        const w = Tensor.fromArray(be, [1, 2, 3], [3], { requiresGrad: true });
        const l = Tensor.fromArray(be, [2, 0], [2], { dtype: 'int32' });
        expect(() => ag.crossEntropy(z, l, { weight: w })).toThrow(InvalidArgumentError);
        expect(() => ag.binaryCrossEntropyWithLogits(z, z, { posWeight: w })).toThrow(InvalidArgumentError);
        expect(() => ag.crossEntropy(z, z, { labelSmoothing: 0.1 })).toThrow(InvalidArgumentError);
      });
    });
  });
}

describe('class labels of the wrong dtype: a message that teaches the cast', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['cpu']!();
  });
  afterAll(() => be.dispose());

  /** The error `fn` throws, after checking it allocated nothing. */
  const thrown = (fn: () => unknown): Error => {
    const live = be.liveBufferCount();
    try {
      fn();
    } catch (e) {
      expect(be.liveBufferCount()).toBe(live);
      return e as Error;
    }
    throw new Error('expected a throw');
  };

  test("float32 indices from a DataLoader: a DTypeError that says int32 and labels.cast('int32')", async () => {
    const loader = new ag.DataLoader({
      inputs: Float32Array.from({ length: 12 }, (_, i) => i / 12),
      labels: Float32Array.from([0, 2, 1, 2]),
      inputShape: [3],
      labelShape: [],
      batchSize: 4,
      backend: be,
    });
    for await (const { x, y } of loader) {
      expect(y.dtype).toBe('float32'); // what the DataLoader yields: the reason for the message
      expect(y.shape).toEqual([4]);
      await ag.scope(async () => {
        const logits = ag.matmul(x, Tensor.fromArray(be, [1, 0, 2, 0, 1, -1, 3, 2, 0], [3, 3]));
        for (const loss of [ag.crossEntropy, ag.nllLoss]) {
          const e = thrown(() => loss(logits, y));
          expect(e).toBeInstanceOf(DTypeError);
          expect(e.message).toMatch(/labels of shape \[4\] are class indices, which must be int32, got float32/);
          expect(e.message).toContain("labels.cast('int32')");
        }
        // the cast it teaches works, and gives the loss of int32 labels
        const cast = await ag.crossEntropy(logits, y.cast('int32')).item();
        const direct = await ag
          .crossEntropy(logits, Tensor.fromArray(be, [0, 2, 1, 2], [4], { dtype: 'int32' }))
          .item();
        expect(cast).toBe(direct);
      });
    }
  });

  test('indices [N, d1] of other dtypes, the same DTypeError; float32 [N, C]: probabilities', async () => {
    await ag.scope(async () => {
      const z = Tensor.fromArray(be, [1, 2, 3, -1, 0, 4, 2, 2, 1, 0, 0, 1], [2, 3, 2]);
      for (const dtype of ['float32', 'float16', 'float64', 'uint8', 'int8', 'bool'] as const) {
        const l = Tensor.fromArray(be, [0, 1, 1, 0], [2, 2], { dtype });
        const e = thrown(() => ag.crossEntropy(z, l));
        expect(e).toBeInstanceOf(DTypeError);
        expect(e.message).toContain(`must be int32, got ${dtype}; cast them with labels.cast('int32')`);
      }
      const probs = Tensor.fromArray(be, [0, 0, 1, 1, 0, 0], [2, 3]);
      const z2 = Tensor.fromArray(be, [1, 2, 3, -1, 0, 4], [2, 3]);
      expect(Number.isFinite(await ag.crossEntropy(z2, probs).item())).toBe(true);
    });
  });

  test("the HAL's nllLoss and crossEntropy say the same at their level: backend.cast(labels, 'int32')", () => {
    const z = be.fromArray([1, 2, 3, -1, 0, 4], [2, 3]);
    const l = be.fromArray([2, 0], [2]);
    try {
      for (const loss of [() => be.crossEntropy(z, l), () => be.nllLoss(z, l)]) {
        const e = thrown(loss);
        expect(e).toBeInstanceOf(DTypeError);
        expect(e.message).toMatch(/labels must be int32 class indices, got float32/);
        expect(e.message).toContain("backend.cast(labels, 'int32')");
      }
    } finally {
      be.free(z);
      be.free(l);
    }
  });

  test('float32 labels of neither form are a ShapeMismatchError naming both forms', async () => {
    await ag.scope(async () => {
      const z = Tensor.fromArray(be, [1, 2, 3, -1, 0, 4], [2, 3]);
      const column = Tensor.fromArray(be, [0, 2], [2, 1]); // DataLoader's labelShape [1]
      const e = thrown(() => ag.crossEntropy(z, column));
      expect(e).toBeInstanceOf(ShapeMismatchError);
      expect(e.message).toMatch(/crossEntropy: labels of shape \[2, 1\] fit neither form for logits \[2, 3\]/);
      expect(e.message).toMatch(/int32 class indices \[2\] or float32 class probabilities \[2, 3\]/);
      const bad = thrown(() => ag.crossEntropy(z, [0, 2] as unknown as Tensor));
      expect(bad).toBeInstanceOf(InvalidArgumentError);
      expect(bad.message).toMatch(/crossEntropy: labels must be a Tensor, got \[0, 2\]/);
    });
  });
});
