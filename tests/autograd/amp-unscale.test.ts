// GradScaler on the HAL's nonFiniteCheckAndUnscale (one call and one read per backend), on cpu, wasm, webgpu and
// reference: the unscaled gradients hold the bits of the previous path, mul(grad, 1/scale), and of the float32
// product computed on the host; an Inf or NaN in the first, a middle or the last gradient skips the step; float16
// gradients (which the op does not take: DTypeError) still go through mul and isfinite; a gradient shared by two
// parameters is unscaled once, a gradient that is a view is replaced by a copy; an empty list changes nothing.
import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { GradScaler, Tensor } from '@polyhal/autograd';
import { type ComputeBackend, DTypeError } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const NAMES = ['cpu', 'wasm', 'webgpu', 'reference'];
const backend = (name: string): ComputeBackend | undefined => (name === 'cpu' ? fixture.cpu : fixture.backends[name]);

/** n values of magnitude in [1e-3, 3e4), both signs: every product by 1/scale below is a normal float32. */
const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => {
    const u = ((i + 1) * 2654435761 + seed * 40503) >>> 0;
    return (u & 1 ? -1 : 1) * 10 ** (-3 + 7.4 * ((u >>> 1) / 2 ** 31));
  });
const SHAPES = [[7], [31, 33], [1], [256], [3, 5, 17]];

/** Parameters of SHAPES with gradients of the given values (Tensors the caller disposes). */
function params(be: ComputeBackend, grads: number[][]): Tensor[] {
  return SHAPES.map((shape, k) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const p = Tensor.fromArray(be, new Float32Array(n), shape, { requiresGrad: true });
    p.grad = Tensor.fromArray(be, grads[k]!, shape);
    return p;
  });
}
const gradsOf = (seed: number): number[][] =>
  SHAPES.map((s, k) =>
    values(
      s.reduce((a, b) => a * b, 1),
      seed + k,
    ),
  );
const bits = (x: ArrayLike<number>): number[] => Array.from(new Uint32Array(Float32Array.from(x).buffer));
const dispose = (ps: Tensor[]): void => {
  for (const p of ps) {
    p.grad?.dispose();
    p.grad = null;
    p.dispose();
  }
};

