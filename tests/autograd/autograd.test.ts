import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ComputeBackend } from '@polyhal/hal';
import { DeviceMismatchError } from '@polyhal/hal';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { REPO_BACKENDS } from '../support/backends.js';
import { CHECKS, vals } from './gradcheck-ops.js';
import { gradCheckTests } from './gradchecks.js';

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`autograd on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    gradCheckTests(() => be, CHECKS);

    test('a training step returns the live-buffer count to its baseline and lowers the loss', async () => {
      const model = new ag.Sequential(
        new ag.Linear(6, 8, { backend: be, rng: 1 }),
        new ag.Tanh(),
        new ag.Linear(8, 3, { backend: be, rng: 2 }),
      );
      const opt = new ag.Adam(model.parameters(), { lr: 0.05 });
      const x = Tensor.fromArray(be, vals(24), [4, 6]);
      const y = Tensor.fromArray(be, [1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0], [4, 3]);
      const step = (): Promise<number> =>
        ag.scope(async () => {
          const loss = ag.crossEntropy(model.forward(x), y);
          opt.zeroGrad();
          loss.backward();
          opt.step();
          return loss.item();
        });
      const first = await step();
      const baseline = be.liveBufferCount();
      let last = first;
      for (let i = 0; i < 20; i++) {
        last = await step();
        expect(be.liveBufferCount()).toBe(baseline);
      }
      expect(last).toBeLessThan(first * 0.5);
      opt.zeroGrad();
      opt.dispose();
      model.dispose();
      x.dispose();
      y.dispose();
    });

    test('scope frees intermediates across awaits and keeps what it returns', async () => {
      const base = be.liveBufferCount();
      const kept = await ag.scope(async () => {
        const a = Tensor.fromArray(be, [1, 2, 3], [3]);
        await new Promise((r) => setTimeout(r, 1));
        const b = ag.mul(ag.add(a, 1), 2);
        await b.data();
        return { b };
      });
      expect(Array.from(await kept.b.data())).toEqual([4, 6, 8]);
      expect(be.liveBufferCount()).toBe(base + 1);
      kept.b.dispose();
      expect(be.liveBufferCount()).toBe(base);
    });

    test('SGD with momentum, AdamW and the schedulers update parameters on the device', async () => {
      const p = ag.keep(Tensor.fromArray(be, [1, -2, 3], [3], { requiresGrad: true }));
      const sgd = new ag.SGD([p], { lr: 0.1, momentum: 0.9, weightDecay: 0.01 });
      for (let i = 0; i < 2; i++) {
        await ag.scope(async () => {
          sgd.zeroGrad();
          ag.sum(ag.mul(p, p)).backward(); // grad = 2p
          sgd.step();
        });
      }
      // Reference in float64: g = 2p + 0.01p; v = 0.9v + g; p -= 0.1v.
      let ref = [1, -2, 3];
      let v = [0, 0, 0];
      for (let i = 0; i < 2; i++) {
        const g = ref.map((q) => 2 * q + 0.01 * q);
        v = v.map((vi, k) => 0.9 * vi + g[k]!);
        ref = ref.map((q, k) => q - 0.1 * v[k]!);
      }
      Array.from(await p.data()).forEach((q, k) => expect(q).toBeCloseTo(ref[k]!, 5));
      const sched = new ag.StepLR(sgd, 2, 0.5);
      sched.step();
      sched.step();
      expect(sgd.lr).toBeCloseTo(0.05, 10);
      const cos = new ag.CosineAnnealingLR(sgd, 4, 0);
      for (let i = 0; i < 4; i++) cos.step();
      expect(sgd.lr).toBeCloseTo(0, 10);
      sgd.zeroGrad();
      sgd.dispose();
      const adamw = new ag.AdamW([p], { lr: 0.1, weightDecay: 0.1 });
      const before = Array.from(await p.data());
      await ag.scope(async () => {
        adamw.zeroGrad();
        ag.sum(p).backward(); // grad = 1: Adam's first step moves each weight by lr·sign(g)
        adamw.step();
      });
      Array.from(await p.data()).forEach((q, k) => expect(q).toBeCloseTo(before[k]! * (1 - 0.01) - 0.1, 4));
      adamw.zeroGrad();
      adamw.dispose();
      p.dispose();
    });
  });
}

describe('devices', () => {
  test('mixing tensors of two backend instances is a typed error that names both; to() moves data', async () => {
    const a = await REPO_BACKENDS['cpu']!();
    const b = await REPO_BACKENDS['cpu']!();
    const x = Tensor.fromArray(a, [1, 2], [2]);
    const y = Tensor.fromArray(b, [3, 4], [2]);
    expect(() => ag.add(x, y)).toThrow(DeviceMismatchError);
    expect(() => ag.add(x, y)).toThrow(/different backends: cpu .* and cpu/);
    const moved = await y.to(a);
    const sum = ag.add(x, moved);
    expect(Array.from(await sum.data())).toEqual([4, 6]);
    for (const t of [x, y, moved, sum]) t.dispose();
    expect(a.liveBufferCount()).toBe(0);
    a.dispose();
    b.dispose();
  });

  test('Module.to moves every parameter to another backend', async () => {
    const a = await REPO_BACKENDS['cpu']!();
    const b = await REPO_BACKENDS['cpu']!();
    const m = new ag.Linear(3, 2, { backend: a, rng: 3 });
    const before = await Promise.all(m.parameters().map((p) => p.data()));
    await m.to(b);
    expect(m.parameters().every((p) => p.backend === b && p.requiresGrad)).toBe(true);
    expect(await Promise.all(m.parameters().map((p) => p.data()))).toEqual(before);
    expect(a.liveBufferCount()).toBe(0);
    m.dispose();
    a.dispose();
    b.dispose();
  });
});

describe('leak safety net', () => {
  test('a tensor dropped without dispose() is reported by the garbage collector and its buffer freed', async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    expect(gc ? 'gc exposed' : 'run node with --expose-gc (npm test does)').toBe('gc exposed');
    const be = await REPO_BACKENDS['cpu']!();
    const reports: string[] = [];
    ag.setLeakReporter((m) => reports.push(m));
    try {
      (() => {
        Tensor.fromArray(be, [1, 2, 3, 4, 5], [5]); // never disposed, never referenced again
      })();
      for (let i = 0; i < 50 && reports.length === 0; i++) {
        gc!();
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(reports.some((m) => m.includes('tensor [5] float32 on cpu'))).toBe(true);
      expect(be.liveBufferCount()).toBe(0);
    } finally {
      ag.setLeakReporter((m) => process.stderr.write(`${m}\n`));
      be.dispose();
    }
  });
});
