// polyhal --compile: the main job's whole training step (zeroGrad, forward, backward, the optimizer's step) recorded
// at the first step and replayed after. On webgpu the replays give the same bits as eager steps, so a compiled run
// and an eager run of the same seed have the same loss at every step and the same test accuracy; on cpu and wasm
// (which compute as called) the compiled function runs each step as called, with the same result. The
// cosine schedule changes the learning rate between steps, and the ViT's inputs are shifted anew every step.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComputeBackend } from '@polyhal/hal';
import { loadMnist } from '../../packages/cli/src/mnist.js';
import { train } from '../../packages/cli/src/train.js';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';
import { runCli } from '../support/cli.js';

const run = runCli;

for (const name of ['cpu', 'wasm', 'webgpu']) {
  describe(`train --compile: ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, REPO_BACKENDS[name]!, (b) => (be = b));
    const cases = [
      { model: 'mlp', trainSize: 640, lr: 1e-3 },
      { model: 'cnn', trainSize: 192, lr: 3e-3 },
      { model: 'vit', trainSize: 192, lr: 1e-3 },
    ] as const;
    for (const c of cases)
      test(`the ${c.model}: every step's loss and the test accuracy equal an eager run's`, async () => {
        if (!be) return;
        const data = loadMnist(c.trainSize, 200, 3);
        const o = { model: c.model, epochs: 1, batchSize: 64, seed: 3, lr: c.lr };
        const eager = await train(be, data, o);
        const compiled = await train(be, data, { ...o, compile: true });
        const steps = c.trainSize / 64;
        expect(eager.losses).toHaveLength(steps);
        expect(compiled.losses).toEqual(eager.losses); // toEqual on numbers: the same values, to the bit
        expect(compiled.testAccuracy).toBe(eager.testAccuracy);
        expect(eager.compiled).toBeUndefined();
        const s = compiled.compiled!;
        expect(s.refused).toEqual([]);
        if (name === 'webgpu') {
          expect([s.traces, s.replays, s.eager]).toEqual([1, steps - 1, 0]);
          expect(s.kernels).toBeGreaterThan(0);
        } else expect([s.traces, s.replays, s.eager, s.kernels]).toEqual([0, 0, steps, null]);
      }, 300_000);
  });
}

test('--compile: the --json record says so with the stats; with --amp or --profile it exits 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'polyhal-compile-'));
  try {
    const args = ['--epochs', '1', '--train', '640', '--test', '200', '--backend', 'cpu'];
    const r = run(...args, '--compile', '--json', join(dir, 'c.json'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('compiled step (recorded once, replayed)');
    const record = JSON.parse(readFileSync(join(dir, 'c.json'), 'utf8')).runs[0];
    expect(record.compile).toBe(true);
    expect(record.compiled).toEqual({ traces: 0, replays: 0, eager: 10, refused: [], kernels: null });
    for (const other of ['--amp', '--profile']) {
      const bad = run(...args, '--compile', other);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(`--compile does not combine with ${other}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
