// The optimizers beside SGD/Adam (RMSprop, Adagrad, Adadelta, Adamax, SGD with Nesterov momentum) against
// PyTorch's update rules written out here in float64, and against TensorFlow.js's optimizers (its cpu
// backend, an independent peer) where the two conventions agree or an option makes them agree; on every
// backend. Also: minimize(), gradient clipping and the schedulers against their formulas.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { type ComputeBackend, DeviceMismatchError, InvalidArgumentError, mulberry32 } from '@polyhal/hal';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { REPO_BACKENDS } from '../support/backends.js';

const N = 12;
const STEPS = 5;
const rng = mulberry32(7);
const rand = (n: number, scale = 1): number[] => Array.from({ length: n }, () => Math.fround((rng() * 2 - 1) * scale));
const P0 = rand(N);
const GRADS = Array.from({ length: STEPS }, (_, s) => rand(N, s % 2 ? 0.05 : 1)); // small and large gradients

/** A float64 rule: one step of every element, given the step number t (1-based); mutates p and state. */
type Rule = (p: number[], g: number[], t: number, st: number[][]) => void;
const zeros = (k: number): number[][] => Array.from({ length: k }, () => new Array(N).fill(0));

/** Runs the float64 rule for STEPS steps. */
function oracle(rule: Rule, states: number, init = 0): number[] {
  const p = [...P0];
  const st = zeros(states);
  if (init) st[0]!.fill(init);
  GRADS.forEach((g, s) => rule(p, g, s + 1, st));
  return p;
}

const l2 = (wd: number, p: number[], g: number[]): number[] => g.map((v, i) => v + wd * p[i]!);

interface Case {
  name: string;
  make: (ps: Tensor[]) => ag.Optimizer;
  rule: Rule;
  states: number;
  init?: number;
  /** The same update in tfjs, where it exists. */
  peer?: () => tf.Optimizer;
}

const CASES: Case[] = [
  {
    name: 'SGD nesterov (momentum 0.9, weightDecay 0.01)',
    make: (ps) => new ag.SGD(ps, { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.01 }),
    states: 1,
    rule: (p, g0, _t, [v]) => {
      const g = l2(0.01, p, g0);
      for (let i = 0; i < N; i++) {
        v![i] = 0.9 * v![i]! + g[i]!;
        p[i]! -= 0.1 * (g[i]! + 0.9 * v![i]!);
      }
    },
  },
  {
    name: 'SGD nesterov, as tfjs momentum(useNesterov)',
    make: (ps) => new ag.SGD(ps, { lr: 0.05, momentum: 0.8, nesterov: true }),
    states: 1,
    rule: (p, g, _t, [v]) => {
      for (let i = 0; i < N; i++) {
        v![i] = 0.8 * v![i]! + g[i]!;
        p[i]! -= 0.05 * (g[i]! + 0.8 * v![i]!);
      }
    },
    peer: () => tf.train.momentum(0.05, 0.8, true),
  },
  {
    name: 'RMSprop (PyTorch defaults, ε outside the root)',
    make: (ps) => new ag.RMSprop(ps, {}),
    states: 1,
    rule: (p, g, _t, [s]) => {
      for (let i = 0; i < N; i++) {
        s![i] = 0.99 * s![i]! + 0.01 * g[i]! ** 2;
        p[i]! -= (0.01 * g[i]!) / (Math.sqrt(s![i]!) + 1e-8);
      }
    },
  },
  {
    name: 'RMSprop centered with momentum, as tfjs rmsprop (ε 1e-10)',
    make: (ps) => new ag.RMSprop(ps, { lr: 0.01, alpha: 0.9, momentum: 0.5, centered: true, eps: 1e-10 }),
    states: 3,
    rule: (p, g, _t, [s, m, b]) => {
      for (let i = 0; i < N; i++) {
        s![i] = 0.9 * s![i]! + 0.1 * g[i]! ** 2;
        m![i] = 0.9 * m![i]! + 0.1 * g[i]!;
        b![i] = 0.5 * b![i]! + g[i]! / (Math.sqrt(s![i]! - m![i]! ** 2) + 1e-10);
        p[i]! -= 0.01 * b![i]!;
      }
    },
    peer: () => tf.train.rmsprop(0.01, 0.9, 0.5, 1e-10, true),
  },
  {
    name: 'Adagrad (lrDecay 0.1, weightDecay 0.1)',
    make: (ps) => new ag.Adagrad(ps, { lr: 0.1, lrDecay: 0.1, weightDecay: 0.1 }),
    states: 1,
    rule: (p, g0, t, [s]) => {
      const g = l2(0.1, p, g0);
      const lr = 0.1 / (1 + (t - 1) * 0.1);
      for (let i = 0; i < N; i++) {
        s![i]! += g[i]! ** 2;
        p[i]! -= (lr * g[i]!) / (Math.sqrt(s![i]!) + 1e-10);
      }
    },
  },
  {
    name: 'Adagrad with initialAccumulatorValue 0.1, as tfjs adagrad',
    make: (ps) => new ag.Adagrad(ps, { lr: 0.1, initialAccumulatorValue: 0.1 }),
    states: 1,
    init: 0.1,
    rule: (p, g, _t, [s]) => {
      for (let i = 0; i < N; i++) {
        s![i]! += g[i]! ** 2;
        p[i]! -= (0.1 * g[i]!) / (Math.sqrt(s![i]!) + 1e-10);
      }
    },
    peer: () => tf.train.adagrad(0.1, 0.1),
  },
  {
    // tfjs's adadelta divides by √(v + ε) of the previous step (v before this step's g²): no peer here.
    name: 'Adadelta (ρ 0.95, ε 1e-6)',
    make: (ps) => new ag.Adadelta(ps, { lr: 0.5, rho: 0.95, eps: 1e-6 }),
    states: 2,
    rule: (p, g, _t, [v, u]) => {
      for (let i = 0; i < N; i++) {
        v![i] = 0.95 * v![i]! + 0.05 * g[i]! ** 2;
        const d = (Math.sqrt(u![i]! + 1e-6) / Math.sqrt(v![i]! + 1e-6)) * g[i]!;
        u![i] = 0.95 * u![i]! + 0.05 * d * d;
        p[i]! -= 0.5 * d;
      }
    },
  },
  {
    name: 'Adamax (PyTorch defaults), as tfjs adamax where ε is negligible',
    make: (ps) => new ag.Adamax(ps, { eps: 1e-12 }),
    states: 2,
    rule: (p, g, t, [m, u]) => {
      for (let i = 0; i < N; i++) {
        m![i] = 0.9 * m![i]! + 0.1 * g[i]!;
        u![i] = Math.max(0.999 * u![i]!, Math.abs(g[i]!) + 1e-12);
        p[i]! -= (2e-3 / (1 - 0.9 ** t)) * (m![i]! / u![i]!);
      }
    },
    peer: () => tf.train.adamax(2e-3, 0.9, 0.999, 1e-12),
  },
];

