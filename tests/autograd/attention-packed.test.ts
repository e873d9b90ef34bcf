// MultiHeadAttention's packed in-projection (PyTorch's in_proj_weight [3E, E], in_proj_bias [3E]): its initial
// weights are the bits of the three Linear(E, E) layers it replaced (seeds 4·seed + 0, 1, 2), its outputs match a
// float64 oracle written here from the definition, self-attention runs one in-projection product and one attention
// op whose gradient is one array (no padded views), the packed layout survives int8 quantization, and its
// gradients match central differences (inputs) and an eager twin built the earlier way from three Linears and
// scaledDotProductAttention (inputs and weights), on every backend.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Linear, MultiHeadAttention, Tensor } from '@polyhal/autograd';
import { type ComputeBackend, mulberry32, type NDArray } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const E = 8;
const H = 2;
const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => Math.sin(seed * 7.3 + i * 1.7));
const host = async (t: Tensor): Promise<number[]> => Array.from(await t.data());

/** The layers MultiHeadAttention(E, H, { rng }) replaced: q, k, v and out, each a Linear(E, E) of its own seed. */
function earlierLayers(be: ComputeBackend, rng: number | (() => number), bias = true): Linear[] {
  return [0, 1, 2, 3].map(
    (i) => new Linear(E, E, { backend: be, bias, rng: typeof rng === 'number' ? rng * 4 + i : rng }),
  );
}

/** Attention the earlier way (three projections, each split into heads): the eager twin. */
function earlierAttend(
  [q, k, v, out]: Linear[],
  query: Tensor,
  key: Tensor,
  value: Tensor,
  options: ag.AttentionOptions = {},
): Tensor {
  const [N, L] = query.shape as [number, number];
  const split = (t: Tensor): Tensor => t.reshape([N, t.shape[1]!, H, E / H]).permute([0, 2, 1, 3]);
  const heads = ag.scaledDotProductAttention(
    split(q!.forward(query)),
    split(k!.forward(key)),
    split(v!.forward(value)),
    options,
  );
  return out!.forward(heads.permute([0, 2, 1, 3]).reshape([N, L, E]));
}

/**
 * The float64 oracle: rows [N·L, E] of query, key, value; W [3E, E] and b [3E] packed; Wo, bo; causal hides
 * key j > query i. Per head h: softmax((q·Wqᵀ + bq)_h · (k·Wkᵀ + bk)_hᵀ / √D) · (v·Wvᵀ + bv)_h; the heads
 * concatenated, then ·Woᵀ + bo.
 */
function oracle([xq, xk, xv]: number[][], [N, L, S]: number[], [W, b, Wo, bo]: number[][], causal: boolean): number[] {
  const D = E / H;
  const project = (x: number[], rows: number, part: number, w: number[], bias: number[]): number[] =>
    Array.from({ length: rows * E }, (_, i) => {
      const [r, o] = [Math.floor(i / E), (i % E) + part * E];
      let s = bias[o]!;
      for (let e = 0; e < E; e++) s += x[r * E + e]! * w[o * E + e]!;
      return s;
    });
  const [q, k, v] = [project(xq!, N * L, 0, W!, b!), project(xk!, N * S, 1, W!, b!), project(xv!, N * S, 2, W!, b!)];
  const heads = new Array<number>(N * L * E).fill(0);
  for (let n = 0; n < N; n++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++) {
        const scores = Array.from({ length: S }, (_, j) => {
          if (causal && j > i) return -Infinity;
          let s = 0;
          for (let d = 0; d < D; d++) s += q[(n * L + i) * E + h * D + d]! * k[(n * S + j) * E + h * D + d]!;
          return s / Math.sqrt(D);
        });
        const m = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - m));
        const z = e.reduce((a, c) => a + c, 0);
        for (let d = 0; d < D; d++)
          heads[(n * L + i) * E + h * D + d] = e.reduce((a, p, j) => a + (p / z) * v[(n * S + j) * E + h * D + d]!, 0);
      }
  return project(heads, N * L, 0, Wo!, bo!);
}

const close = (got: number[], want: number[], tol: number): void => {
  expect(got.length).toBe(want.length);
  const worst = Math.max(...want.map((w, i) => Math.abs(got[i]! - w) / Math.max(1, Math.abs(w))));
  expect(worst).toBeLessThanOrEqual(tol);
};

