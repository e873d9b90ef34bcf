// The float16 tensor-core product's dispatches (backends/webgpu/src/dispatch-matmul-f16.ts, -split.ts, -pack.ts):
// packs, batch runs over the grid's z, split-K partials and their sum, crops. lavapipe has no subgroup matrices, so
// each dispatch of the tensor-core kernel runs here as a plain WGSL kernel written from the kernel's documented
// contract (kernels/subgroup-matrix-gemm.ts, matmul-subgroup-matrix-f16.ts): workgroup (x, y, z) computes C's tile
// (y, x) of item z, item z = io·p12 + ii reading A from p3 + 13·io + 6·ii halves and B from p4 + 14·io + 7·ii,
// rows of A Kp = 2·p10 apart and of B and C Np = p11, C from (direct: p5) + 8·z, over K to Kp or, split, to
// min(p15, Kp − ii·p15); float32 accumulation of exact products of halves, as the tensor cores. Everything else
// runs as the backend encodes it. Each result is checked against a float64 oracle on the operands' float16
// values, within the float32 accumulation bound K·2^-24·Σ|a||b|. The kernel itself ran on an H200
// (benches/probes/gpu-conformance.ts: the float16 matmul cases, unsplit and split-K 3; webgpu-f16-splitk.ts).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type DeviceBuffer, type NDArray, transposeView, viewOf } from '@polyhal/hal';
import { dispatchHalfMatmul, type HalfMatmulContext } from '../../backends/webgpu/src/dispatch-matmul-f16.js';
import {
  HALF_SGM_LARGE,
  HALF_SGM_MEDIUM,
  HALF_SGM_SMALL,
} from '../../backends/webgpu/src/kernels/matmul-subgroup-matrix-f16.js';

type Dispatch = (
  op: string,
  key: string,
  src: () => string,
  words: number,
  params: number[],
  buffers: GPUBuffer[],
  groups: number[],
  flops?: number,
) => void;

const TILES = { large: HALF_SGM_LARGE, medium: HALF_SGM_MEDIUM, small: HALF_SGM_SMALL };

/** The tensor-core kernel's contract as a plain kernel: one invocation per output element of the tile. */
function emulated(rows: number, cols: number, direct: boolean, split: boolean): string {
  const words = split ? 16 : 15;
  return `@group(0) @binding(0) var<uniform> P: array<vec4<i32>, ${Math.ceil(words / 4)}>;
fn p(i: u32) -> i32 { return P[i / 4u][i % 4u]; }
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
fn half(x: ptr<storage, array<u32>, read>, e: u32) -> f32 { return unpack2x16float((*x)[e >> 1u])[e & 1u]; }
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let item = wg.z; let io = item / u32(p(12u)); let ii = item % u32(p(12u));
  let oa = u32(p(3u)) + io * u32(p(13u)) + ii * u32(p(6u));
  let ob = u32(p(4u)) + io * u32(p(14u)) + ii * u32(p(7u));
  let kp = u32(p(10u)) * 2u; let np = u32(p(11u));
  let base = ${direct ? 'u32(p(5u))' : '0u'} + item * u32(p(8u));
  let kl = ${split ? 'min(u32(p(15u)), kp - ii * u32(p(15u)))' : 'kp'};
  for (var e = t; e < ${rows * cols}u; e += 128u) {
    let i = wg.y * ${rows}u + e / ${cols}u; let j = wg.x * ${cols}u + e % ${cols}u;
    var acc = 0.0;
    for (var k = 0u; k < kl; k++) { acc += half(&a, oa + i * kp + k) * half(&b, ob + k * np + j); }
    c[base + i * np + j] = acc;
  }
}`;
}

let be: WebGpuBackend;
let base: HalfMatmulContext;
beforeAll(async () => {
  be = await createWebGpuBackend();
  base = (be as unknown as { contexts: { halfMatmul: HalfMatmulContext } }).contexts.halfMatmul;
});
afterAll(() => be?.dispose());

/** A context on which every float16 product takes the (emulated) tensor cores; `keys` collects its dispatches. */
function context(forcedSplitK: number | null, keys: string[]): HalfMatmulContext {
  const real = base.batch.dispatch.bind(base.batch) as Dispatch;
  const dispatch: Dispatch = (op, key, src, words, params, buffers, groups, flops) => {
    keys.push(key);
    const m = /^matmul\/f16-subgroup-matrix\/(\w+)(\/direct)?(\/split)?/.exec(key);
    if (!m) return real(op, key, src, words, params, buffers, groups, flops);
    const t = TILES[m[1] as keyof typeof TILES];
    const [direct, split] = [!!m[2], !!m[3]];
    const k = `test/emulated-f16-product/${t.name}/${direct}/${split}`;
    real(op, k, () => emulated(t.rows, t.cols, direct, split), words, params, buffers, groups, flops);
  };
  return { ...base, mode: 'always', forcedSplitK, batch: { ...base.batch, dispatch } as unknown as typeof base.batch };
}