/** tfjs's result of the same STEPS updates. */
function peerRun(make: () => tf.Optimizer): number[] {
  const v = tf.variable(tf.tensor1d(P0), true, `p${rng()}`);
  const opt = make();
  for (const g of GRADS) tf.tidy(() => opt.applyGradients({ [v.name]: tf.tensor1d(g) }));
  const out = Array.from(v.dataSync());
  opt.dispose();
  v.dispose();
  return out;
}

const close = (got: ArrayLike<number>, want: number[], tol: number): void => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => expect(Math.abs(got[i]! - w)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(w))));
};

beforeAll(async () => {
  await tf.setBackend('cpu');
});

test('the float64 rules agree with tfjs where the conventions meet (a check of the oracles)', () => {
  for (const c of CASES) if (c.peer) close(peerRun(c.peer), oracle(c.rule, c.states, c.init), 2e-5);
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`optimizers on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test.each(CASES.map((c) => [c.name, c] as [string, Case]))(
      '%s: 5 steps match the rule in float64 (and tfjs)',
      async (_n, c) => {
        const p = Tensor.fromArray(be, P0, [3, 4], { requiresGrad: true });
        const opt = c.make([p]);
        for (const g of GRADS) {
          opt.zeroGrad();
          p.grad = Tensor.fromArray(be, g, [3, 4]);
          opt.step();
        }
        const got = await p.data();
        close(got, oracle(c.rule, c.states, c.init), 3e-5);
        if (c.peer) close(got, peerRun(c.peer), 3e-5);
        opt.zeroGrad();
        opt.dispose();
        p.dispose();
      },
    );

    test('minimize(lossFn) runs zeroGrad, backward and step: one SGD step of Σ p² is p − 2·lr·p', async () => {
      const p = Tensor.fromArray(be, [1, -2, 3], [3], { requiresGrad: true });
      const opt = new ag.SGD([p], { lr: 0.1 });
      for (let k = 0; k < 2; k++) ag.scope(() => opt.minimize(() => ag.sum(ag.mul(p, p))));
      close(await p.data(), [0.64, -1.28, 1.92], 1e-6); // (1 − 0.2)² · p
      expect(() => opt.minimize(42 as never)).toThrow(InvalidArgumentError);
      opt.zeroGrad();
      p.dispose();
    });

    test('clipGradNorm scales the joint gradient to maxNorm and returns the norm before clipping', async () => {
      const a = Tensor.fromArray(be, [0, 0], [2], { requiresGrad: true });
      const b = Tensor.fromArray(be, [0], [1], { requiresGrad: true });
      const set = (ga: number[], gb: number[]): void => {
        a.grad?.dispose();
        b.grad?.dispose();
        a.grad = Tensor.fromArray(be, ga, [2]);
        b.grad = Tensor.fromArray(be, gb, [1]);
      };
      set([3, 4], [12]); // ‖g‖₂ = 13
      const norm = ag.clipGradNorm([a, b], 1);
      expect(await norm.item()).toBeCloseTo(13, 4);
      const k = 1 / (13 + 1e-6);
      close([...(await a.grad!.data()), ...(await b.grad!.data())], [3 * k, 4 * k, 12 * k], 1e-6);
      set([3, -4], [1]); // ‖g‖∞ = 4, ‖g‖₁ = 8: below maxNorm 10, unchanged
      expect(await ag.clipGradNorm([a, b], 10, { normType: Number.POSITIVE_INFINITY }).item()).toBeCloseTo(4, 5);
      expect(await ag.clipGradNorm([a, b], 10, { normType: 1 }).item()).toBeCloseTo(8, 5);
      expect(await ag.clipGradNorm([a, b], 10, { normType: 3 }).item()).toBeCloseTo((27 + 64 + 1) ** (1 / 3), 4);
      close(await a.grad!.data(), [3, -4], 0);
      ag.clipGradValue([a, b], 2);
      close([...(await a.grad!.data()), ...(await b.grad!.data())], [2, -2, 1], 0);
      expect(() => ag.clipGradNorm([a], -1)).toThrow(InvalidArgumentError);
      expect(() => ag.clipGradValue([a], Number.NaN)).toThrow(InvalidArgumentError);
      norm.dispose();
      a.dispose();
      b.dispose();
    });
  });
}

describe('schedulers', () => {
  const be = { lr: 0 } as unknown as ag.Optimizer; // a scheduler only reads and sets lr
  const opt = (lr: number): ag.Optimizer => Object.assign(Object.create(be), { lr }) as ag.Optimizer;
  const run = (o: ag.Optimizer, step: () => void, n: number): number[] => {
    const out = [o.lr];
    for (let i = 0; i < n; i++) {
      step();
      out.push(o.lr);
    }
    return out;
  };

  test('ExponentialLR and LinearLR follow lr₀·γᵗ and the linear ramp', () => {
    const o = opt(0.1);
    const s = new ag.ExponentialLR(o, 0.5);
    close(
      run(o, () => s.step(), 3),
      [0.1, 0.05, 0.025, 0.0125],
      1e-12,
    );
    const o2 = opt(0.3);
    const w = new ag.LinearLR(o2, { startFactor: 0.25, totalIters: 3 });
    close(
      run(o2, () => w.step(), 4),
      [0.075, 0.15, 0.225, 0.3, 0.3],
      1e-12,
    );
  });

  test('OneCycleLR matches PyTorch: maxLr/25 → maxLr at 30 % → maxLr/25/1e4 at the last step', () => {
    const o = opt(1);
    const total = 10;
    const s = new ag.OneCycleLR(o, { maxLr: 1, totalSteps: total });
    const lrs = run(o, () => s.step(), total - 1);
    // PyTorch: phase ends at 0.3·10 − 1 = 2 and 9; cos annealing between them.
    const cos = (a: number, b: number, pct: number): number => b + ((a - b) / 2) * (Math.cos(Math.PI * pct) + 1);
    const want = Array.from({ length: total }, (_, t) =>
      t <= 2 ? cos(1 / 25, 1, t / 2) : cos(1, 1 / 25 / 1e4, (t - 2) / 7),
    );
    close(lrs, want, 1e-12);
    expect(() => s.step()).toThrow(/stepped past totalSteps/);
  });

  test('ReduceLROnPlateau divides lr after more than `patience` epochs without improvement', () => {
    const o = opt(1);
    const s = new ag.ReduceLROnPlateau(o, { patience: 1, factor: 0.5 });
    const lrs = [1, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5].map((v) => {
      s.step(v);
      return o.lr;
    });
    expect(lrs).toEqual([1, 1, 1, 0.5, 0.5, 0.25, 0.25]);
    expect(() => new ag.ReduceLROnPlateau(o, { factor: 1 })).toThrow(InvalidArgumentError);
    expect(() => new ag.OneCycleLR(o, { maxLr: 1, totalSteps: 1 })).toThrow(/totalSteps must be/);
  });
});

test('clipGradNorm refuses gradients on two backends', async () => {
  const a = await REPO_BACKENDS['cpu']!();
  const b = await REPO_BACKENDS['cpu']!();
  const x = Tensor.fromArray(a, [1], [1], { requiresGrad: true });
  const y = Tensor.fromArray(b, [1], [1], { requiresGrad: true });
  x.grad = Tensor.fromArray(a, [1], [1]);
  y.grad = Tensor.fromArray(b, [1], [1]);
  expect(() => ag.clipGradNorm([x, y], 1)).toThrow(DeviceMismatchError);
  x.dispose();
  y.dispose();
  a.dispose();
  b.dispose();
});
