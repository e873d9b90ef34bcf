// The wasm worker pool's queued jobs (backends/wasm/src/threads.ts runQueued): every part runs once, whichever
// thread claims it, with the claiming thread's own scratch argument; a trap is a WasmKernelError on the calling
// thread, never a hang; parts left by a dead worker run on the calling thread. Checked through conv (queued parts
// of its GEMM) against a float64 convolution written here, and through a kernel that writes its arguments.
import { expect, test } from '@jest/globals';
import { createWasmBackend, type WasmBackend, WasmKernelError } from '@polyhal/backend-wasm';

interface Pool {
  size: number;
  liveWorkers: number;
  workers: { terminate(): unknown }[];
  runQueued(
    kernel: string,
    parts: number[][],
    local: (part: number[]) => void,
    perThread?: { index: number; values: readonly number[] },
  ): void;
}
type Kernels = Record<string, (...args: number[]) => void>;
const poolOf = (be: WasmBackend): Pool => (be as unknown as { pool: Pool }).pool;
const kernelsOf = (be: WasmBackend): Kernels => (be as unknown as { k: Kernels }).k;

async function withBackend(fn: (be: WasmBackend) => Promise<void> | void): Promise<void> {
  const be = await createWasmBackend({ threads: 2, threadThreshold: 1 });
  try {
    await fn(be);
  } finally {
    be.dispose();
  }
}

/** float64 1×1 conv of x [C, P] with w [O, C]: y [O, P]. */
function conv1x1(x: Float32Array, w: Float32Array, C: number, O: number, P: number): Float64Array {
  const y = new Float64Array(O * P);
  for (let o = 0; o < O; o++)
    for (let c = 0; c < C; c++) for (let p = 0; p < P; p++) y[o * P + p] += w[o * C + c]! * x[c * P + p]!;
  return y;
}

test('every queued part runs, whichever thread claims it, with the claiming thread’s argument', async () => {
  await withBackend((be) => {
    const pool = poolOf(be);
    const k = kernelsOf(be);
    const ptr = (b: unknown): number => (be as unknown as { ptr(b: unknown): number }).ptr(b);
    // philoxF32(out, n, k0, k1, b0, b1, skip): part i writes 16 uniforms of stream block i at its own place; word 7
    // (a per-thread scratch pointer for other kernels, ignored by this one) is the claiming thread's value
    const [queued, direct] = [be.allocate(16 * 40, 'float32'), be.allocate(16 * 40, 'float32')];
    const part = (at: number, i: number): number[] => [at + 64 * i, 16, 7, 11, i, 0, 0, -1];
    let local = 0;
    pool.runQueued(
      'philoxF32',
      Array.from({ length: 40 }, (_, i) => part(ptr(queued), i)),
      (p) => {
        expect(p[7]).toBe(1000);
        local++;
        k.philoxF32!(...p);
      },
      { index: 7, values: [1000, 2000] },
    );
    for (let i = 0; i < 40; i++) k.philoxF32!(...part(ptr(direct), i));
    const [a, b] = [be.readSync(queued) as Float32Array, be.readSync(direct) as Float32Array];
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    expect(local).toBeLessThanOrEqual(40); // the worker may claim any number of them, all included
    be.deallocate(queued);
    be.deallocate(direct);
  });
});

test('perThread with fewer values than threads: only the threads with a value take parts', async () => {
  await withBackend((be) => {
    const k = kernelsOf(be);
    const ptr = (b: unknown): number => (be as unknown as { ptr(b: unknown): number }).ptr(b);
    const out = be.allocate(16 * 8, 'float32');
    let local = 0;
    poolOf(be).runQueued(
      'philoxF32',
      Array.from({ length: 8 }, (_, i) => [ptr(out) + 64 * i, 16, 1, 2, i, 0, 0, -1]),
      (p) => {
        local++;
        k.philoxF32!(...p);
      },
      { index: 7, values: [5] },
    );
    expect(local).toBe(8); // the worker has no value: every part on the calling thread
    be.deallocate(out);
  });
});

test('more parts than the queue holds: RangeError, nothing run', async () => {
  await withBackend((be) => {
    let ran = 0;
    expect(() =>
      poolOf(be).runQueued(
        'philoxF32',
        Array.from({ length: 65 }, () => [0, 0, 0]),
        () => ran++,
      ),
    ).toThrow(RangeError);
    expect(ran).toBe(0);
  });
});

test('a trap in a queued part throws WasmKernelError; the pool keeps working', async () => {
  await withBackend(async (be) => {
    // unaryI32(op, n, rows, x, xStarts, xStep, out) with its row starts past the end of memory: a trap
    const trap = [0, 4, 1, 0, 0xfffffff0, 1, 0];
    const k = kernelsOf(be);
    expect(() => poolOf(be).runQueued('unaryI32', [trap, trap, trap, trap], (p) => k.unaryI32!(...p))).toThrow(
      WasmKernelError,
    );
    const x = be.fromArray([1, 2, 3], [3]);
    expect(Array.from(await be.read(be.neg(x)))).toEqual([-1, -2, -3]);
  });
});

test('after a worker died, a conv’s queued parts all run on the calling thread and match float64', async () => {
  await withBackend(async (be) => {
    const pool = poolOf(be);
    await pool.workers[0]!.terminate();
    for (let i = 0; i < 500 && pool.liveWorkers > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(pool.liveWorkers).toBe(0);
    const [C, O, H, W] = [16, 24, 12, 40];
    const xd = Float32Array.from({ length: C * H * W }, (_, i) => Math.sin(i * 0.37));
    const wd = Float32Array.from({ length: O * C }, (_, i) => Math.cos(i * 0.11));
    const y = be.conv(be.fromArray(xd, [1, C, H, W]), be.fromArray(wd, [O, C, 1, 1]));
    const got = await be.read(y);
    const want = conv1x1(xd, wd, C, O, H * W);
    for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThan(1e-5);
  });
});
