// The wasm backend's memory: freed blocks reused for any size (coalescing allocator), an honest
// memoryAvailable(), unsigned addresses above 2 GiB, worker failures as typed errors, reductions over
// broadcast views of 2^31 elements and more.
import { describe, expect, test } from '@jest/globals';
import { InvalidArgumentError, OutOfMemoryError, PolyHalError } from '@polyhal/hal';
import { createWasmBackend, type WasmBackend, WasmKernelError } from '@polyhal/backend-wasm';
import { WasmHeap } from '../../backends/wasm/src/memory.js';

const GiB = 2 ** 30;

/** Runs `fn` on a fresh backend of `threads` threads and disposes of it. */
async function withBackend(
  threads: number,
  options: Record<string, unknown>,
  fn: (be: WasmBackend) => Promise<void>,
): Promise<void> {
  const be = await createWasmBackend({ threads, ...options });
  try {
    await fn(be);
  } finally {
    be.dispose();
  }
}

describe('WasmHeap (coalescing allocator)', () => {
  test(
    'random alloc/free: blocks never overlap, stay 16-byte aligned, and freeing everything ' +
      'returns the heap to its base',
    () => {
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 4096 });
      const heap = new WasmHeap(memory, 1000, 'test', 4096 * 65536);
      const base = heap.reserved;
      let seed = 7;
      const rand = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
      const live = new Map<number, number>(); // ptr → bytes
      const overlaps = (p: number, n: number): boolean =>
        [...live].some(([q, m]) => p < q + WasmHeap.blockSize(m) && q < p + WasmHeap.blockSize(n));
      for (let step = 0; step < 4000; step++) {
        if (live.size > 0 && (rand() < 0.5 || live.size > 60)) {
          const ptrs = [...live.keys()];
          const p = ptrs[Math.floor(rand() * ptrs.length)]!;
          heap.release(p, live.get(p)!);
          live.delete(p);
        } else {
          const bytes = 1 + Math.floor(rand() ** 3 * 200_000);
          const p = heap.alloc(bytes);
          expect(p % 16).toBe(0);
          expect(p).toBeGreaterThanOrEqual(base);
          expect(p + bytes).toBeLessThanOrEqual(memory.buffer.byteLength);
          expect(overlaps(p, bytes)).toBe(false);
          live.set(p, bytes);
        }
      }
      for (const [p, n] of live) heap.release(p, n);
      expect(heap.reserved).toBe(base);
      expect(heap.freeBlocks).toEqual({ count: 0, bytes: 0 });
      expect(heap.largestAllocatable()).toBe(4096 * 65536 - base);
    },
  );

  test('a freed block serves a smaller request of another size, and neighbours merge into one block', () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 4096 });
    const heap = new WasmHeap(memory, 0, 'test', 4096 * 65536);
    const [a, b, c, pin] = [heap.alloc(1 << 20), heap.alloc(1 << 20), heap.alloc(1 << 20), heap.alloc(16)];
    const grown = memory.buffer.byteLength;
    heap.release(a, 1 << 20);
    heap.release(c, 1 << 20);
    heap.release(b, 1 << 20);
    expect(heap.alloc(3 << 20)).toBe(a); // a, b and c merged
    heap.release(a, 3 << 20);
    expect(heap.freeBlocks).toEqual({ count: 1, bytes: 3 << 20 }); // consolidated (quick lists merged)
    expect(heap.alloc(12345)).toBe(a); // split
    expect(heap.alloc(2 << 20)).toBe(a + 12352);
    expect(memory.buffer.byteLength).toBe(grown);
    expect(pin).toBe(3 << 20);
  });
});

