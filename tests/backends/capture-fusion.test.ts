/**
 * Elementwise fusion inside a WebGPU capture (backends/webgpu/src/capture-fusion.ts, option fuseInCapture): a
 * captured chain replays as fewer kernels, with the bits of the same work done eagerly (each fused step rounds to
 * float32 as its op does; lavapipe contracts nothing). The flush rules: a result read twice is computed once and
 * stays right, an intermediate freed before the encoding is never computed, a buffer written in place or freed
 * and handed out again after a pending chain read it leaves the chain's result alone. compile() of the MLP, CNN
 * and ViT training steps and inference: the same bits as the unfused capture, and fewer kernels per replay
 * (figures logged). The backend with fuseInCapture false is the peer: it captures every op as its own kernel.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Adam, compile, crossEntropy, type Module, noGrad, Tensor } from '@polyhal/autograd';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import type { NDArray } from '@polyhal/hal';
import { MODELS, type ModelKind, toModelInput } from '@polyhal/models';
import { type Capturing, captureRun } from '../support/capture-run.js';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

describe('elementwise fusion inside a webgpu capture', () => {
  let fused: Capturing;
  let plain: Capturing;
  beforeAll(async () => {
    // the kernel counts of the fusion alone: no horizontal merging (plan-merge.test.ts)
    fused = (await createWebGpuBackend({ mergeInCapture: false })) as unknown as Capturing;
    plain = (await createWebGpuBackend({ fuseInCapture: false, mergeInCapture: false })) as unknown as Capturing;
  });
  afterAll(() => {
    fused?.dispose();
    plain?.dispose();
  });

  test('the bandwidth chain (bias, relu, mul, residual) is one kernel per replay, with the unfused bits', async () => {
    const shape = [64, 96];
    const b = data(96, 2);
    const c = data(64 * 96, 3);
    const a = data(64 * 96, 4);
    const chain = (be: Capturing, x: NDArray): NDArray[] => {
      const [bb, cc, aa] = [be.fromArray(b, [96]), be.fromArray(c, shape), be.fromArray(a, shape)];
      const t1 = be.binary('add', x, bb);
      const t2 = be.unary('relu', t1);
      const t3 = be.binary('mul', t2, cc);
      const y = be.binary('add', t3, aa);
      for (const t of [t1, t2, t3]) be.free(t);
      return [y];
    };
    const [x0, x1] = [data(64 * 96, 5), data(64 * 96, 6)];
    const f = await captureRun(fused, x0, x1, shape, chain);
    const p = await captureRun(plain, x0, x1, shape, chain);
    expect(p.kernels).toBe(4);
    expect(f.kernels).toBe(1);
    expect(f.first).toEqual(p.first);
    expect(f.replayed).toEqual(p.replayed);
    // and the float64 oracle, each step rounded to float32
    const want = Array.from(x1, (v, i) =>
      Math.fround(Math.fround(Math.max(Math.fround(v + b[i % 96]!), 0) * c[i]!) + a[i]!),
    );
    expect(f.replayed[0]).toEqual(want);
  });

  test('a result read twice is computed once; an intermediate freed first is never computed', async () => {
    const shape = [37];
    const work = (be: Capturing, x: NDArray): NDArray[] => {
      const m = be.binary('mul', x, 0.5);
      const y = be.unary('exp', m);
      be.free(m); // an intermediate: computed inside y's kernel only
      const z1 = be.binary('add', y, 1);
      const z2 = be.unary('neg', y); // y's second reader: y is computed, then z1 from it
      const dead = be.unary('tanh', z2); // freed before anything reads it: never computed
      be.free(dead);
      const w = be.binary('mul', z2, z1);
      be.free(z2); // freed before the encoding: w's kernel computes neg and mul from y
      return [y, z1, w];
    };
    const [x0, x1] = [data(37, 7), data(37, 8)];
    const f = await captureRun(fused, x0, x1, shape, work);
    const p = await captureRun(plain, x0, x1, shape, work);
    expect(f.first).toEqual(p.first);
    expect(f.replayed).toEqual(p.replayed);
    expect(p.kernels).toBe(6); // mul, exp, add, neg, tanh, mul
    expect(f.kernels).toBe(3); // y (mul, exp), z1, w (neg, mul by z1): no tanh, z2 not kept
  });

  test('writes after a pending chain read a buffer (in place, a freed one handed out again) leave it', async () => {
    const shape = [8, 16];
    const work = (be: Capturing, x: NDArray): NDArray[] => {
      const w = be.binary('add', x, 0); // a buffer of the capture's own
      const y = be.unary('relu', be.binary('sub', w, 0.25)); // pending: reads w
      be.assign(w.buffer, be.full(shape, 3)); // w written in place after y's chain read it
      const t = be.unary('sqrt', be.unary('abs', x));
      const u = be.binary('mul', t, 2); // pending: reads t
      be.free(t); // t's buffer stays out of the pool until u is encoded
      const v = be.full(shape, -1); // may reuse a freed buffer: written after u read t
      const s = be.binary('add', u, v);
      return [y, w, s];
    };
    const [x0, x1] = [data(128, 9), data(128, 10)];
    const f = await captureRun(fused, x0, x1, shape, work);
    const p = await captureRun(plain, x0, x1, shape, work);
    expect(f.first).toEqual(p.first);
    expect(f.replayed).toEqual(p.replayed);
    expect(f.replayed[0]).toEqual(Array.from(x1, (v) => Math.max(Math.fround(v - 0.25), 0)));
  });

  test('eager calls are not deferred', () => {
    const x = fused.fromArray(data(16, 1), [16]);
    const k0 = fused.kernelStats().dispatches;
    const y = fused.unary('relu', fused.binary('add', x, 1));
    expect(fused.kernelStats().dispatches - k0).toBe(2);
    for (const t of [x, y]) fused.free(t);
  });

  /** The model's training step and inference, compiled: losses, weights and outputs per replay, and kernels. */
  async function models(be: Capturing, kind: ModelKind) {
    const model: Module = MODELS[kind](be, 0);
    const opt = new Adam(model.parameters(), { lr: 0.001 });
    const step = compile((x: Tensor, y: Tensor): Tensor => {
      const loss = crossEntropy(model.forward(toModelInput(kind, x)) as Tensor, y);
      loss.backward();
      return loss;
    });
    const infer = compile((x: Tensor): Tensor => noGrad(() => model.forward(toModelInput(kind, x)) as Tensor));
    const N = 4;
    const onehot = (seed: number): Float32Array =>
      Float32Array.from({ length: N * 10 }, (_, i) => (i % 10 === (seed + Math.floor(i / 10) * 3) % 10 ? 1 : 0));
    const losses: number[][] = [];
    const kernels: { step: number; infer: number } = { step: 0, infer: 0 };
    let out: number[] = [];
    for (let i = 0; i < 3; i++) {
      const x = Tensor.fromArray(be, data(N * 784, 30 + i), [N, 784]);
      const y = Tensor.fromArray(be, onehot(i), [N, 10]);
      opt.zeroGrad();
      const k0 = be.kernelStats().dispatches;
      const loss = step(x, y);
      kernels.step = be.kernelStats().dispatches - k0;
      losses.push(Array.from(await loss.data()));
      opt.step();
      loss.dispose();
      const k1 = be.kernelStats().dispatches;
      const o = infer(x);
      kernels.infer = be.kernelStats().dispatches - k1;
      out = Array.from(await o.data());
      o.dispose();
      x.dispose();
      y.dispose();
    }
    const weights = await Promise.all(model.parameters().map(async (p) => Array.from(await p.data())));
    step.release();
    infer.release();
    opt.dispose();
    for (const p of model.parameters()) p.dispose();
    return { losses, out, weights, kernels, stats: step.stats };
  }

  test.each(['mlp', 'cnn', 'vit'] as const)(
    '%s: compiled training step and inference give the unfused capture bits with fewer kernels',
    async (kind) => {
      const f = await models(fused, kind);
      const p = await models(plain, kind);
      expect(f.stats.replays).toBe(2);
      expect(f.losses).toEqual(p.losses);
      expect(f.out).toEqual(p.out);
      expect(f.weights).toEqual(p.weights);
      console.log(
        `${kind}: kernels per replayed train step ${p.kernels.step} → ${f.kernels.step}, ` +
          `inference ${p.kernels.infer} → ${f.kernels.infer}`,
      );
      expect(f.kernels.step).toBeLessThan(p.kernels.step);
      expect(f.kernels.infer).toBeLessThanOrEqual(p.kernels.infer);
    },
    300_000,
  );
});
