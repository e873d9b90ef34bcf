import { describe, expect, test } from '@jest/globals';
import { CpuBackend } from '@polyhal/backend-cpu';
import { InvalidArgumentError } from '@polyhal/hal';
import { Conv2d, Flatten, Linear, type Module, ReLU, Sequential, scope, Tensor } from '@polyhal/autograd';
import { buildModel, MODELS, type ModelKind, mlp, toModelInput, VisionTransformer } from '@polyhal/models';

// @polyhal/models: the main job's registry (name → builder) and the weights each seed gives, which the
// recorded main-job figures depend on.
const be = new CpuBackend();

const weights = async (m: Module): Promise<Record<string, number[]>> => {
  const out: Record<string, number[]> = {};
  for (const [name, t] of m.namedParameters()) out[name] = Array.from(await t.data());
  return out;
};

describe('models registry', () => {
  test('MODELS names mlp, cnn and vit; each builds a model that maps a batch of digits to [N, 10] logits', async () => {
    expect(Object.keys(MODELS)).toEqual(['mlp', 'cnn', 'vit']);
    const x = Tensor.fromArray(
      be,
      Array.from({ length: 3 * 784 }, (_, i) => (i % 29) / 29),
      [3, 784],
    );
    for (const kind of Object.keys(MODELS) as ModelKind[]) {
      const model = buildModel(kind, be, 0);
      const shape = await scope(async () => model.forward(toModelInput(kind, x)).shape);
      expect({ kind, shape }).toEqual({ kind, shape: [3, 10] });
      model.dispose();
    }
    expect(toModelInput('cnn', x).shape).toEqual([3, 1, 28, 28]);
    expect(toModelInput('mlp', x)).toBe(x);
    x.dispose();
  });

  test('a seed gives the layers the seeds the main job always used (seed, seed + 1, ...)', async () => {
    const seed = 5;
    const expected = {
      mlp: new Sequential(
        new Linear(784, 256, { backend: be, rng: seed }),
        new ReLU(),
        new Linear(256, 10, { backend: be, rng: seed + 1 }),
      ),
      cnn: new Sequential(
        new Conv2d(1, 16, 5, { backend: be, rng: seed, stride: 2, padding: 2 }),
        new ReLU(),
        new Conv2d(16, 32, 5, { backend: be, rng: seed + 1, stride: 2, padding: 2 }),
        new ReLU(),
        new Flatten(),
        new Linear(32 * 7 * 7, 10, { backend: be, rng: seed + 2 }),
      ),
      vit: new VisionTransformer({ backend: be, seed }),
    };
    for (const kind of ['mlp', 'cnn', 'vit'] as const) {
      const built = MODELS[kind](be, seed);
      expect(await weights(built)).toEqual(await weights(expected[kind]));
      built.dispose();
      expected[kind].dispose();
    }
    const [a, b] = [mlp(be), mlp(be, 1)];
    expect((await weights(a))['0.weight']).not.toEqual((await weights(b))['0.weight']);
    a.dispose();
    b.dispose();
  });

  test.each(['resnet', '__proto__', 'toString', '', 7, undefined])(
    'buildModel(%p) throws InvalidArgumentError naming kind and the registered names',
    (kind) => {
      const call = () => buildModel(kind as ModelKind, be, 0);
      expect(call).toThrow(InvalidArgumentError);
      expect(call).toThrow(/^kind must be one of mlp, cnn, vit, got /);
    },
  );
});
