/**
 * layerNormBackward's dx with a workgroup per row (webgpu option layerNormKernel, kernels/layer-norm-backward-rows.ts:
 * what hardware adapters run by default; lavapipe, a software adapter, runs an invocation per row unless told):
 * dx, dweight and dbias against a float64 oracle written here for rows narrower than the workgroup, as wide, not a
 * multiple of it, a ViT-S row (384), one row, with and without weight, strided and transposed g, x, mean and rstd,
 * both fused forms of the parameter sums (whole columns and chunks: layerNormParamsChunk) and dx alone; the two
 * kernels agree; and the conformance layerNormBackward cases pass on the forced backend.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { runConformance } from '@polyhal/conformance';
import { type NDArray, ShapeMismatchError, shrinkView, strideView, transposeView } from '@polyhal/hal';

const rand = (n: number, seed: number, scale = 3): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(scale * Math.sin(i * 12.9898 + seed * 78.233) + 0.5));

interface Inputs {
  R: number;
  D: number;
  g: number[];
  x: number[];
  mean: number[];
  rstd: number[];
  w: number[] | null;
}

/** Row-major [R, D] inputs, with mean and rstd (float32) of x's rows computed in float64. */
function inputs(R: number, D: number, weight: boolean, seed: number): Inputs {
  const x = rand(R * D, seed);
  const mean: number[] = [];
  const rstd: number[] = [];
  for (let r = 0; r < R; r++) {
    const row = x.slice(r * D, (r + 1) * D);
    const m = row.reduce((a, v) => a + v, 0) / D;
    mean.push(Math.fround(m));
    rstd.push(Math.fround(1 / Math.sqrt(row.reduce((a, v) => a + (v - m) ** 2, 0) / D + 1e-5)));
  }
  return { R, D, g: rand(R * D, seed + 1, 1), x, mean, rstd, w: weight ? rand(D, seed + 2, 1) : null };
}

/** float64 dx, dweight and dbias, each with a scale (the sum of its terms' magnitudes) for the tolerance. */
function oracle({ R, D, g, x, mean, rstd, w }: Inputs) {
  const dx: number[] = [];
  const dxScale: number[] = [];
  const dw = new Array<number>(D).fill(0);
  const db = new Array<number>(D).fill(0);
  const dwScale = new Array<number>(D).fill(0);
  const dbScale = new Array<number>(D).fill(0);
  for (let r = 0; r < R; r++) {
    const xh = Array.from({ length: D }, (_, d) => (x[r * D + d]! - mean[r]!) * rstd[r]!);
    const gw = Array.from({ length: D }, (_, d) => g[r * D + d]! * (w ? w[d]! : 1));
    const m1 = gw.reduce((a, v) => a + v, 0) / D;
    const m2 = gw.reduce((a, v, d) => a + v * xh[d]!, 0) / D;
    const a1 = gw.reduce((a, v) => a + Math.abs(v), 0) / D;
    const a2 = gw.reduce((a, v, d) => a + Math.abs(v * xh[d]!), 0) / D;
    for (let d = 0; d < D; d++) {
      dx.push(rstd[r]! * (gw[d]! - m1 - xh[d]! * m2));
      dxScale.push(rstd[r]! * (Math.abs(gw[d]!) + a1 + Math.abs(xh[d]!) * a2));
      const gv = g[r * D + d]!;
      dw[d]! += gv * xh[d]!;
      db[d]! += gv;
      dwScale[d]! += Math.abs(gv * xh[d]!);
      dbScale[d]! += Math.abs(gv);
    }
  }
  return { dx: [dx, dxScale], dweight: [dw, dwScale], dbias: [db, dbScale] } as const;
}

type Layout = 'contiguous' | 'strided';

/**
 * The inputs on `be`: contiguous, or g transposed ([D, R] stored), x every other row of a wider array, and mean
 * and rstd a column of [R, 2].
 */
function upload(be: WebGpuBackend, t: Inputs, layout: Layout): { args: NDArray[]; stored: NDArray[] } {
  const { R, D } = t;
  if (layout === 'contiguous') {
    const stored = [
      be.fromArray(t.g, [R, D]),
      be.fromArray(t.x, [R, D]),
      be.fromArray(t.mean, [R, 1]),
      be.fromArray(t.rstd, [R, 1]),
    ];
    return { args: stored, stored };
  }
  const gt = be.fromArray(
    Array.from({ length: R * D }, (_, i) => t.g[(i % R) * D + Math.floor(i / R)]!),
    [D, R],
  );
  // x in rows 1, 3, 5, … and columns 2 .. D + 2 of [2R + 1, D + 3]
  const W = D + 3;
  const wide = Array.from({ length: (2 * R + 1) * W }, (_, i) => {
    const [r, c] = [Math.floor(i / W), i % W];
    return r % 2 === 1 && c >= 2 && c < D + 2 ? t.x[((r - 1) / 2) * D + c - 2]! : 1e6;
  });
  const xw = be.fromArray(wide, [2 * R + 1, W]);
  const pair = (v: number[]) =>
    be.fromArray(
      v.flatMap((m) => [1e6, m]),
      [R, 2],
    );
  const [mp, rp] = [pair(t.mean), pair(t.rstd)];
  const args = [
    transposeView(gt),
    shrinkView(
      strideView(
        shrinkView(xw, [
          [1, 2 * R + 1],
          [2, D + 2],
        ]),
        [2, 1],
      ),
      [
        [0, R],
        [0, D],
      ],
    ),
    shrinkView(mp, [
      [0, R],
      [1, 2],
    ]),
    shrinkView(rp, [
      [0, R],
      [1, 2],
    ]),
  ];
  return { args, stored: [gt, xw, mp, rp] };
}

