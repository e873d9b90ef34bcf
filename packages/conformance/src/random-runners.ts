/**
 * The conformance runners and cases of the random ops (hal/src/ops/random-ops.ts): no inputs; the
 * shape is `params.shape`, the rest (seed, offset, low, high, mean, std, p) is `params.hyper`.
 */
import type { Case } from './cases.js';
import type { OpRunner } from './op-runners.js';
import { oBernoulli, oRandomNormal, oRandomUniform } from './oracle-random.js';

export const RANDOM_OP_RUNNERS = {
  randomUniform: {
    device: (be, _xs, p) => {
      const { seed, ...o } = p.hyper!;
      return [be.randomUniform(p.shape!, seed!, o)];
    },
    oracle: (_xs, p) => {
      const h = p.hyper!;
      return [oRandomUniform(p.shape!, h['seed']!, h['low'], h['high'], h['offset'])];
    },
  },
  randomNormal: {
    device: (be, _xs, p) => {
      const { seed, ...o } = p.hyper!;
      return [be.randomNormal(p.shape!, seed!, o)];
    },
    oracle: (_xs, p) => {
      const h = p.hyper!;
      return [oRandomNormal(p.shape!, h['seed']!, h['mean'], h['std'], h['offset'])];
    },
  },
  bernoulli: {
    device: (be, _xs, p) => {
      const { seed, p: prob, ...o } = p.hyper!;
      return [be.bernoulli(p.shape!, prob!, seed!, o)];
    },
    oracle: (_xs, p) => {
      const h = p.hyper!;
      return [oBernoulli(p.shape!, h['p']!, h['seed']!, h['offset'])];
    },
  },
} satisfies Record<'randomUniform' | 'randomNormal' | 'bernoulli', OpRunner>;

/**
 * Seeds 0, 1, 2^32 − 1, 2^32 + 5 and 2^53 − 1 (both key words), offsets that start inside a block and
 * cross a 2^32 block boundary of the counter, shapes from empty to 4099 elements (not multiples of 4).
 */
export function randomCases(): Case[] {
  const cases: Case[] = [];
  const add = (op: string, shape: number[], hyper: Record<string, number>): void => {
    const tag = Object.entries(hyper)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    cases.push({
      id: `${op}/float32/[${shape.join(',')}]/${tag}`,
      kind: 'random',
      op,
      dtype: 'float32',
      inputs: [],
      params: { shape, hyper },
    });
  };
  const streams: Record<string, number>[] = [
    { seed: 0 },
    { seed: 1, offset: 3 },
    { seed: 2 ** 32 - 1, offset: 4 * 2 ** 32 - 6 },
    { seed: 2 ** 32 + 5, offset: 1001 },
    { seed: 2 ** 53 - 1, offset: 2 ** 40 + 2 },
  ];
  const shapes = [[], [0], [7], [33, 31], [4099]];
  streams.forEach((s, i) => add('randomUniform', shapes[i]!, s));
  add('randomUniform', [64, 65], { seed: 42 });
  add('randomUniform', [257], { seed: 7, low: -3, high: 5, offset: 9 });
  streams.forEach((s, i) => add('randomNormal', shapes[i]!, s));
  add('randomNormal', [1000], { seed: 42, offset: 1 });
  add('randomNormal', [31, 17], { seed: 9, mean: 2, std: 0.5 });
  add('bernoulli', [4099], { seed: 3, p: 0.3 });
  add('bernoulli', [33, 31], { seed: 2 ** 32 + 5, p: 0.5, offset: 7 });
  add('bernoulli', [100], { seed: 11, p: 0 });
  add('bernoulli', [100], { seed: 11, p: 1 });
  return cases;
}
