/**
 * Horizontal merging of a WebGPU recording's independent kernels (backends/webgpu/src/plan-merge.ts and
 * kernels/merge-wgsl.ts, option mergeInCapture): at the end of a capture, runs of consecutive kernels that share
 * no written buffer run as one dispatch. Each case captures the same work on a backend that merges and on one that
 * does not, replays both on new inputs and checks the same bits, fewer dispatches per replay where the rules allow
 * and none fewer where they forbid, and the float64 value of the work within float32 rounding. The refusals of
 * dependent kernels (RAW, WAR, WAW) are also checked on recordings built by hand, and the module merge itself
 * on kernels of different workgroup sizes and past the device's limits.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type NDArray, transposeView } from '@polyhal/hal';
import { type KernelStep, Recorder } from '../../backends/webgpu/src/capture.js';
import { layerNormRowsWgsl } from '../../backends/webgpu/src/kernels/layer-norm-rows.js';
import { type MergeLimits, mergeWgsl } from '../../backends/webgpu/src/kernels/merge-wgsl.js';
import { mergePlan } from '../../backends/webgpu/src/plan-merge.js';
import type { PipelineCache } from '../../backends/webgpu/src/pipelines.js';
import { type Capturing, captureRun } from '../support/capture-run.js';

const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));

type Work = (be: Capturing, x: NDArray) => NDArray[];

/** float64 a [M, K] · b [K, N]. */
function matmul64(a: ArrayLike<number>, b: ArrayLike<number>, M: number, K: number, N: number): Float64Array {
  const c = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let k = 0; k < K; k++) for (let j = 0; j < N; j++) c[i * N + j]! += a[i * K + k]! * b[k * N + j]!;
  return c;
}

/** The transpose of a [R, C] row-major matrix. */
const t64 = (a: ArrayLike<number>, R: number, C: number): Float64Array =>
  Float64Array.from({ length: R * C }, (_, i) => a[(i % R) * C + Math.floor(i / R)]!);

const near = (got: readonly number[], want: ArrayLike<number>, tol = 1e-5): void => {
  expect(got.length).toBe(want.length);
  got.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(tol * (1 + Math.abs(want[i]!))));
};

