// Benchmark suite 'vit': one training step of the main job's Vision Transformer (packages/models/src/vit.ts:
// 7×7 patches → 16 tokens, linear patch embedding, class token, learned position embedding, 4 pre-norm
// encoder blocks of width 64 with 4-head self-attention and a GELU MLP of 128, final LayerNorm, linear
// head) at batch 64: forward, softmax cross-entropy, backward and an AdamW step (weight decay 0.05, as the
// CLI trains it). Ours is the main job's own model (@polyhal/models); theirs is the same network in
// TensorFlow.js: tf.layers.dense, LayerNorm from tf.moments (eps 1e-5, as ours), attention from matMul,
// softmax, reshape and transpose, exact GELU (the layers' 'gelu' activation, from erf), gradients by
// tf.variableGrads and AdamW written with tf ops. Both get the same random digit-shaped inputs [64, 784]
// in [0, 1] and labels.
// Not tf.layers.layerNormalization: its call tiles the moments, gamma and beta to the input's shape, and
// Tile's gradient is one slice and one add per copy (about 20,000 kernels per step here); with it and
// tf.tile for the class token (tf.broadcastTo's gradient is one sum), a TensorFlow.js step took 1.3× as
// long on cpu and 4× as long on wasm as with the moments below.
import * as ag from '@polyhal/autograd';
import { mulberry32 } from '@polyhal/hal';
import { pair } from './common.mjs';

const [BATCH, WIDTH, DEPTH, HEADS, HIDDEN, PATCH] = [64, 64, 4, 4, 128, 7];
const [LR, BETA1, BETA2, EPS, DECAY] = [1e-3, 0.9, 0.999, 1e-8, 0.05];
const SIDE = 28 / PATCH;
const TOKENS = SIDE * SIDE;

/** The ViT in TensorFlow.js: dense layers built on first use; `variables` lists every trainable variable after. */
function tfVit(tf) {
  const dense = (units, activation) => tf.layers.dense({ units, activation });
  const norms = [];
  const norm = () => {
    const gamma = tf.variable(tf.ones([WIDTH]));
    const beta = tf.variable(tf.zeros([WIDTH]));
    norms.push(gamma, beta);
    return {
      apply: (x) => {
        const { mean, variance } = tf.moments(x, -1, true);
        return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-5))), gamma), beta);
      },
    };
  };
  const small = (shape) => tf.variable(tf.randomUniform(shape, -0.02 * Math.sqrt(3), 0.02 * Math.sqrt(3)));
  const embed = dense(WIDTH);
  const classToken = small([1, 1, WIDTH]);
  const position = small([1, TOKENS + 1, WIDTH]);
  const blocks = Array.from({ length: DEPTH }, () => ({
    norm1: norm(),
    q: dense(WIDTH),
    k: dense(WIDTH),
    v: dense(WIDTH),
    out: dense(WIDTH),
    norm2: norm(),
    fc1: dense(HIDDEN, 'gelu'),
    fc2: dense(WIDTH),
  }));
  const final = norm();
  const head = dense(10);
  const layers = [embed, ...blocks.flatMap((b) => [b.q, b.k, b.v, b.out, b.fc1, b.fc2]), head];
  const headDim = WIDTH / HEADS;
  const attention = (b, x) => {
    const [N, L] = x.shape;
    const split = (t) => tf.transpose(tf.reshape(t, [N, L, HEADS, headDim]), [0, 2, 1, 3]);
    const [q, k, v] = [b.q, b.k, b.v].map((d) => split(d.apply(x)));
    const weights = tf.softmax(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(headDim)));
    const heads = tf.transpose(tf.matMul(weights, v), [0, 2, 1, 3]);
    return b.out.apply(tf.reshape(heads, [N, L, WIDTH]));
  };
  const forward = (x) => {
    const N = x.shape[0];
    // [N, 784] → [N, side, p, side, p] → [N, side, side, p, p] → [N, tokens, p·p]
    const grid = tf.transpose(tf.reshape(x, [N, SIDE, PATCH, SIDE, PATCH]), [0, 1, 3, 2, 4]);
    const patches = tf.reshape(grid, [N, TOKENS, PATCH * PATCH]);
    const tokens = tf.concat([tf.broadcastTo(classToken, [N, 1, WIDTH]), embed.apply(patches)], 1);
    let h = tf.add(tokens, position);
    for (const b of blocks) {
      h = tf.add(h, attention(b, b.norm1.apply(h)));
      h = tf.add(h, b.fc2.apply(b.fc1.apply(b.norm2.apply(h))));
    }
    const first = tf.slice(final.apply(h), [0, 0, 0], [N, 1, WIDTH]);
    return head.apply(tf.reshape(first, [N, WIDTH]));
  };
  return {
    forward,
    variables: () => [
      classToken,
      position,
      ...norms,
      ...layers.flatMap((l) => l.trainableWeights.map((w) => w.read())),
    ],
    dispose: () => {
      for (const l of layers) l.dispose();
      for (const v of [classToken, position, ...norms]) v.dispose();
    },
  };
}

