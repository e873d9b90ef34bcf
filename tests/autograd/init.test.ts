// Initializers: sample statistics (mean, variance, bounds) against each distribution's formula computed
// here in float64 from the layer's fans (worked out by hand per layer type), orthogonal's QᵀQ = I, the
// per-layer defaults, in-place initialize, and the same weights from a seed on every backend.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type Initializer, type InitializerLike, type Tensor, init } from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { CpuBackend } from '@polyhal/backend-cpu';
import { REPO_BACKENDS } from '../support/backends.js';

const stats = (v: ArrayLike<number>): { mean: number; variance: number; maxAbs: number } => {
  let s = 0;
  let m = 0;
  for (let i = 0; i < v.length; i++) {
    s += v[i]!;
    m = Math.max(m, Math.abs(v[i]!));
  }
  const mean = s / v.length;
  let q = 0;
  for (let i = 0; i < v.length; i++) q += (v[i]! - mean) ** 2;
  return { mean, variance: q / v.length, maxAbs: m };
};
/** Checks a sample against a zero-mean distribution of `variance`, within `bound` where it has one. */
const expectDistribution = (v: ArrayLike<number>, variance: number, bound?: number): void => {
  const s = stats(v);
  expect(Math.abs(s.mean)).toBeLessThan(5 * Math.sqrt(variance / v.length));
  expect(Math.abs(s.variance / variance - 1)).toBeLessThan(0.05);
  if (bound !== undefined) expect(s.maxAbs).toBeLessThanOrEqual(bound * (1 + 1e-6));
};
const values = async (t: Tensor): Promise<Float32Array> => Float32Array.from(await t.data());

