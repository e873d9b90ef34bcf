// Normalization and attention layers against float64 references written here from their papers'
// definitions (PyTorch's conventions), on the cpu backend; their gradients are checked on every
// backend in autograd.test.ts.
import { afterAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { BatchNorm, LayerNorm, MultiHeadAttention, Tensor } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { DTypeError, InvalidArgumentError, mulberry32, ShapeMismatchError } from '@polyhal/hal';

const be = new CpuBackend();
afterAll(() => be.dispose());
const rng = mulberry32(5);
const rand = (n: number): number[] => Array.from({ length: n }, () => Math.fround(rng() * 4 - 2));
const close = (got: ArrayLike<number>, want: number[], tol = 2e-6): void => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => expect(Math.abs(got[i]! - w)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(w))));
};
const rows = (v: number[], n: number): number[][] =>
  Array.from({ length: v.length / n }, (_, r) => v.slice(r * n, r * n + n));

describe('normalization', () => {
  test('layerNorm and rmsNorm over the last dim match their definitions', () => {
    const x = rand(3 * 5);
    const w = rand(5);
    const b = rand(5);
    const ln: number[] = [];
    const rms: number[] = [];
    for (const r of rows(x, 5)) {
      const mu = r.reduce((s, v) => s + v, 0) / 5;
      const variance = r.reduce((s, v) => s + (v - mu) ** 2, 0) / 5;
      const ms = r.reduce((s, v) => s + v * v, 0) / 5;
      r.forEach((v, i) => {
        ln.push(((v - mu) / Math.sqrt(variance + 1e-5)) * w[i]! + b[i]!);
        rms.push((v / Math.sqrt(ms + 2 ** -23)) * w[i]!);
      });
    }
    const tx = Tensor.fromArray(be, x, [3, 5]);
    close(ag.layerNorm(tx, [5], Tensor.fromArray(be, w, [5]), Tensor.fromArray(be, b, [5])).dataSync(), ln);
    close(ag.rmsNorm(tx, [5], Tensor.fromArray(be, w, [5])).dataSync(), rms);
    const layer = new LayerNorm(5, { backend: be });
    expect(Object.keys(layer.stateDict())).toEqual(['weight', 'bias']);
    expect(() => layer.forward(Tensor.fromArray(be, rand(8), [2, 4]))).toThrow(ShapeMismatchError);
  });

  test('BatchNorm: batch statistics and running updates in training, running statistics in eval', () => {
    const [N, C, H] = [4, 3, 2];
    const x = rand(N * C * H);
    const bn = new BatchNorm(C, { backend: be, momentum: 0.1 });
    const y = bn.forward(Tensor.fromArray(be, x, [N, C, H])).dataSync();
    const at = (n: number, c: number, h: number): number => (n * C + c) * H + h;
    const runMean: number[] = [];
    const runVar: number[] = [];
    for (let c = 0; c < C; c++) {
      const vals: number[] = [];
      for (let n = 0; n < N; n++) for (let h = 0; h < H; h++) vals.push(x[at(n, c, h)]!);
      const mu = vals.reduce((s, v) => s + v, 0) / vals.length;
      const ss = vals.reduce((s, v) => s + (v - mu) ** 2, 0);
      for (let n = 0; n < N; n++)
        for (let h = 0; h < H; h++)
          expect(Math.abs(y[at(n, c, h)]! - (x[at(n, c, h)]! - mu) / Math.sqrt(ss / vals.length + 1e-5))).toBeLessThan(
            3e-6,
          );
      runMean.push(0.1 * mu);
      runVar.push(0.9 + (0.1 * ss) / (vals.length - 1)); // unbiased in the running variance
    }
    const state = bn.stateDict();
    expect(Object.keys(state)).toEqual(['weight', 'bias', 'runningMean', 'runningVar']);
    expect(bn.parameters().length).toBe(2);
    close(state['runningMean']!.dataSync(), runMean);
    close(state['runningVar']!.dataSync(), runVar);
    bn.eval();
    const z = bn.forward(Tensor.fromArray(be, x, [N, C, H])).dataSync();
    for (let c = 0; c < C; c++)
      for (let n = 0; n < N; n++)
        for (let h = 0; h < H; h++)
          expect(
            Math.abs(z[at(n, c, h)]! - (x[at(n, c, h)]! - runMean[c]!) / Math.sqrt(runVar[c]! + 1e-5)),
          ).toBeLessThan(3e-6);
  });
});