/** AdamW (decoupled weight decay) with tf ops, the update of ours (Loshchilov & Hutter 2019). */
function tfAdamW(tf, variables) {
  const state = variables.map((v) => [tf.variable(tf.zerosLike(v), false), tf.variable(tf.zerosLike(v), false)]);
  let t = 0;
  return {
    step(grads) {
      t++;
      const [c1, c2] = [1 - BETA1 ** t, 1 - BETA2 ** t];
      tf.tidy(() =>
        variables.forEach((p, i) => {
          const g = grads[p.name];
          const [m, v] = state[i];
          m.assign(tf.add(tf.mul(m, BETA1), tf.mul(g, 1 - BETA1)));
          v.assign(tf.add(tf.mul(v, BETA2), tf.mul(tf.square(g), 1 - BETA2)));
          const update = tf.div(tf.div(m, c1), tf.add(tf.sqrt(tf.div(v, c2)), EPS));
          p.assign(tf.sub(tf.mul(p, 1 - LR * DECAY), tf.mul(update, LR)));
        }),
      );
    },
    dispose: () => state.flat().forEach((s) => s.dispose()),
  };
}

export const VIT_SUITES = {
  async vit(be, tf) {
    const { VisionTransformer } = await import('@polyhal/models');
    const r = mulberry32(31);
    const x = Float32Array.from({ length: BATCH * 784 }, () => r());
    const y = new Float32Array(BATCH * 10);
    for (let i = 0; i < BATCH; i++) y[i * 10 + Math.floor(r() * 10)] = 1;

    const model = new VisionTransformer({ backend: be, seed: 1 });
    const opt = new ag.AdamW(model.parameters(), { lr: LR, betas: [BETA1, BETA2], eps: EPS, weightDecay: DECAY });
    const px = ag.Tensor.fromArray(be, x, [BATCH, 784]);
    const py = ag.Tensor.fromArray(be, y, [BATCH, 10]);

    const tx = tf.tensor2d(x, [BATCH, 784]);
    const ty = tf.tensor2d(y, [BATCH, 10]);
    const vit = tfVit(tf);
    tf.tidy(() => vit.forward(tx)); // builds the layers' weights
    const variables = vit.variables();
    const topt = tfAdamW(tf, variables);

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
        const l = tf.tidy(() => {
          const { value, grads } = tf.variableGrads(
            () => tf.losses.softmaxCrossEntropy(ty, vit.forward(tx)),
            variables,
          );
          topt.step(grads);
          return value;
        });
        await l.data();
        l.dispose();
      },
      { iterations: 3, rounds: 3, warmup: 2 },
    );
    opt.zeroGrad();
    opt.dispose();
    model.dispose();
    px.dispose();
    py.dispose();
    topt.dispose();
    vit.dispose();
    tx.dispose();
    ty.dispose();
    const suite = 'ViT train step (batch 64, 4 blocks × width 64, AdamW)';
    return [{ suite, size: BATCH, unit: 'ms', work: 0, ...t }];
  },
};
