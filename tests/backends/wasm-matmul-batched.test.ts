import { describe, expect, test } from '@jest/globals';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { expandView, mulberry32, type NDArray, permuteView, transposeView } from '@polyhal/hal';

type Backend = Awaited<ReturnType<typeof createWasmBackend>>;
type Fn = (...a: number[]) => unknown;
/** The dispatch's context as the backend holds it (the kernels and the pool, swapped here to count calls). */
type Ctx = { k: Record<string, unknown>; pool: { run: Fn } | null };

/** Counts the calls of every kernel export and of the pool's run (by kernel) while `fn` runs. */
async function counting<T>(be: Backend, fn: () => Promise<T>): Promise<{ value: T; calls: Record<string, number> }> {
  const ctx = (be as unknown as { ctx: Ctx }).ctx;
  const calls: Record<string, number> = {};
  const k = ctx.k;
  const counted: Record<string, unknown> = {};
  for (const [n, v] of Object.entries(k)) {
    counted[n] =
      typeof v === 'function'
        ? (...a: number[]) => {
            calls[n] = (calls[n] ?? 0) + 1;
            return (v as Fn).apply(k, a);
          }
        : v;
  }
  const run = ctx.pool?.run;
  ctx.k = counted;
  if (ctx.pool && run)
    ctx.pool.run = function (this: unknown, ...a: unknown[]) {
      calls[`run:${a[0]}`] = (calls[`run:${a[0]}`] ?? 0) + 1;
      return (run as (...x: unknown[]) => unknown).apply(this, a);
    } as Fn;
  try {
    return { value: await fn(), calls };
  } finally {
    ctx.k = k;
    if (ctx.pool && run) ctx.pool.run = run;
  }
}

const bits = (x: ArrayLike<number>): number[] => Array.from(new Uint32Array(Float32Array.from(x).buffer));

/** Item `t` (row-major over the batch dims) of a batched view, as a 2-D view of the same buffer and strides. */
function item(x: NDArray, t: number): NDArray {
  const r = x.shape.length;
  let offset = x.offset;
  for (let d = r - 3; d >= 0; d--) {
    offset += (t % x.shape[d]!) * x.strides[d]!;
    t = Math.floor(t / x.shape[d]!);
  }
  return { ...x, shape: x.shape.slice(-2), strides: x.strides.slice(-2), offset };
}

/** Element (i, j) of item t of a batched view, from the host copy `data` of its buffer. */
const at = (x: NDArray, data: Float32Array, t: number, i: number, j: number): number => {
  const v = item(x, t);
  return data[v.offset + i * v.strides[0]! + j * v.strides[1]!]!;
};

/** Batched operands: attention-like, permuted (two-level batch strides), transposed and broadcast (stride 0). */
function cases(be: Backend, rng: () => number): [string, NDArray, NDArray][] {
  const rand = (shape: number[]): NDArray =>
    be.fromArray(
      Array.from({ length: shape.reduce((p, d) => p * d, 1) }, () => rng() * 2 - 1),
      shape,
    );
  return [
    ['q·kᵀ [3, 4, 17, 16]', rand([3, 4, 17, 16]), transposeView(rand([3, 4, 17, 16]))],
    // [B, M, H, K] seen as [B, H, M, K]: batch strides that do not merge; B broadcast over the first batch dim
    [
      'permuted A, B [3, 5, 20] expanded',
      permuteView(rand([2, 7, 3, 5]), [0, 2, 1, 3]),
      expandView(rand([3, 5, 20]), [2, 3, 5, 20]),
    ],
    // K over one 256-deep block; A transposed (column stride M); B one matrix for every item (stride 0)
    ['transposed A, K = 300, B [300, 9]', transposeView(rand([4, 300, 13])), expandView(rand([300, 9]), [4, 300, 9])],
    ['A [1, 11, 24] broadcast, N = 33', expandView(rand([1, 11, 24]), [5, 11, 24]), rand([5, 24, 33])],
    // three batch dims, the outer two swapped: rows of the batch plan whose starts are not one stride apart
    ['three batch dims', permuteView(rand([3, 2, 2, 6, 8]), [1, 0, 2, 3, 4]), rand([2, 3, 2, 8, 7])],
  ];
}

describe('wasm batched matmul (gemmBatched)', () => {
  const title = 'is one WebAssembly call, bit-identical per item to a gemm call of that item, and near an f64 oracle';
  test(title, async () => {
    const be = await createWasmBackend({ threads: 1 });
    try {
      for (const [name, a, b] of cases(be, mulberry32(7))) {
        const r = a.shape.length;
        const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
        const items = a.shape.slice(0, -2).reduce((p, d) => p * d, 1);
        const { value: got, calls } = await counting(be, async () => Array.from(await be.read(be.matmul(a, b))));
        expect({ name, gemmBatched: calls['gemmBatched'], gemm: calls['gemm'] }).toEqual({
          name,
          gemmBatched: 1,
          gemm: undefined,
        });
        const [da, db] = [(await be.read(viewAll(a))) as Float32Array, (await be.read(viewAll(b))) as Float32Array];
        for (let t = 0; t < items; t++) {
          const one = await counting(be, async () => Array.from(await be.read(be.matmul(item(a, t), item(b, t)))));
          expect(one.calls['gemm']).toBe(1);
          expect({ name, t, bits: bits(got.slice(t * M * N, (t + 1) * M * N)) }).toEqual({
            name,
            t,
            bits: bits(one.value),
          });
          for (let i = 0; i < M; i++) {
            for (let j = 0; j < N; j++) {
              let [s, mag] = [0, 0];
              for (let q = 0; q < K; q++) {
                const p = at(a, da, t, i, q) * at(b, db, t, q, j);
                s += p;
                mag += Math.abs(p);
              }
              const g = got[(t * M + i) * N + j]!;
              if (!(Math.abs(g - s) <= 1e-6 * mag + 1e-30))
                throw new Error(`${name}: item ${t} (${i}, ${j}) ${g} vs ${s}`);
            }
          }
        }
      }
    } finally {
      be.dispose();
    }
  });

  test('items split across worker threads (one call per thread) give the bits of one thread', async () => {
    // each item (17·17·16 multiply-adds) below the threshold, the batch above it: the items are split, not the rows
    const mt = await createWasmBackend({ threads: 2, threadThreshold: 20_000 });
    const st = await createWasmBackend({ threads: 1 });
    try {
      expect(mt.threads).toBe(2);
      const run = async (be: Backend) => {
        const rng = mulberry32(3);
        const out: number[][] = [];
        for (const [, a, b] of cases(be, rng)) out.push(bits(await be.read(be.matmul(a, b))));
        const [a, b] = cases(be, rng)[0]!.slice(1) as NDArray[];
        return { out, split: await counting(be, async () => bits(await be.read(be.matmul(a!, b!)))) };
      };
      const [m, s] = [await run(mt), await run(st)];
      expect(m.out).toEqual(s.out);
      expect(m.split.value).toEqual(s.split.value);
      expect(m.split.calls['run:gemmBatched']).toBe(1);
      expect(m.split.calls['gemm']).toBeUndefined();
      expect(s.split.calls['gemmBatched']).toBe(1);
    } finally {
      mt.dispose();
      st.dispose();
    }
  });
});

/** The whole buffer of a view, flat (to read it back and index it by the view's offset and strides). */
function viewAll(x: NDArray): NDArray {
  return { ...x, shape: [x.buffer.size], strides: [1], offset: 0 };
}