describe.each([1, 2])('wasm memory, %i thread(s)', (threads) => {
  test(
    'freed blocks are reused for other sizes: [16, L, 256] arrays for L = 1..512, twice, all ' + 'freed each step',
    async () => {
      await withBackend(threads, {}, async (be) => {
        let peak = 0;
        for (let pass = 0; pass < 2; pass++) {
          for (let L = 1; L <= 512; L++) {
            const x = be.full([16, L, 256], 1);
            const y = be.add(x, x);
            be.free(x);
            be.free(y);
            peak = Math.max(peak, be.reservedBytes);
          }
        }
        expect(be.liveBufferCount()).toBe(0);
        // The largest step holds 2 × 8 MiB: the heap never needs much more, and gives it all back.
        expect(peak).toBeLessThan(40 * 2 ** 20);
        expect(be.reservedBytes).toBeLessThan(65536);
        expect(be.memoryAvailable()).toBe(2 ** 31);
      });
    },
  );

  test("memoryAvailable() is what one allocation can really get, bounded by the memory's maximum", async () => {
    await withBackend(threads, { memoryLimit: 2 ** 33 }, async (be) => {
      const avail = be.memoryAvailable();
      expect(avail).toBeLessThanOrEqual(4 * GiB);
      expect(avail).toBeGreaterThan(2 * GiB - 2 ** 20); // 2 GiB shared memories where 4 GiB cannot be reserved
      const hole = be.allocate(2 ** 24); // 64 MiB, then a small block above it, then the hole is freed
      const pin = be.allocate(4);
      be.deallocate(hole);
      // leaves the 64 MiB hole the largest block
      const rest = be.allocate(Math.floor((be.memoryAvailable() - 64 * 2 ** 20) / 4));
      expect(be.memoryAvailable()).toBe(2 ** 26);
      let err: unknown;
      try {
        be.allocate(2 ** 24 + 4);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OutOfMemoryError);
      expect((err as OutOfMemoryError).availableBytes).toBe(2 ** 26);
      const fits = be.allocate(2 ** 24); // the hole
      for (const b of [pin, rest, fits]) be.deallocate(b);
      expect(be.liveBufferCount()).toBe(0);
    });
  });

  test('addresses above 2 GiB are unsigned end to end: read, write, fromArray, ops, matmul', async () => {
    await withBackend(threads, { memoryLimit: 4 * GiB }, async (be) => {
      // The sequence: a freed 1.6 GB block, then a 600 MB one.
      be.deallocate(be.allocate(4e8));
      const mid = be.allocate(1.5e8);
      expect(Array.from(await be.read(be.full([4], 7)))).toEqual([7, 7, 7, 7]);
      // Push the heap's top past 2 GiB (pages are never touched), then work above it.
      const low = be.allocate(4e8 - 1.5e8);
      const high = be.allocate(1.5e8);
      const a = be.fromArray([1, 2, 3, 4, 5, 6], [2, 3]);
      const b = be.fromArray([1, 0, 0, 1, 1, 1], [3, 2]);
      expect(Array.from(await be.read(a))).toEqual([1, 2, 3, 4, 5, 6]);
      expect(Array.from(be.readSync(be.add(a, a)))).toEqual([2, 4, 6, 8, 10, 12]);
      expect(Array.from(await be.read(be.matmul(a, b)))).toEqual([4, 5, 10, 11]);
      expect(Array.from(await be.read(be.sum(a, 1)))).toEqual([6, 15]);
      expect(Array.from(await be.read(be.contiguous(be.permute(a, [1, 0]))))).toEqual([1, 4, 2, 5, 3, 6]);
      const big = be.full([1 << 19], 3); // split across threads (2^18 elements and more)
      expect(Array.from(await be.read(be.sum(be.mul(big, big))))).toEqual([9 * (1 << 19)]);
      const i = be.fromArray([5, -6], [2], 'int32');
      expect(Array.from(await be.read(be.neg(i)))).toEqual([-5, 6]);
      for (const x of [mid, low, high]) be.deallocate(x);
    });
  });
});