for (const name of NAMES) {
  describe(`GradScaler's unscale on ${name}`, () => {
    test('the bits of mul(grad, 1/scale) and of the host float32 product, at scales 2^16 and 3000', async () => {
      const be = backend(name);
      if (!be) return;
      for (const scale of [2 ** 16, 3000]) {
        const grads = gradsOf(scale);
        const ps = params(be, grads);
        // the previous path, run on this backend before the scaler touches the gradients
        const before = await Promise.all(
          ps.map(async (p) => {
            const y = be.mul(p.grad!.value, 1 / scale);
            const out = Array.from(await be.read(y));
            be.free(y);
            return out;
          }),
        );
        const scaler = new GradScaler({ initScale: scale });
        await scaler.unscale(new ag.SGD(ps, { lr: 0.1 }));
        const inv = Math.fround(1 / scale);
        for (let k = 0; k < ps.length; k++) {
          const got = bits(await ps[k]!.grad!.data());
          expect(got).toEqual(bits(before[k]!));
          expect(got).toEqual(bits(grads[k]!.map((x) => Math.fround(x) * inv)));
        }
        expect(await scaler.step(new ag.SGD(ps, { lr: 0.1 }))).toBe(true);
        dispose(ps);
      }
    });

    test.each([
      ['Inf', Number.POSITIVE_INFINITY],
      ['-Inf', Number.NEGATIVE_INFINITY],
      ['NaN', Number.NaN],
    ])('%s in the first, a middle or the last gradient skips the step', async (_what, bad) => {
      const be = backend(name);
      if (!be) return;
      for (const at of [0, 2, SHAPES.length - 1]) {
        const grads = gradsOf(at);
        grads[at]![grads[at]!.length - 1] = bad;
        const ps = params(be, grads);
        const opt = new ag.SGD(ps, { lr: 0.1 });
        const scaler = new GradScaler({ initScale: 2 ** 8 });
        expect(await scaler.step(opt)).toBe(false);
        scaler.update();
        expect(scaler.getScale()).toBe(2 ** 7);
        for (const p of ps) expect(Array.from(await p.data()).every((v) => v === 0)).toBe(true); // not stepped
        dispose(ps);
      }
    });

    test('float16 gradients go through mul and isfinite; the op itself refuses them (DTypeError)', async () => {
      const be = backend(name);
      if (!be) return;
      const flag = be.full([1], 0, 'float32');
      const half = be.fromArray([1, 2, 3], [3], 'float16');
      const f32 = be.fromArray([4, 5], [2]);
      expect(() => be.nonFiniteCheckAndUnscale([f32.buffer, half.buffer], flag.buffer, 0.5)).toThrow(DTypeError);
      expect(Array.from(await be.read(f32))).toEqual([4, 5]); // nothing written before the error
      be.nonFiniteCheckAndUnscale([], flag.buffer, 0.5); // an empty list: nothing to do
      expect(Array.from(await be.read(flag))).toEqual([0]);
      for (const x of [flag, half, f32]) be.free(x);
      for (const bad of [false, true]) {
        const w16 = Tensor.fromArray(be, [1, 2, 3, 4], [4], { requiresGrad: true, dtype: 'float16' });
        w16.grad = Tensor.fromArray(be, [256, -512, 1024, bad ? Number.POSITIVE_INFINITY : 2048], [4], {
          dtype: 'float16',
        });
        const w32 = Tensor.fromArray(be, [1, 2], [2], { requiresGrad: true });
        w32.grad = Tensor.fromArray(be, [3, 6], [2]);
        const scaler = new GradScaler({ initScale: 2 ** 9 });
        await scaler.unscale(new ag.SGD([w16, w32], { lr: 1 })); // (SGD steps float32 parameters only)
        scaler.update(); // an overflow halves the scale; a clean unscale counts towards growth
        expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual(bad ? [2 ** 8, 0] : [2 ** 9, 1]);
        expect(w16.grad!.dtype).toBe('float16');
        expect(Array.from(await w16.grad!.data()).slice(0, 3)).toEqual([0.5, -1, 2]);
        expect(Array.from(await w32.grad!.data())).toEqual([3 / 512, 6 / 512]);
        dispose([w16, w32]);
      }
    });

    test('a gradient shared by two parameters is unscaled once; a view is replaced by a copy', async () => {
      const be = backend(name);
      if (!be) return;
      const a = Tensor.fromArray(be, [0, 0, 0, 0], [4], { requiresGrad: true });
      const b = Tensor.fromArray(be, [0, 0, 0, 0], [4], { requiresGrad: true });
      const c = Tensor.fromArray(be, [0, 0, 0, 0, 0, 0], [2, 3], { requiresGrad: true });
      const shared = Tensor.fromArray(be, [8, 16, 24, 32], [4]);
      a.grad = shared;
      b.grad = shared;
      const base = be.fromArray([2, 4, 6, 8, 10, 12], [3, 2]);
      const view = new Tensor(be, be.permute(base, [1, 0])); // a transposed view, owning base's buffer
      c.grad = view;
      await new GradScaler({ initScale: 8 }).unscale(new ag.SGD([a, b, c], { lr: 1 }));
      expect(Array.from(await a.grad!.data())).toEqual([1, 2, 3, 4]);
      expect(Array.from(await b.grad!.data())).toEqual([1, 2, 3, 4]);
      expect(Array.from(await c.grad!.data())).toEqual([0.25, 0.75, 1.25, 0.5, 1, 1.5]);
      expect([a.grad, b.grad === shared, c.grad === view, view.isDisposed]).toEqual([shared, false, false, true]);
      for (const t of [a, b, c]) {
        if (t.grad !== shared) t.grad?.dispose();
        t.grad = null;
        t.dispose();
      }
      shared.dispose();
    });

    test('an optimizer without gradients: nothing to unscale, the step runs', async () => {
      const be = backend(name);
      if (!be) return;
      const w = Tensor.fromArray(be, [1, 2], [2], { requiresGrad: true });
      const scaler = new GradScaler();
      expect(await scaler.step(new ag.SGD([w], { lr: 1 }))).toBe(true);
      scaler.update();
      expect(scaler.getScale()).toBe(2 ** 16);
      w.dispose();
    });
  });
}
