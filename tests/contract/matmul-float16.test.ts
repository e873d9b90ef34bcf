// matmul of float16 operands on every repo backend (cpu, wasm, webgpu) and reference: the operands' dtype
// as result (NumPy, PyTorch), each element the float32 sum of exact products rounded once to float16,
// against an independent float64 oracle: |got − round16(exact)| ≤ one float16 ulp + K·2^-24·Σ|a·b| (the
// float32 sum's bound). Mixed float16/float32 operands are a DTypeError naming both dtypes.
import { describe, expect, test } from '@jest/globals';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { type ComputeBackend, DTypeError, type NDArray } from '@polyhal/hal';
import { REPO_BACKENDS, openBackend } from '../support/backends.js';

/** `v` rounded to the nearest float16 (ties to even), written here from the format: 10 fraction bits, 2^-24. */
function round16(v: number): number {
  if (!Number.isFinite(v) || v === 0) return v;
  const a = Math.abs(v);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const ulp = 2 ** Math.max(e - 10, -24);
  let r = Math.floor(a / ulp);
  const f = a / ulp - r;
  if (f > 0.5 || (f === 0.5 && r % 2 === 1)) r++;
  const out = r * ulp;
  return Math.sign(v) * (out > 65504 ? Infinity : out);
}

/** One float16 ulp at the float16 `w`. */
const ulp16 = (w: number): number => 2 ** Math.max(Math.floor(Math.log2(Math.abs(w) || 2 ** -24)) - 10, -24);

/** Deterministic float16 values in [-1, 1) (a fixed linear congruence, rounded to float16). */
const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => round16((((i + 1) * 2654435761 + seed * 40503) >>> 0) / 2 ** 31 - 1));

/**
 * The float64 product of row-major a: [B, M, K] and b: [B, K, N] (batch B = 1 for 2-D) plus bias of
 * [B, M, N] (broadcast already), with Σ|terms| per element.
 */
function oracle(a: number[], b: number[], dims: [number, number, number, number], bias?: number[]) {
  const [B, M, K, N] = dims;
  const exact: number[] = [];
  const scale: number[] = [];
  for (let t = 0; t < B; t++)
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let s = 0;
        let m = 0;
        for (let k = 0; k < K; k++) {
          const p = a[t * M * K + i * K + k]! * b[t * K * N + k * N + j]!;
          s += p;
          m += Math.abs(p);
        }
        const c = bias?.[exact.length] ?? 0;
        exact.push(s + c);
        scale.push(m + Math.abs(c));
      }
  return { exact, scale };
}

/** The largest error over the allowed bound (≤ 1 passes): one float16 ulp + (K + 1)·2^-24·scale. */
function worst(got: ArrayLike<number>, want: { exact: number[]; scale: number[] }, K: number): number {
  expect(got.length).toBe(want.exact.length);
  let r = 0;
  for (let i = 0; i < got.length; i++) {
    const w = round16(want.exact[i]!);
    const g = got[i]!;
    if (!Number.isFinite(w)) {
      expect([i, g]).toEqual([i, w]);
      continue;
    }
    r = Math.max(r, Math.abs(g - w) / (ulp16(w) + (K + 1) * 2 ** -24 * want.scale[i]!));
  }
  return r;
}

const factories: Record<string, () => Promise<ComputeBackend>> = {
  ...REPO_BACKENDS,
  reference: async () => new ReferenceBackend(),
};

