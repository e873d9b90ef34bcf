/**
 * Fusion over a whole WebGPU recording (backends/webgpu/src/plan-fusion.ts, option fuseInCapture) of products split
 * over K (matmulSplitK forces the split on lavapipe; a large GPU splits small outputs itself): the elementwise
 * kernel reading a split product's result is folded into the sum of its partials (kernels/splitk.ts), after the
 * bias — the main job's MLP's `relu(x·W1ᵀ + b1)`, its ReLU's backward reading h again (the kept form), GELU, a
 * residual add and a scale. Each case captures the same work on a backend with fuseInCapture and on one without,
 * replays both on new inputs, and checks one kernel fewer per folded kernel, the unfused replay's bits (lavapipe
 * contracts nothing), and the float64 value of the work within float32 rounding; on the tiled split kernel (a sum
 * over vec4s where M·N is a multiple of 4, over scalars where not) and on the split gemv kernels.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type NDArray, UNARY_OP_DEFS } from '@polyhal/hal';
import { type Capturing, captureRun } from '../support/capture-run.js';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

/** The work of a case on input x: returns its outputs; frees every intermediate (as compile's scope does). */
type Work = (be: Capturing, x: NDArray) => NDArray[];

const gelu64 = UNARY_OP_DEFS.gelu.f64;
const relu64 = (v: number): number => Math.max(0, v);

/** Each value within float32 rounding (and a transcendental's few ulps) of its float64 value. */
function near(got: readonly number[], want: ArrayLike<number>): void {
  expect(got.length).toBe(want.length);
  got.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(2e-5 * (1 + Math.abs(want[i]!))));
}

/** float64 of x [B·M, K] (the replay's input, seed 7) · w [K, N] (seed 2) per batch item, plus bias (seed 3). */
function linear64(B: number, M: number, K: number, N: number, withBias: boolean): Float64Array {
  const [x, w, bias] = [data(B * M * K, 7), data(K * N, 2), data(N, 3)];
  const c = new Float64Array(B * M * N);
  for (let i = 0; i < B * M; i++)
    for (let j = 0; j < N; j++) {
      let s = withBias ? bias[j]! : 0;
      for (let k = 0; k < K; k++) s += x[i * K + k]! * w[k * N + j]!;
      c[i * N + j] = s;
    }
  return c;
}

/** x · w (+ bias), w [K, N] shared by the batch items; returns the product and the arrays to free. */
function linear(be: Capturing, x: NDArray, K: number, N: number, withBias: boolean): [NDArray, NDArray[]] {
  const w = be.fromArray(data(K * N, 2), [K, N]);
  const bias = be.fromArray(data(N, 3), [N]);
  const wb = x.shape.length === 3 ? be.expand(be.reshape(w, [1, K, N]), [x.shape[0]!, K, N]) : w;
  return [be.matmul(x, wb, withBias ? bias : null), [w, bias]];
}

