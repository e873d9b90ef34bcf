// autocast('float16', fn) on every repo backend: which dtype each op runs in (PyTorch's autocast lists), and a
// gradient check of every autocast op — the products (matmul, a Linear's x·Wᵀ + b, batched matmul, attention),
// the float32 ops fed float16 products (softmax, logSoftmax, layerNorm, the fused losses, conv) — against an
// independent float64 oracle: the same function without autocast on the reference backend (float64 JS).
//
// Tolerance: a gradient element here is a float32-accumulated sum of products whose factors carry at most
// four float16 roundings (u = 2^-11 each: the two operand casts, the upstream gradient's cast, the rounding
// of the product's result), so |error| ≤ 4u·Σ|terms| (the float32 sums add K·2^-24, negligible at K ≤ 16).
// The check is max|autocast − oracle| ≤ 4u·max|oracle| (2^-9): the bound with Σ|terms| taken as max|g|,
// which the roundings' random signs keep at these inputs (values in [−1, 1], K ≤ 16; measured ≤ 1.5u on cpu,
// wasm and webgpu). Controls: the same function without autocast on the same backend is within 1e-5 of the
// oracle (the gap is float16's), and the first input's error exceeds 2^-16·max|oracle| (float16 did run).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { ReferenceBackend } from '@polyhal/backend-reference';
import type { ComputeBackend } from '@polyhal/hal';
import { REPO_BACKENDS, openBackend } from '../support/backends.js';

const U16 = 2 ** -11;
const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => (((i + 1) * 2654435761 + seed * 40503) >>> 0) / 2 ** 31 - 1);

interface Case {
  /** Input shapes (values are generated); a float16 product checks the output dtype. */
  shapes: number[][];
  f: (xs: Tensor[]) => Tensor;
  /** The dtype of f's output under autocast. */
  dtype: 'float16' | 'float32';
  /** Whether float16 products run inside (the error must then show float16 rounding). */
  lowered: boolean;
}

const labels = (be: ComputeBackend, n: number, c: number): Tensor =>
  Tensor.fromArray(
    be,
    Array.from({ length: n }, (_, i) => (i * 7) % c),
    [n],
    { dtype: 'int32' },
  );

const CASES: Record<string, Case> = {
  matmul: {
    shapes: [
      [6, 16],
      [16, 5],
    ],
    f: ([a, b]) => ag.matmul(a!, b!),
    dtype: 'float16',
    lowered: true,
  },
  'linear (x·Wᵀ + b)': {
    shapes: [[3, 4, 12], [7, 12], [7]],
    f: ([x, w, b]) => ag.matmul(x!, ag.transpose(w!), b!),
    dtype: 'float16',
    lowered: true,
  },
  'batched matmul': {
    shapes: [
      [2, 5, 8],
      [2, 8, 3],
    ],
    f: ([a, b]) => ag.matmul(a!, b!),
    dtype: 'float16',
    lowered: true,
  },
  'scaledDotProductAttention (causal)': {
    shapes: [
      [2, 4, 8],
      [2, 4, 8],
      [2, 4, 8],
    ],
    f: ([q, k, v]) => ag.scaledDotProductAttention(q!, k!, v!, { causal: true }),
    dtype: 'float16',
    lowered: true,
  },
  'softmax of a product': {
    shapes: [
      [4, 16],
      [16, 6],
    ],
    f: ([a, b]) => ag.softmax(ag.matmul(a!, b!)),
    dtype: 'float32',
    lowered: true,
  },
  'logSoftmax of a product': {
    shapes: [
      [4, 16],
      [16, 6],
    ],
    f: ([a, b]) => ag.logSoftmax(ag.matmul(a!, b!)),
    dtype: 'float32',
    lowered: true,
  },
  'layerNorm of a product': {
    shapes: [[4, 16], [16, 8], [8], [8]],
    f: ([a, b, w, c]) => ag.layerNorm(ag.matmul(a!, b!), [8], w!, c!),
    dtype: 'float32',
    lowered: true,
  },
  'softmaxCrossEntropy of float16 logits': {
    shapes: [
      [5, 16],
      [16, 4],
    ],
    f: ([a, b]) => {
      const onehot = Tensor.fromArray(
        a!.backend,
        Array.from({ length: 20 }, (_, i) => (i % 4 === Math.floor(i / 4) % 4 ? 1 : 0)),
        [5, 4],
      );
      return ag.softmaxCrossEntropy(ag.matmul(a!, b!), onehot);
    },
    dtype: 'float32',
    lowered: true,
  },
  'crossEntropy of float16 logits (class indices)': {
    shapes: [
      [5, 16],
      [16, 4],
    ],
    f: ([a, b]) => ag.crossEntropy(ag.matmul(a!, b!), labels(a!.backend, 5, 4), { reduction: 'none' }),
    dtype: 'float32',
    lowered: true,
  },
  'conv2d (float32 under autocast) of a float16 input': {
    shapes: [
      [1, 2, 5, 5],
      [3, 2, 3, 3],
    ],
    // under autocast the input arrives as float16 (as from a product); the oracle takes it as it is
    f: ([x, w]) => ag.conv2d(ag.isAutocastEnabled() ? x!.cast('float16') : x!, w!, { padding: 1 }),
    dtype: 'float32',
    lowered: true,
  },
};