for (const [name, factory] of Object.entries(factories)) {
  describe(`float16 matmul on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => {
      be = b;
    });

    /** Runs `f` on arrays it creates, frees them all, and checks no buffer is left live. */
    const run = async <T>(f: (make: (x: NDArray) => NDArray) => Promise<T>): Promise<T> => {
      const live = be!.liveBufferCount();
      const made: NDArray[] = [];
      try {
        return await f((x) => {
          made.push(x);
          return x;
        });
      } finally {
        for (const x of made) be!.free(x);
        expect(be!.liveBufferCount()).toBe(live);
      }
    };
    const f16 = (make: (x: NDArray) => NDArray, data: number[], shape: number[]): NDArray =>
      make(be!.fromArray(data, shape, 'float16'));

    test('mixed float16 and float32 operands: DTypeError naming both dtypes; a float32 bias: DTypeError', () =>
      run(async (make) => {
        const h = f16(make, [1, 2, 3, 4], [2, 2]);
        const f = make(be!.fromArray([1, 2, 3, 4], [2, 2], 'float32'));
        for (const [x, y] of [
          [h, f],
          [f, h],
        ] as const) {
          expect(() => be!.matmul(x, y)).toThrow(DTypeError);
          expect(() => be!.matmul(x, y)).toThrow(/float16.*float32|float32.*float16/);
        }
        expect(() => be!.matmul(h, h, make(be!.fromArray([1, 2], [2], 'float32')))).toThrow(DTypeError);
      }));

    const cases: { a: number[]; b: number[]; tb?: boolean }[] = [
      { a: [1, 1], b: [1, 1] },
      { a: [3, 5], b: [5, 7] },
      { a: [17, 33], b: [33, 9] },
      { a: [64, 96], b: [96, 80] },
      { a: [2, 3, 5, 7], b: [7, 4] },
      { a: [9, 13], b: [11, 13], tb: true },
    ];
    for (const { a: sa, b: sb, tb } of cases)
      test(`[${sa}]·[${sb}]${tb ? 'ᵀ' : ''} is float16 within one float16 ulp + K·2^-24·Σ|a·b|`, () =>
        run(async (make) => {
          const [M, K] = [sa.at(-2)!, sa.at(-1)!];
          const N = tb ? sb[0]! : sb[1]!;
          const da = values(
            sa.reduce((p, d) => p * d, 1),
            1,
          );
          const db = values(
            sb.reduce((p, d) => p * d, 1),
            2,
          );
          const x = f16(make, da, sa);
          const y0 = f16(make, db, sb);
          const y = tb ? be!.permute(y0, [1, 0]) : y0;
          const out = make(be!.matmul(x, y));
          expect(out.dtype).toBe('float16');
          expect(out.shape).toEqual([...sa.slice(0, -2), M, N]);
          // b transposed on the host for the oracle; a's leading dims merge into M (b is 2-D)
          const hb = tb ? Array.from({ length: K * N }, (_, i) => db[(i % N) * K + Math.floor(i / N)]!) : db;
          const rows = da.length / K;
          const want = oracle(da, hb, [1, rows, K, N]);
          expect(worst(await be!.read(out), want, K)).toBeLessThanOrEqual(1);
        }));

    test('batched with broadcast: [2, 1, 4, 5]·[3, 5, 6] → [2, 3, 4, 6]', () =>
      run(async (make) => {
        const da = values(40, 3);
        const db = values(90, 4);
        const out = make(be!.matmul(f16(make, da, [2, 1, 4, 5]), f16(make, db, [3, 5, 6])));
        expect(out.shape).toEqual([2, 3, 4, 6]);
        // expand both to [2, 3, ...] on the host
        const ea = [0, 0, 0, 1, 1, 1].flatMap((t) => da.slice(t * 20, t * 20 + 20));
        const eb = [0, 1, 2, 0, 1, 2].flatMap((t) => db.slice(t * 30, t * 30 + 30));
        expect(worst(await be!.read(out), oracle(ea, eb, [6, 4, 5, 6]), 5)).toBeLessThanOrEqual(1);
      }));

    test('K = 0 gives float16 zeros; products past 65504 give ±Inf', () =>
      run(async (make) => {
        const z = make(be!.matmul(f16(make, [], [2, 0]), f16(make, [], [0, 3])));
        expect(z.dtype).toBe('float16');
        expect(Array.from(await be!.read(z))).toEqual([0, 0, 0, 0, 0, 0]);
        // 256·256 = 65536 rounds to Inf; 255·256 + 200·(-1) = 65080 stays finite (65088 in float16)
        const x = f16(make, [256, 0, 255, 200, -256, 0], [3, 2]);
        const y = f16(make, [256, -1], [2, 1]);
        expect(Array.from(await be!.read(make(be!.matmul(x, y))))).toEqual([Infinity, round16(65080), -Infinity]);
      }));

    test('a float16 bias: product + bias in float32, rounded once (not the product rounded, then the sum)', () =>
      run(async (make) => {
        // (1 + 2^-12) + 2^-11 = 1 + 3·2^-12 → 1 + 2^-10 once; rounding the product first gives 1 + 2^-11 → 1 (even)
        const x = f16(make, [1, 1], [1, 2]);
        const y = f16(make, [1, 2 ** -12], [2, 1]);
        const out = make(be!.matmul(x, y, f16(make, [2 ** -11], [1])));
        expect(out.dtype).toBe('float16');
        expect(Array.from(await be!.read(out))).toEqual([1 + 2 ** -10]);
        // a row bias on a batched, transposed product
        const da = values(3 * 17 * 9, 5);
        const db = values(5 * 9, 6);
        const dc = values(5, 7);
        const yt = be!.permute(f16(make, db, [5, 9]), [1, 0]);
        const r = make(be!.matmul(f16(make, da, [3, 17, 9]), yt, f16(make, dc, [5])));
        const hb = Array.from({ length: 45 }, (_, i) => db[(i % 5) * 9 + Math.floor(i / 5)]!);
        const bias = Array.from({ length: 3 * 17 * 5 }, (_, i) => dc[i % 5]!);
        expect(worst(await be!.read(r), oracle(da, hb, [1, 51, 9, 5], bias), 9)).toBeLessThanOrEqual(1);
      }));
  });
}