describe('GroupNorm, GELU and SiLU', () => {
  test('groupNorm normalizes each group of channels over its positions, then scales per channel', async () => {
    const [n, c, l, g] = [2, 6, 4, 3];
    const x = rand(n * c * l);
    const w = rand(c);
    const b = rand(c);
    const want = new Array<number>(x.length);
    const per = (c / g) * l;
    for (let s = 0; s < n * g; s++) {
      const grp = x.slice(s * per, s * per + per);
      const mu = grp.reduce((a, v) => a + v, 0) / per;
      const variance = grp.reduce((a, v) => a + (v - mu) ** 2, 0) / per;
      grp.forEach((v, i) => {
        const ch = (s % g) * (c / g) + Math.floor(i / l);
        want[s * per + i] = ((v - mu) / Math.sqrt(variance + 1e-5)) * w[ch]! + b[ch]!;
      });
    }
    const layer = new ag.GroupNorm(g, c, { backend: be });
    const state = layer.stateDict();
    be.write(state['weight']!.value.buffer, Float32Array.from(w));
    be.write(state['bias']!.value.buffer, Float32Array.from(b));
    close(await layer.forward(Tensor.fromArray(be, x, [n, c, l])).data(), want, 4e-6);
    expect(() => new ag.GroupNorm(4, 6, { backend: be })).toThrow(InvalidArgumentError);
    expect(() => layer.forward(Tensor.fromArray(be, rand(8), [2, 4]))).toThrow(ShapeMismatchError);
  });

  test('GELU (both forms) and SiLU are the elementwise ops as modules', async () => {
    const x = Tensor.fromArray(be, rand(9), [9]);
    expect(Array.from(await new ag.GELU().forward(x).data())).toEqual(Array.from(await ag.gelu(x).data()));
    const tanhForm = new ag.GELU({ approximate: 'tanh' }).forward(x);
    expect(Array.from(await tanhForm.data())).toEqual(Array.from(await ag.geluTanh(x).data()));
    expect(Array.from(await new ag.SiLU().forward(x).data())).toEqual(Array.from(await ag.silu(x).data()));
    expect(() => new ag.GELU({ approximate: 'erf' as never })).toThrow(InvalidArgumentError);
  });
});