const seen: Record<string, Float32Array[]> = {};

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`initializers on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test('Linear [out 200, in 300]: each initializer against its formula', async () => {
      const [fanIn, fanOut] = [300, 200];
      // N(0, σ²) cut at ±2σ (tfjs's truncated forms) has variance σ²·(1 − 4φ(2)/(2Φ(2) − 1)).
      const phi2 = Math.exp(-2) / Math.sqrt(2 * Math.PI);
      const cut = 1 - (4 * phi2) / (2 * 0.9772498680518208 - 1);
      const cases: [InitializerLike, number, number | undefined][] = [
        ['glorotUniform', 2 / (fanIn + fanOut), Math.sqrt(6 / (fanIn + fanOut))],
        ['xavierUniform', 2 / (fanIn + fanOut), Math.sqrt(6 / (fanIn + fanOut))],
        ['glorotNormal', (cut * 2) / (fanIn + fanOut), 2 * Math.sqrt(2 / (fanIn + fanOut))],
        ['xavierNormal', 2 / (fanIn + fanOut), undefined],
        ['heUniform', 2 / fanIn, Math.sqrt(6 / fanIn)],
        ['heNormal', (cut * 2) / fanIn, 2 * Math.sqrt(2 / fanIn)],
        ['kaimingNormal', 2 / fanIn, undefined],
        [init.kaimingNormal({ mode: 'fanOut', nonlinearity: 'relu' }), 2 / fanOut, undefined],
        [init.kaimingUniform({ a: Math.sqrt(5) }), 1 / (3 * fanIn), 1 / Math.sqrt(fanIn)],
        ['lecunUniform', 1 / fanIn, Math.sqrt(3 / fanIn)],
        ['lecunNormal', cut / fanIn, 2 * Math.sqrt(1 / fanIn)],
        [init.normal({ std: 0.02 }), 0.0004, undefined],
        ['uniform', 0.05 ** 2 / 3, 0.05],
        [init.xavierUniform({ gain: ag.calculateGain('tanh') }), (25 / 9) * (2 / 500), (5 / 3) * Math.sqrt(6 / 500)],
      ];
      for (const [spec, variance, bound] of cases) {
        const layer = new ag.Linear(fanIn, fanOut, {
          backend: be,
          rng: 3,
          kernelInitializer: spec,
          biasInitializer: 'zeros',
        });
        expectDistribution(await values(layer.weight), variance, bound);
        expect(Array.from(await values(layer.bias!)).every((b) => b === 0)).toBe(true);
        layer.dispose();
      }
      const ones = new ag.Linear(3, 2, { backend: be, kernelInitializer: 'ones', biasInitializer: init.constant(0.5) });
      expect(Array.from(await values(ones.weight))).toEqual([1, 1, 1, 1, 1, 1]);
      expect(Array.from(await values(ones.bias!))).toEqual([0.5, 0.5]);
      ones.dispose();
    });

    test('the defaults: Linear and Conv U(±1/√fanIn) for weight and bias (PyTorch), Embedding N(0, 1)', async () => {
      const lin = new ag.Linear(400, 150, { backend: be, rng: 1 });
      expectDistribution(await values(lin.weight), 1 / (3 * 400), 1 / 20);
      expect(stats(await values(lin.bias!)).maxAbs).toBeLessThanOrEqual(1 / 20);
      seen[name] = [await values(lin.weight)];
      lin.dispose();
      const conv = new ag.Conv2d(12, 64, 3, { backend: be, rng: 2, groups: 2 }); // fanIn = 6·9
      expectDistribution(await values(conv.weight), 1 / (3 * 54), 1 / Math.sqrt(54));
      conv.dispose();
      const emb = new ag.Embedding(300, 64, { backend: be, rng: 4 });
      expectDistribution(await values(emb.parameters()[0]!), 1);
      emb.dispose();
      const tfEmb = new ag.Embedding(300, 64, { backend: be, embeddingsInitializer: 'uniform' });
      expectDistribution(await values(tfEmb.parameters()[0]!), 0.05 ** 2 / 3, 0.05);
      tfEmb.dispose();
    });

    test('conv fans include the receptive field and groups; ConvTranspose takes its weight’s second dim', async () => {
      // Conv2d(16 → 32, 5×5, groups 4): weight [32, 4, 5, 5], fanIn = 4·25, fanOut = 32·25.
      const conv = new ag.Conv2d(16, 32, 5, { backend: be, groups: 4, kernelInitializer: 'glorotUniform' });
      expectDistribution(await values(conv.weight), 2 / (100 + 800), Math.sqrt(6 / 900));
      conv.dispose();
      // ConvTranspose2d(24 → 40, 3×3): weight [24, 40, 3, 3], fanIn = 40·9, fanOut = 24·9.
      const tr = new ag.ConvTranspose2d(24, 40, 3, { backend: be, kernelInitializer: 'heUniform' });
      expectDistribution(await values(tr.weight), 2 / 360, Math.sqrt(6 / 360));
      tr.dispose();
      expect(ag.computeFans([32, 4, 5, 5])).toEqual({ fanIn: 100, fanOut: 800 });
      expect(ag.computeFans([7])).toEqual({ fanIn: 7, fanOut: 7 });
    });

    test('orthogonal: QᵀQ = I over the smaller side, for wide, tall and conv shapes', async () => {
      for (const [shape, gain] of [
        [[20, 50], 1],
        [[50, 20], 2],
        [[8, 2, 3, 3], 1],
      ] as [number[], number][]) {
        const t = ag.zeros(be, shape);
        ag.initialize(t, init.orthogonal({ gain }), { rng: 9 });
        const v = await values(t);
        t.dispose();
        const rows = shape[0]!;
        const cols = v.length / rows;
        const small = Math.min(rows, cols);
        // Gram matrix of the rows (wide) or the columns (tall), in float64.
        const at = (i: number, k: number): number => (rows <= cols ? v[i * cols + k]! : v[k * cols + i]!);
        let worst = 0;
        for (let i = 0; i < small; i++)
          for (let j = 0; j < small; j++) {
            let dot = 0;
            for (let k = 0; k < Math.max(rows, cols); k++) dot += at(i, k) * at(j, k);
            worst = Math.max(worst, Math.abs(dot - (i === j ? gain * gain : 0)));
          }
        expect(worst).toBeLessThan(1e-5 * gain * gain);
      }
    });

    test('initialize fills in place; bad specs are typed errors', async () => {
      const layer = new ag.Linear(4, 3, { backend: be });
      const w = layer.weight;
      const opt = new ag.SGD(layer.parameters(), { lr: 0.1 });
      expect(ag.initialize(w, 'zeros')).toBe(w);
      expect(layer.weight).toBe(w);
      expect(Array.from(await values(w)).every((x) => x === 0)).toBe(true);
      expect(opt.params[0]).toBe(w);
      const ints = ag.zeros(be, [2, 2], { dtype: 'int32' });
      expect(() => ag.initialize(ints, 'ones')).toThrow(InvalidArgumentError);
      ints.dispose();
      expect(() => new ag.Linear(2, 2, { backend: be, kernelInitializer: 'glorot' as never })).toThrow(
        InvalidArgumentError,
      );
      const short: Initializer = { name: 'short', sample: () => new Float32Array(1) };
      expect(() => ag.initialize(w, short)).toThrow(ShapeMismatchError);
      const vec = ag.zeros(be, [3]);
      expect(() => ag.initialize(vec, 'orthogonal')).toThrow(InvalidArgumentError);
      vec.dispose();
      expect(() => init.normal({ std: -1 })).toThrow(InvalidArgumentError);
      layer.dispose();
    });
  });
}

describe('initializers across backends', () => {
  test('a seed gives the same weights on every backend', () => {
    const names = Object.keys(seen);
    expect(names.length).toBe(Object.keys(REPO_BACKENDS).length);
    for (const n of names.slice(1)) expect(seen[n]![0]).toEqual(seen[names[0]!]![0]);
  });
});

describe('the tfjs-named initializers against tfjs itself (an independent peer)', () => {
  test('glorot, he and lecun: the same variance and the same bounds as tfjs-layers draws', async () => {
    await tf.setBackend('cpu');
    const be = new CpuBackend();
    // A Dense kernel: tfjs [in 300, out 200], PolyHAL's weight [out 200, in 300] — the same fans.
    const names = ['glorotUniform', 'glorotNormal', 'heUniform', 'heNormal', 'lecunUniform', 'lecunNormal'] as const;
    for (const name of names) {
      const tfName = name.replace('lecun', 'leCun') as keyof typeof tfl.initializers; // tfjs spells it leCun
      const peer = (tfl.initializers[tfName] as (a: { seed: number }) => { apply(shape: number[]): tf.Tensor })({
        seed: 1,
      }).apply([300, 200]);
      const theirs = stats(peer.dataSync());
      peer.dispose();
      const layer = new ag.Linear(300, 200, { backend: be, rng: 1, kernelInitializer: name });
      const ours = stats(await values(layer.weight));
      layer.dispose();
      expect({ name, ratio: Math.abs(ours.variance / theirs.variance - 1) < 0.05 }).toEqual({ name, ratio: true });
      // Both bounded the same way: U(±b) or a normal cut at 2σ — the largest draws agree within 2%.
      expect({ name, bound: Math.abs(ours.maxAbs / theirs.maxAbs - 1) < 0.02 }).toEqual({ name, bound: true });
    }
    be.dispose();
  });
});