describe('MultiHeadAttention: packed in-projection (cpu)', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['cpu']!();
  });
  afterAll(() => be.dispose());

  test('initial weights: the bits of three Linear(E, E) of seeds 4·seed + 0, 1, 2 (out: + 3), or an Rng', async () => {
    for (const [rng, again, bias] of [
      [5, 5, true],
      [mulberry32(9), mulberry32(9), true],
      [2, 2, false],
    ] as const) {
      const mha = new MultiHeadAttention(E, H, { backend: be, rng, bias });
      const old = earlierLayers(be, again, bias);
      expect(mha.inProj.weight.shape).toEqual([3 * E, E]);
      expect(await host(mha.inProj.weight)).toEqual(
        (await Promise.all(old.slice(0, 3).map((l) => host(l.weight)))).flat(),
      );
      expect(await host(mha.out.weight)).toEqual(await host(old[3]!.weight));
      if (bias) {
        expect(await host(mha.inProj.bias!)).toEqual(
          (await Promise.all(old.slice(0, 3).map((l) => host(l.bias!)))).flat(),
        );
        expect(await host(mha.out.bias!)).toEqual(await host(old[3]!.bias!));
        expect(Object.keys(mha.stateDict())).toEqual(['inProj.weight', 'inProj.bias', 'out.weight', 'out.bias']);
      } else {
        expect(mha.inProj.bias).toBeNull();
        expect(Object.keys(mha.stateDict())).toEqual(['inProj.weight', 'out.weight']);
      }
      expect(mha.getConfig()).toEqual({ embedDim: E, numHeads: H, bias });
      for (const m of [mha, ...old]) m.dispose();
    }
  });

  test('forward and attend match the float64 oracle: self-attention, key === value, three inputs, causal', async () => {
    const mha = new MultiHeadAttention(E, H, { backend: be, rng: 3 });
    const weights = await Promise.all(
      [mha.inProj.weight, mha.inProj.bias!, mha.out.weight, mha.out.bias!].map((t) => host(t)),
    );
    const [N, L, S] = [2, 3, 5];
    const [xq, xk, xv] = [values(N * L * E, 1), values(N * S * E, 2), values(N * S * E, 3)];
    const [q, k, v] = [
      Tensor.fromArray(be, xq, [N, L, E]),
      Tensor.fromArray(be, xk, [N, S, E]),
      Tensor.fromArray(be, xv, [N, S, E]),
    ];
    ag.scope(() => {
      close(Array.from(mha.forward(q).dataSync()), oracle([xq, xq, xq], [N, L, L], weights, false), 2e-6);
      close(
        Array.from(mha.attend(q, q, q, { causal: true }).dataSync()),
        oracle([xq, xq, xq], [N, L, L], weights, true),
        2e-6,
      );
      close(Array.from(mha.attend(q, k, k).dataSync()), oracle([xq, xk, xk], [N, L, S], weights, false), 2e-6);
      close(Array.from(mha.attend(q, k, v).dataSync()), oracle([xq, xk, xv], [N, L, S], weights, false), 2e-6);
    });
    for (const t of [q, k, v, mha]) t.dispose();
  });

  test('quantized (int8 inProj and out): each form of attend within int8 rounding of the float outputs', async () => {
    const mha = new MultiHeadAttention(E, H, { backend: be, rng: 8 });
    const [q, k, v] = [1, 2, 3].map((s) => Tensor.fromArray(be, values(2 * 3 * E, s), [2, 3, E])) as Tensor[];
    const forms = (): number[][] =>
      ag.scope(() =>
        [mha.forward(q!), mha.attend(q!, k!, k!), mha.attend(q!, k!, v!)].map((y) => Array.from(y.dataSync())),
      );
    const float = forms();
    // calibrated on all three forms: inProj sees the query, key and value inputs
    const report = await ag.quantize(mha, () => void forms());
    expect(report.layers.map((l) => l.name)).toEqual(['inProj', 'out']);
    expect(mha.inProj.quantization).not.toBeNull();
    const int8 = forms();
    int8.forEach((got, f) => {
      expect(got).not.toEqual(float[f]); // the int8 products ran
      close(got, float[f]!, 0.01); // measured 0.0031–0.0036
    });
    for (const t of [q, k, v, mha]) t!.dispose();
  });

  test('self-attention: one in-projection product [N, L, 3E] and one attention op, whose gradient is one array', () => {
    // The backend seen through a proxy noting the last dim of every product of a sequence [N, L, E] by a weight,
    // and every method called.
    const widths: number[] = [];
    const calls: string[] = [];
    const counted = new Proxy(be, {
      get(target, prop) {
        const f = Reflect.get(target, prop, target) as unknown;
        if (typeof f !== 'function') return f;
        return (...args: unknown[]) => {
          const r = (f as (...a: unknown[]) => unknown).apply(target, args);
          const [a, b] = args as NDArray[];
          if (prop === 'matmul' && a!.shape.length === 3 && b!.shape.length === 2) widths.push(b!.shape[1]!);
          calls.push(String(prop));
          return r;
        };
      },
    });
    const mha = new MultiHeadAttention(E, H, { backend: counted, rng: 1 });
    const [q, k, v] = [1, 2, 3].map((s) =>
      Tensor.fromArray(counted, values(2 * 3 * E, s), [2, 3, E], { requiresGrad: true }),
    ) as Tensor[];
    const count = (name: string): number => calls.filter((c) => c === name).length;
    const runs: [() => Tensor, number[], boolean][] = [
      [() => mha.forward(q!), [3 * E, E], true],
      [() => mha.attend(q!, q!, q!, { causal: true }), [3 * E, E], false],
      [() => mha.attend(q!, k!, k!), [E, 2 * E, E], false],
      [() => mha.attend(q!, k!, v!), [E, E, E, E], false],
    ];
    for (const [run, want, packed] of runs) {
      widths.length = 0;
      ag.scope(() => {
        const y = run();
        expect(widths).toEqual(want);
        calls.length = 0;
        y.sum().backward();
      });
      // Packed: one attentionBackwardPacked gives dq, dk, dv as one gradient of [N, L, 3, H, D]; otherwise q, k and
      // v are views (of the projection or of the weight) whose gradients are padded back.
      expect([count('attentionBackwardPacked'), count('pad') > 0]).toEqual(packed ? [1, false] : [0, true]);
      if (packed) expect([count('attentionBackward'), count('stack')]).toEqual([0, 0]);
    }
    for (const p of [...mha.parameters(), q, k, v]) {
      p!.grad?.dispose();
      p!.grad = null;
    }
    for (const t of [q, k, v, mha]) t!.dispose();
  });
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`MultiHeadAttention gradients on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test('the inputs’ gradients match central differences (self, key === value, three inputs causal)', async () => {
      const mha = new MultiHeadAttention(E, H, { backend: be, rng: 4 });
      const base = be.liveBufferCount();
      const input = (shape: number[], seed: number): ag.GradCheckInput => ({
        shape,
        values: values(
          shape.reduce((p, d) => p * d, 1),
          seed,
        ),
      });
      const checks: [(xs: Tensor[]) => Tensor, ag.GradCheckInput[]][] = [
        [([x]) => mha.forward(x!), [input([2, 3, E], 1)]],
        [([x]) => mha.attend(x!, x!, x!, { causal: true }), [input([1, 3, E], 7)]],
        [([q, kv]) => mha.attend(q!, kv!, kv!), [input([1, 2, E], 2), input([1, 3, E], 3)]],
        [([q, k, v]) => mha.attend(q!, k!, v!, { causal: true }), [1, 2, 3].map((s) => input([1, 3, E], s + 3))],
      ];
      for (const [f, inputs] of checks) {
        const r = await ag.gradCheck(be, f, inputs);
        expect(r.details).toEqual([]);
        expect(r.pass).toBe(true);
      }
      for (const p of mha.parameters()) {
        p.grad?.dispose(); // the weights' gradients, accumulated by gradCheck's backward passes
        p.grad = null;
      }
      expect(be.liveBufferCount()).toBe(base);
      mha.dispose();
    });

    test('the weights’ and inputs’ gradients equal the earlier three-Linear twin’s', async () => {
      const mha = new MultiHeadAttention(E, H, { backend: be, rng: 6 });
      const old = earlierLayers(be, 6);
      const [N, L, S] = [2, 3, 4];
      const make = (shape: number[], seed: number): Tensor =>
        Tensor.fromArray(
          be,
          values(
            shape.reduce((p, d) => p * d, 1),
            seed,
          ),
          shape,
          { requiresGrad: true },
        );
      const weighting = Tensor.fromArray(be, values(N * L * E, 9), [N, L, E]);
      for (const inputs of [1, 2, 3] as const) {
        // The same query, key and value tensor (self-attention), key === value, or three tensors: one set for
        // the packed layer, one for the twin.
        const build = (): Tensor[] => {
          const q = make([N, L, E], 1);
          const k = inputs === 1 ? q : make([N, S, E], 2);
          return [q, k, inputs === 3 ? make([N, S, E], 3) : k];
        };
        const [q, k, v] = build() as [Tensor, Tensor, Tensor];
        const [tq, tk, tv] = build() as [Tensor, Tensor, Tensor];
        ag.scope(() => {
          mha.attend(q, k, v).mul(weighting).sum().backward();
          earlierAttend(old, tq, tk, tv).mul(weighting).sum().backward();
        });
        const grads = async (ts: Tensor[]): Promise<number[]> =>
          (await Promise.all(ts.map((t) => host(t.grad!)))).flat();
        const want = await grads([...old.slice(0, 3).map((l) => l.weight), ...old.slice(0, 3).map((l) => l.bias!)]);
        close(await grads([mha.inProj.weight, mha.inProj.bias!]), want, 1e-5);
        close(await grads([mha.out.weight, mha.out.bias!]), await grads([old[3]!.weight, old[3]!.bias!]), 1e-5);
        close(await grads([...new Set([q, k, v])]), await grads([...new Set([tq, tk, tv])]), 1e-5);
        for (const p of [...mha.parameters(), ...old.flatMap((l) => l.parameters())]) {
          p.grad?.dispose();
          p.grad = null;
        }
        for (const t of new Set([q, k, v, tq, tk, tv])) t.dispose();
      }
      for (const m of [mha, weighting, ...old]) m.dispose();
    });
  });
}
