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

test('--compile: the --json record says so with the stats; with --amp it exits 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'polyhal-compile-'));
  try {
    const args = ['--epochs', '1', '--train', '640', '--test', '200', '--backend', 'cpu'];
    const r = run(...args, '--compile', '--json', join(dir, 'c.json'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('compiled step (recorded once, replayed)');
    const record = JSON.parse(readFileSync(join(dir, 'c.json'), 'utf8')).runs[0];
    expect(record.compile).toBe(true);
    expect(record.compiled).toEqual({ traces: 0, replays: 0, eager: 10, refused: [], kernels: null });
    const bad = run(...args, '--compile', '--amp');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--compile does not combine with --amp');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

// --compile --profile (packages/cli/src/profile.ts): the eager step's op-by-op table, then the compiled step on a
// second model from the same seed, on the same first batches (the trace, then 3 replays, each timed whole), with
// compile's counts and the kernelStats() deltas of an eager and a replayed step.
for (const name of ['cpu', 'webgpu']) {
  describe(`--compile --profile: ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, REPO_BACKENDS[name]!, (b) => (be = b));
    test("the record's counts agree with each other and its losses with an eager run's", async () => {
      if (!be) return;
      const dir = mkdtempSync(join(tmpdir(), 'polyhal-compile-profile-'));
      try {
        const file = join(dir, 'p.json');
        const args = ['--epochs', '1', '--train', '640', '--test', '100', '--seed', '3', '--backend', name];
        const r = run(...args, '--compile', '--profile', '--json', file);
        expect(r.status).toBe(0);
        expect(r.stdout).toMatch(/^matmul\s+5\s+0\s+[\d.]+\s+[\d.]+%$/m); // the eager step's table
        expect(r.stdout).not.toMatch(/epoch 1\/|test accuracy/); // and no training
        const profiles = JSON.parse(readFileSync(file, 'utf8')).profiles;
        expect(profiles).toHaveLength(1);
        const [p] = profiles;
        expect(p).toMatchObject({ model: 'mlp', backend: name, compile: true, amp: false, batchSize: 64, seed: 3 });
        const c = p.compiled;
        expect(c.steps).toBe(4);
        expect(c.refused).toEqual([]);
        expect(c.traces + c.replays + c.eager).toBe(c.steps);
        // the same batches from the same weights: eager and compiled steps give the same losses, and so does a
        // training run of this process (its first 4 steps)
        const eager = await train(be, loadMnist(640, 100, 3), {
          model: 'mlp',
          epochs: 1,
          batchSize: 64,
          seed: 3,
          lr: 1e-3,
        });
        expect(c.eagerLosses).toEqual(eager.losses.slice(0, 4));
        expect(c.losses).toEqual(c.eagerLosses);
        expect(r.stdout).toContain("the 4 compiled steps' losses equal the eager steps' on the same batches");
        if (name !== 'webgpu') {
          // computes as called: nothing recorded, nothing counted
          expect([c.traces, c.replays, c.eager]).toEqual([0, 0, 4]);
          expect([c.recording, c.kernels, c.fusion, p.kernels]).toEqual([null, null, null, null]);
          expect(r.stdout).toContain(`traces 0, replays 0, eager calls 4: ${name} computes as called`);
          return;
        }
        expect([c.traces, c.replays, c.eager]).toEqual([1, c.steps - 1, 0]);
        const { kernels, copies, callbacks, liveKernels } = c.recording;
        expect(kernels).toBeGreaterThan(0);
        expect(copies).toBeGreaterThanOrEqual(0);
        // Adam's update is one live section (its params are recomputed at every replay)
        expect(callbacks).toBeGreaterThan(0);
        expect(liveKernels).toBeGreaterThan(0);
        // the MLP's input is a whole buffer: a replayed step dispatches exactly the kernels its recording holds
        expect(c.kernels.later).toBe(kernels);
        // the capture fused some elementwise ops, into no more kernels than ops, and that is what a replay saves
        // against an eager step (which dispatches one kernel per op)
        expect(c.fusion.deferred).toBeGreaterThan(0);
        expect(c.fusion.kernels).toBeGreaterThan(0);
        expect(c.fusion.kernels).toBeLessThanOrEqual(c.fusion.deferred);
        const { deferred, kernels: encoded, folded, merged } = c.fusion;
        expect(p.kernels - c.kernels.later).toBe(deferred - encoded + folded + merged);
        expect(r.stdout).toContain(
          `kernels dispatched per step (kernelStats, the input's preparation included): eager ${p.kernels}, ` +
            `traced ${c.kernels.first}, replayed ${kernels}`,
        );
        expect(r.stdout).toContain('a replayed step calls no backend method: it is timed only whole');
        for (const ms of [p.stepMs, c.stepMs.first, c.stepMs.later]) expect(ms).toBeGreaterThan(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  });
}