describe('attention', () => {
  /** softmax(q·kᵀ/√d + mask)·v for one head, float64. */
  const reference = (q: number[][], k: number[][], v: number[][], causal: boolean): number[] =>
    q.flatMap((qi, i) => {
      const s = k.map((kj, j) =>
        causal && j > i ? -Infinity : qi.reduce((acc, a, t) => acc + a * kj[t]!, 0) / Math.sqrt(qi.length),
      );
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return v[0]!.map((_, c) => e.reduce((acc, p, j) => acc + (p / z) * v[j]![c]!, 0));
    });

  test('scaledDotProductAttention matches its definition, with and without the causal mask', () => {
    const [L, S, d, dv] = [3, 4, 5, 2];
    const q = rand(L * d);
    const k = rand(S * d);
    const v = rand(S * dv);
    const [tq, tk, tv] = [
      Tensor.fromArray(be, q, [L, d]),
      Tensor.fromArray(be, k, [S, d]),
      Tensor.fromArray(be, v, [S, dv]),
    ];
    close(ag.scaledDotProductAttention(tq, tk, tv).dataSync(), reference(rows(q, d), rows(k, d), rows(v, dv), false));
    close(
      ag.scaledDotProductAttention(tq, tk, tv, { causal: true }).dataSync(),
      reference(rows(q, d), rows(k, d), rows(v, dv), true),
    );
  });

  test('MultiHeadAttention: [N, L, E] → [N, L, E]; a causal query does not see later positions', () => {
    const mha = new MultiHeadAttention(8, 2, { backend: be, rng: 3 });
    // q, k and v packed in one in-projection (PyTorch's in_proj_weight [3E, E] and in_proj_bias [3E])
    const state = mha.stateDict();
    expect(Object.keys(state)).toEqual(['inProj.weight', 'inProj.bias', 'out.weight', 'out.bias']);
    expect(Object.values(state).map((t) => t.shape)).toEqual([[24, 8], [24], [8, 8], [8]]);
    const x = rand(2 * 4 * 8);
    const y = mha.forward(Tensor.fromArray(be, x, [2, 4, 8]));
    expect(y.shape).toEqual([2, 4, 8]);
    const causal = (input: number[]): Float32Array => {
      const t = Tensor.fromArray(be, input, [2, 4, 8]);
      return mha.attend(t, t, t, { causal: true }).dataSync() as Float32Array;
    };
    const changed = x.slice();
    for (let i = 3 * 8; i < 4 * 8; i++) changed[i] = changed[i]! + 1; // the last position of batch item 0
    const a = causal(x);
    const b = causal(changed);
    expect(Array.from(a.slice(0, 3 * 8))).toEqual(Array.from(b.slice(0, 3 * 8))); // positions 0..2 unchanged
    expect(Array.from(a.slice(3 * 8, 4 * 8))).not.toEqual(Array.from(b.slice(3 * 8, 4 * 8)));
  });
});

describe('Embedding', () => {
  test('weight N(0, 1) as PyTorch initializes it, the same for the same seed; typed errors for bad sizes', () => {
    const e = new ag.Embedding(200, 50, { backend: be, rng: 7 });
    const w = Array.from(e.stateDict()['weight']!.dataSync());
    expect(w.length).toBe(200 * 50);
    const mean = w.reduce((s, v) => s + v, 0) / w.length;
    const std = Math.sqrt(w.reduce((s, v) => s + (v - mean) ** 2, 0) / w.length);
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(std - 1)).toBeLessThan(0.03);
    const again = new ag.Embedding(200, 50, { backend: be, rng: 7 });
    expect(Array.from(again.stateDict()['weight']!.dataSync())).toEqual(w);
    e.dispose();
    again.dispose();
    expect(() => new ag.Embedding(2.5, 3, { backend: be })).toThrow(InvalidArgumentError);
    expect(() => new ag.Embedding(4, -1, { backend: be })).toThrow(InvalidArgumentError);
  });

  test('forward looks rows up (negative indices from the end); the gradient counts each row’s uses', () => {
    const e = new ag.Embedding(5, 3, { backend: be, rng: 1 });
    const w = Array.from(e.stateDict()['weight']!.dataSync());
    const idx = Tensor.fromArray(be, [4, 0, -1, 2, 4, 1], [2, 3], { dtype: 'int32' });
    const y = e.forward(idx);
    expect(y.shape).toEqual([2, 3, 3]);
    expect(Array.from(y.dataSync())).toEqual([4, 0, 4, 2, 4, 1].flatMap((r) => w.slice(r * 3, r * 3 + 3)));
    y.sum().backward();
    const counts = [1, 1, 1, 0, 3];
    expect(Array.from(e.parameters()[0]!.grad!.dataSync())).toEqual(counts.flatMap((c) => [c, c, c]));
    expect(() => e.forward(Tensor.fromArray(be, [0, 1], [2]))).toThrow(DTypeError);
    idx.dispose();
    e.dispose();
  });
});
