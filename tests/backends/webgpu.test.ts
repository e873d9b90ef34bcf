import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { BackendUnavailableError, mulberry32, transposeView, UseAfterFreeError } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import {
  chooseSplitK,
  chooseTile,
  createWebGpuBackend,
  findGpu,
  GpuError,
  gemvSplitK,
  LONG_K,
  PACK_OPERANDS_FROM,
  TILES,
  type WebGpuBackend,
} from '@polyhal/backend-webgpu';
import { requiredBackends } from '../support/backends.js';

// WebGPU-specific behaviour beyond the shared conformance suite. Under CI=true a missing adapter fails here.
describe('webgpu backend', () => {
  let gpu: WebGpuBackend | undefined;
  let unavailable = '';
  beforeAll(async () => {
    try {
      gpu = await createWebGpuBackend();
    } catch (e) {
      unavailable = (e as Error).message;
    }
  });
  afterAll(() => gpu?.dispose());
  const need = (): WebGpuBackend => {
    if (!gpu && requiredBackends().includes('webgpu'))
      throw new Error(`webgpu is required here but unavailable: ${unavailable}`);
    expect(gpu ? 'adapter' : `no adapter: ${unavailable}`).toBe('adapter');
    return gpu!;
  };

  test('the adapter is described in deviceName', () => {
    const be = need();
    expect(be.deviceName.length).toBeGreaterThan(3);
    expect(be.deviceType).toBe('gpu');
  });

  test('Dawn flags given after a first backend get their own GPU object, one per set of flags', async () => {
    need();
    const plain = await findGpu();
    const unsafe = await findGpu({ dawnFlags: ['enable-dawn-features=allow_unsafe_apis'] });
    expect(unsafe).toBeDefined();
    expect(unsafe).not.toBe(plain);
    expect(await findGpu({ dawnFlags: ['enable-dawn-features=allow_unsafe_apis'] })).toBe(unsafe);
    const be = await createWebGpuBackend({ dawnFlags: ['enable-dawn-features=allow_unsafe_apis'] });
    try {
      expect(await be.read(be.add(be.fromArray([1, 2], [2]), be.fromArray([3, 4], [2])))).toEqual(
        Float32Array.from([4, 6]),
      );
    } finally {
      be.dispose();
    }
  });

  test.each(['auto', 'always'] as const)(
    'int8 products of strided views agree with the CPU (int8Packing %s)',
    async (int8Packing) => {
      need();
      const be = await createWebGpuBackend({ int8Packing });
      const cpu = new CpuBackend();
      const rng = mulberry32(9);
      for (const [M, K, N] of [
        [3, 131, 37],
        [40, 70, 45],
      ] as const) {
        const ints = (n: number) => Int8Array.from({ length: n }, () => Math.floor(rng() * 256) - 128);
        const [da, db] = [ints((M + 1) * K), ints(N * K)];
        const scales = Float32Array.from({ length: N }, () => rng() * 0.01);
        const bias = Float32Array.from({ length: N }, () => rng() - 0.5);
        const run = async (b: CpuBackend | WebGpuBackend): Promise<[Int32Array, Float32Array]> => {
          // a: rows 1..M of [M + 1, K] (an offset view); b: [N, K] transposed (K contiguous), as quantize() uses.
          const a = b.shrink(b.fromArray(da, [M + 1, K], 'int8'), [
            [1, M + 1],
            [0, K],
          ]);
          const w = b.permute(b.fromArray(db, [N, K], 'int8'), [1, 0]);
          const [sa, sb, c] = [b.full([], 0.5), b.fromArray(scales, [N]), b.fromArray(bias, [N])];
          const acc = (await b.read(b.matmulInteger(a, w))) as Int32Array;
          const y = (await b.read(b.matmulIntegerToFloat(a, w, sa, sb, undefined, undefined, c))) as Float32Array;
          return [acc, y];
        };
        const [[ga, gy], [ca, cy]] = [await run(be), await run(cpu)];
        expect(ga).toEqual(ca);
        // the GPU may fuse the multiply-add: within 4 ulp of |product| + |bias|
        gy.forEach((v, i) => expect(Math.abs(v - cy[i]!)).toBeLessThanOrEqual(4.8e-7 * (Math.abs(cy[i]!) + 1)));
      }
      cpu.dispose();
      be.dispose();
    },
  );

  test('int8 products on the register-blocked 128×128 dot4 kernel are exact', async () => {
    need();
    // 'auto' takes this kernel from 256 output tiles (dot4Tile, webgpu-int8-setup.test.ts); int8Tile forces
    // it here on a product small enough for lavapipe on a busy machine.
    const be = await createWebGpuBackend({ int8Tile: '128x128', int8Packing: 'always' });
    // 200 rows (1.6 tiles) and 300 columns (2.3 tiles): part tiles at both edges; K = 70 pads to 128.
    const [M, K, N] = [200, 70, 300];
    const rng = mulberry32(21);
    const ints = (n: number) => Int8Array.from({ length: n }, () => Math.floor(rng() * 256) - 128);
    const [da, db] = [ints(M * K), ints(K * N)];
    const bScale = Float32Array.from({ length: N }, () => 2 ** -Math.floor(rng() * 8));
    const bias = Float32Array.from({ length: N }, (_, n) => n - 1000);
    const [a, b] = [be.fromArray(da, [M, K], 'int8'), be.fromArray(db, [K, N], 'int8')];
    const got = (await be.read(be.matmulInteger(a, b))) as Int32Array;
    const scaled = (await be.read(
      be.matmulIntegerToFloat(
        a,
        b,
        be.full([], 0.25),
        be.fromArray(bScale, [N]),
        undefined,
        undefined,
        be.fromArray(bias, [N]),
      ),
    )) as Float32Array;
    // Host oracle: |sums| ≤ 70·128² < 2^21 and power-of-two scales, so the rescaled values are exact too.
    const row = new Int32Array(N);
    let wrong = 0;
    for (let m = 0; m < M; m++) {
      row.fill(0);
      for (let k = 0; k < K; k++) {
        const x = da[m * K + k]!;
        for (let n = 0; n < N; n++) row[n] = row[n]! + x * db[k * N + n]!;
      }
      for (let n = 0; n < N; n++) {
        if (got[m * N + n] !== row[n]) wrong++;
        if (scaled[m * N + n] !== Math.fround(row[n]! * 0.25 * bScale[n]! + bias[n]!)) wrong++;
      }
    }
    expect(wrong).toBe(0);
    be.dispose();
  });

  /**
   * Runs ragged, transposed, batched and broadcast matmuls on a backend made with `options` and on the CPU. A case:
   * [a's stored shape, b's, b as a transposed view, a as a transposed view, b broadcast over a's leading dim].
   */
  const matmulAgreesWithCpu = async (
    options: Parameters<typeof createWebGpuBackend>[0],
    only?: [number[], number[], boolean, boolean?, boolean?][],
  ): Promise<void> => {
    const be = await createWebGpuBackend(options);
    const cpu = new CpuBackend();
    try {
      const rng = mulberry32(5);
      const rand = (n: number): number[] => Array.from({ length: n }, () => rng() * 2 - 1);
      const cases: [number[], number[], boolean][] = [
        [[131, 70], [70, 197], false],
        [[2, 65, 33], [2, 129, 33], true],
        [[1, 1], [1, 130], false],
        [[3, 68, 36], [36, 132], false],
        [[2, 1, 40, 524], [3, 524, 72], false],
        [[64, 600], [600, 64], false],
        [[650, 36], [36, 260], false],
      ];
      for (const [sa, sb, tb, ta = false, broadcast = false] of only ?? cases) {
        const da = rand(sa.reduce((p, d) => p * d, 1));
        const db = rand(sb.reduce((p, d) => p * d, 1));
        const run = async (b: CpuBackend | WebGpuBackend): Promise<Float32Array> => {
          const x = b.fromArray(da, sa);
          const y = b.fromArray(db, sb);
          let yv = tb ? transposeView(y) : y;
          if (broadcast) yv = b.expand(yv, [sa[0]!, ...yv.shape]);
          const z = b.matmul(ta ? transposeView(x) : x, yv);
          const out = (await b.read(z)) as Float32Array;
          for (const t of [x, y, z]) b.free(t);
          return out;
        };
        const live = be.liveBufferCount();
        const [g, c] = [await run(be), await run(cpu)];
        expect(be.liveBufferCount()).toBe(live); // temporaries (packed operands, partial sums) given back
        expect(g.length).toBe(c.length);
        let worst = 0;
        g.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - c[i]!) / Math.max(1, Math.abs(c[i]!)))));
        expect(worst).toBeLessThan(1e-4);
      }
    } finally {
      be.dispose();
      cpu.dispose();
    }
  };

  test('large products of transposed views (xᵀ·g, g·Wᵀ, broadcast Wᵀ) run on packed copies, as the CPU', async () => {
    need();
    expect(256 * 512 * 256).toBe(PACK_OPERANDS_FROM);
    await matmulAgreesWithCpu({ matmulTile: 'large' }, [
      [[512, 256], [512, 256], false, true], // xᵀ·g: [256, 512]·[512, 256], PACK_OPERANDS_FROM multiply-adds
      [[256, 512], [256, 512], true], // g·Wᵀ
      [[2, 256, 256], [256, 256], true, false, true], // [2, 256, 256]·Wᵀ broadcast (stride 0 over the batch)
      [[512, 260], [512, 256], false, true], // 260 columns: xᵀ is [260, 512]
    ]);
  });

  test.each(['small', 'medium', 'wide', 'tall', 'large', 'large16', 'cols4', 'cols16', 'rows4', 'rows16'] as const)(
    'matmul tile %s matches the CPU on ragged, transposed and batched shapes',
    async (tile) => {
      need();
      await matmulAgreesWithCpu({ matmulTile: tile, matmulSplitK: 1 });
    },
  );

  test('matrix-vector shapes (N ≤ 4 or M ≤ 4 against ≥ 64) match the CPU, strided and batched', async () => {
    need();
    await matmulAgreesWithCpu({}, [
      [[200, 37], [37, 3], false],
      [[2, 130, 37], [2, 4, 37], true],
      [[25088 / 8, 400], [400, 1], false],
      [[2, 37], [37, 300], false],
      [[3, 1, 2, 37], [2, 300, 37], true],
      [[4, 64], [64, 64], false],
      [[1, 1], [1, 130], false],
    ]);
  });

  // Split-K on the matrix-vector kernels (a hardware adapter chooses it by gemvSplitK; forced here): K ranges per
  // split (empty ones where K is short), batch items, a transposed long-K operand (a weight gradient's xᵀ).
  test('matrix-vector shapes split over K match the CPU', async () => {
    need();
    for (const splitK of [3, 8])
      await matmulAgreesWithCpu({ matmulSplitK: splitK }, [
        [[200, 37], [37, 3], false],
        [[2, 130, 37], [2, 4, 37], true],
        [[3, 1, 2, 37], [2, 300, 37], true],
        [[1500, 96], [1500, 4], false, true], // [96, 1500]ᵀ·[1500, 4]
        [[4, 1500], [1500, 70], false],
      ]);
  });

  test('small outputs over a short K (batched attention) run on register blocks and match the CPU', async () => {
    need();
    await matmulAgreesWithCpu({}, [
      [[256, 17, 16], [256, 17, 16], true],
      [[64, 4, 17, 17], [64, 4, 17, 16], false],
      [[2, 3, 5, 7], [3, 7, 9], false],
      [[3, 1, 1], [3, 1, 1], false],
      [[5, 32, 200], [5, 32, 200], true],
      [[2, 2, 30], [30, 3], false],
    ]);
  });

  test('the automatic choice (register blocks on a software adapter) matches the CPU', async () => {
    need();
    await matmulAgreesWithCpu({});
  });

  // Split-K: K ranges per split (some empty when K is small), partial slices per batch item, the sum pass.
  test.each([
    ['tall', 2],
    ['large', 3],
    ['medium', 8],
    ['wide', 5],
    ['large16', 3],
    ['small', 3],
    ['cols4', 2],
    ['rows16', 5],
  ] as const)('matmul tile %s with split-K %i matches the CPU', async (tile, splitK) => {
    need();
    await matmulAgreesWithCpu({ matmulTile: tile, matmulSplitK: splitK });
  });

  test('split-K only when the output has too few tiles: ≥ 256 of K per split, ≥ 64 under 16 tiles', () => {
    expect(chooseSplitK(1024, 1024, 1024, 1, TILES.tall)).toBe(2);
    expect(chooseSplitK(1024, 1024, 1024, 1, TILES.large)).toBe(4);
    expect(chooseSplitK(4096, 4096, 4096, 1, TILES.large)).toBe(1);
    expect(chooseSplitK(64, 64, 64, 1, TILES.medium)).toBe(1);
    expect(chooseSplitK(64, 64, 8192, 1, TILES.medium)).toBe(32);
    expect(chooseSplitK(1024, 1024, 1024, 8, TILES.tall)).toBe(1);
    expect(chooseSplitK(16, 25, 4608, 1, TILES.small)).toBe(32);
    expect(chooseSplitK(64, 64, 1088, 1, TILES.medium)).toBe(16); // 1088 / 32 = 34 < 64: 16 splits of 68
    expect(chooseSplitK(64, 192, 1088, 1, TILES.medium)).toBe(16);
    expect(chooseSplitK(512, 512, 1088, 1, TILES.medium)).toBe(4); // 64 tiles: ≥ 256 deep
  });

  test('a long K over an output ≥ 128×128 with few tiles: 128×128 tiles, up to 32 splits toward 512 workgroups', () => {
    // a ViT-S block's weight gradients over 12,608 tokens: 9, 27 and 36 tiles of 128×128
    expect(chooseTile(384, 384, 1, 12608)).toBe(TILES.large);
    expect(chooseTile(1152, 384, 1, 12608)).toBe(TILES.large);
    expect(chooseTile(1536, 384, 1, 12608)).toBe(TILES.large);
    expect(chooseSplitK(384, 384, 12608, 1, TILES.large)).toBe(32); // 49152 / 32 = 394 ≥ 256 deep
    expect(chooseSplitK(1152, 384, 12608, 1, TILES.large)).toBe(32);
    expect(chooseSplitK(1536, 384, 12608, 1, TILES.large)).toBe(16); // 36 · 16 = 576 ≥ 512
    expect(chooseSplitK(384, 384, 4096, 1, TILES.large)).toBe(16); // 4096 / 16 = 256 deep: no 32
    // not below 128 on a side (a conv weight gradient [32, 288] over K = 50176 keeps its tile), not below LONG_K,
    // and not where the output already has minGroups tiles (2048²: 256 tiles, unsplit as before)
    expect(chooseTile(32, 288, 1, 50176)).not.toBe(TILES.large);
    expect(chooseTile(384, 384, 1, LONG_K - 1)).not.toBe(TILES.large);
    expect(chooseSplitK(2048, 2048, 2048, 1, TILES.large)).toBe(1);
    expect(chooseSplitK(1152, 384, LONG_K - 1, 1, TILES.large)).toBe(4); // below LONG_K: ≤ 8 splits ≥ 256 deep
  });

  test('skinny outputs get a tile of their width', () => {
    expect(chooseTile(25088, 1, 1)).toBe(TILES.cols4);
    expect(chooseTile(4608, 16, 1)).toBe(TILES.cols16);
    expect(chooseTile(1, 256, 1)).toBe(TILES.rows4);
    expect(chooseTile(16, 4096, 1)).toBe(TILES.rows16);
    expect(chooseTile(4096, 4096, 1)).toBe(TILES.large);
    expect(chooseTile(16, 25, 1)).toBe(TILES.small);
  });

  test('small outputs keep a small tile however large the batch (batched attention scores)', () => {
    expect(chooseTile(17, 17, 256)).toBe(TILES.small);
    expect(chooseTile(17, 16, 4096)).toBe(TILES.small);
    expect(chooseTile(64, 48, 1024)).toBe(TILES.medium);
    expect(chooseTile(65, 64, 1024)).toBe(TILES.tall); // 64 columns: a tile 64 wide, not 128
    expect(chooseTile(197, 64, 384)).toBe(TILES.tall); // attention's P·V, [64·6 heads, 197, 197]·[.., 197, 64]
    expect(chooseTile(64, 197, 384)).toBe(TILES.wide);
    expect(chooseTile(197, 197, 384)).toBe(TILES.large);
  });

  test('an output of under 64 workgroups of 64×64 takes 32×32 tiles (a large GPU would idle)', () => {
    expect(chooseTile(1088, 192, 1)).toBe(TILES.small); // 51 medium workgroups: 204 small ones
    expect(chooseTile(1088, 64, 1)).toBe(TILES.small); // 17 medium workgroups, 9 tall ones
    expect(chooseTile(1024, 1024, 1)).toBe(TILES.tall); // 128 workgroups of 128×64
    expect(chooseTile(512, 512, 1)).toBe(TILES.medium); // 64 medium workgroups
    expect(chooseTile(256, 256, 4)).toBe(TILES.medium);
    expect(chooseTile(256, 256, 1)).toBe(TILES.small);
    // over a long K, an output under 128 on a side keeps 64×64 tiles and split-K fills the GPU
    expect(chooseTile(384, 96, 1, 12608)).toBe(TILES.medium);
    expect(chooseSplitK(384, 96, 12608, 1, TILES.medium)).toBe(32);
    expect(chooseTile(1088, 192, 1, 64)).toBe(TILES.small);
    expect(chooseTile(1088, 192, 1, LONG_K - 1)).toBe(TILES.small);
  });

  test('matrix-vector products split over K while few invocations walk a long K', () => {
    expect(gemvSplitK(384, 12544)).toBe(64); // 64 splits of 196
    expect(gemvSplitK(384, 255)).toBe(1); // a split would walk under 128
    expect(gemvSplitK(384, 1024)).toBe(8); // 8 splits of 128
    expect(gemvSplitK(16384, 1 << 20)).toBe(1); // enough invocations
    expect(gemvSplitK(4096, 1 << 20)).toBe(4);
  });

  // Four outputs per invocation (kernels/elementwise-vec4.ts) where every operand runs along the innermost dim
  // or is broadcast across it; the other views take the one-per-invocation kernels. Both against the CPU.
  test('elementwise ops on vec4 and scalar layouts (broadcasts, offsets, int32, bool) match the CPU', async () => {
    const be = need();
    const cpu = new CpuBackend();
    try {
      const rng = mulberry32(9);
      const vals = (n: number, int: boolean): number[] =>
        Array.from({ length: n }, (_, i) =>
          int ? Math.floor(rng() * 200 - 100) : i % 13 === 5 ? NaN : i % 17 === 3 ? -Infinity : rng() * 8 - 4,
        );
      for (const int of [false, true]) {
        const dtype = int ? 'int32' : 'float32';
        const data = [vals(6 * 5 * 8, int), vals(6 * 5 * 8, int), vals(6 * 5, int), vals(8, int)];
        const run = async (b: CpuBackend | WebGpuBackend): Promise<number[][]> => {
          const [x, y, col, row] = [
            b.fromArray(data[0]!, [6, 5, 8], dtype),
            b.fromArray(data[1]!, [6, 5, 8], dtype),
            b.fromArray(data[2]!, [6, 5, 1], dtype),
            b.fromArray(data[3]!, [8], dtype),
          ];
          const aligned = b.shrink(x, [
            [1, 5],
            [0, 5],
            [0, 8],
          ]);
          const unaligned = b.shrink(y, [
            [0, 4],
            [0, 5],
            [1, 5],
          ]);
          const results = [
            b.add(x, y),
            b.mul(x, col),
            b.sub(row, x),
            b.maximum(
              aligned,
              b.shrink(y, [
                [2, 6],
                [0, 5],
                [0, 8],
              ]),
            ),
            b.add(unaligned, 1),
            b.less(x, col),
            b.mul(b.permute(x, [0, 2, 1]), 3),
            b.neg(aligned),
            b.abs(x),
            ...(int ? [] : [b.exp(b.mul(x, 0.25))]),
          ];
          const out = await Promise.all(results.map(async (r) => Array.from(await b.read(r))));
          for (const a of [x, y, col, row, ...results]) b.free(a);
          return out;
        };
        const [g, c] = [await run(be), await run(cpu)];
        g.forEach((r, k) =>
          r.forEach((v, i) => {
            const want = c[k]![i]!;
            if (Number.isNaN(want) || !Number.isFinite(want) || int) expect(v).toBe(want);
            else expect(Math.abs(v - want)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want)));
          }),
        );
      }
    } finally {
      cpu.dispose();
    }
  });

  // Errors that WebGPU reports only at encoder finish / submit (here: a buffer destroyed behind the
  // backend's back) must reach the caller as GpuError naming the ops, never as stale data.
  test.each(['op', 'batch'] as const)(
    'a submit-time validation error is a GpuError at the next read (errorScopes %s)',
    async (errorScopes) => {
      need();
      const be = await createWebGpuBackend({ errorScopes });
      try {
        const x = be.fromArray([1, 2, 3, 4], [4]);
        await be.read(be.add(x, 1));
        (be as unknown as { gpuBuffers: Map<number, GPUBuffer> }).gpuBuffers.get(x.buffer.id)!.destroy();
        const z = be.mul(x, 2);
        const err = await be.read(z).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(GpuError);
        expect((err as GpuError).kind).toBe('validation');
        expect((err as GpuError).op).toMatch(/mul/);
      } finally {
        be.dispose();
      }
    },
  );

  test('ops only enqueue; read and the async handle resolve after the queued work', async () => {
    const be = need();
    const x = be.fromArray([1, 2, 3, 4], [4]);
    let y = be.mul(x, 2);
    for (let i = 0; i < 200; i++) {
      // more than one submission batch
      const z = be.add(y, 1);
      be.free(y);
      y = z;
    }
    const h = be.readHandle(y);
    expect(typeof h.poll()).toBe('boolean');
    const data = await h.wait();
    expect(Array.from(data)).toEqual([202, 204, 206, 208]);
    expect(h.poll()).toBe(true);
    expect(Array.from(h.tryRecv()!)).toEqual([202, 204, 206, 208]);
    be.free(x);
    be.free(y);
  });

  test('freed buffers return to the pool and are reused', async () => {
    const be = need();
    await be.synchronize();
    const before = be.poolStats();
    for (let i = 0; i < 10; i++) be.free(be.full([1000], i));
    await be.synchronize();
    expect(be.poolStats().reused).toBeGreaterThan(before.reused);
  });

  test('by default freed buffers are kept while the live ones leave room under memoryLimit, and reused', async () => {
    need();
    const MiB = 2 ** 20;
    const be = await createWebGpuBackend({ memoryLimit: 32 * MiB });
    try {
      const base = be.poolStats();
      // a step's arrays: 16 + 8 + 8 MiB live, all freed at its end, all kept (a fixed 512 MiB cap kept them too;
      // a cap below a step's arrays made every step create them anew)
      const step = () => [
        be.allocate(4 * MiB, 'float32'),
        be.allocate(2 * MiB, 'float32'),
        be.allocate(2 * MiB, 'float32'),
      ];
      for (const b of step()) be.deallocate(b);
      expect(be.poolStats().pooledBytes - base.pooledBytes).toBe(32 * MiB);
      const created = be.poolStats().created;
      for (const b of step()) be.deallocate(b); // the next step: the same three, none created
      expect(be.poolStats().created).toBe(created);
      // a live array beside the pooled ones: what is kept never passes what memoryLimit leaves above it
      const live = be.allocate(4 * MiB, 'float32'); // reuses the 16 MiB buffer
      const extra = be.allocate(4 * MiB, 'float32'); // a new one
      be.deallocate(extra);
      expect(be.poolStats().pooledBytes).toBeLessThanOrEqual(32 * MiB - be.memoryStats().liveBytes);
      be.deallocate(live);
    } finally {
      be.dispose();
    }
  });

  test('a destroyed (lost) device makes every later call fail clearly, never return stale data', async () => {
    need();
    const be = await createWebGpuBackend();
    const x = be.fromArray([1, 2, 3], [3]);
    be.device.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(() => be.add(x, x)).toThrow(BackendUnavailableError);
    await expect(be.read(x)).rejects.toBeInstanceOf(BackendUnavailableError);
  });

  test('reading a freed buffer is a typed error', async () => {
    const be = need();
    const x = be.full([3], 1);
    be.free(x);
    await expect(be.read(x)).rejects.toBeInstanceOf(UseAfterFreeError);
  });
});
