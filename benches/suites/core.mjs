// The core suites of `npm run bench`: each runs one PolyHAL backend and its TensorFlow.js counterpart on the
// same inputs and returns rows { suite, size, unit, work } + timings. On GPUs results are forced the way a
// user would read them (one element after the last queued op); CPU backends compute in the call.
import * as ag from '@polyhal/autograd';
import { force, forceTf, pair, rand, readOne } from './common.mjs';

/** 8,000 real digits from the mnist package (images in [0, 1], one-hot labels), in the package's order. */
let mnistCache;
async function mnist8000() {
  if (mnistCache) return mnistCache;
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const x = new Float32Array(8000 * 784);
  const y = new Float32Array(8000 * 10);
  for (let d = 0, n = 0; d < 10; d++) {
    const raw = require(`mnist/src/digits/${d}.json`).data;
    for (let i = 0; i < 800; i++, n++) {
      x.set(raw.slice(i * 784, (i + 1) * 784), n * 784);
      y[n * 10 + d] = 1;
    }
  }
  return (mnistCache = { x, y });
}
export const CORE_SUITES = {
  async matmul(be, tf, { software }) {
    const sizes =
      be.name === 'cpu'
        ? [64, 128, 256, 512]
        : software
          ? [64, 128, 256]
          : be.deviceType === 'gpu'
            ? [256, 1024, 2048, 4096]
            : [64, 128, 256, 512, 1024];
    const rows = [];
    for (const n of sizes) {
      const a = rand(n * n, 1),
        b = rand(n * n, 2);
      const pa = be.fromArray(a, [n, n]),
        pb = be.fromArray(b, [n, n]);
      const ta = tf.tensor2d(a, [n, n]),
        tb = tf.tensor2d(b, [n, n]);
      const t = await pair(
        async () => {
          const c = be.matmul(pa, pb);
          await force(be, c);
          be.free(c);
        },
        async () => {
          const c = tf.matMul(ta, tb);
          await forceTf(be, tf, c);
          c.dispose();
        },
        // Small products take microseconds: many iterations after a real warm-up, or the first
        // (unoptimized) calls and timer granularity decide the median.
        n <= 128 ? { iterations: 200, warmup: 50 } : { iterations: n >= 512 ? 3 : 10 },
      );
      rows.push({ suite: 'matmul', size: n, unit: 'GFLOP/s', work: (2 * n ** 3) / 1e9, ...t });
      be.free(pa);
      be.free(pb);
      ta.dispose();
      tb.dispose();
    }
    return rows;
  },
  async elementwise(be, tf, { software }) {
    const sizes = software ? [1 << 10, 1 << 20] : [1 << 10, 1 << 20, 1 << 24];
    const rows = [];
    for (const n of sizes) {
      const a = rand(n, 3),
        b = rand(n, 4);
      const pa = be.fromArray(a, [n]),
        pb = be.fromArray(b, [n]);
      const ta = tf.tensor1d(a),
        tb = tf.tensor1d(b);
      for (const op of ['add', 'relu', 'abs']) {
        const t = await pair(
          async () => {
            const c = op === 'add' ? be.add(pa, pb) : be[op](pa);
            await force(be, c);
            be.free(c);
          },
          async () => {
            const c = op === 'add' ? tf.add(ta, tb) : tf[op](ta);
            await forceTf(be, tf, c);
            c.dispose();
          },
          n <= 4096 ? { iterations: 500, warmup: 100 } : { iterations: n >= 1 << 24 ? 3 : 20 },
        );
        rows.push({ suite: op, size: n, unit: 'GB/s', work: ((op === 'add' ? 12 : 8) * n) / 1e9, ...t });
      }
      be.free(pa);
      be.free(pb);
      ta.dispose();
      tb.dispose();
    }
    return rows;
  },
  async random(be, tf) {
    // Filling n float32 uniforms in [0, 1): Philox4x32-10 on the device against tf.randomUniform (seeded).
    const rows = [];
    for (const n of [1 << 20, 1 << 24]) {
      let seed = 0;
      const t = await pair(
        async () => {
          const c = be.randomUniform([n], seed++);
          await force(be, c);
          be.free(c);
        },
        async () => {
          const c = tf.randomUniform([n], 0, 1, 'float32', seed++);
          await forceTf(be, tf, c);
          c.dispose();
        },
        { iterations: n >= 1 << 24 ? 3 : 20 },
      );
      rows.push({ suite: 'randomUniform', size: n, unit: 'GB/s', work: (4 * n) / 1e9, ...t });
    }
    return rows;
  },
  async reduce(be, tf, { software }) {
    // The op table's reductions over rows (axis 1, contiguous) and columns (axis 0, strided) of an n×n matrix.
    const sizes = software ? [64, 512] : [64, 1024, 4096];
    const rows = [];
    for (const n of sizes) {
      // Near 1 so that products stay finite.
      const a = Float32Array.from(rand(n * n, 8), (v) => 1 + v / 64);
      const pa = be.fromArray(a, [n, n]);
      const ta = tf.tensor2d(a, [n, n]);
      for (const op of ['sum', 'max', 'min', 'prod'])
        for (const axis of [1, 0]) {
          const t = await pair(
            async () => {
              const c = be[op](pa, axis);
              await force(be, c);
              be.free(c);
            },
            async () => {
              const c = tf[op](ta, axis);
              await forceTf(be, tf, c);
              c.dispose();
            },
            n <= 64 ? { iterations: 500, warmup: 100 } : { iterations: n >= 4096 ? 3 : 20 },
          );
          rows.push({ suite: `${op} axis ${axis}`, size: n * n, unit: 'GB/s', work: (4 * n * n) / 1e9, ...t });
        }
      be.free(pa);
      ta.dispose();
    }
    return rows;
  },
  async latency(be, tf) {
    const a = rand(1024, 5);
    const pa = be.fromArray(a, [1024]);
    const ta = tf.tensor1d(a);
    const t = await pair(
      async () => {
        const c = be.add(pa, pa);
        await be.read(c);
        be.free(c);
      },
      async () => {
        const c = tf.add(ta, ta);
        await c.data();
        c.dispose();
      },
      { iterations: 50 },
    );
    be.free(pa);
    ta.dispose();
    return [{ suite: 'latency (add 1K, dispatch→result)', size: 1024, unit: 'ms', work: 0, ...t }];
  },
  async softmaxCrossEntropy(be, tf) {
    const [n, c] = [512, 10];
    const z = rand(n * c, 6);
    const y = new Float32Array(n * c);
    for (let i = 0; i < n; i++) y[i * c + (i % c)] = 1;
    const pz = be.fromArray(z, [n, c]),
      py = be.fromArray(y, [n, c]);
    const tz = tf.tensor2d(z, [n, c]),
      ty = tf.tensor2d(y, [n, c]);
    const t = await pair(
      async () => {
        const { loss, grad } = be.softmaxCrossEntropy(pz, py, true);
        await readOne(be, grad);
        be.free(loss);
        be.free(grad);
      },
      async () => {
        const g = tf.grad((x) => tf.losses.softmaxCrossEntropy(ty, x))(tz);
        await g.slice([0, 0], [1, 1]).data();
        g.dispose();
      },
      { iterations: 20 },
    );
    be.free(pz);
    be.free(py);
    tz.dispose();
    ty.dispose();
    return [{ suite: 'softmax cross-entropy fwd+grad [512,10]', size: n, unit: 'ms', work: 0, ...t }];
  },
  async mlpStep(be, tf) {
    const batch = 128;
    const x = rand(batch * 784, 7).map((v) => (v + 1) / 2);
    const y = new Float32Array(batch * 10);
    for (let i = 0; i < batch; i++) y[i * 10 + (i % 10)] = 1;
    const model = new ag.Sequential(
      new ag.Linear(784, 256, { backend: be, rng: 1 }),
      new ag.ReLU(),
      new ag.Linear(256, 10, { backend: be, rng: 2 }),
    );
    const opt = new ag.Adam(model.parameters(), { lr: 1e-3 });
    const px = ag.Tensor.fromArray(be, x, [batch, 784]),
      py = ag.Tensor.fromArray(be, y, [batch, 10]);
    const tx = tf.tensor2d(x, [batch, 784]),
      ty = tf.tensor2d(y, [batch, 10]);
    const w1 = tf.variable(tf.randomUniform([784, 256], -0.036, 0.036)),
      b1 = tf.variable(tf.zeros([256]));
    const w2 = tf.variable(tf.randomUniform([256, 10], -0.0625, 0.0625)),
      b2 = tf.variable(tf.zeros([10]));
    const topt = tf.train.adam(1e-3);
    const t = await pair(
      async () =>
        ag.scope(async () => {
          const l = ag.crossEntropy(model.forward(px), py);
          opt.zeroGrad();
          l.backward();
          opt.step();
          await l.item();
        }),
      async () => {
        const l = topt.minimize(
          () => tf.losses.softmaxCrossEntropy(ty, tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(tx, w1), b1)), w2), b2)),
          true,
        );
        await l.data();
        l.dispose();
      },
      { iterations: 10 },
    );
    opt.zeroGrad();
    opt.dispose();
    model.dispose();
    px.dispose();
    py.dispose();
    for (const v of [tx, ty, w1, b1, w2, b2]) v.dispose();
    return [{ suite: 'MLP 784-256-10 train step (batch 128, Adam)', size: batch, unit: 'ms', work: 0, ...t }];
  },
  /** One MNIST epoch of the 784-256-10 MLP (batch 64, Adam): wall time and peak live device bytes. */
  async epoch(be, tf) {
    const { x, y } = await mnist8000();
    const batches = 8000 / 64;
    let peakOurs = 0;
    let peakTheirs = 0;
    const ours = async () => {
      const model = new ag.Sequential(
        new ag.Linear(784, 256, { backend: be, rng: 1 }),
        new ag.ReLU(),
        new ag.Linear(256, 10, { backend: be, rng: 2 }),
      );
      const opt = new ag.Adam(model.parameters(), { lr: 1e-3 });
      const loader = new ag.DataLoader({
        inputs: x,
        labels: y,
        inputShape: [784],
        labelShape: [10],
        batchSize: 64,
        backend: be,
        shuffle: true,
        seed: 1,
      });
      const base = be.memoryStats().liveBytes;
      let peak = 0;
      for await (const b of loader) {
        await ag.scope(async () => {
          const l = ag.crossEntropy(model.forward(b.x), b.y);
          opt.zeroGrad();
          l.backward();
          opt.step();
          await l.item();
        });
        peak = Math.max(peak, be.memoryStats().liveBytes - base);
      }
      opt.zeroGrad();
      opt.dispose();
      model.dispose();
      peakOurs = Math.max(peakOurs, peak);
    };
    const theirs = async () => {
      const w1 = tf.variable(tf.randomUniform([784, 256], -0.036, 0.036)),
        b1 = tf.variable(tf.zeros([256]));
      const w2 = tf.variable(tf.randomUniform([256, 10], -0.0625, 0.0625)),
        b2 = tf.variable(tf.zeros([10]));
      const opt = tf.train.adam(1e-3);
      const base = tf.memory().numBytes;
      for (let i = 0; i < batches; i++) {
        const l = tf.tidy(() => {
          const bx = tf.tensor2d(x.subarray(i * 64 * 784, (i + 1) * 64 * 784), [64, 784]);
          const by = tf.tensor2d(y.subarray(i * 640, (i + 1) * 640), [64, 10]);
          return opt.minimize(
            () => tf.losses.softmaxCrossEntropy(by, tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(bx, w1), b1)), w2), b2)),
            true,
          );
        });
        await l.data();
        peakTheirs = Math.max(peakTheirs, tf.memory().numBytes - base);
        l.dispose();
      }
      opt.dispose();
      for (const v of [w1, b1, w2, b2]) v.dispose();
    };
    const t = await pair(ours, theirs, { iterations: 1, rounds: 2, warmup: 0 }); // an epoch warms itself up
    return [
      {
        suite: 'MNIST epoch (MLP, 8000 digits, batch 64)',
        size: 8000,
        unit: 'ms',
        work: 0,
        peakBytes: peakOurs,
        peerPeakBytes: peakTheirs,
        ...t,
      },
    ];
  },
  async conv(be, tf) {
    const [n, c, h, o, k] = [32, 1, 28, 16, 5];
    const xd = rand(n * c * h * h, 8),
      wd = rand(o * c * k * k, 9);
    const px = ag.Tensor.fromArray(be, xd, [n, c, h, h], { requiresGrad: true });
    const pw = ag.Tensor.fromArray(be, wd, [o, c, k, k], { requiresGrad: true });
    const tx = tf.tensor4d(xd, [n, c, h, h]).transpose([0, 2, 3, 1]); // tfjs wants NHWC
    const tw = tf.tensor4d(wd, [o, c, k, k]).transpose([2, 3, 1, 0]);
    const t = await pair(
      async () =>
        ag.scope(async () => {
          px.grad?.dispose();
          pw.grad?.dispose();
          px.grad = null;
          pw.grad = null;
          ag.sum(ag.conv2d(px, pw, { stride: 2, padding: 2 })).backward();
          await pw.grad.data();
        }),
      async () => {
        const g = tf.grads((x, w) => tf.sum(tf.conv2d(x, w, 2, 'same')))([tx, tw]);
        await g[1].data();
        g.forEach((d) => d.dispose());
      },
      { iterations: 5 },
    );
    px.dispose();
    pw.dispose();
    tx.dispose();
    tw.dispose();
    return [{ suite: 'Conv2d 5×5/2 fwd+bwd [32,1,28,28]→16', size: n, unit: 'ms', work: 0, ...t }];
  },
};
