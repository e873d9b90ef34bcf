/**
 * layerNorm's forward with a workgroup per row (webgpu option layerNormKernel, kernels/layer-norm-rows.ts: what
 * hardware adapters run by default; lavapipe, a software adapter, runs an invocation per row unless told): the
 * conformance suite's layerNorm cases (float64 oracle, the op's tolerance) on a backend forced to each kernel, and
 * rows wider than the workgroup, a transposed view and no weight or bias against a float64 oracle written here.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { runConformance } from '@polyhal/conformance';
import { transposeView } from '@polyhal/hal';

const rand = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(3 * Math.sin(i * 12.9898 + seed * 78.233) + 0.5));

/** float64 layerNorm of rows [R, D] (row-major values), weight and bias optional. */
function oracle(x: number[], R: number, D: number, w: number[] | null, b: number[] | null, eps: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < R; r++) {
    const row = x.slice(r * D, (r + 1) * D);
    const mean = row.reduce((a, v) => a + v, 0) / D;
    const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / D;
    const rstd = 1 / Math.sqrt(variance + eps);
    row.forEach((v, d) => out.push((v - mean) * rstd * (w ? w[d]! : 1) + (b ? b[d]! : 0)));
  }
  return out;
}

// 'workgroup': the row sums as a tree; 'subgroup': through subgroup operations (lavapipe has subgroups of 8)
describe.each(['workgroup', 'subgroup'] as const)(
  'layerNorm with a workgroup per row on webgpu, row sums: %s',
  (kernel) => {
    let be: WebGpuBackend;
    beforeAll(async () => {
      be = await createWebGpuBackend({ layerNormKernel: kernel });
      // under CI the adapter (lavapipe) has subgroups: the subgroup form must run, not fall back to the tree
      const norm = (be as unknown as { contexts: { norm: { subgroups: boolean } } }).contexts.norm;
      if (process.env.CI) expect(norm.subgroups).toBe(kernel === 'subgroup');
    });
    afterAll(() => be?.dispose());

    test('the conformance layerNorm cases pass with each kernel', async () => {
      for (const layerNormKernel of kernel === 'workgroup' ? (['workgroup', 'invocation'] as const) : [kernel]) {
        const r = await runConformance(() => createWebGpuBackend({ layerNormKernel }), { filter: /layerNorm/ });
        expect(r.results.length).toBeGreaterThan(5);
        expect(r.results.filter((c) => !c.pass).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
      }
    });

    test.each([
      [3, 1],
      [7, 5],
      [64, 64],
      [5, 130],
      [2, 1000],
    ])('[%i, %i]: weight and bias, none, and a transposed view, within 1e-5 of float64', async (R, D) => {
      const eps = 1e-5;
      const [x, w, b] = [rand(R * D, 1), rand(D, 2), rand(D, 3)];
      const xs = be.fromArray(x, [R, D]);
      const [ws, bs] = [be.fromArray(w, [D]), be.fromArray(b, [D])];
      // the same rows stored transposed: [D, R] whose transpose is x
      const xt = be.fromArray(
        Array.from({ length: R * D }, (_, i) => x[(i % R) * D + Math.floor(i / R)]!),
        [D, R],
      );
      const runs: [ReturnType<typeof be.layerNorm>, number[]][] = [
        [be.layerNorm(xs, ws, bs, { eps }), oracle(x, R, D, w, b, eps)],
        [be.layerNorm(xs, null, null, { eps }), oracle(x, R, D, null, null, eps)],
        [be.layerNorm(transposeView(xt), ws, null, { eps }), oracle(x, R, D, w, null, eps)],
      ];
      for (const [{ y, mean, rstd }, want] of runs) {
        const got = await be.read(y);
        want.forEach((v, i) => expect(Math.abs(got[i]! - v)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(v))));
        for (const t of [y, mean, rstd]) be.free(t);
      }
      for (const t of [xs, ws, bs, xt]) be.free(t);
    });
  },
);