const values = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => {
    const u = Math.sin((i + 1) * 12.9898 + seed * 78.233) * 43758.5453;
    return (u - Math.floor(u)) * 2 - 1;
  });

/**
 * a @ b through dispatchHalfMatmul on `ctx`, checked against the float64 oracle; `transposeA`: a is the transpose
 * view of an [.., K, M] array (a weight gradient's xᵀ). Returns the dispatched keys.
 */
async function check(sa: number[], sb: number[], forcedSplitK: number | null, transposeA = false): Promise<string[]> {
  const r = sa.length;
  const [M, K, N] = [sa[r - 2]!, sa[r - 1]!, sb[r - 1]!];
  const batch = sa.slice(0, -2).reduce((p, d) => p * d, 1);
  const stored = transposeA ? [...sa.slice(0, -2), K, M] : sa;
  const x = be.fromArray(values(batch * M * K, M + K), stored, 'float16');
  const a: NDArray = transposeA ? transposeView(x) : x;
  const b = be.fromArray(values((sb.length > 2 ? batch : 1) * K * N, N + 7), sb, 'float16');
  const out: DeviceBuffer = be.allocate(batch * M * N, 'float32');
  const keys: string[] = [];
  dispatchHalfMatmul(context(forcedSplitK, keys), a, b, out);
  const got = (await be.read(viewOf(out, [batch * M * N]))) as Float32Array;
  const [xh, bh] = [(await be.read(x)) as Float32Array, (await be.read(b)) as Float32Array];
  let worst = 0;
  for (let z = 0; z < batch; z++)
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let [s, bound] = [0, 0];
        for (let k = 0; k < K; k++) {
          const av = transposeA ? xh[z * M * K + k * M + i]! : xh[z * M * K + i * K + k]!;
          const p = av * bh[(sb.length > 2 ? z : 0) * K * N + k * N + j]!;
          s += p;
          bound += Math.abs(p);
        }
        worst = Math.max(worst, Math.abs(got[z * M * N + i * N + j]! - s) / (K * 2 ** -24 * bound + 1e-30));
      }
  be.free(x);
  be.free(b);
  be.deallocate(out);
  expect(worst).toBeLessThanOrEqual(1);
  return keys;
}

const count = (keys: string[], part: string): number => keys.filter((k) => k.includes(part)).length;

describe('float16 tensor-core product plan (the product emulated)', () => {
  test('a weight gradient xᵀ·g over a long K splits by itself: partials over z, one sum', async () => {
    // [64, 1024]ᵀ-view · [1024, 128]: one 64×128 tile, K 1024 → 2 splits of 512
    const keys = await check([64, 1024], [1024, 128], null, true);
    expect(count(keys, '/direct/split')).toBe(1);
    expect(count(keys, 'matmul/splitk-sum')).toBe(1);
    expect(count(keys, 'matmul/pack-f16-t')).toBe(1); // the transposed A through blocks; B read where it is
    expect(keys.length).toBe(3);
  });
  test.each([3, 5, 19, 1000])('split-K forced to %i: uneven last split, clamped to one slab per split', async (s) => {
    const keys = await check([64, 600], [600, 128], s, true);
    expect(count(keys, '/direct/split')).toBe(1);
    expect(count(keys, 'matmul/splitk-sum')).toBe(1);
  });
  test('split-K 1 keeps one product and no sum', async () => {
    const keys = await check([64, 1024], [1024, 128], 1, true);
    expect(count(keys, '/direct/split')).toBe(0);
    expect(count(keys, 'matmul/splitk-sum')).toBe(0);
  });
  test('a product that crops or has a batch does not split', async () => {
    const keys = [...(await check([50, 700], [700, 70], 4)), ...(await check([2, 3, 64, 96], [2, 3, 96, 128], 4))];
    expect(count(keys, '/direct/split')).toBe(0);
    expect(count(keys, 'matmul/f16-crop')).toBe(1);
  });
  test('a short K where no tile divides: the least padded output ([197, 64]-like: 64×64, not 64×128)', async () => {
    const keys = await check([2, 3, 37, 100], [2, 3, 100, 64], null);
    expect(count(keys, 'matmul/f16-subgroup-matrix/small')).toBe(1);
    const square = await check([2, 37, 100], [2, 100, 200], null); // N padded to 256 by both: the larger tile
    expect(count(square, 'matmul/f16-subgroup-matrix/medium')).toBe(1);
  });
  test('attention-like batches: transposed operands packed per item over two levels', async () => {
    const keys = await check([2, 3, 37, 40], [2, 3, 40, 45], null, true);
    expect(count(keys, 'matmul/pack-f16-t')).toBe(1);
  });
});
