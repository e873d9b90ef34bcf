// LSTM and RNN against TensorFlow.js's tf.layers.lstm and tf.layers.simpleRNN (cpu backend) as an independent
// peer, with the same weights: tfjs's kernel is W_ihᵀ, its recurrent kernel W_hhᵀ, its bias b_ih + b_hh, and
// its LSTM gate order (i, f, c, o) is PyTorch's. (tfjs's GRU resets before the recurrent matmul, PyTorch's after:
// the GRU is held to the float64 oracle of recurrent.test.ts instead.)
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { type ComputeBackend, mulberry32 } from '@polyhal/hal';
import * as tf from '@tensorflow/tfjs';
import { REPO_BACKENDS } from '../support/backends.js';

const rng = mulberry32(21);
const rand = (n: number): number[] => Array.from({ length: n }, () => rng() * 2 - 1);
const [B, T, I, H] = [3, 5, 4, 6];

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** [rows, cols] row-major → its transpose as a tf 2-D tensor. */
const transposed = (v: ArrayLike<number>, rows: number, cols: number): tf.Tensor2D =>
  tf.tensor2d(Array.from(v), [rows, cols]).transpose();

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`recurrent layers on ${name} against TensorFlow.js`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    for (const kind of ['LSTM', 'RNN'] as const) {
      const peerName = kind === 'LSTM' ? 'lstm' : 'simpleRNN';
      test(`${kind}: output sequence and final state as tf.layers.${peerName}'s`, async () => {
        const G = kind === 'LSTM' ? 4 : 1;
        const opts = { backend: be, rng: 8, batchFirst: true };
        const layer = kind === 'LSTM' ? new ag.LSTM(I, H, opts) : new ag.RNN(I, H, opts);
        const s = layer.stateDict();
        const [wih, whh, bih, bhh] = await Promise.all(
          ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'].map(async (k) => s[k]!.data()),
        );
        const xv = rand(B * T * I);
        // the layer's output and last state, read back inside a scope that frees every intermediate
        const got = await ag.scope(async () => {
          const x = Tensor.fromArray(be, xv, [B, T, I]);
          const [out, hN] =
            layer instanceof ag.LSTM ? (([o, [h]]) => [o, h])(layer.forwardWithState(x)) : layer.forwardWithState(x);
          return [await out!.data(), await hN!.data()];
        });
        const peer =
          kind === 'LSTM'
            ? tf.layers.lstm({ units: H, returnSequences: true, returnState: true, recurrentActivation: 'sigmoid' })
            : tf.layers.simpleRNN({ units: H, returnSequences: true, returnState: true });
        const xt = tf.tensor3d(xv, [B, T, I]);
        peer.apply(xt); // builds the weights
        peer.setWeights([
          transposed(wih!, G * H, I),
          transposed(whh!, G * H, H),
          tf.add(tf.tensor1d(Array.from(bih!)), tf.tensor1d(Array.from(bhh!))),
        ]);
        const [tOut, tH] = peer.apply(xt) as tf.Tensor[];
        const want = [await tOut!.data(), await tH!.data()];
        for (let k = 0; k < 2; k++) {
          expect(got[k]!.length).toBe(want[k]!.length);
          let worst = 0;
          for (let i = 0; i < want[k]!.length; i++) worst = Math.max(worst, Math.abs(got[k]![i]! - want[k]![i]!));
          expect(worst).toBeLessThan(name === 'webgpu' ? 3e-5 : 1e-5);
        }
        tf.dispose([xt, tOut!, tH!]);
        peer.dispose();
        layer.dispose();
      });
    }
  });
}

afterAll(() => tf.disposeVariables());