describe('merging independent kernels of a webgpu recording', () => {
  let merged: Capturing;
  let plain: Capturing;
  let tiled: Capturing;
  let tiledPlain: Capturing;
  let rowsSub: Capturing;
  let rowsSubPlain: Capturing;
  beforeAll(async () => {
    // layerNorm with a workgroup per row, its sums through subgroups (lavapipe has them: subgroups of 8)
    rowsSub = (await createWebGpuBackend({ layerNormKernel: 'subgroup' })) as unknown as Capturing;
    rowsSubPlain = (await createWebGpuBackend({
      layerNormKernel: 'subgroup',
      mergeInCapture: false,
    })) as unknown as Capturing;
    merged = (await createWebGpuBackend()) as unknown as Capturing;
    plain = (await createWebGpuBackend({ mergeInCapture: false })) as unknown as Capturing;
    // lavapipe runs every product on register blocks unless a tile is forced: the tiled kernels' workgroup memory
    tiled = (await createWebGpuBackend({ matmulTile: 'medium' })) as unknown as Capturing;
    tiledPlain = (await createWebGpuBackend({ matmulTile: 'medium', mergeInCapture: false })) as unknown as Capturing;
  });
  afterAll(() => {
    for (const be of [merged, plain, tiled, tiledPlain, rowsSub, rowsSubPlain]) be?.dispose();
  });

  /** Both backends: the merged replay's bits equal the unmerged one's; returns both, and the dispatches saved. */
  async function compare(pair: [Capturing, Capturing], shape: number[], work: Work) {
    const n = shape.reduce((p, d) => p * d, 1);
    const [x0, next] = [data(n, 1), data(n, 7)];
    const m = await captureRun(pair[0], x0, next, shape, work);
    const p = await captureRun(pair[1], x0, next, shape, work);
    expect(m.replayed).toEqual(p.replayed);
    expect(m.first).toEqual(p.first);
    return { out: m.replayed, saved: p.kernels - m.kernels, kernels: m.kernels };
  }

  test('two independent elementwise kernels: one dispatch, the same bits', async () => {
    const work: Work = (be, x) => [be.unary('exp', x), be.binary('mul', x, 3)];
    const { out, saved, kernels } = await compare([merged, plain], [37, 41], work);
    expect(saved).toBe(1);
    expect(kernels).toBe(1);
    const x = data(37 * 41, 7);
    near(
      out[0]!,
      Array.from(x, (v) => Math.exp(v)),
    );
    near(
      out[1]!,
      Array.from(x, (v) => v * 3),
    );
  });

  test("a Linear's backward: dX = g·W and dW = gᵀ·x in one dispatch", async () => {
    const [M, K, N] = [24, 20, 28];
    const xs = data(M * K, 3);
    const ws = data(N * K, 2);
    const work: Work = (be, g) => {
      const x = be.fromArray(xs, [M, K]);
      const w = be.fromArray(ws, [N, K]);
      const dx = be.matmul(g, w); // [M, N] · [N, K]
      const dw = be.matmul(transposeView(g), x); // [N, M] · [M, K]
      for (const t of [x, w]) be.free(t);
      return [dx, dw];
    };
    const { out, saved } = await compare([merged, plain], [M, N], work);
    expect(saved).toBe(1);
    const g = data(M * N, 7);
    near(out[0]!, matmul64(g, ws, M, N, K));
    near(out[1]!, matmul64(t64(g, M, N), xs, N, M, K));
  });

  test('two layerNorms whose row sums go through subgroups: one dispatch, each its own subgroup ids', async () => {
    const [R, D] = [9, 100];
    const work: Work = (be, x) => {
      const a = be.layerNorm(x, null, null);
      const x2 = be.binary('mul', x, 3);
      const b = be.layerNorm(x2, null, null);
      be.free(x2);
      for (const t of [a.mean, a.rstd, b.mean, b.rstd]) be.free(t);
      return [a.y, b.y];
    };
    const { out, saved } = await compare([rowsSub, rowsSubPlain], [R, D], work);
    expect(saved).toBe(1); // the second layerNorm merges with nothing before it (it reads x2); the first with mul
    const x = data(R * D, 7);
    const norm = (v: ArrayLike<number>): number[] => {
      const y: number[] = [];
      for (let r = 0; r < R; r++) {
        const row = Array.from({ length: D }, (_, d) => v[r * D + d]!);
        const mean = row.reduce((s, t) => s + t, 0) / D;
        const rstd = 1 / Math.sqrt(row.reduce((s, t) => s + (t - mean) ** 2, 0) / D + 1e-5);
        y.push(...row.map((t) => (t - mean) * rstd));
      }
      return y;
    };
    near(out[0]!, norm(x));
    near(out[1]!, norm(Array.from(x, (v) => Math.fround(v * 3))));
  });

  test('a product (gemv) and a reduction of the same gradient', async () => {
    const [M, K, N] = [2, 80, 30]; // M ≤ 4 against K ≥ 64: the gemv kernel (256 invocations, as the reduction's)
    const ws = data(N * K, 2);
    const work: Work = (be, g) => {
      const w = be.fromArray(ws, [N, K]);
      const dx = be.matmul(g, w);
      const db = be.reduce('sum', g, 0);
      be.free(w);
      return [dx, db];
    };
    const { out, saved } = await compare([merged, plain], [M, N], work);
    expect(saved).toBe(1);
    const g = data(M * N, 7);
    near(out[0]!, matmul64(g, ws, M, N, K));
    near(
      out[1]!,
      Array.from({ length: N }, (_, j) => g.filter((_, i) => i % N === j).reduce((s, v) => s + v, 0)),
    );
  });

  test('different workgroup sizes: a register-block product (64) and an elementwise kernel (256)', async () => {
    const [M, K, N] = [40, 24, 36];
    const ws = data(K * N, 2);
    const work: Work = (be, x) => {
      const w = be.fromArray(ws, [K, N]);
      const y = be.matmul(x, w);
      const e = be.unary('exp', x);
      be.free(w); // after: a buffer freed before the second kernel could be its output (WAR, not merged)
      return [y, e];
    };
    const { out, saved, kernels } = await compare([merged, plain], [M, K], work);
    expect(saved).toBe(1);
    expect(kernels).toBe(1);
    const x = data(M * K, 7);
    near(out[0]!, matmul64(x, ws, M, K, N));
    near(
      out[1]!,
      Array.from(x, (v) => Math.exp(v)),
    );
  });

  test('a reduction with workgroup memory (256) keeps its size; a product (64) runs 4 a workgroup', async () => {
    const [M, K, N] = [29, 16, 20]; // the product runs in one workgroup of 64: 192 invocations of the merged one idle
    const ws = data(K * N, 2);
    const work: Work = (be, x) => {
      const w = be.fromArray(ws, [K, N]);
      const s = be.reduce('sum', x, 0);
      const y = be.matmul(x, w);
      be.free(w);
      return [s, y];
    };
    const { out, saved } = await compare([merged, plain], [M, K], work);
    expect(saved).toBe(1);
    const x = data(M * K, 7);
    near(
      out[0]!,
      Array.from({ length: K }, (_, j) => x.filter((_, i) => i % K === j).reduce((a, v) => a + v, 0)),
    );
    near(out[1]!, matmul64(x, ws, M, K, N));
  });

  test('a tiled product (16 × 16, workgroup memory) and an elementwise kernel (256)', async () => {
    const [M, K, N] = [64, 32, 64];
    const ws = data(K * N, 2);
    const work: Work = (be, x) => {
      const w = be.fromArray(ws, [K, N]);
      const y = be.matmul(x, w);
      const z = be.binary('mul', x, 3);
      be.free(w);
      return [y, z];
    };
    const { out, saved } = await compare([tiled, tiledPlain], [M, K], work);
    expect(saved).toBe(1);
    const x = data(M * K, 7);
    near(out[0]!, matmul64(x, ws, M, K, N));
    near(
      out[1]!,
      Array.from(x, (v) => v * 3),
    );
  });

  test('tiled products with workgroup memory and barriers', async () => {
    const [M, K, N] = [64, 32, 64];
    const ws = data(K * N, 2);
    const vs = data(K * N, 5);
    const work: Work = (be, x) => {
      const w = be.fromArray(ws, [K, N]);
      const v = be.fromArray(vs, [K, N]);
      const y1 = be.matmul(x, w);
      const y2 = be.matmul(x, v);
      for (const t of [w, v]) be.free(t);
      return [y1, y2];
    };
    const { out, saved } = await compare([tiled, tiledPlain], [M, K], work);
    expect(saved).toBe(1);
    const x = data(M * K, 7);
    near(out[0]!, matmul64(x, ws, M, K, N));
    near(out[1]!, matmul64(x, vs, M, K, N));
  });

  test('a kernel reading the result of the one before it is not merged (RAW)', async () => {
    const work: Work = (be, x) => {
      const y = be.unary('exp', x);
      return [y, be.binary('mul', y, x)];
    };
    const { out, saved } = await compare([merged, plain], [9, 13], work);
    expect(saved).toBe(0);
    const x = data(9 * 13, 7);
    near(
      out[1]!,
      Array.from(x, (v) => Math.exp(v) * v),
    );
  });

  test('three independent kernels run as one dispatch', async () => {
    const work: Work = (be, x) => [be.unary('exp', x), be.binary('mul', x, 3), be.unary('neg', x)];
    const { out, saved, kernels } = await compare([merged, plain], [300, 7], work);
    expect(saved).toBe(2);
    expect(kernels).toBe(1);
    near(
      out[2]!,
      Array.from(data(300 * 7, 7), (v) => -v),
    );
  });
});

