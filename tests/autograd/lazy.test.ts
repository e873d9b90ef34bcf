// Lazy layers (Linear(null, n), LazyLinear) and model summaries: a lazy layer's parameters against an
// eager layer of the inferred size (an independent peer), its output against a float64 product computed
// here, the typed error before its first forward, and summary's shapes and counts worked out by hand.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor, UninitializedParameterError } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { type ComputeBackend, ShapeMismatchError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const host = async (t: Tensor): Promise<number[]> => Array.from(await t.data());

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`lazy layers and summary on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test('Linear(null, n) infers its input size at the first forward', async () => {
      const model = new ag.Sequential(
        new ag.Flatten(),
        new ag.Linear(null, 16, { backend: be, rng: 3 }),
        new ag.ReLU(),
        new ag.LazyLinear(10, { backend: be, rng: 4, kernelInitializer: 'glorotUniform', biasInitializer: 'zeros' }),
      );
      const lazy = model.layers[1] as ag.Linear;
      expect(lazy.isLazy).toBe(true);
      expect(() => model.parameters()).toThrow(UninitializedParameterError);
      expect(() => model.parameters()).toThrow(/^1: Linear\(null → 16\) infers its input size/);
      expect(() => new ag.Adam(model.parameters())).toThrow(UninitializedParameterError);
      expect(() => model.stateDict()).toThrow(UninitializedParameterError);
      expect(() => lazy.inFeatures).toThrow(UninitializedParameterError);

      const xs = Array.from({ length: 4 * 30 }, (_, i) => Math.sin(i));
      const x = Tensor.fromArray(be, xs, [4, 2, 3, 5]);
      const y = ag.scope(() => model.forward(x)); // frees the intermediates
      expect(lazy.isLazy).toBe(false);
      expect(lazy.inFeatures).toBe(30);
      expect(model.parameters().map((p) => p.shape)).toEqual([[16, 30], [16], [10, 16], [10]]);
      // The same draws as eager layers of the inferred sizes and the same seeds.
      const eager1 = new ag.Linear(30, 16, { backend: be, rng: 3 });
      const eager2 = new ag.Linear(16, 10, {
        backend: be,
        rng: 4,
        kernelInitializer: 'glorotUniform',
        biasInitializer: 'zeros',
      });
      const [w1, b1, w2, b2] = await Promise.all(model.parameters().map(host));
      expect(w1).toEqual(await host(eager1.weight));
      expect(b1).toEqual(await host(eager1.bias!));
      expect(w2).toEqual(await host(eager2.weight));
      expect(b2).toEqual(await host(eager2.bias!));
      eager1.dispose();
      eager2.dispose();
      // Output against a float64 product.
      const got = await host(y);
      for (let n = 0; n < 4; n++) {
        const h = Array.from({ length: 16 }, (_, o) => {
          let s = b1![o]!;
          for (let i = 0; i < 30; i++) s += xs[n * 30 + i]! * w1![o * 30 + i]!;
          return Math.max(0, s);
        });
        for (let o = 0; o < 10; o++) {
          let s = b2![o]!;
          for (let i = 0; i < 16; i++) s += h[i]! * w2![o * 16 + i]!;
          expect(Math.abs(got[n * 10 + o]! - s)).toBeLessThan(1e-4);
        }
      }
      // Trains like an eager model once materialized.
      const opt = new ag.SGD(model.parameters(), { lr: 0.1 });
      ag.scope(() => {
        const loss = ag.mseLoss(model.forward(x), ag.zeros(be, [4, 10]));
        opt.zeroGrad();
        loss.backward();
        opt.step();
      });
      expect(await host(lazy.weight)).not.toEqual(w1);
      for (const t of [x, y]) t.dispose();
      model.dispose();
      const scalar = ag.tensor(be, 1);
      expect(() => new ag.LazyLinear(2, { backend: be }).forward(scalar)).toThrow(ShapeMismatchError);
      scalar.dispose();
    });

    test('Conv2d(null, ...) and LazyConv2d take their channels from the first input', async () => {
      const lazy = new ag.Conv2d(null, 4, 3, { backend: be, rng: 5, groups: 2, padding: 1 });
      expect(() => lazy.parameters()).toThrow(/Conv2d\(null → 4\) infers its input channels/);
      expect(() => lazy.inChannels).toThrow(UninitializedParameterError);
      const eager = new ag.Conv2d(6, 4, 3, { backend: be, rng: 5, groups: 2, padding: 1 });
      const x = Tensor.fromArray(
        be,
        Array.from({ length: 2 * 6 * 25 }, (_, i) => Math.cos(i)),
        [2, 6, 5, 5],
      );
      const [a, b] = ag.scope(() => [lazy.forward(x), eager.forward(x)]);
      expect(lazy.inChannels).toBe(6);
      expect(lazy.weight.shape).toEqual([4, 3, 3, 3]);
      expect(await host(lazy.weight)).toEqual(await host(eager.weight));
      expect(await host(a)).toEqual(await host(b));
      const odd = new ag.LazyConv2d(4, 3, { backend: be, groups: 4 }); // 6 channels: not a multiple of 4
      expect(() => odd.forward(x)).toThrow(/inChannels must be a positive multiple of groups/);
      const tr = new ag.ConvTranspose2d(null, 5, 2, { backend: be, stride: 2 });
      const up = ag.scope(() => tr.forward(x));
      expect([tr.weight.shape, up.shape]).toEqual([
        [6, 5, 2, 2],
        [2, 5, 10, 10],
      ]);
      for (const t of [x, a, b, up]) t.dispose();
      for (const m of [lazy, eager, odd, tr]) m.dispose();
    });

    test('materialize, to() before the first forward, and summary', async () => {
      const cpu = new CpuBackend();
      const lazy = new ag.Sequential(new ag.LazyLinear(3, { backend: cpu }));
      await lazy.to(be);
      ag.materialize(lazy, [2, 7], be);
      expect(lazy.parameters().map((p) => [p.shape, p.backend])).toEqual([
        [[3, 7], be],
        [[3], be],
      ]);
      lazy.dispose();
      cpu.dispose();

      const model = new ag.Sequential(
        new ag.Conv2d(1, 4, 3, { backend: be }),
        new ag.ReLU(),
        new ag.MaxPool2d(2),
        new ag.Flatten(),
        new ag.Linear(null, 10, { backend: be }),
      );
      const before = ag.summary(model);
      expect(before).toContain('4 (Linear)');
      expect(before).toContain('Total params: ?');
      model.train();
      const printed: string[] = [];
      const text = model.summary({ inputShape: [2, 1, 8, 8], print: (l) => printed.push(l) });
      expect(printed).toEqual([text]);
      expect(model.training).toBe(true);
      const row = (layer: string): string[] =>
        text
          .split('\n')
          .find((l) => l.trimStart().startsWith(layer))!
          .split(/\s{2,}/)
          .map((s) => s.trim());
      // conv: 1→4 channels, 3×3: 4·1·9 + 4 = 40 parameters, 8 − 3 + 1 = 6; pool halves; 4·3·3 = 36 → 10.
      expect(row('0 (Conv2d)')).toEqual(['0 (Conv2d)', '[2, 4, 6, 6]', '40']);
      expect(row('2 (MaxPool2d)')).toEqual(['2 (MaxPool2d)', '[2, 4, 3, 3]', '0']);
      expect(row('3 (Flatten)')).toEqual(['3 (Flatten)', '[2, 36]', '0']);
      expect(row('4 (Linear)')).toEqual(['4 (Linear)', '[2, 10]', '370']);
      expect(text).toContain('Total params: 410');
      model.parameters()[1]!.requiresGrad = false; // the conv's bias, frozen
      const frozen = ag.summary(model, { inputShape: [2, 1, 8, 8] });
      expect(frozen).toContain('Trainable params: 406');
      expect(frozen).toContain('Non-trainable params: 4');
      model.dispose();
    });

    test('summary: nested modules indented, buffers non-trainable, BatchNorm statistics untouched', async () => {
      const bn = new ag.BatchNorm(4, { backend: be });
      const model = new ag.Sequential(new ag.Linear(3, 4, { backend: be }), new ag.Sequential(bn));
      const before = await Promise.all(model.namedBuffers().map(([, t]) => host(t)));
      const text = ag.summary(model, { inputShape: [5, 3] });
      expect(text).toMatch(/^ {2}1\.0 \(BatchNorm\) +\[5, 4\] +16$/m); // weight, bias and the 2 statistics, as Keras
      // Linear 3·4 + 4 = 16 and BatchNorm's weight and bias 8 trainable; running mean and variance 8 not.
      expect(text).toContain('Trainable params: 24\nNon-trainable params: 8');
      expect(await Promise.all(model.namedBuffers().map(([, t]) => host(t)))).toEqual(before);
      expect(bn.training).toBe(true);
      model.dispose();
    });
  });
}
