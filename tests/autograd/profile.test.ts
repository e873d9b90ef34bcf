import { describe, expect, test } from '@jest/globals';
import type { ComputeBackend } from '@polyhal/hal';
import {
  Adam,
  crossEntropy,
  Linear,
  profile,
  type ProfileReport,
  ReLU,
  scope,
  Sequential,
  Tensor,
} from '@polyhal/autograd';
import { REPO_BACKENDS } from '../support/backends.js';

/** One training step of a tiny MLP (8 → 16 → 4, Adam) through a profiled backend, after a warm-up step. */
async function profileMlpStep(
  be: ComputeBackend,
  replay?: boolean,
  groupByInputShape?: boolean,
): Promise<ProfileReport> {
  const p = profile(be, { replay, groupByInputShape });
  const model = new Sequential(
    new Linear(8, 16, { backend: p.backend, rng: 1 }),
    new ReLU(),
    new Linear(16, 4, { backend: p.backend, rng: 2 }),
  );
  const opt = new Adam(model.parameters(), { lr: 1e-2 });
  const x = Tensor.fromArray(
    p.backend,
    Float32Array.from({ length: 40 }, (_, i) => Math.sin(i)),
    [5, 8],
  );
  const y = Tensor.fromArray(
    p.backend,
    Float32Array.from({ length: 20 }, (_, i) => (i % 4 === i % 5 ? 1 : 0)),
    [5, 4],
  );
  const step = () =>
    scope(async () => {
      const l = crossEntropy(model.forward(x), y);
      opt.zeroGrad();
      l.backward();
      opt.step();
      return l.item();
    });
  try {
    await step();
    await p.start();
    await step();
    return await p.stop();
  } finally {
    opt.zeroGrad();
    opt.dispose();
    model.dispose();
    x.dispose();
    y.dispose();
  }
}

const row = (r: ProfileReport, op: string) => r.rows.find((x) => x.op === op);

for (const name of ['cpu', 'wasm']) {
  describe(`profile(backend): ${name}`, () => {
    for (const replay of [undefined, true]) {
      test(`a training step's table adds up${replay ? ' (replayed call by call)' : ''}`, async () => {
        const be = await REPO_BACKENDS[name]!();
        try {
          const live = be.liveBufferCount();
          const r = await profileMlpStep(be, replay);
          expect(r.backend).toBe(name);
          expect(r.replayed).toBe(replay === true);
          // shares of the ops and of the time outside them sum to 100 %
          const shares = r.rows.reduce((p, x) => p + x.share, 0) + r.outsideMs / r.totalMs;
          expect(shares).toBeCloseTo(1, 9);
          expect(r.totalMs).toBeCloseTo(r.rows.reduce((p, x) => p + x.ms, 0) + r.outsideMs, 9);
          if (!replay) expect(r.totalMs).toBeCloseTo(r.wallMs, 6);
          // forward: 2 matmuls; backward: dW for both layers and dx for the second (the input needs no gradient)
          expect(row(r, 'matmul')).toMatchObject({ calls: 5 });
          expect(row(r, 'matmul')!.ms).toBeGreaterThan(0);
          expect(row(r, 'adamStep')).toMatchObject({ calls: 4 }); // 2 weights, 2 biases
          expect(row(r, 'read')).toMatchObject({ calls: 1 }); // the loss
          // sorted by total time, rows with only inner calls last
          const timed = r.rows.filter((x) => x.calls > 0);
          expect(timed.map((x) => x.ms)).toEqual(timed.map((x) => x.ms).sort((a, b) => b - a));
          expect(r.rows.slice(timed.length).every((x) => x.calls === 0 && x.ms === 0 && x.innerCalls > 0)).toBe(true);
          // allocations happen inside ops: counted as inner calls, no time of their own
          expect(row(r, 'allocate')).toMatchObject({ calls: 0, ms: 0 });
          expect(row(r, 'allocate')!.innerCalls).toBeGreaterThan(0);
          const table = r.table().split('\n');
          expect(table[0]).toMatch(/^op\s+calls\s+inner calls\s+total ms\s+share$/);
          expect(table[1]).toMatch(new RegExp(`^${r.rows[0]!.op}\\s+\\d+`));
          expect(table.at(-1)).toMatch(/^total\s+\d+\s+\d+\s+[\d.]+\s+100\.0%$/);
          expect(be.liveBufferCount()).toBe(live); // the replay frees what it made
        } finally {
          be.dispose();
        }
      });
    }

    test('groupByInputShape splits a method by its arguments: the five matmuls of the step', async () => {
      const be = await REPO_BACKENDS[name]!();
      try {
        const r = await profileMlpStep(be, true, true);
        const mm = r.rows.filter((x) => x.op.startsWith('matmul '));
        // forward x[5,8]·W1[8,16] + b1[16], h[5,16]·W2[16,4] + b2[4]; backward dx of layer 2 and dW of both
        // layers: five products of five different shapes, one call each
        expect(mm.map((x) => x.op)).toEqual(
          expect.arrayContaining(['matmul [5,8]f32 [8,16]f32 [16]f32', 'matmul [5,16]f32 [16,4]f32 [4]f32']),
        );
        expect(mm.map((x) => x.calls)).toEqual([1, 1, 1, 1, 1]);
        expect(r.rows.filter((x) => x.op.startsWith('adamStep ')).reduce((p, x) => p + x.calls, 0)).toBe(4);
        expect(row(r, 'matmul')).toBeUndefined();
      } finally {
        be.dispose();
      }
    });

    test('a composite counts once, with its inner calls labelled and not timed twice', async () => {
      const be = await REPO_BACKENDS[name]!();
      try {
        const p = profile(be);
        const x = p.backend.fromArray([1, 2, 3, 4, 5, 6], [2, 3]);
        await p.start();
        const out = [p.backend.softmax(x), p.backend.logsumexp(x, 1), p.backend.max(x, 1)];
        const r = await p.stop();
        // cpu and wasm build softmax and logsumexp from max, exp, sub, sum, ...: those are inner calls
        expect(row(r, 'softmax')).toMatchObject({ calls: 1, innerCalls: 0 });
        expect(row(r, 'logsumexp')).toMatchObject({ calls: 1, innerCalls: 0 });
        expect(row(r, 'max')!.calls).toBe(1);
        expect(row(r, 'max')!.innerCalls).toBeGreaterThanOrEqual(1);
        const outer = r.rows.reduce((p, x) => p + x.calls, 0);
        expect(outer).toBe(3);
        expect(r.rows.filter((x) => x.calls === 0).every((x) => x.ms === 0)).toBe(true);
        expect(r.rows.reduce((p, x) => p + x.ms, 0) + r.outsideMs).toBeCloseTo(r.wallMs, 6);
        for (const a of [x, ...out]) be.free(a);
      } finally {
        be.dispose();
      }
    });
  });
}
