/**
 * Fusion over a whole WebGPU recording (backends/webgpu/src/plan-fusion.ts, option fuseInCapture): at the end of
 * a capture, a kernel whose result one later elementwise kernel alone reads, and which is dead after it, is
 * folded into that kernel — a small product into its store (an epilogue), a chain into the chain reading it; a
 * product whose result stays live (read again later, or an output) is folded with its first reader all the same,
 * the fused kernel writing both outputs. Each case
 * captures the same work on a backend with fuseInCapture and on one without, replays both on new inputs, and
 * checks: fewer kernels per replay where the rules allow, none fewer where they forbid (a chain's result read twice,
 * a product's first reader not elementwise, an operand written before the reader runs, the reader writing into an
 * operand), the unfused replay's bits (lavapipe contracts nothing), and the float64 value of the work within
 * float32 rounding.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { BINARY_OP_DEFS, type NDArray, UNARY_OP_DEFS } from '@polyhal/hal';
import { type Capturing, captureRun } from '../support/capture-run.js';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

/** The work of a case on input x: returns its outputs; frees every intermediate (as compile's scope does). */
type Work = (be: Capturing, x: NDArray) => NDArray[];

const gelu64 = UNARY_OP_DEFS.gelu.f64;
const geluGrad64 = BINARY_OP_DEFS.geluGrad.f64 as (x: number, g: number) => number;

/** Each value within float32 rounding (and a transcendental's few ulps) of its float64 value. */
function near(got: readonly number[], want: ArrayLike<number>): void {
  expect(got.length).toBe(want.length);
  got.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(2e-5 * (1 + Math.abs(want[i]!))));
}

/** float64 a [M, K] · b [K, N]. */
function matmul64(a: Float32Array, b: Float32Array, M: number, K: number, N: number): Float64Array {
  const c = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let k = 0; k < K; k++) for (let j = 0; j < N; j++) c[i * N + j]! += a[i * K + k]! * b[k * N + j]!;
  return c;
}