/** Output dtype and input gradients of Σ f(xs)·weights, under autocast or not. */
async function grads(be: ComputeBackend, c: Case, amp: boolean): Promise<{ dtype: string; gs: number[][] }> {
  return ag.scope(async () => {
    const xs = c.shapes.map((s, k) =>
      Tensor.fromArray(
        be,
        values(
          s.reduce((p, d) => p * d, 1),
          k + 1,
        ),
        s,
        { requiresGrad: true },
      ),
    );
    const y = amp ? ag.autocast('float16', () => c.f(xs)) : c.f(xs);
    const wts = Tensor.fromArray(be, values(y.size, 99), y.shape);
    ag.sum(ag.mul(y.cast('float32'), wts)).backward();
    const gs = await Promise.all(xs.map(async (x) => Array.from(await x.grad!.data())));
    for (const x of xs) x.grad!.dispose();
    return { dtype: y.dtype, gs };
  });
}

/** max|got − want| / max|want| over all gradients of one input. */
const relErr = (got: number[], want: number[]): number => {
  const scale = Math.max(...want.map(Math.abs));
  return Math.max(...got.map((g, i) => Math.abs(g - want[i]!))) / scale;
};

const reference = new ReferenceBackend();
const oracle = new Map<string, number[][]>();
beforeAll(async () => {
  for (const [name, c] of Object.entries(CASES)) oracle.set(name, (await grads(reference, c, false)).gs);
});
afterAll(() => reference.dispose());

for (const [backendName, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`autocast on ${backendName}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(backendName, factory, (b) => {
      be = b;
    });

    test('dtypes: products in float16, reductions and softmax in float32, mixed operands promoted', () => {
      ag.scope(() => {
        const a = Tensor.fromArray(be!, values(12, 1), [3, 4]);
        const b = Tensor.fromArray(be!, values(8, 2), [4, 2]);
        expect(ag.matmul(a, b).dtype).toBe('float32');
        ag.autocast('float16', () => {
          expect(ag.isAutocastEnabled()).toBe(true);
          const p = ag.matmul(a, b);
          expect(p.dtype).toBe('float16');
          expect(ag.softmax(p).dtype).toBe('float32');
          expect(ag.sum(p).dtype).toBe('float32');
          expect(ag.relu(p).dtype).toBe('float16'); // outside both lists: the operand's dtype
          expect(ag.add(p, ag.matmul(a, b).cast('float32')).dtype).toBe('float32'); // promoted
          expect(ag.layerNorm(p, [2]).dtype).toBe('float32');
          ag.autocast('float16', () => expect(ag.matmul(a, b).dtype).toBe('float32'), { enabled: false });
        });
        expect(ag.isAutocastEnabled()).toBe(false);
        expect(ag.getAutocastDType()).toBeNull();
      });
    });

    test('no graph: the casts are freed with the op (no buffer left)', () => {
      const a = Tensor.fromArray(be!, values(12, 1), [3, 4]);
      const b = Tensor.fromArray(be!, values(8, 2), [4, 2]);
      const live = be!.liveBufferCount();
      const p = ag.autocast('float16', () => ag.matmul(a, b));
      expect(be!.liveBufferCount()).toBe(live + 1);
      for (const t of [p, a, b]) t.dispose();
    });

    for (const [name, c] of Object.entries(CASES))
      test(`gradients of ${name}: within 2^-9·max|g| of the float64 oracle`, async () => {
        const want = oracle.get(name)!;
        const amp = await grads(be!, c, true);
        const full = await grads(be!, c, false);
        expect(amp.dtype).toBe(c.dtype);
        amp.gs.forEach((g, k) => {
          const err = relErr(g, want[k]!);
          expect([k, err <= 4 * U16]).toEqual([k, true]);
          expect([k, relErr(full.gs[k]!, want[k]!) <= 1e-5]).toEqual([k, true]);
          if (c.lowered && k === 0) expect(err).toBeGreaterThan(2 ** -16);
        });
        if (process.env['AMP_REPORT'])
          console.log(
            `${backendName} ${name}: ${amp.gs.map((g, k) => relErr(g, want[k]!).toExponential(2)).join(' ')}`,
          );
      });
  });
}
