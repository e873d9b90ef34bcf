// Creation functions and random tensors on every backend: values against float64 formulas written here
// (NumPy's definitions), random bits equal across backends, and their statistics against the distributions.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { type ComputeBackend, DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const read = async (t: Tensor): Promise<number[]> => {
  const v = Array.from(await t.data());
  t.dispose();
  return v;
};
const moments = (v: number[]): { mean: number; variance: number } => {
  const mean = v.reduce((s, x) => s + x, 0) / v.length;
  return { mean, variance: v.reduce((s, x) => s + (x - mean) ** 2, 0) / v.length };
};

const samples: Record<string, { u: number[]; z: number[]; k: number[] }> = {};

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`creation on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test('zeros, ones, full, eye and the *Like forms', async () => {
      const z = ag.zeros(be, [2, 3]);
      expect([z.shape, z.dtype]).toEqual([[2, 3], 'float32']);
      expect(await read(z)).toEqual([0, 0, 0, 0, 0, 0]);
      const o = Tensor.ones(be, [3], { dtype: 'int32', requiresGrad: false });
      expect(o.dtype).toBe('int32');
      expect(await read(ag.onesLike(o))).toEqual([1, 1, 1]);
      const f = ag.fullLike(o, 7.9, { dtype: 'float32' });
      expect([f.dtype, await read(f)]).toEqual(['float32', [7.900000095367432, 7.900000095367432, 7.900000095367432]]);
      expect(await read(ag.zerosLike(o))).toEqual([0, 0, 0]);
      o.dispose();
      const want: number[] = [];
      for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) want.push(i === j ? 1 : 0);
      expect(await read(ag.eye(be, 3, 4))).toEqual(want);
      expect((await read(Tensor.eye(be, 2))).length).toBe(4);
      const p = ag.zeros(be, [2], { requiresGrad: true });
      expect(p.requiresGrad).toBe(true);
      p.dispose();
    });

    test('arange and linspace match their float64 definitions', async () => {
      const cases: [number, number, number][] = [
        [0, 5, 1],
        [1, 2, 0.3],
        [5, -1, -1.5],
        [0.1, 1, 0.1],
      ];
      for (const [a, b, s] of cases) {
        const n = Math.max(0, Math.ceil((b - a) / s));
        const want = Array.from({ length: n }, (_, i) => Math.fround(a + i * s));
        expect(await read(ag.arange(be, a, b, s))).toEqual(want);
      }
      expect(await read(ag.arange(be, 4))).toEqual([0, 1, 2, 3]);
      const ints = Tensor.arange(be, 2, 6, { dtype: 'int32' });
      expect([ints.dtype, await read(ints)]).toEqual(['int32', [2, 3, 4, 5]]);
      expect((await read(ag.arange(be, 3, 1))).length).toBe(0); // behind start: empty, as NumPy
      const lin = await read(ag.linspace(be, -1, 2, 7));
      expect(lin).toEqual(Array.from({ length: 7 }, (_, i) => Math.fround(-1 + (i * 3) / 6)));
      expect(lin[6]).toBe(2);
      expect(await read(ag.linspace(be, 3, 9, 1))).toEqual([3]);
      expect(await read(ag.linspace(be, 3, 9, 0))).toEqual([]);
    });

    test('tensor/Tensor.from infer shape and dtype from nested arrays', async () => {
      const t = Tensor.from(be, [
        [1, 2, 3],
        [4, 5, 6],
      ]);
      expect([t.shape, t.dtype, await read(t)]).toEqual([[2, 3], 'float32', [1, 2, 3, 4, 5, 6]]);
      const b = ag.tensor(be, [[true], [false]]);
      expect([b.shape, b.dtype, await read(b)]).toEqual([[2, 1], 'bool', [1, 0]]);
      const s = ag.tensor(be, 2.5);
      expect([s.shape, await read(s)]).toEqual([[], [2.5]]);
      const i = ag.tensor(be, [new Int32Array([1, 2]), new Int32Array([3, 4])], { dtype: 'int32' });
      expect([i.shape, i.dtype, await read(i)]).toEqual([[2, 2], 'int32', [1, 2, 3, 4]]);
      const typed = ag.tensor(be, new Int32Array([5, -6]));
      expect([typed.shape, typed.dtype, await read(typed)]).toEqual([[2], 'int32', [5, -6]]);
      const e = ag.tensor(be, [[], []]);
      expect(e.shape).toEqual([2, 0]);
      e.dispose();
    });

    test('bad input is a typed error', () => {
      expect(() => ag.tensor(be, [[1, 2], [3]])).toThrow(ShapeMismatchError);
      expect(() => ag.tensor(be, [[1, 2], 3] as never)).toThrow(ShapeMismatchError);
      expect(() => ag.tensor(be, [1, true])).toThrow(DTypeError);
      expect(() => ag.tensor(be, [1, 'a'] as never)).toThrow(InvalidArgumentError);
      expect(() => ag.arange(be, 0, 1, 0)).toThrow(InvalidArgumentError);
      expect(() => ag.arange(be, 0, 1, Number.NaN)).toThrow(InvalidArgumentError);
      expect(() => ag.arange(be, 0, Number.POSITIVE_INFINITY)).toThrow(InvalidArgumentError);
      expect(() => ag.linspace(be, 0, 1, -1)).toThrow(InvalidArgumentError);
      expect(() => ag.linspace(be, 0, 1, 2.5)).toThrow(InvalidArgumentError);
      expect(() => ag.eye(be, -1)).toThrow(InvalidArgumentError);
      expect(() => ag.zeros(be, [2, -1])).toThrow(InvalidArgumentError);
      expect(() => ag.zeros(be, [2], { dtype: 'float99' as never })).toThrow(DTypeError);
      expect(() => ag.randint(be, 3, 3, [2])).toThrow(InvalidArgumentError);
      expect(() => ag.randint(be, 0, 2 ** 25, [2])).toThrow(InvalidArgumentError);
      expect(() => ag.rand(be, [2], { seed: -1 })).toThrow(InvalidArgumentError);
      expect(() => ag.randn(be, [2], { seed: 1, std: -1 })).toThrow(InvalidArgumentError);
      expect(() => ag.manualSeed(0.5)).toThrow(InvalidArgumentError);
    });

    test('rand, randn and randint: seeded streams with the right statistics', async () => {
      const n = 20000;
      const u = await read(ag.rand(be, [n], { seed: 42 }));
      const z = await read(Tensor.randn(be, [n], { seed: 42, mean: 1, std: 2 }));
      const k = await read(ag.randint(be, -3, 4, [n], { seed: 7 }));
      samples[name] = { u, z, k };
      expect(Math.min(...u)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...u)).toBeLessThan(1);
      const mu = moments(u);
      // Uniform [0, 1): mean 1/2, variance 1/12; 5 standard errors.
      expect(Math.abs(mu.mean - 0.5)).toBeLessThan(5 * Math.sqrt(1 / 12 / n));
      expect(Math.abs(mu.variance - 1 / 12)).toBeLessThan(0.004);
      const mz = moments(z);
      expect(Math.abs(mz.mean - 1)).toBeLessThan(5 * Math.sqrt(4 / n));
      expect(Math.abs(mz.variance - 4)).toBeLessThan(5 * 4 * Math.sqrt(2 / n));
      const counts = new Map<number, number>();
      for (const v of k) counts.set(v, (counts.get(v) ?? 0) + 1);
      expect([...counts.keys()].sort((a, b) => a - b)).toEqual([-3, -2, -1, 0, 1, 2, 3]);
      for (const c of counts.values())
        expect(Math.abs(c / n - 1 / 7)).toBeLessThan(5 * Math.sqrt(((1 / 7) * (6 / 7)) / n));
      // The global generator: reproducible after manualSeed, successive calls continue the stream.
      ag.manualSeed(5);
      const a1 = await read(ag.rand(be, [3]));
      const a2 = await read(ag.rand(be, [3]));
      ag.manualSeed(5);
      // Three values use positions 0-2; the next call starts at the next even position, 4.
      expect(await read(ag.rand(be, [3], { seed: 5 }))).toEqual(a1);
      expect(await read(ag.rand(be, [3], { seed: 5, offset: 4 }))).toEqual(a2);
      ag.manualSeed(5);
      expect(await read(ag.rand(be, [3]))).toEqual(a1);
      expect(a2).not.toEqual(a1);
      const model = ag.zeros(be, [2, 2]);
      const like = ag.randnLike(model, { seed: 1 });
      expect(like.shape).toEqual([2, 2]);
      like.dispose();
      model.dispose();
    });
  });
}

describe('random bits across backends', () => {
  test('the same seed gives the same uniforms and integers bit for bit, normals within float32 rounding', () => {
    const names = Object.keys(samples);
    expect(names.length).toBe(Object.keys(REPO_BACKENDS).length);
    const first = samples[names[0]!]!;
    for (const other of names.slice(1)) {
      const s = samples[other]!;
      expect(s.u).toEqual(first.u);
      expect(s.k).toEqual(first.k);
      const worst = Math.max(...s.z.map((v, i) => Math.abs(v - first.z[i]!) / Math.max(1, Math.abs(v))));
      expect(worst).toBeLessThan(1e-4);
    }
  });
});