/** A kernel of 64 invocations a workgroup: out[i] = a[i] + 1 (reading `reads`, writing `writes` of its buffers). */
const source = (size = 64, shared = 0): string => `struct Params { v: array<vec4<i32>, 1> }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
${shared > 0 ? `var<workgroup> sh: array<vec4<f32>, ${shared}>;` : ''}
fn p(i: u32) -> i32 { return params.v[i / 4u][i % 4u]; }
@compute @workgroup_size(${size}) fn main(@builtin(global_invocation_id) gid: vec3u,
    @builtin(num_workgroups) nwg: vec3u) {
  if (i32(gid.x) < p(0u)) { out[gid.x] = a[gid.x] + 1.0; }
}`;

const LIMITS: MergeLimits = {
  maxComputeWorkgroupStorageSize: 16384,
  maxStorageBuffersPerShaderStage: 8,
  maxUniformBuffers: 8,
  maxComputeWorkgroupsPerDimension: 65535,
};

describe('the merge of kernel modules and its refusals', () => {
  test('two kernels: renamed names and bindings, one entry point over both grids', () => {
    const m = mergeWgsl(source(), source(), [3, 1, 1], [2, 2, 1], LIMITS);
    expect(m).not.toBeNull();
    expect(m!.grid).toEqual([7, 1, 1]);
    const bindings = [...m!.code.matchAll(/@binding\((\d+)\) var<(\w+)/g)].map((b) => `${b[1]}:${b[2]}`);
    expect(bindings).toEqual(['0:uniform', '1:storage', '2:storage', '3:uniform', '4:storage', '5:storage']);
    expect(m!.code.match(/@compute/g)).toHaveLength(1);
    expect(m!.code).toContain('m1_params.v'); // the struct member after '.' is not renamed
  });

  test('kernels of different workgroup sizes: the one that needs its own size sets it, the others remapped', () => {
    // neither needs its size: the larger (128) is taken; the 64-kernel's 5 workgroups run two to a workgroup (3)
    const m = mergeWgsl(source(64), source(128), [5, 1, 1], [2, 1, 1], LIMITS);
    expect(m?.grid).toEqual([5, 1, 1]);
    expect(m!.code).toMatch(/@workgroup_size\(128, 1, 1\) fn main/);
    expect(m!.code).toContain('if (mx_r < 5u)'); // the last workgroup's second half is idle
    // the 64-kernel has workgroup memory: 64 is kept, and each of the 128-kernel's workgroups spans two
    const f = mergeWgsl(source(64, 4), source(128), [5, 1, 1], [2, 1, 1], LIMITS);
    expect(f?.grid).toEqual([9, 1, 1]);
    expect(f!.code).toMatch(/@workgroup_size\(64, 1, 1\) fn main/);
    // 16 × 16 and 256: the same count, another shape, remapped one to one
    expect(
      mergeWgsl(source(256, 4), source(256).replace('(256)', '(16, 16)'), [1, 1, 1], [3, 1, 1], LIMITS)?.grid,
    ).toEqual([4, 1, 1]);
  });

  test('subgroup builtins: passed through from the merged entry point, the kernel at its own size', () => {
    const sub = layerNormRowsWgsl(true);
    const m = mergeWgsl(sub, sub, [4, 1, 1], [3, 1, 1], { ...LIMITS, maxStorageBuffersPerShaderStage: 12 });
    expect(m).not.toBeNull();
    expect(m!.code.match(/enable subgroups;/g)).toHaveLength(1);
    expect(m!.code).toMatch(/@builtin\(subgroup_invocation_id\) mx_sgi: u32/);
    expect(m!.code.match(/m[01]_main\([^;]*?mx_sgi\);/g)).toHaveLength(2);
    // a kernel that names subgroup_invocation_id keeps its own size (64): a 128 kernel beside it is remapped
    const named = source(64).replace(/fn main\(/, 'fn main(@builtin(subgroup_invocation_id) s: u32, ');
    const r = mergeWgsl(`enable subgroups;\n${named}`, source(128), [1, 1, 1], [1, 1, 1], LIMITS);
    expect(r!.code).toMatch(/@workgroup_size\(64, 1, 1\) fn main/);
    expect(r!.grid).toEqual([3, 1, 1]);
  });

  test('refused: sizes both kernels need, sizes that do not divide, an override, past the limits', () => {
    expect(mergeWgsl(source(64, 4), source(128, 4), [1, 1, 1], [1, 1, 1], LIMITS)).toBeNull();
    const barrier = source(128).replace('if (i32', 'workgroupBarrier();\n  if (i32');
    expect(mergeWgsl(source(64, 4), barrier, [1, 1, 1], [1, 1, 1], LIMITS)).toBeNull();
    expect(mergeWgsl(source(64), source(96), [1, 1, 1], [1, 1, 1], LIMITS)).toBeNull();
    expect(mergeWgsl(`override K = 4;\n${source()}`, source(), [1, 1, 1], [1, 1, 1], LIMITS)).toBeNull();
    // 2 × 600 vec4 (9600 bytes each) pass 16384 bytes together; each alone fits
    expect(mergeWgsl(source(64, 600), source(64, 100), [1, 1, 1], [1, 1, 1], LIMITS)).not.toBeNull();
    expect(mergeWgsl(source(64, 600), source(64, 600), [1, 1, 1], [1, 1, 1], LIMITS)).toBeNull();
    const few = { ...LIMITS, maxStorageBuffersPerShaderStage: 3 };
    expect(mergeWgsl(source(), source(), [1, 1, 1], [1, 1, 1], few)).toBeNull();
    const narrow = { ...LIMITS, maxComputeWorkgroupsPerDimension: 10 };
    expect(mergeWgsl(source(), source(), [8, 1, 1], [7, 1, 1], narrow)?.grid).toEqual([10, 2, 1]);
  });
});

describe('which kernels of a recording merge', () => {
  /** A recording of kernels over buffers named by letters: [reads, writes] each; '|' is a copy. */
  function plan(kernels: (readonly [string, string] | '|')[], live: number[] = []): number[] {
    const bufs = new Map<string, GPUBuffer>();
    const buf = (c: string): GPUBuffer => bufs.get(c) ?? bufs.set(c, { label: c } as GPUBuffer).get(c)!;
    const rec = new Recorder();
    for (const k of kernels) {
      if (k === '|') rec.copy(buf('y'), buf('z'), 4);
      else {
        const pipe = {} as GPUComputePipeline;
        const layout = {} as GPUBindGroupLayout;
        rec.dispatch(pipe, layout, 16, 0, [buf(k[0]), buf(k[1])], [1, 1, 1], [false, true], 'k', () => source());
      }
    }
    for (const step of live) rec.patches.push({ step, params: () => ({ params: [] }) });
    const pipelines = {
      pipeline: (_key: string, code: () => string) => ({ pipe: {}, layout: {}, writes: code() && [false, true] }),
    } as unknown as PipelineCache;
    mergePlan(rec, { pipelines, limits: LIMITS, stats: { merged: 0 } });
    return rec.steps.map((s) => ((s as KernelStep).parts ?? [s]).length * ('pipe' in s ? 1 : -1));
  }

  test('independent kernels merge; a copy between them does not', () => {
    expect(
      plan([
        ['a', 'b'],
        ['a', 'c'],
        ['d', 'e'],
      ]),
    ).toEqual([3]);
    expect(plan([['a', 'b'], '|', ['a', 'c']])).toEqual([1, -1, 1]);
  });

  test('RAW, WAR and WAW dependencies refuse the merge', () => {
    expect(
      plan([
        ['a', 'b'],
        ['b', 'c'],
      ]),
    ).toEqual([1, 1]); // reads what the first wrote
    expect(
      plan([
        ['a', 'b'],
        ['c', 'a'],
      ]),
    ).toEqual([1, 1]); // writes what the first read
    expect(
      plan([
        ['a', 'b'],
        ['c', 'b'],
      ]),
    ).toEqual([1, 1]); // writes what the first wrote
    expect(
      plan([
        ['a', 'b'],
        ['c', 'd'],
        ['d', 'e'],
      ]),
    ).toEqual([2, 1]); // the third depends on the second
  });

  test('a live kernel (params a replay recomputes) is left alone', () => {
    expect(
      plan(
        [
          ['a', 'b'],
          ['c', 'd'],
          ['e', 'f'],
        ],
        [1],
      ),
    ).toEqual([1, 1, 1]);
  });
});
