// Benchmark suite 'losses': the loss composites (hal/src/families/loss/losses.ts) against their TensorFlow.js
// counterparts on the same [4096, 1000] inputs, forward, reduced to the mean: crossEntropy with int32
// class labels vs tf.losses.softmaxCrossEntropy with the one-hot labels it needs, and
// binaryCrossEntropyWithLogits vs tf.losses.sigmoidCrossEntropy (both on soft targets).
import { force, pair, rand } from './common.mjs';

const [N, C] = [4096, 1000];

export const LOSS_SUITES = {
  async losses(be, tf) {
    const z = rand(N * C, 21).map((v) => v * 8);
    const labels = Int32Array.from(rand(N, 22), (v) => Math.min(C - 1, Math.floor((v + 1) * (C / 2))));
    const hot = new Float32Array(N * C);
    labels.forEach((l, n) => (hot[n * C + l] = 1));
    const soft = Float32Array.from(rand(N * C, 23), (v) => (v + 1) / 2);
    const pz = be.fromArray(z, [N, C]);
    const pl = be.fromArray(labels, [N], 'int32');
    const py = be.fromArray(soft, [N, C]);
    const tz = tf.tensor2d(z, [N, C]);
    const thot = tf.tensor2d(hot, [N, C]);
    const ty = tf.tensor2d(soft, [N, C]);
    const cases = [
      [
        `crossEntropy, int32 labels (tfjs: softmaxCrossEntropy, one-hot) [${N},${C}]`,
        () => be.crossEntropy(pz, pl),
        () => tf.tidy(() => tf.losses.softmaxCrossEntropy(thot, tz)),
      ],
      [
        `binaryCrossEntropyWithLogits (tfjs: sigmoidCrossEntropy) [${N},${C}]`,
        () => be.binaryCrossEntropyWithLogits(pz, py),
        () => tf.tidy(() => tf.losses.sigmoidCrossEntropy(ty, tz)),
      ],
    ];
    const rows = [];
    for (const [name, ours, theirs] of cases) {
      const t = await pair(
        async () => {
          const c = ours();
          await force(be, c);
          be.free(c);
        },
        async () => {
          const c = theirs();
          if (be.deviceType === 'gpu') await c.data(); // a scalar: tfjs cannot slice it
          c.dispose();
        },
        { iterations: 10 },
      );
      rows.push({ suite: name, size: N * C, unit: 'ms', work: 0, ...t });
    }
    for (const a of [pz, pl, py]) be.free(a);
    for (const a of [tz, thot, ty]) a.dispose();
    return rows;
  },
};