describe('wasm worker failures are typed errors on the calling thread, never a hang', () => {
  interface Pool {
    run(kernel: string, parts: number[][], local: (part: number[]) => void): void;
    liveWorkers: number;
    workers: { terminate(): unknown }[];
  }
  const poolOf = (be: WasmBackend): Pool => (be as unknown as { pool: Pool }).pool;
  // unaryI32(op, n, rows, x, xStarts, xStep, out) with its row starts past the end of memory: a trap.
  const trap = [0, 4, 1, 0, 0xfffffff0, 1, 0];

  test(
    'a kernel that traps on a worker throws WasmKernelError naming the kernel, the worker and the ' +
      'trap; the pool keeps working',
    async () => {
      await withBackend(2, { elementwiseThreadThreshold: 1 }, async (be) => {
        let err: unknown;
        try {
          poolOf(be).run('unaryI32', [[], trap], () => undefined);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(WasmKernelError);
        expect(err).toBeInstanceOf(PolyHalError);
        expect(err).toMatchObject({ kernel: 'unaryI32', thread: 1 });
        expect((err as Error).message).toMatch(/out of bounds/);
        const x = be.fromArray(
          Array.from({ length: 1000 }, (_, i) => i),
          [1000],
        );
        expect(Array.from(await be.read(be.neg(x)))).toEqual(Array.from({ length: 1000 }, (_, i) => -i));
        expect(poolOf(be).liveWorkers).toBe(1);
      });
    },
  );

  test("a trap on the calling thread also throws WasmKernelError, after the workers' parts have ended", async () => {
    await withBackend(2, {}, async (be) => {
      const k = (be as unknown as { k: { unaryI32(...a: number[]): void } }).k;
      expect(() => poolOf(be).run('unaryI32', [trap, trap], (p) => k.unaryI32(...p))).toThrow(WasmKernelError);
    });
  });

  test('a worker that died: its parts run on the calling thread and results stay right', async () => {
    await withBackend(2, { elementwiseThreadThreshold: 1, threadThreshold: 1 }, async (be) => {
      const pool = poolOf(be);
      await pool.workers[0]!.terminate();
      for (let i = 0; i < 100 && pool.liveWorkers > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(pool.liveWorkers).toBe(0);
      const n = 100_003;
      const x = be.fromArray(
        Array.from({ length: n }, (_, i) => i % 7),
        [n],
      );
      expect(Array.from(await be.read(be.sum(be.add(x, x))))).toEqual([
        2 * Array.from({ length: n }, (_, i) => i % 7).reduce((p, v) => p + v, 0),
      ]);
      const a = be.fromArray(
        Array.from({ length: 64 * 64 }, (_, i) => (i % 5) - 2),
        [64, 64],
      );
      const want = Array.from(await be.read(be.matmul(be.contiguous(a), a)));
      expect(want.length).toBe(64 * 64);
      expect(Array.from(await be.read(be.matmul(a, a)))).toEqual(want);
    });
  });
});

describe('hand-built NDArrays are bounds-checked against their buffer before a wasm kernel sees them', () => {
  test.each([
    ['offset past the end', { shape: [4], strides: [1], offset: 1 }],
    ['strides past the end', { shape: [2, 2], strides: [4, 1], offset: 0 }],
    ['a negative offset', { shape: [2], strides: [1], offset: -1 }],
    ['a negative stride reaching below 0', { shape: [3], strides: [-1], offset: 1 }],
    ['a broadcast over a huge offset', { shape: [65536, 65536], strides: [0, 0], offset: 2 ** 31 }],
  ])('%s: InvalidArgumentError, nothing allocated', async (_, view) => {
    await withBackend(1, {}, async (be) => {
      const x = be.fromArray([1, 2, 3, 4], [4]);
      const bad = { ...x, ...view };
      const live = be.liveBufferCount();
      for (const op of [
        () => be.sum(bad),
        () => be.neg(bad),
        () => be.add(bad, 1),
        () => be.contiguous(bad),
        () => be.readSync(bad),
      ]) {
        expect(op).toThrow(InvalidArgumentError);
      }
      if (bad.shape.length === 2) expect(() => be.matmul(bad, bad)).toThrow(InvalidArgumentError);
      expect(be.liveBufferCount()).toBe(live);
    });
  });
});

describe('reductions over broadcast views of 2^31 elements and more', () => {
  test.each([1, 2])(
    'sum, max, min and prod of expand(full([1, 1]), [65536, 65536]) and friends are right (%i thread(s))',
    async (threads) => {
      await withBackend(threads, {}, async (be) => {
        const one = be.full([1, 1], 1);
        const big = be.expand(one, [65536, 65536]); // 2^32 elements
        const read1 = async (x: ReturnType<typeof be.sum>): Promise<number> => (await be.read(x))[0]!;
        expect(await read1(be.sum(big))).toBe(2 ** 32);
        expect(await read1(be.max(big))).toBe(1);
        expect(await read1(be.mean(big))).toBe(1);
        expect(Array.from(await be.read(be.sum(big, 1))).every((v) => v === 65536)).toBe(true);
        // A real axis under a broadcast one: [3] values, each repeated 2^31 times.
        const v = be.fromArray([1, -2, 0.5], [1, 3]);
        const wide = be.expand(v, [2 ** 31, 3]);
        expect(Array.from(await be.read(be.sum(wide)))).toEqual([-0.5 * 2 ** 31]);
        expect(Array.from(await be.read(be.sum(wide, 0)))).toEqual([2 ** 31, -(2 ** 32), 2 ** 30]);
        expect(Array.from(await be.read(be.max(wide, 0)))).toEqual([1, -2, 0.5]);
        // int32 sums wrap modulo 2^32, as repeated addition would.
        const i = be.expand(be.full([1, 1], 3, 'int32'), [65536, 65537]);
        expect(Array.from(await be.read(be.sum(i)))).toEqual([((3 * 65536 * 65537) % 2 ** 32) | 0]);
        expect(Array.from(await be.read(be.max(i)))).toEqual([3]);
        expect(Array.from(await be.read(be.min(i)))).toEqual([3]);
        // min and prod: prod repeats by powers (int32 modulo 2^32, by BigInt here)
        expect(Array.from(await be.read(be.min(wide, 0)))).toEqual([1, -2, 0.5]);
        const signs = be.expand(be.fromArray([1, -1, 0.5, -1], [1, 4]), [2 ** 31 + 1, 4]);
        expect(Array.from(await be.read(be.prod(signs, 0)))).toEqual([1, -1, 0, -1]);
        const modPow = (b: bigint, e: bigint): number => {
          let r = 1n;
          for (let x = b % 2n ** 32n; e > 0n; e >>= 1n, x = (x * x) % 2n ** 32n) if (e & 1n) r = (r * x) % 2n ** 32n;
          return Number(BigInt.asIntN(32, r));
        };
        const n = 65536n * 65537n;
        expect(Array.from(await be.read(be.prod(i)))).toEqual([modPow(3n, n)]);
        const seven = be.expand(be.full([1, 1], 7, 'int32'), [3, 2 ** 31 + 5]);
        expect(Array.from(await be.read(be.prod(seven, 1)))).toEqual(new Array(3).fill(modPow(7n, 2n ** 31n + 5n)));
        const two = be.expand(be.full([1, 1], 2, 'int32'), [65536, 65536]);
        expect(Array.from(await be.read(be.prod(two)))).toEqual([0]);
      });
    },
  );

  test(
    'a matmul whose inner dimension passes 2^31 (broadcast operands) is an InvalidArgumentError, ' +
      'not a wrong number',
    async () => {
      await withBackend(1, {}, async (be) => {
        const a = be.expand(be.full([1, 1], 1), [2, 2 ** 31]);
        const b = be.expand(be.full([1, 1], 1), [2 ** 31, 2]);
        const live = be.liveBufferCount();
        expect(() => be.matmul(a, b)).toThrow(InvalidArgumentError);
        expect(be.liveBufferCount()).toBe(live);
      });
    },
  );
});

describe('variable-size work reuses linear memory (WebAssembly memory cannot shrink)', () => {
  test.each([1, 2])(
    '300 steps of random [16, L, 256] arrays: the memory stays near the largest step, RSS does not ' +
      'climb (%i thread(s))',
    async (threads) => {
      await withBackend(threads, {}, async (be) => {
        const memory = (be as unknown as { heap: { memory: WebAssembly.Memory } }).heap.memory;
        const rss0 = process.memoryUsage().rss;
        let seed = 1;
        const rand = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
        for (let i = 0; i < 300; i++) {
          const x = be.full([16, 1 + Math.floor(rand() * 512), 256], 1);
          const y = be.relu(x);
          const z = be.sum(y, 1);
          for (const t of [x, y, z]) be.free(t);
        }
        expect(be.liveBufferCount()).toBe(0);
        expect(memory.buffer.byteLength).toBeLessThan(64 * 2 ** 20); // a step holds at most 2 × 8 MiB
        expect(process.memoryUsage().rss - rss0).toBeLessThan(256 * 2 ** 20);
      });
    },
  );
});
