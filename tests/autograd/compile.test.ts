/**
 * compile(fn) (packages/autograd/src/compile.ts): on webgpu the first call of a signature is recorded and later
 * calls replay it. Replays must give the bits of eager calls on the same inputs (and agree with a float64
 * oracle), return fresh tensors that later calls leave alone, never write the caller's inputs, see a weight
 * updated in place, name a disposed weight, retrace for new shapes, replay functions that draw random numbers
 * with the draws advancing per replay (compile-optimizer.test.ts checks them against eager twins, with whole
 * training steps), and give every buffer back. On cpu the function runs as is.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Adam, compile, Dropout, generatorState, mseLoss, noGrad, rand, scope, Tensor } from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError, UseAfterFreeError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

/** A two-layer MLP: relu(x·W1 + b1)·W2, x [n, 8] → [n, 3]. */
function mlp(be: ComputeBackend, requiresGrad = false) {
  const w1 = Tensor.fromArray(be, data(8 * 16, 1), [8, 16], { requiresGrad });
  const b1 = Tensor.fromArray(be, data(16, 2), [16], { requiresGrad });
  const w2 = Tensor.fromArray(be, data(16 * 3, 3), [16, 3], { requiresGrad });
  const fn = (x: Tensor): Tensor => x.matmul(w1).add(b1).relu().matmul(w2);
  return { w1, b1, w2, fn };
}

/** The MLP in float64 from the host values of its weights. */
function oracle(x: Float32Array, n: number, w1: Float32Array, b1: Float32Array, w2: Float32Array): number[] {
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const h = Array.from({ length: 16 }, (_, j) => {
      let s = b1[j]!;
      for (let k = 0; k < 8; k++) s += x[i * 8 + k]! * w1[k * 16 + j]!;
      return Math.max(0, s);
    });
    for (let j = 0; j < 3; j++) y.push(h.reduce((s, v, k) => s + v * w2[k * 3 + j]!, 0));
  }
  return y;
}

const values = async (t: Tensor): Promise<number[]> => Array.from(await t.data());

