// float16 arithmetic on webgpu's `shader-f16` path (float16Arithmetic 'native': backends/webgpu/src/
// dispatch-half-native.ts, kernels/half-native.ts) against the emulated path (binary16 words decoded with integer
// operations: the independent peer) bit for bit (NaN payloads aside: not part of the contract), and the cpu backend
// too where the op table fixes the float16 result: every float16 unary and binary op, reductions, softmax, at odd
// sizes, through strided and broadcast views and offsets at odd halves. lavapipe offers shader-f16, so CI runs
// the native kernels.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { checkNativeFloat16, createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { BINARY_OPS, type BinaryOp, type ComputeBackend, type NDArray, UNARY_OPS, type UnaryOp } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
let native: WebGpuBackend | undefined;
let emulated: WebGpuBackend | undefined;
beforeAll(async () => {
  if (!fixture.backends['webgpu']) return;
  native = await createWebGpuBackend({ float16Arithmetic: 'native' });
  emulated = await createWebGpuBackend({ float16Arithmetic: 'emulated', float16Conversions: 'integer' });
});
afterAll(() => {
  native?.dispose();
  emulated?.dispose();
});

const SPECIAL = [Number.NaN, Infinity, -Infinity, -0, 0, 2 ** -24, -(2 ** -20), 65504, -65504, 0.5, 1, -2.75];
/** Deterministic float16 values: specials, subnormals, large and small magnitudes, both signs. */
const values = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => {
    if (i % 7 === 0) return SPECIAL[(i / 7 + seed) % SPECIAL.length]!;
    const u = Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453;
    const r = u - Math.floor(u); // [0, 1)
    const e = Math.floor(r * 40) - 24; // 2^-24 … 2^15
    return Math.fround(Math.round((r * 2 - 1) * 1024) * 2 ** (e - 10)) || 0;
  });

const h = (be: ComputeBackend, n: number, seed: number, shape: number[] = [n]): NDArray =>
  be.fromArray(values(n, seed), shape, 'float16');

type Result = { bits: number[] } | { error: string };

/** `program`'s result as raw bits (NaN as one pattern), or the class of the error it threw. */
async function run(be: ComputeBackend, program: (b: ComputeBackend) => NDArray): Promise<Result> {
  let x: NDArray;
  try {
    x = program(be);
  } catch (e) {
    return { error: (e as Error).constructor.name };
  }
  const d = await be.read(x);
  be.free(x);
  const raw = Array.from(d instanceof Float32Array ? new Int32Array(d.buffer, d.byteOffset, d.length) : d);
  return { bits: raw.map((v) => ((v & 0x7fffffff) >>> 0 > 0x7f800000 ? 0x7fc00000 : v)) };
}

/**
 * The ops whose float16 result the op table fixes exactly (correctly rounded or exact: docs/DTYPES.md); the others
 * are within their float32 bound plus one float16 rounding of cpu's (the conformance suite checks that), and here
 * bit for bit equal between the native and the emulated kernels, which compute them in the same f32 WGSL. (sign
 * of ±0 gives a zero of the other sign than cpu's on webgpu, on both paths alike: the float32 kernel's.)
 */
const EXACT = new Set<string>([
  ...['add', 'sub', 'mul', 'div', 'sqrt', 'neg', 'abs', 'floor', 'ceil', 'round', 'trunc', 'relu'],
  ...['maximum', 'minimum', 'less', 'lessEqual', 'greater', 'greaterEqual', 'equal', 'notEqual'],
  ...['sum', 'max', 'min', 'cast'],
]);

/**
 * native and emulated give the same bits (or the same error), and cpu too where `op` is exact; returns whether it
 * ran (false without webgpu or where the op throws).
 */
async function same(program: (b: ComputeBackend) => NDArray, op = 'add'): Promise<boolean> {
  if (!native || !emulated) return false;
  expect(native.float16Arithmetic).toBe('native');
  const [n, e] = [await run(native, program), await run(emulated, program)];
  expect(n).toEqual(e);
  if (EXACT.has(op)) expect(n).toEqual(await run(fixture.cpu, program));
  return 'bits' in n;
}

describe('the shader-f16 check and the option', () => {
  test("the device's f16 conversions and arithmetic pass the check; auto takes native where they do", async () => {
    const be = fixture.backends['webgpu'] as WebGpuBackend | undefined;
    if (!be) return;
    const check = await checkNativeFloat16(be.device);
    expect(check).toEqual({ ok: true, detail: expect.stringMatching(/agree; \d+ f16 sums.*agree$/) });
    expect(be.device.features.has('shader-f16')).toBe(true);
    expect(be.float16Arithmetic).toBe('native');
    expect(be.deviceName).toMatch(/; float16 arithmetic: native \(shader-f16\)$/);
    expect(emulated!.float16Arithmetic).toBe('emulated');
    expect(emulated!.deviceName).not.toMatch(/float16 arithmetic/);
  });
});

