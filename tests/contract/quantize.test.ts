// Post-training int8 quantization of Linear and Conv2d layers (@polyhal/autograd quantize) on every
// backend: the quantized products against a float64 evaluation of their own definition (round half to
// even, saturation, int32 sums, rescale), and the quantized MLP's logits against float32 within the error
// int8 rounding allows.
import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';
import { mulberry32 } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const all = (): [string, ComputeBackend][] => [['cpu', fixture.cpu], ...Object.entries(fixture.backends)];
const rhe = (v: number): number => {
  const f = Math.floor(v);
  return v - f < 0.5 ? f : v - f > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
};

describe('quantize (int8 Linear and Conv2d layers)', () => {
  test('a quantized Linear computes its definition exactly up to float32 rounding', async () => {
    for (const [name, be] of all()) {
      const rng = mulberry32(3);
      const [N, I, O] = [5, 70, 9];
      const layer = new ag.Linear(I, O, { backend: be, rng: 4 });
      const xs = Float32Array.from({ length: N * I }, () => rng() * 6 - 3);
      const x = ag.Tensor.fromArray(be, xs, [N, I]);
      const report = await ag.quantize(layer, () => ag.noGrad(() => layer.forward(x)));
      expect(report.layers.map((l) => l.name)).toEqual(['']);
      const got = await ag.noGrad(() => layer.forward(x)).data();
      // The definition in float64 from the float32 weights.
      const w = await layer.weight.data();
      const bias = await layer.bias!.data();
      const sx = Math.max(...Array.from(xs, Math.abs)) / 127;
      for (let o = 0; o < O; o++) {
        const sw = Math.max(...Array.from(w.subarray(o * I, (o + 1) * I), Math.abs)) / 127;
        for (let n = 0; n < N; n++) {
          let acc = 0;
          for (let i = 0; i < I; i++) {
            const q = (v: number, s: number) => Math.max(-128, Math.min(127, rhe(Math.fround(v / s))));
            acc += q(xs[n * I + i]!, Math.fround(sx)) * q(w[o * I + i]!, Math.fround(sw));
          }
          const want = acc * Math.fround(Math.fround(sw) * Math.fround(sx)) + bias[o]!;
          expect([name, n, o, Math.abs(got[n * O + o]! - want) <= 1e-5 * Math.max(1, Math.abs(want))]).toEqual([
            name,
            n,
            o,
            true,
          ]);
        }
      }
      ag.dequantize(layer);
      expect(layer.quantization).toBeNull();
    }
  });

  test('a quantized Conv2d (groups, stride, padding) computes its definition up to float32 rounding', async () => {
    for (const [name, be] of all()) {
      const rng = mulberry32(5);
      const [N, C, H, W, O, G, K] = [2, 4, 7, 6, 6, 2, 3];
      const layer = new ag.Conv2d(C, O, K, { backend: be, rng: 6, groups: G, stride: 2, padding: 1 });
      const xs = Float32Array.from({ length: N * C * H * W }, () => rng() * 4 - 2);
      const x = ag.Tensor.fromArray(be, xs, [N, C, H, W]);
      const report = await ag.quantize(layer, () => ag.noGrad(() => layer.forward(x)));
      expect(report.layers.map((l) => l.name)).toEqual(['']);
      const y = ag.noGrad(() => layer.forward(x));
      const [Ho, Wo] = [4, 3];
      expect([name, y.shape]).toEqual([name, [N, O, Ho, Wo]]);
      const got = await y.data();
      const w = await layer.weight.data();
      const bias = await layer.bias!.data();
      const Cg = C / G;
      const sx = Math.fround(Math.max(...Array.from(xs, Math.abs)) / 127);
      const q = (v: number, s: number) => Math.max(-128, Math.min(127, rhe(Math.fround(v / s))));
      for (let o = 0; o < O; o++) {
        const sw = Math.fround(
          Math.max(...Array.from(w.subarray(o * Cg * K * K, (o + 1) * Cg * K * K), Math.abs)) / 127,
        );
        const g = Math.floor(o / (O / G));
        for (let n = 0; n < N; n++)
          for (let i = 0; i < Ho; i++)
            for (let j = 0; j < Wo; j++) {
              let acc = 0;
              for (let c = 0; c < Cg; c++)
                for (let a = 0; a < K; a++)
                  for (let b = 0; b < K; b++) {
                    const [r, s] = [2 * i + a - 1, 2 * j + b - 1];
                    if (r < 0 || r >= H || s < 0 || s >= W) continue;
                    const xv = xs[((n * C + g * Cg + c) * H + r) * W + s]!;
                    acc += q(xv, sx) * q(w[((o * Cg + c) * K + a) * K + b]!, sw);
                  }
              const want = acc * Math.fround(sw * sx) + bias[o]!;
              const at = ((n * O + o) * Ho + i) * Wo + j;
              const ok = Math.abs(got[at]! - want) <= 1e-5 * Math.max(1, Math.abs(want));
              expect([name, n, o, i, j, ok]).toEqual([name, n, o, i, j, true]);
            }
      }
      ag.dequantize(layer);
      expect(layer.quantization).toBeNull();
    }
  });

  test('a quantized MLP keeps its logits within int8 rounding of float32 and its argmax on most rows', async () => {
    for (const [name, be] of all()) {
      const rng = mulberry32(9);
      const model = new ag.Sequential(
        new ag.Linear(64, 48, { backend: be, rng: 1 }),
        new ag.ReLU(),
        new ag.Linear(48, 10, { backend: be, rng: 2 }),
      );
      const x = ag.Tensor.fromArray(
        be,
        Float32Array.from({ length: 256 * 64 }, () => rng()),
        [256, 64],
      );
      const float = await ag.noGrad(() => model.forward(x)).data();
      const report = await ag.quantize(model, () => ag.noGrad(() => model.forward(x)));
      expect(report.layers.length).toBe(2);
      const int8 = await ag.noGrad(() => model.forward(x)).data();
      const scale = Math.max(...Array.from(float, Math.abs));
      let worst = 0;
      let agree = 0;
      for (let r = 0; r < 256; r++) {
        const row = (a: ArrayLike<number>) => Array.from(a).slice(r * 10, r * 10 + 10);
        const [f, q] = [row(float), row(int8)];
        f.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - q[i]!))));
        if (f.indexOf(Math.max(...f)) === q.indexOf(Math.max(...q))) agree++;
      }
      expect([name, worst < 0.03 * scale]).toEqual([name, true]);
      expect([name, agree >= 240]).toEqual([name, true]);
      ag.dequantize(model);
      const back = await ag.noGrad(() => model.forward(x)).data();
      expect([name, Array.from(back)]).toEqual([name, Array.from(float)]);
    }
  });
});
