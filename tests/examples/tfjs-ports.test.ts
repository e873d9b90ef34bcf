// The tfjs-examples ports (examples/tfjs-ports): MNIST ConvNet, polynomial regression and the sentiment LSTM, each
// run at its small size by examples/tfjs-ports/run.mjs in a child process (the built packages), the tfjs original
// and the PolyHAL port in one process on the same data. The tfjs twin is the independent peer: PolyHAL must learn
// (loss falls, accuracy well above chance, coefficients toward the true ones) and land near tfjs's figures, with
// no more lines than the original. Then examples/tfjs-ports/same-start.mjs gives the ConvNet's PolyHAL twin the tfjs
// twin's initial weights and both the same batches: with the random draws taken out, the two libraries must train
// to the same losses and weights (float32 rounding apart). About 70 s on 2 cores, most of it tfjs-cpu's convolutions.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, test } from '@jest/globals';

interface Twin {
  loss: number[];
  accuracy?: number[];
  valAccuracy?: number[];
  testAccuracy?: number;
  epochMs?: number[];
  coefficients?: Record<string, number>;
  runMs?: number[];
}
interface Port {
  example: string;
  lines: { tfjs: number; polyhal: number; ratio: number };
  tfjs: Twin;
  polyhal: Twin;
  init?: Record<string, number>;
  target?: Record<string, number>;
}

interface SameStart {
  tfjs: { loss: number[]; valLoss: number[]; valAccuracy: number[] };
  polyhal: { loss: number[]; valLoss: number[]; valAccuracy: number[] };
  maxWeightDiff: number;
  maxWeight: number;
}

const ports = new Map<string, Port>();
let sameStart: SameStart;
beforeAll(() => {
  const r = spawnSync(process.execPath, ['examples/tfjs-ports/run.mjs', '--size', 'small', '--backend', 'cpu'], {
    encoding: 'utf8',
    timeout: 170_000,
  });
  if (r.status !== 0) throw new Error(`run.mjs failed (${r.status}): ${r.stderr.slice(-2000)}`);
  for (const line of r.stdout.split('\n').filter((l) => l.startsWith('{'))) {
    const p = JSON.parse(line) as Port;
    ports.set(p.example, p);
  }
  const same = spawnSync(process.execPath, ['examples/tfjs-ports/same-start.mjs', '--size', 'small'], {
    encoding: 'utf8',
    timeout: 80_000,
  });
  if (same.status !== 0) throw new Error(`same-start.mjs failed (${same.status}): ${same.stderr.slice(-2000)}`);
  sameStart = JSON.parse(same.stdout.split('\n').find((l) => l.startsWith('{'))!) as SameStart;
}, 270_000);

const port = (name: string): Port => {
  const p = ports.get(name);
  if (!p) throw new Error(`run.mjs printed no result for ${name}`);
  return p;
};

describe('tfjs-examples ported line for line', () => {
  test.each(['mnist', 'polynomial', 'sentiment'])('%s: the PolyHAL port has no more lines than tfjs', (name) => {
    const { lines } = port(name);
    expect(lines.tfjs).toBeGreaterThan(10);
    expect(lines.polyhal).toBeLessThanOrEqual(lines.tfjs);
  });

  test('mnist: both learn the real digits in 2 epochs; PolyHAL within reach of tfjs', () => {
    const { tfjs, polyhal } = port('mnist');
    for (const t of [tfjs, polyhal]) {
      expect(t.loss.length).toBe(2);
      expect(t.loss[1]!).toBeLessThan(t.loss[0]!);
      expect(t.valAccuracy!.at(-1)!).toBeGreaterThan(0.3); // 10 classes: chance is 0.1 (seen: 0.43–0.58)
    }
    expect(polyhal.valAccuracy!.at(-1)!).toBeGreaterThan(tfjs.valAccuracy!.at(-1)! - 0.2);
  });

  test('polynomial: from the same a, b, c, d both reach the same coefficients, near the true ones', () => {
    const { tfjs, polyhal, init, target } = port('polynomial');
    const dist = (c: Record<string, number>) => Math.hypot(...['a', 'b', 'c', 'd'].map((k) => c[k]! - target![k]!));
    for (const t of [tfjs, polyhal]) {
      expect(t.loss.length).toBe(75);
      expect(t.loss.at(-1)!).toBeLessThan(t.loss[0]! / 10);
      expect(dist(t.coefficients!)).toBeLessThan(dist(init!) / 2);
    }
    for (const k of ['a', 'b', 'c', 'd']) expect(polyhal.coefficients![k]!).toBeCloseTo(tfjs.coefficients![k]!, 3);
  });

  test('sentiment: the LSTM learns the synthetic reviews; test accuracy near tfjs', () => {
    const { tfjs, polyhal } = port('sentiment');
    for (const t of [tfjs, polyhal]) {
      expect(t.loss.at(-1)!).toBeLessThan(t.loss[0]! - 0.1);
      expect(t.testAccuracy!).toBeGreaterThan(0.62); // two classes, even odds: chance is 0.5
    }
    expect(polyhal.testAccuracy!).toBeGreaterThan(tfjs.testAccuracy! - 0.12);
  });

  test('mnist: from the initial weights and batches of tfjs, PolyHAL trains to the same losses and weights', () => {
    const { tfjs, polyhal, maxWeightDiff, maxWeight } = sameStart;
    expect(polyhal.loss.length).toBe(2);
    for (let e = 0; e < 2; e++) {
      expect(Math.abs(polyhal.loss[e]! - tfjs.loss[e]!)).toBeLessThan(1e-4);
      expect(Math.abs(polyhal.valLoss[e]! - tfjs.valLoss[e]!)).toBeLessThan(1e-4);
      // the same predictions but for at most one of the 128 digits held out
      expect(Math.abs(polyhal.valAccuracy[e]! - tfjs.valAccuracy[e]!)).toBeLessThanOrEqual(1 / 128);
    }
    expect(polyhal.loss[1]!).toBeLessThan(polyhal.loss[0]!); // it trained (seen: 2.296 → 2.181)
    expect(maxWeight).toBeGreaterThan(0.1);
    expect(maxWeightDiff).toBeLessThan(1e-4); // seen: 1.6e-7 after 12 Adam steps, from the seeded start
  });
});
