/**
 * compile(fn) of a whole training step — zeroGrad, forward with dropout in training mode, backward, optimizer step
 * (packages/autograd/src/compile.ts, optim.ts, optim-adaptive.ts, dropout.ts, random.ts): on webgpu the step is
 * recorded once and replayed, each replay taking the optimizer's learning rate and step count and the dropout's
 * stream position afresh (hal/src/capture.ts, LiveValues). The independent peer is an eager twin: the same
 * weights, optimizer, scheduler and dropout seed, run without compile. Every step must give the twin's bits —
 * losses, dropout outputs (so the masks), gradients, weights and the optimizer's state — for every optimizer, with
 * a scheduler changing lr between steps. Also: random draws of the global generator advance per replay as eager,
 * a new shape retraces, and a disposed parameter or optimizer state is a typed error at the next replay. On cpu and
 * wasm compile runs fn as is: the same checks hold.
 */
import { describe, expect, test } from '@jest/globals';
import {
  Adadelta,
  Adagrad,
  Adam,
  Adamax,
  AdamW,
  CosineAnnealingLR,
  clipGradNorm,
  compile,
  Dropout,
  GRU,
  generatorState,
  manualSeed,
  mseLoss,
  type Optimizer,
  RMSprop,
  rand,
  randint,
  randn,
  SGD,
  StepLR,
  scope,
  Tensor,
} from '@polyhal/autograd';
import { type ComputeBackend, type DeviceBuffer, UseAfterFreeError } from '@polyhal/hal';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

const bits = async (be: ComputeBackend, b: DeviceBuffer): Promise<number[]> => Array.from(await be.read(b));
const values = async (t: Tensor): Promise<number[]> => Array.from(await t.data());

/** A two-layer MLP with dropout: relu(x·W1 + b1) → Dropout(0.25) → ·W2; x [n, 8] → [n, 3]. */
function net(be: ComputeBackend) {
  const w1 = Tensor.fromArray(be, data(8 * 16, 1), [8, 16], { requiresGrad: true });
  const b1 = Tensor.fromArray(be, data(16, 2), [16], { requiresGrad: true });
  const w2 = Tensor.fromArray(be, data(16 * 3, 3), [16, 3], { requiresGrad: true });
  const drop = new Dropout(0.25, 11);
  drop.train();
  return { params: [w1, b1, w2], drop };
}
type Net = ReturnType<typeof net>;

/** The training step: the loss and the dropout's output (whose zeros are the mask). */
function trainStep(n: Net, opt: Optimizer, clip: boolean) {
  return (x: Tensor, y: Tensor): Tensor[] => {
    opt.zeroGrad();
    const [w1, b1, w2] = n.params as [Tensor, Tensor, Tensor];
    const h = n.drop.forward(x.matmul(w1).add(b1).relu());
    const loss = mseLoss(h.matmul(w2), y);
    loss.backward();
    if (clip) clipGradNorm(n.params, 0.5);
    opt.step();
    return [loss, h];
  };
}

/** The optimizer's state buffers (moments, velocities, sums), parameter by parameter. */
const stateOf = (opt: Optimizer): DeviceBuffer[] =>
  (opt as unknown as { state: ({ buffers: DeviceBuffer[] } | null)[] }).state.flatMap((s) => s?.buffers ?? []);

type Case = [string, (p: Tensor[]) => Optimizer, (o: Optimizer) => { step(): void }, boolean];
const CASES: Case[] = [
  ['SGD', (p) => new SGD(p, { lr: 0.1 }), (o) => new StepLR(o, 1, 0.7), false],
  [
    'SGD momentum, weight decay',
    (p) => new SGD(p, { lr: 0.05, momentum: 0.9, weightDecay: 0.01 }),
    (o) => new StepLR(o, 2, 0.5),
    false,
  ],
  [
    'SGD Nesterov',
    (p) => new SGD(p, { lr: 0.05, momentum: 0.8, nesterov: true }),
    (o) => new CosineAnnealingLR(o, 6),
    false,
  ],
  ['Adam', (p) => new Adam(p, { lr: 0.01 }), (o) => new CosineAnnealingLR(o, 6, 0.001, 2), false],
  ['Adam, L2, clipGradNorm', (p) => new Adam(p, { lr: 0.01, weightDecay: 0.1 }), (o) => new StepLR(o, 1, 0.8), true],
  ['AdamW', (p) => new AdamW(p, { lr: 0.02 }), (o) => new StepLR(o, 1, 0.6), false],
  [
    'RMSprop centered, momentum',
    (p) => new RMSprop(p, { lr: 0.01, centered: true, momentum: 0.5 }),
    (o) => new StepLR(o, 1, 0.9),
    false,
  ],
  [
    'Adagrad',
    (p) => new Adagrad(p, { lr: 0.05, lrDecay: 0.1, initialAccumulatorValue: 0.1 }),
    (o) => new StepLR(o, 1, 0.9),
    false,
  ],
  ['Adadelta', (p) => new Adadelta(p, { lr: 1, weightDecay: 0.01 }), (o) => new CosineAnnealingLR(o, 6), false],
  ['Adamax', (p) => new Adamax(p, { lr: 0.01 }), (o) => new StepLR(o, 1, 0.5), false],
];