describe('fusion of split-K products over a webgpu recording', () => {
  // without the horizontal merging (plan-merge.ts), so that the kernels saved are the fusion's alone
  let split: Capturing;
  let splitPlain: Capturing;
  let merged: Capturing;
  let mergedPlain: Capturing;
  beforeAll(async () => {
    split = (await createWebGpuBackend({ matmulSplitK: 3, mergeInCapture: false })) as unknown as Capturing;
    splitPlain = (await createWebGpuBackend({
      matmulSplitK: 3,
      mergeInCapture: false,
      fuseInCapture: false,
    })) as unknown as Capturing;
    merged = (await createWebGpuBackend({ matmulSplitK: 4, matmulTile: 'small' })) as unknown as Capturing;
    mergedPlain = (await createWebGpuBackend({
      matmulSplitK: 4,
      matmulTile: 'small',
      fuseInCapture: false,
    })) as unknown as Capturing;
  });
  afterAll(() => {
    for (const be of [split, splitPlain, merged, mergedPlain]) be?.dispose();
  });

  /** Both backends: the fused replay's bits equal the unfused one's; returns the fused outputs, kernels saved. */
  async function compare(
    pair: [Capturing, Capturing],
    shape: number[],
    work: Work,
  ): Promise<{ out: number[][]; saved: number; plain: number }> {
    const n = shape.reduce((p, d) => p * d, 1);
    const [x0, next] = [data(n, 1), data(n, 7)];
    const f = await captureRun(pair[0], x0, next, shape, work);
    const p = await captureRun(pair[1], x0, next, shape, work);
    expect(f.replayed).toEqual(p.replayed);
    expect(f.first).toEqual(p.first); // the trace runs unfused
    return { out: f.replayed, saved: p.kernels - f.kernels, plain: p.kernels };
  }

  test("the MLP's first layer: relu(x·W1 + b1) with h read again by the ReLU's backward, in the sum", async () => {
    const [M, K, N] = [64, 784, 128];
    const work: Work = (be, x) => {
      const [h, tmp] = linear(be, x, K, N, true);
      const g = be.unary('relu', h);
      const up = be.fromArray(data(M * N, 5), [M, N]);
      const mask = be.binary('cmplt', 0, h); // the ReLU's backward reads h after the ReLU
      const dh = be.binary('mul', mask, up);
      for (const t of [...tmp, h, up, mask]) be.free(t);
      return [g, dh];
    };
    const { out, saved, plain } = await compare([split, splitPlain], [M, K], work);
    expect(plain).toBe(5); // partial products, their sum, the ReLU, the mask, its product
    expect(saved).toBe(2); // the ReLU into the sum, the mask into its product
    const h = linear64(1, M, K, N, true);
    const up = data(M * N, 5);
    near(out[0]!, h.map(relu64));
    // the mask from the replay's float32 h: compare where h is not within rounding of 0
    out[1]!.forEach((v, i) => {
      if (Math.abs(h[i]!) > 1e-4) expect(v).toBe((h[i]! > 0 ? 1 : 0) * up[i]!);
    });
  });

  // [name, batch, M, K, N, bias]: the tiled split's sum over vec4s (M·N a multiple of 4) and scalars, a batch,
  // the split gemv kernels' sums
  const cases: [string, number, number, number, number, boolean][] = [
    ['tiled, vec4 sum, bias', 1, 40, 48, 36, true],
    ['tiled, scalar sum (M·N = 1050), no bias', 1, 30, 40, 35, false],
    ['tiled, scalar sum, bias, 2 batch items', 2, 15, 24, 7, true],
    ['gemv rows, vec4 sum, bias', 1, 96, 40, 3, true],
    ['gemv rows, scalar sum, no bias', 1, 97, 40, 3, false],
    ['gemv columns, scalar sum, bias', 1, 2, 40, 81, true],
  ];
  test.each(cases)(
    'a residual add, a scale and GELU, dead after: one sum kernel, %s',
    async (_, B, M, K, N, withBias) => {
      const shape = B > 1 ? [B, M, K] : [M, K];
      const out = shape.slice(0, -1).concat(N);
      const work: Work = (be, x) => {
        const [t1, tmp] = linear(be, x, K, N, withBias);
        const r = be.fromArray(data(B * M * N, 4), out);
        const t2 = be.binary('add', r, t1); // the product as the second operand
        const t3 = be.binary('mul', t2, 0.5);
        const y = be.unary('gelu', t3);
        for (const t of [...tmp, r, t1, t2, t3]) be.free(t);
        return [y];
      };
      const got = await compare([split, splitPlain], shape, work);
      expect(got.plain).toBe(5); // split: partial products and their sum
      expect(got.saved).toBe(3);
      const r = data(B * M * N, 4);
      near(
        got.out[0]!,
        linear64(B, M, K, N, withBias).map((v, i) => gelu64((r[i]! + v) * 0.5)),
      );
    },
  );

  test.each([
    ['vec4 sum', 40, 48, 36],
    ['scalar sum', 30, 40, 35],
  ])('GELU with h an output (kept), on the small tiles with merging: %s', async (_, M, K, N) => {
    const work: Work = (be, x) => {
      const [h, tmp] = linear(be, x, K, N, true);
      const g = be.unary('gelu', h);
      for (const t of tmp) be.free(t);
      return [h, g];
    };
    const { out, saved } = await compare([merged, mergedPlain], [M, K], work);
    expect(saved).toBe(1);
    const h = linear64(1, M, K, N, true);
    near(out[0]!, h);
    near(out[1]!, h.map(gelu64));
  });

  test("a split product whose partials the next product's overwrite before its reader is not folded", async () => {
    const [M, K, N] = [40, 48, 36];
    const work: Work = (be, x) => {
      const [t1, tmp] = linear(be, x, K, N, true);
      const [t2, tmp2] = linear(be, x, K, N, false); // its partials: t1's pool buffer again
      const a = be.unary('relu', t1);
      const b = be.binary('mul', t2, 2);
      for (const t of [...tmp, ...tmp2, t1, t2]) be.free(t);
      return [a, b];
    };
    const { out, saved, plain } = await compare([split, splitPlain], [M, K], work);
    expect(plain).toBe(6);
    expect(saved).toBe(1); // the second alone
    near(out[0]!, linear64(1, M, K, N, true).map(relu64));
    near(
      out[1]!,
      linear64(1, M, K, N, false).map((v) => v * 2),
    );
  });
});