async function backward(be: WebGpuBackend, t: Inputs, layout: Layout, paramGrads: boolean) {
  const { args, stored } = upload(be, t, layout);
  const w = t.w ? be.fromArray(t.w, [t.D]) : null;
  const r = be.layerNormBackward(args[0]!, args[1]!, args[2]!, args[3]!, w, { paramGrads });
  const out = {
    dx: await be.read(r.dx),
    dweight: r.dweight ? await be.read(r.dweight) : null,
    dbias: r.dbias ? await be.read(r.dbias) : null,
  };
  for (const a of [...stored, w, r.dx, r.dweight, r.dbias]) if (a) be.free(a);
  return out;
}

/** |got − want| within the op's WGSL tolerance, relative to the terms' magnitude. */
function expectClose(got: ArrayLike<number>, [want, scale]: readonly [number[], number[]], what: string): void {
  expect(got.length).toBe(want.length);
  const bad = want.flatMap((v, i) =>
    Math.abs(got[i]! - v) <= 4e-6 + 1e-5 * scale[i]! ? [] : [`${what}[${i}]: ${got[i]} vs ${v}`],
  );
  expect(bad.slice(0, 5)).toEqual([]);
}

// 'workgroup': the row sums as a tree; 'subgroup': through subgroup operations (lavapipe has subgroups of 8)
describe.each(['workgroup', 'subgroup'] as const)(
  'layerNormBackward with a workgroup per row on webgpu, row sums: %s',
  (kernel) => {
    let be: WebGpuBackend;
    let byInvocation: WebGpuBackend;
    beforeAll(async () => {
      be = await createWebGpuBackend({ layerNormKernel: kernel });
      // under CI the adapter (lavapipe) has subgroups: the subgroup form must run, not fall back to the tree
      const norm = (be as unknown as { contexts: { norm: { subgroups: boolean } } }).contexts.norm;
      if (process.env.CI) expect(norm.subgroups).toBe(kernel === 'subgroup');
      byInvocation = await createWebGpuBackend({ layerNormKernel: 'invocation' });
    });
    afterAll(() => {
      be?.dispose();
      byInvocation?.dispose();
    });

    // [rows, D]: D < 64, = 64, not a multiple of 64, ViT-S's 384; one row; 130 rows take the chunked sums
    test.each([
      [5, 17],
      [3, 64],
      [7, 200],
      [11, 384],
      [1, 200],
      [130, 200],
      [67, 5],
    ])('[%i, %i]: dx, dweight and dbias within tolerance of float64', async (R, D) => {
      for (const weight of [true, false])
        for (const layout of ['contiguous', 'strided'] as const) {
          const t = inputs(R, D, weight, R + D);
          const want = oracle(t);
          const tag = `${weight ? 'weight' : 'no weight'}, ${layout}`;
          const all = await backward(be, t, layout, true);
          expectClose(all.dx, want.dx, `dx (${tag})`);
          expectClose(all.dweight!, want.dweight, `dweight (${tag})`);
          expectClose(all.dbias!, want.dbias, `dbias (${tag})`);
          const dxOnly = await backward(be, t, layout, false);
          expect(dxOnly.dweight).toBeNull();
          expectClose(dxOnly.dx, want.dx, `dx alone (${tag})`);
        }
    });

    test('the workgroup and invocation kernels agree', async () => {
      const t = inputs(130, 384, true, 7);
      const [a, b] = [await backward(be, t, 'strided', true), await backward(byInvocation, t, 'strided', true)];
      const { dx, dweight, dbias } = oracle(t);
      // each within the tolerance of float64, so within twice it of each other
      const twice = (s: readonly [number[], number[]]) => s[1].map((v) => 2 * v + 0.4);
      expectClose(a.dx, [Array.from(b.dx), twice(dx)], 'dx');
      expectClose(a.dweight!, [Array.from(b.dweight!), twice(dweight)], 'dweight');
      expectClose(a.dbias!, [Array.from(b.dbias!), twice(dbias)], 'dbias');
    });

    test('a g of another shape is a typed error', () => {
      const t = inputs(4, 8, true, 1);
      const [g, x, mean, rstd] = upload(be, t, 'contiguous').stored as [NDArray, NDArray, NDArray, NDArray];
      const g2 = be.fromArray(rand(4 * 9, 2), [4, 9]);
      expect(() => be.layerNormBackward(g2, x, mean, rstd, null)).toThrow(ShapeMismatchError);
      for (const a of [g, x, mean, rstd, g2]) be.free(a);
    });

    test('the conformance layerNormBackward cases pass with each kernel', async () => {
      for (const layerNormKernel of kernel === 'workgroup' ? (['workgroup', 'invocation'] as const) : [kernel]) {
        const r = await runConformance(() => createWebGpuBackend({ layerNormKernel }), { filter: /layerNormBackward/ });
        expect(r.results.length).toBeGreaterThan(5);
        expect(r.results.filter((c) => !c.pass).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
      }
    });
  },
);