const STEPS = 5;

for (const name of ['webgpu', 'cpu', 'wasm']) {
  describe(`compile of a training step on ${name}`, () => {
    let be: ComputeBackend;
    openBackend(name, REPO_BACKENDS[name]!, (b) => {
      be = b!;
    });
    const captures = name === 'webgpu';

    test.each(CASES)('%s: the replays give the eager twin’s bits step by step', async (_, make, schedule, clip) => {
      const live = be.liveBufferCount();
      const nets = [net(be), net(be)]; // [eager, compiled]: the same weights and dropout seed
      const opts = nets.map((n) => make(n.params));
      const scheds = opts.map(schedule);
      const steps = nets.map((n, k) => trainStep(n, opts[k]!, clip));
      const compiled = compile(steps[1]!);
      const masks: number[][] = [];
      for (let i = 0; i < STEPS + 1; i++) {
        const rows = i < STEPS ? 4 : 6; // the last step has a new shape: a second trace
        const x = Tensor.fromArray(be, data(rows * 8, 20 + i), [rows, 8]);
        const y = Tensor.fromArray(be, data(rows * 3, 40 + i), [rows, 3]);
        const eager = scope(() => steps[0]!(x, y));
        const got = compiled(x, y);
        for (const [j, t] of got.entries()) expect(await values(t)).toEqual(await values(eager[j]!));
        const mask = (await values(got[1]!)).map((v) => (v === 0 ? 0 : 1));
        masks.push(mask);
        expect(mask).toContain(0); // dropout dropped something, and kept something
        expect(mask).toContain(1);
        for (const [j, p] of nets[1]!.params.entries()) {
          const q = nets[0]!.params[j]!;
          expect(await values(p)).toEqual(await values(q));
          expect(await values(p.grad!)).toEqual(await values(q.grad!));
        }
        const [a, b] = opts.map(stateOf) as [DeviceBuffer[], DeviceBuffer[]];
        expect(b.length).toBe(a.length);
        for (const [j, s] of b.entries()) expect(await bits(be, s)).toEqual(await bits(be, a[j]!));
        expect([opts[1]!.stepCount, opts[1]!.lr, nets[1]!.drop.offset]).toEqual([
          opts[0]!.stepCount,
          opts[0]!.lr,
          nets[0]!.drop.offset,
        ]);
        for (const t of [...eager, ...got, x, y]) t.dispose();
        for (const s of scheds) s.step(); // lr changes between steps
      }
      expect(masks[1]).not.toEqual(masks[0]); // each replay draws the next mask
      expect(masks[2]).not.toEqual(masks[1]);
      if (captures) {
        expect(compiled.stats).toMatchObject({ traces: 2, replays: STEPS - 1, eager: 0, refused: [] });
        // per replay: the dropout's and the optimizer step's callbacks; the mask's and the updates' kernels
        expect(compiled.stats.recording).toMatchObject({ callbacks: 2 });
        expect(compiled.stats.recording!.liveKernels).toBeGreaterThanOrEqual(2);
      } else expect(compiled.stats).toMatchObject({ traces: 0, replays: 0, eager: STEPS + 1 });
      compiled.release();
      for (const o of opts) o.zeroGrad();
      for (const o of opts) o.dispose();
      for (const n of nets) for (const p of n.params) p.dispose();
      expect(be.liveBufferCount()).toBe(live);
    });

    test('a disposed parameter, or disposed optimizer state, is a UseAfterFreeError at the next call', () => {
      for (const dropState of [false, true]) {
        const n = net(be);
        const opt = new Adam(n.params, { lr: 0.01 });
        const step = compile(trainStep(n, opt, false));
        const x = Tensor.fromArray(be, data(32, 5), [4, 8]);
        const y = Tensor.fromArray(be, data(12, 6), [4, 3]);
        for (let i = 0; i < 2; i++) for (const t of step(x, y)) t.dispose();
        if (dropState) opt.dispose();
        else n.params[2]!.dispose();
        if (captures || !dropState) expect(() => step(x, y)).toThrow(UseAfterFreeError);
        else for (const t of step(x, y)) t.dispose(); // eager: the next step starts from new zeros, as documented
        step.release();
        opt.zeroGrad();
        opt.dispose();
        for (const t of [...n.params, x, y]) t.dispose();
      }
    });

    test('draws of the global generator (rand, randn, randint) advance per replay as eager calls do', async () => {
      const x = Tensor.fromArray(be, data(15, 3), [5, 3]);
      const ones = Tensor.fromArray(be, new Float32Array(1023).fill(1), [1023]);
      // 1023 elements: the stream's offset within a block of four changes every call, and with it the kernel's grid
      const drops = [new Dropout(0.5, 2), new Dropout(0.5, 2)];
      let calls = 0;
      const fn = (t: Tensor): Tensor[] => [
        t.add(rand(t.backend, t.shape)),
        randn(t.backend, [7], { mean: 1, std: 2 }),
        randint(t.backend, -3, 9, [2, 5]),
        drops[calls]!.forward(ones),
      ];
      const run = async (call: (t: Tensor) => Tensor[]): Promise<number[][][]> => {
        manualSeed(5);
        const out: number[][][] = [];
        for (let i = 0; i < 4; i++) {
          const r = call(x);
          out.push(await Promise.all(r.map(values)));
          for (const t of r) t.dispose();
          rand(be, [3]).dispose(); // a draw outside fn, between calls
        }
        out.push([[generatorState().offset]]);
        return out;
      };
      const compiled = compile(fn);
      const got = await run(compiled);
      calls = 1; // the eager twin: its own layer, from the same seed
      const want = await run((t) => scope(() => fn(t)));
      expect(got).toEqual(want);
      expect(got[1]).not.toEqual(got[0]);
      expect(drops[0]!.offset).toBe(4 * 1023);
      if (captures) expect(compiled.stats).toMatchObject({ traces: 1, replays: 3, refused: [] });
      if (captures) expect(compiled.stats.recording).toMatchObject({ callbacks: 4 });
      compiled.release();
      for (const d of drops) d.train();
      x.dispose();
      ones.dispose();
    });

    test('a step over many parameters: their new state, made at the trace, is all outside the recording', async () => {
      // 48 parameters of 48 sizes (so that kernels' params differ): the first step's 96 zero-fills of Adam's moments
      // take more than one submission
      const nets = [0, 1].map(() =>
        Array.from({ length: 48 }, (_, i) =>
          Tensor.fromArray(be, data(i + 1, 80 + i), [i + 1], { requiresGrad: true }),
        ),
      );
      const opts = nets.map((ps) => new Adam(ps, { lr: 0.01 }));
      const step = (k: number) => (x: Tensor) => {
        opts[k]!.zeroGrad();
        const s = x.sum();
        const loss = nets[k]!.map((p) => p.mul(s)).reduce((acc, h) => acc.add(h.mul(h).mean()), s.mul(0));
        loss.backward();
        opts[k]!.step();
        return loss;
      };
      const compiled = compile(step(1));
      for (let i = 0; i < 3; i++) {
        const x = Tensor.fromArray(be, data(8, 90 + i), [8]);
        const [a, b] = [scope(() => step(0)(x)), compiled(x)];
        expect(await values(b)).toEqual(await values(a));
        for (const [j, p] of nets[1]!.entries()) expect(await values(p)).toEqual(await values(nets[0]![j]!));
        for (const t of [a, b, x]) t.dispose();
      }
      if (captures) expect(compiled.stats).toMatchObject({ traces: 1, replays: 2 });
      compiled.release();
      for (const o of opts) o.zeroGrad();
      for (const o of opts) o.dispose();
      for (const ps of nets) for (const p of ps) p.dispose();
    });

    test('a capture without live sections keeps no optimizer step nor draw: it runs eagerly', async () => {
      // the same backend, its captureLive and uncaptured hidden (a capturing backend that predates them)
      const hidden = new Proxy(be, {
        get: (t, k) => (k === 'captureLive' || k === 'uncaptured' ? undefined : Reflect.get(t, k)),
      });
      const nets = [net(hidden), net(hidden)];
      const opts = nets.map((n) => new Adam(n.params, { lr: 0.01 }));
      const compiled = compile(trainStep(nets[1]!, opts[1]!, false));
      for (let i = 0; i < 3; i++) {
        const x = Tensor.fromArray(hidden, data(32, 50 + i), [4, 8]);
        const y = Tensor.fromArray(hidden, data(12, 55 + i), [4, 3]);
        const [a, b] = [scope(() => trainStep(nets[0]!, opts[0]!, false)(x, y)), compiled(x, y)];
        for (const [j, t] of b.entries()) expect(await values(t)).toEqual(await values(a[j]!));
        for (const t of [...a, ...b, x, y]) t.dispose();
      }
      if (captures) {
        expect(compiled.stats).toMatchObject({ replays: 0, eager: 2 });
        expect(compiled.stats.refused[0]).toMatch(/steps an optimizer/);
      }
      compiled.release();
      for (const o of opts) o.zeroGrad();
      for (const o of opts) o.dispose();
      for (const n of nets) for (const p of n.params) p.dispose();
    });

    test('a stacked GRU with dropout between its layers: the masks advance per replay as eager', async () => {
      const grus = [0, 1].map(() => new GRU(3, 5, { backend: be, rng: 4, numLayers: 2, dropout: 0.3, dropoutSeed: 9 }));
      const opts = grus.map((g) => new RMSprop(g.parameters(), { lr: 0.01 }));
      const step = (k: number) => (x: Tensor) => {
        opts[k]!.zeroGrad();
        const h = grus[k]!.forward(x);
        const loss = h.mul(h).mean();
        loss.backward();
        opts[k]!.step();
        return loss;
      };
      const compiled = compile(step(1));
      for (let i = 0; i < 4; i++) {
        const x = Tensor.fromArray(be, data(4 * 2 * 3, 100 + i), [4, 2, 3]);
        const [a, b] = [scope(() => step(0)(x)), compiled(x)];
        expect(await values(b)).toEqual(await values(a));
        const [p0, p1] = grus.map((g) => g.parameters());
        for (const [j, p] of p1!.entries()) expect(await values(p)).toEqual(await values(p0![j]!));
        expect(grus[1]!.dropoutOffset).toBe(grus[0]!.dropoutOffset);
        for (const t of [a, b, x]) t.dispose();
      }
      expect(grus[0]!.dropoutOffset).toBe(4 * 4 * 2 * 5); // 4 steps of 4 time steps of [2, 5]
      if (captures) expect(compiled.stats).toMatchObject({ traces: 1, replays: 3, refused: [] });
      compiled.release();
      for (const o of opts) o.zeroGrad();
      for (const o of opts) o.dispose();
      for (const g of grus) g.dispose();
    });

    test('gradients a step frees after the update are freed by its replays too', async () => {
      const nets = [net(be), net(be)];
      const opts = nets.map((n) => new SGD(n.params, { lr: 0.1, momentum: 0.5 }));
      const stepThenZero = (k: number) => (x: Tensor, y: Tensor) => {
        const [w1, b1, w2] = nets[k]!.params as [Tensor, Tensor, Tensor];
        const loss = mseLoss(x.matmul(w1).add(b1).relu().matmul(w2), y);
        loss.backward();
        opts[k]!.step();
        opts[k]!.zeroGrad();
        return loss;
      };
      const compiled = compile(stepThenZero(1));
      for (let i = 0; i < 4; i++) {
        const x = Tensor.fromArray(be, data(32, 60 + i), [4, 8]);
        const y = Tensor.fromArray(be, data(12, 70 + i), [4, 3]);
        const [a, b] = [scope(() => stepThenZero(0)(x, y)), compiled(x, y)];
        expect(await values(b)).toEqual(await values(a));
        for (const [j, p] of nets[1]!.params.entries()) {
          expect(p.grad).toBeNull();
          expect(await values(p)).toEqual(await values(nets[0]!.params[j]!));
        }
        for (const t of [a, b, x, y]) t.dispose();
      }
      if (captures) expect(compiled.stats).toMatchObject({ traces: 1, replays: 3 });
      compiled.release();
      for (const o of opts) o.dispose();
      for (const n of nets) for (const p of n.params) p.dispose();
    });
  });
}