describe('compile on webgpu', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['webgpu']!();
  });
  afterAll(() => be?.dispose());

  test('replays give the eager bits, fresh outputs and untouched inputs; new shapes trace again', async () => {
    const live = be.liveBufferCount();
    const { w1, b1, w2, fn } = mlp(be);
    const forward = compile(fn);
    const kept: [Tensor, number[]][] = [];
    const kernels = (): number => (be as unknown as { kernelStats(): { dispatches: number } }).kernelStats().dispatches;
    const counts: number[] = [];
    for (const [n, seed] of [
      [4, 1],
      [4, 2],
      [4, 3],
      [6, 4],
      [6, 5],
    ] as const) {
      const xd = data(n * 8, 10 + seed);
      const x = Tensor.fromArray(be, xd, [n, 8]);
      const before = kernels();
      const y = forward(x);
      counts.push(kernels() - before);
      const want = scope(() => noGrad(() => fn(x)));
      expect(y.shape).toEqual([n, 3]);
      const got = await values(y);
      expect(got).toEqual(await values(want));
      const ref = oracle(xd, n, data(128, 1), data(16, 2), data(48, 3));
      got.forEach((v, i) => expect(Math.abs(v - ref[i]!)).toBeLessThanOrEqual(1e-5));
      expect(await values(x)).toEqual(Array.from(xd)); // the caller's input is never written
      kept.push([y, got]);
      want.dispose();
      x.dispose();
    }
    // a result keeps its values while later calls replay the same recording
    for (const [y, got] of kept) expect(await values(y)).toEqual(got);
    expect(forward.stats).toMatchObject({ traces: 2, replays: 3, eager: 0, refused: [] });
    // a replay dispatches what the traced call did, plus the copy of its output (and none of the JavaScript)
    expect(counts[1]).toBe(counts[2]);
    for (const [y] of kept) y.dispose();
    forward.release();
    for (const t of [w1, b1, w2]) t.dispose();
    expect(be.liveBufferCount()).toBe(live);
  });

  test('a function returning its input or a weight: copies each call, the originals left alone', async () => {
    const w = Tensor.fromArray(be, data(6, 4), [2, 3]);
    const ident = compile((t: Tensor) => t);
    const weight = compile((_t: Tensor) => w);
    const x = Tensor.fromArray(be, data(6, 5), [2, 3]);
    for (let i = 0; i < 3; i++) {
      const [a, b] = [ident(x), weight(x)];
      expect(a).not.toBe(x);
      expect(b).not.toBe(w);
      expect(await values(a)).toEqual(await values(x));
      expect(await values(b)).toEqual(await values(w));
      a.dispose();
      b.dispose();
    }
    expect(x.isDisposed || w.isDisposed).toBe(false);
    expect([ident.stats.replays, weight.stats.replays]).toEqual([2, 2]);
    ident.release();
    weight.release();
    x.dispose();
    w.dispose();
  });

  test('a weight written in place is seen by the next replay; a disposed one is named', async () => {
    const { w1, b1, w2, fn } = mlp(be);
    const forward = compile(fn);
    const x = Tensor.fromArray(be, data(32, 7), [4, 8]);
    forward(x).dispose();
    forward(x).dispose();
    be.write(w2.value.buffer, data(48, 99)); // an in-place update, as an optimizer's
    const y = forward(x);
    const want = scope(() => noGrad(() => fn(x)));
    expect(await values(y)).toEqual(await values(want));
    y.dispose();
    want.dispose();
    w2.dispose();
    expect(() => forward(x)).toThrow(UseAfterFreeError);
    forward.release();
    for (const t of [x, w1, b1]) t.dispose();
  });

  test('a training step (forward and backward) replays to the eager losses, gradients and weights', async () => {
    const live = be.liveBufferCount();
    const nets = [mlp(be, true), mlp(be, true)]; // the same weights: one trained eagerly, one compiled
    const step =
      (net: ReturnType<typeof mlp>) =>
      (x: Tensor, y: Tensor): Tensor => {
        const loss = mseLoss(net.fn(x), y);
        loss.backward();
        return loss;
      };
    const compiled = compile(step(nets[1]!));
    const opts = nets.map((n) => new Adam([n.w1, n.b1, n.w2], { lr: 0.01 }));
    for (let i = 0; i < 4; i++) {
      const x = Tensor.fromArray(be, data(32, 20 + i), [4, 8]);
      const y = Tensor.fromArray(be, data(12, 40 + i), [4, 3]);
      const losses: number[][] = [];
      for (const [k, run] of [step(nets[0]!), compiled].entries()) {
        opts[k]!.zeroGrad();
        const loss = k === 0 ? scope(() => run(x, y)) : run(x, y);
        losses.push(await values(loss));
        opts[k]!.step();
        loss.dispose();
      }
      expect(losses[1]).toEqual(losses[0]);
      for (const name of ['w1', 'b1', 'w2'] as const) {
        expect(await values(nets[1]![name].grad!)).toEqual(await values(nets[0]![name].grad!));
        expect(await values(nets[1]![name])).toEqual(await values(nets[0]![name]));
      }
      x.dispose();
      y.dispose();
    }
    expect(compiled.stats).toMatchObject({ traces: 1, replays: 3, refused: [] });
    // without zeroGrad the gradients add up, as backward's do
    const x = Tensor.fromArray(be, data(32, 9), [4, 8]);
    const y = Tensor.fromArray(be, data(12, 8), [4, 3]);
    for (const k of [0, 1]) opts[k]!.zeroGrad();
    const twice: number[][] = [];
    for (const [k, run] of [step(nets[0]!), compiled].entries()) {
      scope(() => run(x, y)).dispose();
      scope(() => run(x, y)).dispose();
      twice.push(await values(nets[k]!.w1.grad!));
    }
    expect(twice[1]).toEqual(twice[0]);
    compiled.release();
    for (const o of opts) o.zeroGrad();
    for (const n of nets) for (const t of [n.w1, n.b1, n.w2]) t.dispose();
    for (const o of opts) o.dispose();
    x.dispose();
    y.dispose();
    expect(be.liveBufferCount()).toBe(live);
  });

  test('functions that draw random numbers are replayed, each call drawing anew; misuse is a typed error', async () => {
    const drop = new Dropout(0.5, 3);
    drop.train();
    const noisy = compile((x: Tensor) => drop.forward(x));
    const sampled = compile((x: Tensor) => {
      const r = rand(x.backend, x.shape);
      const y = x.add(r);
      r.dispose();
      return y;
    });
    const x = Tensor.fromArray(be, new Float32Array(64).fill(1), [64]);
    const outs = [noisy(x), noisy(x), noisy(x)];
    const [a, b, c] = await Promise.all(outs.map(values));
    expect(a).not.toEqual(b);
    expect(b).not.toEqual(c);
    expect(noisy.stats).toMatchObject({ traces: 1, replays: 2, eager: 0, refused: [] });
    expect(drop.offset).toBe(3 * 64); // each call advanced the layer's stream, as an eager forward does
    // the masks are the eager layer's: a twin from the same seed drops the same elements call by call
    const twin = new Dropout(0.5, 3);
    twin.train();
    const eager = [0, 1, 2].map(() => twin.forward(x));
    expect([a, b, c]).toEqual(await Promise.all(eager.map(values)));
    for (const t of eager) t.dispose();
    const before = generatorState().offset;
    const s1 = sampled(x);
    const s2 = sampled(x);
    expect(generatorState().offset).toBe(before + 128); // two calls drew 64 each, as eager calls do
    expect(await values(s1)).not.toEqual(await values(s2));
    expect(sampled.stats).toMatchObject({ traces: 1, replays: 1, refused: [] });
    for (const t of [...outs, s1, s2]) t.dispose();
    const asyncFn = compile((async (t: Tensor) => t) as unknown as (t: Tensor) => Tensor);
    expect(() => asyncFn(x)).toThrow(InvalidArgumentError);
    expect(() => compile(42 as unknown as () => Tensor)).toThrow(InvalidArgumentError);
    expect(() => compile((t: Tensor) => t, { maxSignatures: 0 })).toThrow(InvalidArgumentError);
    noisy.release();
    sampled.release();
    x.dispose();
  });
});

describe('compile on cpu', () => {
  test('runs the function as is, with the same results', async () => {
    const be = await REPO_BACKENDS['cpu']!();
    const { w1, b1, w2, fn } = mlp(be);
    const forward = compile(fn);
    const x = Tensor.fromArray(be, data(16, 5), [2, 8]);
    const y = forward(x);
    const want = scope(() => noGrad(() => fn(x)));
    expect(await values(y)).toEqual(await values(want));
    expect(forward.stats).toMatchObject({ traces: 0, replays: 0, eager: 1 });
    for (const t of [x, y, want, w1, b1, w2]) t.dispose();
    be.dispose();
  });
});