describe('float16 on shader-f16 equals the emulated kernels and cpu, bit for bit', () => {
  // 1: one element; 7, 1023: odd (the vec2 kernel's padding half); 4100: the vec4<f16> kernel; 4104: the 8-wide one
  for (const n of [1, 7, 1023, 4100, 4104]) {
    test(`every unary op, ${n} elements, contiguous and at an odd offset`, async () => {
      let ran = 0;
      for (const op of UNARY_OPS as readonly UnaryOp[]) {
        if (await same((b) => b.unary(op, h(b, n, 1)), op)) ran++;
        await same((b) => b.unary(op, b.shrink(h(b, n + 2, 2), [[1, n + 1]])), op);
      }
      if (native) expect(ran).toBeGreaterThanOrEqual(30);
    });

    test(`every binary op, ${n} elements: contiguous, offsets at even and odd halves`, async () => {
      let ran = 0;
      for (const op of BINARY_OPS as readonly BinaryOp[]) {
        if (await same((b) => b.binary(op, h(b, n, 3), h(b, n, 4)), op)) ran++;
        await same((b) => b.binary(op, b.shrink(h(b, n + 2, 5), [[2, n + 2]]), h(b, n, 6)), op);
        const [x, y] = [
          (b: ComputeBackend) => b.shrink(h(b, n + 3, 7), [[3, n + 3]]),
          (b: ComputeBackend) => b.shrink(h(b, n + 1, 8), [[1, n + 1]]),
        ];
        await same((b) => b.binary(op, x(b), y(b)), op);
      }
      if (native) expect(ran).toBeGreaterThanOrEqual(15);
    });
  }

  test('strided and broadcast operands, a bool output, add/sub/mul in f16 through every layout', async () => {
    for (const op of ['add', 'sub', 'mul', 'div', 'pow', 'maximum', 'less', 'equal'] as const) {
      await same((b) => b.binary(op, b.permute(h(b, 35, 1, [5, 7]), [1, 0]), h(b, 35, 2, [7, 5])), op);
      await same((b) => b.binary(op, h(b, 3 * 33, 3, [3, 33]), h(b, 33, 4, [1, 33])), op);
      await same(
        (b) =>
          b.binary(
            op,
            h(b, 3, 5, [3, 1]),
            b.shrink(h(b, 34, 6, [1, 34]), [
              [0, 1],
              [1, 34],
            ]),
          ),
        op,
      );
    }
    // the 8-wide kernel at offsets of 8 halves
    for (const op of ['add', 'mul', 'div', 'exp', 'sigmoid', 'neg', 'abs', 'relu'] as const) {
      const x = (b: ComputeBackend): NDArray => b.shrink(h(b, 72, 8), [[8, 72]]);
      await same(
        (b) => (op === 'add' || op === 'mul' || op === 'div' ? b.binary(op, x(b), x(b)) : b.unary(op, x(b))),
        op,
      );
    }
    for (const op of ['exp', 'sqrt', 'tanh', 'neg'] as const)
      await same((b) => b.unary(op, b.permute(h(b, 60, 7, [3, 4, 5]), [2, 0, 1])), op);
  });

  test('add, sub, mul of every pair of 256 float16 values (specials, subnormals, ties, overflow)', async () => {
    const grid = new Float32Array(256);
    for (let i = 0; i < 256; i++) {
      const e = (i >> 3) % 31; // 0 … 30: subnormals to the largest binade
      const m = ((i * 37) & 0x3ff) | (i & 1);
      const s = i & 128 ? -1 : 1;
      grid[i] = s * (e ? (1 + m / 1024) * 2 ** (e - 15) : m * 2 ** -24);
    }
    grid.set([Number.NaN, Infinity, -Infinity, 65504, -65504, 2 ** -24, -0, 0], 0);
    for (const op of ['add', 'sub', 'mul'] as const)
      await same(
        (b) => b.binary(op, b.fromArray(grid, [256, 1], 'float16'), b.fromArray(grid, [1, 256], 'float16')),
        op,
      );
    // and in the vec4 kernel: contiguous operands of 65536 elements
    const a = new Float32Array(65536);
    const c = new Float32Array(65536);
    for (let i = 0; i < 65536; i++) [a[i], c[i]] = [grid[i >> 8]!, grid[i & 255]!];
    for (const op of ['add', 'sub', 'mul'] as const)
      await same((b) => b.binary(op, b.fromArray(a, [65536], 'float16'), b.fromArray(c, [65536], 'float16')), op);
  });

  test('reductions read float16 and accumulate in float32: sum, max, min, prod, mean over axes and views', async () => {
    for (const op of ['sum', 'max', 'min', 'prod', 'mean'] as const) {
      const r = (b: ComputeBackend, x: NDArray, axes: number[]) => b[op](x, axes);
      await same((b) => r(b, h(b, 7 * 33, 1, [7, 33]), [1]), op);
      await same((b) => r(b, h(b, 7 * 33, 2, [7, 33]), [0]), op);
      await same((b) => r(b, h(b, 1001, 3), [0]), op);
      await same((b) => r(b, b.permute(h(b, 60, 4, [3, 4, 5]), [2, 0, 1]), [0, 2]), op);
      await same(
        (b) =>
          r(
            b,
            b.shrink(h(b, 7 * 34, 5, [7, 34]), [
              [0, 7],
              [1, 34],
            ]),
            [1],
          ),
        op,
      );
    }
    // a float32 accumulation: 4096 ones and one 2^-11 sum to 4096.00048828125, 4096 in float16
    await same((b) => b.sum(b.fromArray(new Float32Array(4097).fill(1), [4097], 'float16'), [0]), 'sum');
  });

  test('softmax and logSoftmax of float16 rows (the composite: max, sub, exp, sum, div)', async () => {
    const logits = (b: ComputeBackend, seed: number): NDArray =>
      b.fromArray(
        values(5 * 37, seed).map((v) => (Number.isNaN(v) ? 1 : Math.max(-12, Math.min(12, v)))),
        [5, 37],
        'float16',
      );
    expect(await same((b) => b.softmax(logits(b, 1), -1), 'softmax')).toBe(Boolean(native));
    await same((b) => b.softmax(logits(b, 2), 0), 'softmax');
    await same((b) => b.logSoftmax(logits(b, 3), -1), 'logSoftmax');
  });
});
