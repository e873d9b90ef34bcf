// matmul with a bias on webgpu: a bias that is the same for every batch item is added in the store of
// the GEMM or matrix-vector kernel (one kernel), others take the product then an add kernel. The values
// are the conformance suite's (matmul/...+bias cases against the float64 oracle); this checks which path
// runs and that both agree with the cpu backend.
import { describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type TileName, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const values = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed) * 2);
const on = (be: ComputeBackend, shape: number[], seed: number): NDArray =>
  be.fromArray(
    values(
      shape.reduce((p, d) => p * d, 1),
      seed,
    ),
    shape,
  );

describe('webgpu matmul with a bias', () => {
  const cases: [string, number[], number[], number[], number][] = [
    ['a Linear layer on sequences, bias [N]', [4, 17, 24], [24, 40], [40], 1],
    ['a bias [M, 1]', [33, 20], [20, 12], [33, 1], 1],
    ['matrix-vector, N ≤ 4 (gemv rows)', [70, 64], [64, 3], [3], 1],
    ['batch-1 inference, M ≤ 4 (gemv columns)', [1, 64], [64, 100], [100], 1],
    ['a bias varying over the batch', [3, 5, 7], [3, 7, 4], [3, 1, 4], 2],
    ['K = 0', [4, 0], [0, 6], [6], 2],
  ];
  for (const [name, sa, sb, sc, kernels] of cases)
    test(`${name}: ${kernels === 1 ? 'one kernel' : 'the product, then an add'}, as the cpu backend`, async () => {
      const be = fixture.backends['webgpu'] as WebGpuBackend | undefined;
      if (!be) return;
      const [a, b, c] = [on(be, sa, 1), on(be, sb, 2), on(be, sc, 3)];
      await be.synchronize();
      const before = be.kernelStats().dispatches;
      const y = be.matmul(a, b, c);
      await be.synchronize();
      expect(be.kernelStats().dispatches - before).toBe(kernels);
      const cpu = fixture.cpu;
      const want = (await cpu.read(cpu.matmul(on(cpu, sa, 1), on(cpu, sb, 2), on(cpu, sc, 3)))) as Float32Array;
      const got = (await be.read(y)) as Float32Array;
      expect(y.shape).toEqual([...sa.slice(0, -1), sb.at(-1)!]);
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(1e-5);
    });
});

// A product split over K (matmulSplitK; a large GPU splits small outputs itself) takes its bias in the sum of the
// partial products: two kernels (the partial products, their sum plus the bias), not three (then an add).
describe('webgpu matmul with a bias, split over K', () => {
  const cases: [string, TileName | null, number[], number[], number[]][] = [
    ['the main job MLP first layer (scalar 32×32 tiles), bias [N]', 'small', [64, 784], [784, 256], [256]],
    ['vec4 64×64 tiles, batched, bias [N]', 'medium', [2, 40, 96], [96, 64], [64]],
    ['a skinny output (128×16 tiles), N = 10', 'cols16', [64, 256], [256, 10], [10]],
    ['a bias [M, 1] (vec4 sums spanning rows)', 'small', [30, 50], [50, 6], [30, 1]],
    ['matrix-vector rows (gemv), N = 3', null, [70, 512], [512, 3], [3]],
  ];
  for (const [name, tile, sa, sb, sc] of cases)
    test(`${name}: two kernels, as the cpu backend`, async () => {
      if (!fixture.backends['webgpu']) return;
      const be = await createWebGpuBackend({ matmulSplitK: 3, ...(tile ? { matmulTile: tile } : {}) });
      try {
        const [a, b, c] = [on(be, sa, 1), on(be, sb, 2), on(be, sc, 3)];
        await be.synchronize();
        const before = be.kernelStats().dispatches;
        const y = be.matmul(a, b, c);
        await be.synchronize();
        expect(be.kernelStats().dispatches - before).toBe(2);
        const cpu = fixture.cpu;
        const want = (await cpu.read(cpu.matmul(on(cpu, sa, 1), on(cpu, sb, 2), on(cpu, sc, 3)))) as Float32Array;
        const got = (await be.read(y)) as Float32Array;
        const bound = sa.at(-1)! * 2 ** -20; // K products of |values| ≤ 2, summed in another order
        for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(bound);
      } finally {
        be.dispose();
      }
    });
});
