import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type ComputeBackend,
  DeviceMismatchError,
  DTypeError,
  ShapeMismatchError,
  UseAfterFreeError,
} from '@polyhal/hal';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { REPO_BACKENDS } from '../support/backends.js';

// Misuse of the autograd is a typed error or a documented result, never a silent wrong one; and a
// backward or an optimizer step leaves no buffer behind, whatever happens.

const values = async (t: Tensor): Promise<number[]> => Array.from(await t.data());

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`autograd misuse on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test(
      'a second backward through a freed graph throws UseAfterFreeError; retainGraph runs it ' +
        'again and accumulates',
      async () => {
        const base = be.liveBufferCount();
        await ag.scope(async () => {
          const x = Tensor.fromArray(be, [1, 2, 3], [3], { requiresGrad: true });
          const loss = ag.sum(ag.mul(x, x)); // d/dx = 2x
          loss.backward();
          expect(await values(x.grad!)).toEqual([2, 4, 6]);
          const live = be.liveBufferCount();
          expect(() => loss.backward()).toThrow(UseAfterFreeError);
          expect(() => loss.backward()).toThrow(
            /graph behind tensor \d+ \[\] \(result of 'sum'\) was freed by an earlier backward\(\).*retainGraph: true/,
          );
          expect(await values(x.grad!)).toEqual([2, 4, 6]); // untouched
          expect(be.liveBufferCount()).toBe(live); // nothing allocated by the refused calls

          const y = Tensor.fromArray(be, [1, 2, 3], [3], { requiresGrad: true });
          const l2 = ag.sum(ag.mul(ag.exp(y), y));
          l2.backward(undefined, { retainGraph: true });
          const once = await values(y.grad!);
          l2.backward(); // the retained graph runs again: gradients accumulate; then it is freed
          (await values(y.grad!)).forEach((v, i) => expect(v).toBeCloseTo(2 * once[i]!, 4));
          expect(() => l2.backward()).toThrow(/was freed by an earlier backward/);
        });
        expect(be.liveBufferCount()).toBe(base);
      },
    );

    test(
      'retainGraph works through ops that save state (softmaxCrossEntropy, conv2d) and frees it ' + 'with the graph',
      async () => {
        const base = be.liveBufferCount();
        await ag.scope(async () => {
          const x = Tensor.fromArray(
            be,
            Array.from({ length: 32 }, (_, i) => Math.sin(i)),
            [2, 1, 4, 4],
            { requiresGrad: true },
          );
          const w = Tensor.fromArray(
            be,
            Array.from({ length: 18 }, (_, i) => Math.cos(i)),
            [2, 1, 3, 3],
            { requiresGrad: true },
          );
          const logits = ag.reshape(ag.conv2d(x, w, { padding: 1 }), [2, 32]);
          const labels = Tensor.fromArray(
            be,
            Array.from({ length: 64 }, (_, i) => (i % 32 === 3 ? 1 : 0)),
            [2, 32],
          );
          const loss = ag.crossEntropy(logits, labels);
          loss.backward(undefined, { retainGraph: true });
          const gx = await values(x.grad!);
          const gw = await values(w.grad!);
          loss.backward();
          (await values(x.grad!)).forEach((v, i) => expect(v).toBeCloseTo(2 * gx[i]!, 4));
          (await values(w.grad!)).forEach((v, i) => expect(v).toBeCloseTo(2 * gw[i]!, 4));
        });
        expect(be.liveBufferCount()).toBe(base);
      },
    );

    test(
      'a gradOutput whose shape, dtype or device differs from the output is a typed error (not a ' +
        'broadcast gradient)',
      async () => {
        const base = be.liveBufferCount();
        const other = await factory();
        await ag.scope(async () => {
          const x = Tensor.fromArray(be, [1, 2, 3, 4], [4], { requiresGrad: true });
          const y = ag.mul(x, 3);
          const g34 = Tensor.full(be, [3, 4], 1);
          const g14 = Tensor.full(be, [1, 4], 1);
          const gInt = Tensor.full(be, [4], 1, { dtype: 'int32' });
          const elsewhere = Tensor.full(other, [4], 1);
          const live = be.liveBufferCount();
          expect(() => y.backward(g34)).toThrow(ShapeMismatchError);
          expect(() => y.backward(g34)).toThrow(/gradOutput has shape \[3, 4\] but the output has shape \[4\]/);
          expect(() => y.backward(g14)).toThrow(ShapeMismatchError);
          expect(() => y.backward(gInt)).toThrow(DTypeError);
          expect(() => y.backward(elsewhere)).toThrow(DeviceMismatchError);
          elsewhere.dispose();
          expect(be.liveBufferCount()).toBe(live); // nothing allocated by the refused calls
          expect(x.grad).toBeNull();
          y.backward(Tensor.fromArray(be, [1, 0, 2, 0], [4])); // the right shape still works afterwards
          expect(await values(x.grad!)).toEqual([3, 0, 6, 0]);
        });
        other.dispose();
        expect(be.liveBufferCount()).toBe(base);
      },
    );

    test(
      'backward through a disposed intermediate throws UseAfterFreeError naming it and the op ' + 'that needs it',
      async () => {
        const base = be.liveBufferCount();
        await ag.scope(async () => {
          const x = Tensor.fromArray(be, [1, 2, 3, 4, 5, 6], [2, 3], { requiresGrad: true });
          const y = ag.mul(x, 2);
          const loss = ag.sum(ag.tanh(y));
          y.dispose();
          const live = be.liveBufferCount();
          expect(() => loss.backward()).toThrow(UseAfterFreeError);
          expect(() => loss.backward()).toThrow(
            new RegExp(
              `tensor ${y.id} \\[2, 3\\] \\(result of 'mul'\\) was disposed before backward, but ` +
                `'tanh' \\(tensor \\d+\\) needs its gradient`,
            ),
          );
          expect(x.grad).toBeNull();
          expect(be.liveBufferCount()).toBe(live);
          // A leaf disposed before backward is refused the same way.
          const p = Tensor.fromArray(be, [1, 2], [2], { requiresGrad: true });
          const l2 = ag.sum(ag.mul(p, p));
          p.dispose();
          expect(() => l2.backward()).toThrow(
            new RegExp(`tensor ${p.id} \\[2\\] was disposed before backward, but 'mul'`),
          );
        });
        expect(be.liveBufferCount()).toBe(base);
      },
    );

    test('a backward that throws part way frees everything it had allocated', async () => {
      const base = be.liveBufferCount();
      await ag.scope(async () => {
        // An input that needs no gradient, freed before backward: mul's rule computes one gradient
        // (g·x, for w's slot), then reads the freed w for x's and the backend throws.
        const x = Tensor.fromArray(be, [1, 2, 3], [3], { requiresGrad: true });
        const w = Tensor.fromArray(be, [4, 5, 6], [3]);
        const loss = ag.sum(ag.mul(w, x));
        w.dispose();
        const live = be.liveBufferCount();
        expect(() => loss.backward()).toThrow(UseAfterFreeError);
        expect(be.liveBufferCount()).toBe(live);
        // A gradient rule that allocates, then fails.
        const a = Tensor.fromArray(be, [1, 2], [2], { requiresGrad: true });
        const b = Tensor.fromArray(be, [3, 4], [2], { requiresGrad: true });
        const broken = ag.record(
          'broken',
          [a, b],
          (hal, [u, v]) => hal.add(u!, v!),
          (hal, g) => {
            const ga = hal.mul(g, 2);
            hal.neg(ga); // a temporary it would have freed
            throw new Error('rule failed');
          },
        );
        const l2 = ag.sum(ag.exp(broken));
        const live2 = be.liveBufferCount();
        expect(() => l2.backward()).toThrow(/rule failed/);
        expect(be.liveBufferCount()).toBe(live2);
        expect(a.grad).toBeNull();
      });
      expect(be.liveBufferCount()).toBe(base);
    });

    test(
      'Adam with weightDecay stepped outside any scope allocates nothing per step and ' + 'applies L2 decay',
      async () => {
        const p = ag.keep(Tensor.fromArray(be, [1, -2, 3], [3], { requiresGrad: true }));
        const q = ag.keep(Tensor.fromArray(be, [0.5, 0.25], [2], { requiresGrad: true }));
        const opt = new ag.Adam([p, q], { lr: 0.1, weightDecay: 0.5 });
        const grads = async (): Promise<void> => {
          await ag.scope(async () => {
            opt.zeroGrad();
            ag.add(ag.sum(ag.mul(p, p)), ag.sum(q)).backward(); // grads 2p and 1
          });
        };
        await grads();
        opt.step(); // creates the moments
        const baseline = be.liveBufferCount();
        for (let i = 0; i < 4; i++) {
          await grads();
          opt.step();
          expect(be.liveBufferCount()).toBe(baseline);
        }
        // Reference in float64: g = ∇ + 0.5·p, Adam (β 0.9, 0.999, ε 1e-8).
        const ref = (x0: number[], grad: (x: number) => number): number[] => {
          const x = [...x0];
          const m = x.map(() => 0);
          const v = x.map(() => 0);
          for (let t = 1; t <= 5; t++) {
            x.forEach((xi, k) => {
              const g = grad(xi) + 0.5 * xi;
              m[k] = 0.9 * m[k]! + 0.1 * g;
              v[k] = 0.999 * v[k]! + 0.001 * g * g;
              x[k] = xi - (0.1 * (m[k]! / (1 - 0.9 ** t))) / (Math.sqrt(v[k]! / (1 - 0.999 ** t)) + 1e-8);
            });
          }
          return x;
        };
        (await values(p)).forEach((v, k) => expect(v).toBeCloseTo(ref([1, -2, 3], (x) => 2 * x)[k]!, 4));
        (await values(q)).forEach((v, k) => expect(v).toBeCloseTo(ref([0.5, 0.25], () => 1)[k]!, 4));
        opt.zeroGrad();
        opt.dispose();
        p.dispose();
        q.dispose();
      },
    );
  });
}

describe('optimizers and Module.to', () => {
  const batch = { x: [0.5, -1, 2, 1.5, 0, -0.5], y: [1, 0, 0, 1] };
  const trainSteps = async (model: ag.Module, opt: ag.Optimizer, be: ComputeBackend, steps: number): Promise<void> => {
    for (let i = 0; i < steps; i++) {
      await ag.scope(async () => {
        const loss = ag.crossEntropy(
          model.forward(Tensor.fromArray(be, batch.x, [2, 3])),
          Tensor.fromArray(be, batch.y, [2, 2]),
        );
        opt.zeroGrad();
        loss.backward();
        opt.step();
      });
    }
  };
  const weights = (m: ag.Module): Promise<number[][]> => Promise.all(m.parameters().map(values));

  test(
    'an optimizer keeps updating parameters moved by model.to(B) (moved in place); state moves ' +
      'with optimizer.to(B)',
    async () => {
      const a = await REPO_BACKENDS['cpu']!();
      const b = await REPO_BACKENDS['cpu']!();
      // Reference: the same model trained on b from the start.
      const ref = new ag.Linear(3, 2, { backend: b, rng: 5 });
      const refOpt = new ag.Adam(ref.parameters(), { lr: 0.05 });
      await trainSteps(ref, refOpt, b, 4);

      // Moved before the first step: the optimizer's parameters are the moved ones.
      const m = new ag.Linear(3, 2, { backend: a, rng: 5 });
      const params = m.parameters();
      const opt = new ag.Adam(params, { lr: 0.05 });
      await m.to(b);
      m.parameters().forEach((p, i) => expect(p).toBe(params[i])); // the same tensor objects
      expect(params.every((p) => p.backend === b && !p.isDisposed && p.requiresGrad)).toBe(true);
      expect(a.liveBufferCount()).toBe(0);
      const before = await weights(m);
      await trainSteps(m, opt, b, 2);
      expect(await weights(m)).not.toEqual(before); // not silently skipped

      // Moved after steps: a step refuses state on another backend, optimizer.to moves it.
      await m.to(a);
      await expect(trainSteps(m, opt, a, 1)).rejects.toThrow(DeviceMismatchError);
      await expect(trainSteps(m, opt, a, 1)).rejects.toThrow(
        /optimizer state is on cpu .*await optimizer\.to\(backend\)/,
      );
      await opt.to(a);
      await trainSteps(m, opt, a, 2);
      const got = await weights(m);
      (await weights(ref)).forEach((w, i) => w.forEach((v, k) => expect(got[i]![k]).toBeCloseTo(v, 5)));
      // only ref's: weights, gradients and two moments each
      expect(b.liveBufferCount()).toBe(ref.parameters().length * 4);

      for (const [o, mod] of [
        [opt, m],
        [refOpt, ref],
      ] as const) {
        o.zeroGrad();
        o.dispose();
        mod.dispose();
      }
      expect(a.liveBufferCount()).toBe(0);
      expect(b.liveBufferCount()).toBe(0);
      a.dispose();
      b.dispose();
    },
  );

  test('a step with a disposed parameter throws UseAfterFreeError instead of skipping it', async () => {
    const be = await REPO_BACKENDS['cpu']!();
    const m = new ag.Linear(3, 2, { backend: be, rng: 1 });
    const opt = new ag.SGD(m.parameters(), { lr: 0.1, momentum: 0.9 });
    await trainSteps(m, opt, be, 1);
    m.parameters()[1]!.dispose();
    const w = await values(m.parameters()[0]!);
    expect(() => opt.step()).toThrow(UseAfterFreeError);
    expect(() => opt.step()).toThrow(/SGD\.step: parameter 1 \(tensor \d+ \[2\]\) was disposed/);
    expect(await values(m.parameters()[0]!)).toEqual(w); // no partial update
    opt.zeroGrad();
    opt.dispose();
    m.dispose();
    expect(be.liveBufferCount()).toBe(0);
    be.dispose();
  });
});
