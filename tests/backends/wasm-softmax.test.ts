// The wasm backend's fused softmax (backends/wasm/src/dispatch-softmax.ts, assembly/softmax.ts): which calls take
// the kernel (counted through its export), checked against a float64 softmax computed here; rows split across
// worker threads give one thread's bits; the calls it leaves to the HAL's composite (other axes, strided views,
// other dtypes) still run it, and bad arguments still throw the composite's typed errors.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createWasmBackend, type WasmBackend } from '@polyhal/backend-wasm';
import { InvalidArgumentError, type NDArray, permuteView, UnsupportedOpError } from '@polyhal/hal';

type Kernels = Record<string, (...args: number[]) => unknown>;
let be: WasmBackend;
let one: WasmBackend;
let calls = 0;

beforeAll(async () => {
  // two threads splitting every call, and one thread: the same bits
  be = await createWasmBackend({ threads: 2, elementwiseThreadThreshold: 1 });
  one = await createWasmBackend({ threads: 1 });
  for (const b of [be, one]) {
    const k = (b as unknown as { ctx: { k: Kernels } }).ctx.k;
    const kernel = k.softmaxF32!;
    k.softmaxF32 = (...args: number[]) => {
      calls++;
      return kernel(...args);
    };
  }
});
afterAll(() => {
  be.dispose();
  one.dispose();
});

const rand = (n: number, seed: number, scale: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * scale);

/** softmax over the last axis of rows of n, in float64. */
function oracle(x: ArrayLike<number>, n: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let r = 0; r < x.length / n; r++) {
    let m = -Infinity;
    for (let i = 0; i < n; i++) m = Number.isNaN(x[r * n + i]!) || x[r * n + i]! > m ? x[r * n + i]! : m;
    let s = 0;
    for (let i = 0; i < n; i++) s += Math.exp(x[r * n + i]! - m);
    for (let i = 0; i < n; i++) y[r * n + i] = Math.exp(x[r * n + i]! - m) / s;
  }
  return y;
}

/** Each element within the conformance table's softmax tolerance (1e-7 + 2e-6 relative); NaN where the oracle's is. */
function expectClose(got: ArrayLike<number>, want: Float64Array): void {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i]!)) expect(got[i]).toBeNaN();
    else worst = Math.max(worst, Math.abs(got[i]! - want[i]!) - (1e-7 + 2e-6 * Math.abs(want[i]!)));
  }
  expect(worst).toBeLessThanOrEqual(0);
}

function run(b: WasmBackend, x: NDArray, axis?: number): { y: Float32Array; calls: number } {
  const before = calls;
  const y = b.softmax(x, axis);
  const out = b.readSync(y) as Float32Array;
  b.free(y);
  return { y: out, calls: calls - before };
}

test.each([
  [[40, 6625], 8],
  [[3, 5, 17], 30],
  [[7, 1], 5],
  [[1, 3], 1],
  [[9], 100],
  [[2, 4, 1000], 90],
])('softmax over the last axis of %j (values within ±%d) takes the kernel and matches float64', (shape, scale) => {
  const n = shape.reduce((p, d) => p * d, 1);
  const data = rand(n, shape.length, scale);
  for (const b of [be, one]) {
    const x = b.fromArray(data, shape, 'float32');
    const { y, calls: c } = run(b, x, -1);
    expect(c).toBeGreaterThan(0);
    expectClose(y, oracle(data, shape.at(-1)!));
    b.free(x);
  }
});

test('two threads give the one-thread bits', () => {
  const data = rand(40 * 6625, 3, 20);
  const [x2, x1] = [be.fromArray(data, [40, 6625], 'float32'), one.fromArray(data, [40, 6625], 'float32')];
  const two = run(be, x2, 1);
  expect(two.calls).toBe(1); // the calling thread's part; the other ran on the worker
  expect(Buffer.from(two.y.buffer).equals(Buffer.from(run(one, x1, 1).y.buffer))).toBe(true);
  be.free(x2);
  one.free(x1);
});

test('special values: NaN rows, infinities, a row of −Inf, a one-hot row', () => {
  const rows = [
    [1, Number.NaN, 2, 3, 4],
    [Number.NEGATIVE_INFINITY, 0, 1, Number.NEGATIVE_INFINITY, 2],
    [Number.POSITIVE_INFINITY, 0, 1, 2, 3],
    [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, -1e30],
    [-200, 0, -200, -200, -200],
    [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, 0],
    [-0, 0, -0, 0, 88],
    [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, -Infinity],
  ].flat();
  // rows of 5 (a SIMD step and a tail) and the same values as rows of 8 and 10
  for (const n of [5, 8, 10]) {
    const x = one.fromArray(rows.slice(0, Math.floor(rows.length / n) * n), [Math.floor(rows.length / n), n]);
    const { y, calls: c } = run(one, x);
    expect(c).toBe(1);
    const want = oracle(rows.slice(0, Math.floor(rows.length / n) * n), n);
    expectClose(y, want);
    one.free(x);
  }
});

test('a row-major view at an offset takes the kernel; other axes and strided views run the composite', () => {
  const data = rand(6 * 12, 5, 4);
  const base = one.fromArray(data, [6, 12]);
  const tail = one.shrink(base, [
    [2, 6],
    [0, 12],
  ]);
  const a = run(one, tail, 1);
  expect(a.calls).toBe(1);
  expectClose(a.y, oracle(data.subarray(24), 12));
  // axis 0: the composite, against the oracle over the transposed rows
  const b = run(one, base, 0);
  expect(b.calls).toBe(0);
  const t = permuteView(base, [1, 0]);
  const tData = Float32Array.from({ length: 72 }, (_, i) => data[(i % 6) * 12 + Math.floor(i / 6)]!);
  const tw = oracle(tData, 6);
  expectClose(
    Float32Array.from({ length: 72 }, (_, i) => b.y[i]!),
    Float64Array.from({ length: 72 }, (_, i) => tw[(i % 12) * 6 + Math.floor(i / 12)]!),
  );
  const c = run(one, t, 1); // last axis of a transposed view: strided rows, the composite
  expect(c.calls).toBe(0);
  expectClose(c.y, tw);
  one.free(base);
});

test('errors are the composite’s: axis out of range, an integer array, a freed array', () => {
  const x = one.fromArray([1, 2, 3, 4], [2, 2]);
  expect(() => one.softmax(x, 2)).toThrow(InvalidArgumentError);
  expect(() => one.softmax(x, 1.5)).toThrow(InvalidArgumentError);
  const i = one.fromArray([1, 2, 3, 4], [2, 2], 'int32');
  expect(() => one.softmax(i, 1)).toThrow(UnsupportedOpError);
  one.free(i);
  one.free(x);
  expect(() => one.softmax(x, 1)).toThrow();
});