describe('fusion over a webgpu recording', () => {
  let fused: Capturing;
  let plain: Capturing;
  let tiled: Capturing;
  let tiledPlain: Capturing;
  // the scalar tiled kernel (32×32 tiles), without merging
  let small: Capturing;
  let smallPlain: Capturing;
  // without the horizontal merging (plan-merge.ts), so that the kernels saved are the fusion's alone
  let lone: Capturing;
  let lonePlain: Capturing;
  beforeAll(async () => {
    lone = (await createWebGpuBackend({ mergeInCapture: false })) as unknown as Capturing;
    lonePlain = (await createWebGpuBackend({ mergeInCapture: false, fuseInCapture: false })) as unknown as Capturing;
    fused = (await createWebGpuBackend()) as unknown as Capturing;
    plain = (await createWebGpuBackend({ fuseInCapture: false })) as unknown as Capturing;
    // lavapipe runs every product on register blocks unless a tile is forced: the tiled kernels' epilogues
    tiled = (await createWebGpuBackend({ matmulTile: 'medium' })) as unknown as Capturing;
    tiledPlain = (await createWebGpuBackend({ matmulTile: 'medium', fuseInCapture: false })) as unknown as Capturing;
    small = (await createWebGpuBackend({ matmulTile: 'small', mergeInCapture: false })) as unknown as Capturing;
    smallPlain = (await createWebGpuBackend({
      matmulTile: 'small',
      mergeInCapture: false,
      fuseInCapture: false,
    })) as unknown as Capturing;
  });
  afterAll(() => {
    for (const be of [fused, plain, tiled, tiledPlain, small, smallPlain, lone, lonePlain]) be?.dispose();
  });

  /** Both backends: the fused replay's bits equal the unfused one's; returns both, and the kernels saved. */
  async function compare(
    pair: [Capturing, Capturing],
    shape: number[],
    work: Work,
  ): Promise<{ out: number[][]; saved: number }> {
    const n = shape.reduce((p, d) => p * d, 1);
    const [x0, next] = [data(n, 1), data(n, 7)];
    const f = await captureRun(pair[0], x0, next, shape, work);
    const p = await captureRun(pair[1], x0, next, shape, work);
    expect(f.replayed).toEqual(p.replayed);
    return { out: f.replayed, saved: p.kernels - f.kernels };
  }

  /** y = relu((x · w + bias + r) · 0.5) - with every intermediate freed: one kernel where the rules allow. */
  const epilogueWork =
    (M: number, K: number, N: number, withBias: boolean): Work =>
    (be, x) => {
      const w = be.fromArray(data(K * N, 2), [K, N]);
      const bias = be.fromArray(data(N, 3), [N]);
      const r = be.fromArray(data(M * N, 4), [M, N]);
      const t1 = be.matmul(x, w, withBias ? bias : null);
      const t2 = be.binary('add', t1, r);
      const t3 = be.binary('mul', t2, 0.5);
      const y = be.unary('relu', t3);
      for (const t of [w, bias, r, t1, t2, t3]) be.free(t);
      return [y];
    };

  /** The float64 value of epilogueWork on the replay's input. */
  function epilogue64(M: number, K: number, N: number, withBias: boolean): Float64Array {
    const c = matmul64(data(M * K, 7), data(K * N, 2), M, K, N);
    const bias = data(N, 3);
    const r = data(M * N, 4);
    return c.map((v, i) => Math.max(0, (v + (withBias ? bias[i % N]! : 0) + r[i]!) * 0.5));
  }

  // the scalar tiled kernel (tiles with a side under 64: the main job's ViT products on a large GPU) too
  // (every row names its kernel pair: jest passes a test callback's extra parameter as `done`)
  const paths: [string, number, number, number, boolean, boolean][] = [
    ['register blocks', 40, 24, 36, true, false],
    ['register blocks, no bias', 40, 24, 36, false, false],
    ['gemv rows (N ≤ 4)', 96, 20, 3, true, false],
    ['gemv columns (M ≤ 4)', 2, 20, 80, false, false],
    ['the 32×32 tiled kernel, ragged tiles', 50, 30, 70, true, true],
    ['the 32×32 tiled kernel, whole tiles', 64, 40, 96, true, true],
  ];
  test.each(paths)(
    'a product and its add, scale and relu: one kernel, on %s',
    async (_, M, K, N, withBias, onSmall) => {
      const pair: [Capturing, Capturing] = onSmall ? [small, smallPlain] : [fused, plain];
      const { out, saved } = await compare(pair, [M, K], epilogueWork(M, K, N, withBias));
      expect(saved).toBe(3);
      const want = epilogue64(M, K, N, withBias);
      out[0]!.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(want[i]!))));
    },
  );

  test.each([
    ['vec4 loads', 64, 32, 64],
    ['scalar loads (N not a multiple of 4)', 50, 30, 70],
  ])('a product on the tiled kernel (%s) keeps its own store; the chain after it is one kernel', async (_, M, K, N) => {
    const { out, saved } = await compare([tiled, tiledPlain], [M, K], epilogueWork(M, K, N, true));
    expect(saved).toBe(2);
    const want = epilogue64(M, K, N, true);
    out[0]!.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(want[i]!))));
  });

  test('a product read through a reshape, and as the second operand of a subtraction', async () => {
    const work: Work = (be, x) => {
      const w = be.fromArray(data(16 * 12, 2), [16, 12]);
      const r = be.fromArray(data(6 * 4 * 12, 4), [6, 4, 12]);
      const t1 = be.matmul(x, w); // [24, 12]
      const t2 = be.binary('sub', r, be.reshape(t1, [6, 4, 12])); // r − t1: the product is the array operand
      const y = be.binary('div', t2, 3);
      for (const t of [w, r, t1, t2]) be.free(t);
      return [y];
    };
    const { out, saved } = await compare([fused, plain], [24, 16], work);
    expect(saved).toBe(2);
    const c = matmul64(data(24 * 16, 7), data(16 * 12, 2), 24, 16, 12);
    const r = data(6 * 4 * 12, 4);
    out[0]!.forEach((v, i) => expect(v).toBeCloseTo((r[i]! - c[i]!) / 3, 5));
  });

  test('elementwise kernels chain into one (a broadcast operand included)', async () => {
    const work: Work = (be, x) => {
      const b = be.fromArray(data(8, 2), [8]);
      const t1 = be.binary('mul', x, b); // [5, 8] · [8]
      const t2 = be.unary('exp', t1);
      const t3 = be.binary('sub', 1, t2);
      for (const t of [b, t1, t2]) be.free(t);
      return [t3];
    };
    const { out, saved } = await compare([fused, plain], [5, 8], work);
    expect(saved).toBeGreaterThanOrEqual(1);
    const x = data(40, 7);
    const b = data(8, 2);
    out[0]!.forEach((v, i) => expect(v).toBeCloseTo(1 - Math.exp(Math.fround(x[i]! * b[i % 8]!)), 5));
  });

  /** A [M, K] product with bias (x · w + bias), its weight and bias; linear64: its float64 value on the input. */
  const linear = (be: Capturing, x: NDArray, K: number, N: number): [NDArray, NDArray, NDArray] => {
    const w = be.fromArray(data(K * N, 2), [K, N]);
    const bias = be.fromArray(data(N, 3), [N]);
    return [be.matmul(x, w, bias), w, bias];
  };
  function linear64(M: number, K: number, N: number): Float64Array {
    const bias = data(N, 3);
    return matmul64(data(M * K, 7), data(K * N, 2), M, K, N).map((v, i) => v + bias[i % N]!);
  }
  const relu64 = (v: number): number => Math.max(0, v);

  // GELU on the 8 × 8 register blocks is 64 inlined erf's, which lavapipe's compiler takes ~50 s over: GELU on
  // gemv, ReLU (the MLP's and CNN's relu(linear)) on the blocks
  const kept: [string, number, number, number, 'gelu' | 'relu'][] = [
    ['register blocks', 40, 24, 36, 'relu'],
    ['gemv rows (N ≤ 4)', 96, 20, 3, 'gelu'],
    ['gemv columns (M ≤ 4)', 2, 20, 80, 'gelu'],
  ];
  test.each(kept)(
    'a product kept live (an output) and its activation: one kernel writing both, on %s',
    async (...c) => {
      const [, M, K, N, op] = c;
      const work: Work = (be, x) => {
        const [h, w, bias] = linear(be, x, K, N);
        const g = be.unary(op, h);
        for (const t of [w, bias]) be.free(t);
        return [h, g];
      };
      const { out, saved } = await compare([lone, lonePlain], [M, K], work);
      expect(saved).toBe(1);
      const h = linear64(M, K, N);
      near(out[0]!, h);
      near(out[1]!, h.map(op === 'gelu' ? gelu64 : relu64));
    },
  );

  test.each([
    ['gemv', 96, 20, 3, false],
    ['the 32×32 tiled kernel', 40, 24, 36, true],
  ])(
    "a product read again after its GELU (GELU's backward), on %s: one kernel fewer, both outputs' bits",
    async (_, M, K, N, onSmall) => {
      const work: Work = (be, x) => {
        const [h, w, bias] = linear(be, x, K, N);
        const g = be.unary('gelu', h);
        const up = be.fromArray(data(M * N, 5), [M, N]);
        const dh = be.binary('geluGrad', h, up); // reads h after its GELU: h stays live past the fused kernel
        for (const t of [w, bias, h, up]) be.free(t);
        return [g, dh];
      };
      const { out, saved } = await compare(onSmall ? [small, smallPlain] : [lone, lonePlain], [M, K], work);
      expect(saved).toBe(1);
      const h = linear64(M, K, N);
      const up = data(M * N, 5);
      near(out[0]!, h.map(gelu64));
      near(
        out[1]!,
        h.map((v, i) => geluGrad64(v, up[i]!)),
      );
    },
  );

  test('a product, its residual add and scale, kept; its ReLU, a subtraction and a scale: one kernel', async () => {
    const [M, K, N] = [40, 24, 36];
    const work: Work = (be, x) => {
      const [t1, w, bias] = linear(be, x, K, N);
      const r = be.fromArray(data(M * N, 4), [M, N]);
      const r2 = be.fromArray(data(M * N, 6), [M, N]);
      const t2 = be.binary('add', t1, r);
      const h = be.binary('mul', t2, 0.5); // kept: the epilogue's first two steps
      const g = be.unary('relu', h);
      const t3 = be.binary('sub', r2, g); // g as the second operand
      const y = be.binary('mul', t3, 3);
      for (const t of [w, bias, r, r2, t1, t2, g, t3]) be.free(t);
      return [h, y];
    };
    const { out, saved } = await compare([lone, lonePlain], [M, K], work);
    expect(saved).toBe(5);
    const r = data(M * N, 4);
    const r2 = data(M * N, 6);
    const h = linear64(M, K, N).map((v, i) => (v + r[i]!) * 0.5);
    near(out[0]!, h);
    near(
      out[1]!,
      h.map((v, i) => (r2[i]! - relu64(v)) * 3),
    );
  });

  test('products read again, by their first reader and later: each folded with its first reader', async () => {
    const work: Work = (be, x) => {
      const w = be.fromArray(data(12 * 10, 2), [12, 10]);
      const r = be.fromArray(data(20 * 10, 4), [20, 10]);
      const kept = be.matmul(x, w); // an output
      const a = be.binary('add', kept, r);
      const twice = be.matmul(x, w); // read twice
      const b = be.binary('mul', twice, r);
      const c = be.binary('sub', twice, 1);
      for (const t of [w, r, twice]) be.free(t);
      return [kept, a, b, c];
    };
    const { out, saved } = await compare([lone, lonePlain], [20, 12], work);
    expect(saved).toBe(2);
    const want = matmul64(data(20 * 12, 7), data(12 * 10, 2), 20, 12, 10);
    const r = data(20 * 10, 4);
    near(out[0]!, want);
    near(
      out[1]!,
      want.map((v, i) => v + r[i]!),
    );
    near(
      out[2]!,
      want.map((v, i) => v * r[i]!),
    );
    near(
      out[3]!,
      want.map((v) => v - 1),
    );
  });

  test('a kept product read by the chain after its reader is not bound twice: that chain stays apart', async () => {
    const [M, K, N] = [96, 20, 3];
    const work: Work = (be, x) => {
      const [h, w, bias] = linear(be, x, K, N);
      const g = be.unary('gelu', h);
      const y = be.binary('mul', g, h); // would read h in the kernel that writes it
      for (const t of [w, bias, h, g]) be.free(t);
      return [y];
    };
    const { out, saved } = await compare([lone, lonePlain], [M, K], work);
    expect(saved).toBe(1);
    near(
      out[0]!,
      linear64(M, K, N).map((v) => gelu64(v) * v),
    );
  });

  test('nothing is folded where the rules forbid it, and the results stay right', async () => {
    // a chain read twice; a product whose operand (the input) is written before its reader (dead or kept); a
    // kept product read first by a product
    const work: Work = (be, x) => {
      const w = be.fromArray(data(12 * 10, 2), [12, 10]);
      const w2 = be.fromArray(data(10 * 10, 3), [10, 10]);
      const r = be.fromArray(data(20 * 10, 4), [20, 10]);
      const e = be.binary('add', r, 1);
      const e1 = be.binary('mul', e, 2);
      const e2 = be.binary('sub', e, 3);
      const first = be.matmul(x, w);
      const other = be.matmul(first, w2);
      const g = be.unary('relu', first);
      const moved = be.matmul(x, w);
      const movedKept = be.matmul(x, w);
      be.write(x.buffer, data(20 * 12, 9)); // folded into its reader, the product would read these
      const d = be.binary('add', moved, 2);
      const dk = be.binary('add', movedKept, 2);
      for (const t of [w, w2, r, e, first, moved]) be.free(t);
      return [e1, e2, other, g, d, movedKept, dk];
    };
    const { out, saved } = await compare([lone, lonePlain], [20, 12], work);
    expect(saved).toBe(0);
    const r = data(20 * 10, 4);
    near(
      out[0]!,
      Array.from(r, (v) => (v + 1) * 2),
    );
    near(
      out[1]!,
      Array.from(r, (v) => v + 1 - 3),
    );
    const want = matmul64(data(20 * 12, 7), data(12 * 10, 2), 20, 12, 10); // the replay's input times w
    near(out[2]!, matmul64(Float32Array.from(want, Math.fround), data(10 * 10, 3), 20, 10, 10));
    near(out[3]!, want.map(relu64));
    near(
      out[4]!,
      want.map((v) => v + 2),
    );
    near(out[5]!, want);
    near(
      out[6]!,
      want.map((v) => v + 2),
    );
  });

  test("a kept product's reader writing into the product's operand (a freed buffer reused) is not folded", async () => {
    const [M, K, N] = [16, 16, 8]; // w [K, N] and h [M, N] of one size: the pool hands w's buffer to the ReLU
    const work: Work = (be, x) => {
      const [h, w, bias] = linear(be, x, K, N);
      for (const t of [w, bias]) be.free(t);
      const g = be.unary('relu', h);
      return [h, g];
    };
    const { out, saved } = await compare([lone, lonePlain], [M, K], work);
    expect(saved).toBe(0);
    const h = linear64(M, K, N);
    near(out[0]!, h);
    near(out[1]!, h.map(relu64));
  });
});
