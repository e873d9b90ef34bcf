// The wasm backend's direct kernels for convTranspose (backends/wasm/src/dispatch-conv-transpose.ts) and nearest
// resize (dispatch-resize.ts): which calls take them (counted through the kernel exports), checked against float64
// computations written here (a scatter of every input pixel's taps; ONNX Resize's coordinate formulas and
// rounding); the parts split across worker threads give one thread's bits; the cases the kernels leave to the
// HAL's composite still run it and still throw its typed errors.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWasmBackend, type WasmBackend } from '@polyhal/backend-wasm';
import {
  DTypeError,
  InvalidArgumentError,
  type NDArray,
  permuteView,
  type ResizeOptions,
  ShapeMismatchError,
} from '@polyhal/hal';

type Kernels = Record<string, (...args: number[]) => unknown>;
let be: WasmBackend;
let one: WasmBackend;
const calls: Record<string, number> = { convTranspose: 0, resizeNearest: 0 };

beforeAll(async () => {
  // two threads splitting every kernel call, and one thread: the same bits
  be = await createWasmBackend({ threads: 2, threadThreshold: 1, elementwiseThreadThreshold: 1 });
  one = await createWasmBackend({ threads: 1 });
  const k = (be as unknown as { ctx: { k: Kernels } }).ctx.k;
  for (const name of Object.keys(calls)) {
    const kernel = k[name]!;
    k[name] = (...args: number[]) => {
      calls[name]!++;
      return kernel(...args);
    };
  }
});
afterAll(() => {
  be.dispose();
  one.dispose();
});

const rand = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
const prod = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);
const unravel = (i: number, s: readonly number[]): number[] =>
  s.map((_, a) => Math.floor(i / prod(s.slice(a + 1))) % s[a]!);

/** Runs fn and returns its result and how many times `kernel` was entered on the calling thread. */
function counted<T>(kernel: string, fn: () => T): { value: T; count: number } {
  const before = calls[kernel]!;
  const value = fn();
  return { value, count: calls[kernel]! - before };
}

interface TransposeSpec {
  x: number[];
  w: number[];
  stride?: number[];
  dilation?: number[];
  pads?: [number, number][];
  outputPadding?: number[];
  groups?: number;
}

/** Float64 convTranspose by scatter: x [N, C, ...in], w [C, O/g, ...k] → [N, O, ...out], and Σ|x·w| per output. */
function transposeOracle(x: Float32Array, w: Float32Array, t: Required<TransposeSpec>) {
  const [N, C] = t.x as [number, number];
  const Og = t.w[1]!;
  const O = Og * t.groups;
  const Cg = C / t.groups;
  const inS = t.x.slice(2);
  const kS = t.w.slice(2);
  const full = inS.map((n, a) => (n - 1) * t.stride[a]! + t.dilation[a]! * (kS[a]! - 1) + 1);
  const outS = full.map((f, a) => f - t.pads[a]![0] - t.pads[a]![1] + t.outputPadding[a]!);
  const P = prod(outS);
  const y = new Float64Array(N * O * P);
  const mag = new Float64Array(N * O * P);
  for (let n = 0; n < N; n++)
    for (let c = 0; c < C; c++)
      for (let i = 0; i < prod(inS); i++) {
        const ip = unravel(i, inS);
        const q = Math.floor(c / Cg);
        for (let k = 0; k < prod(kS); k++) {
          const kp = unravel(k, kS);
          const at = ip.map((v, a) => v * t.stride[a]! + kp[a]! * t.dilation[a]! - t.pads[a]![0]);
          if (at.some((v, a) => v < 0 || v >= outS[a]!)) continue;
          const pos = at.reduce((acc, v, a) => acc * outS[a]! + v, 0);
          for (let o = 0; o < Og; o++) {
            const term = x[(n * C + c) * prod(inS) + i]! * w[(c * Og + o) * prod(kS) + k]!;
            const yi = (n * O + q * Og + o) * P + pos;
            y[yi] += term;
            mag[yi] += Math.abs(term);
          }
        }
      }
  return { y, mag, shape: [N, O, ...outS], terms: Cg * prod(kS) };
}

/** convTranspose on `b` against the oracle (within the float32 summation bound); returns y and the kernel calls. */
async function checkTranspose(spec: TransposeSpec, seed: number, b = be, view?: (a: NDArray) => NDArray) {
  const r = spec.x.length - 2;
  const t: Required<TransposeSpec> = {
    stride: new Array(r).fill(1),
    dilation: new Array(r).fill(1),
    pads: new Array(r).fill([0, 0]),
    outputPadding: new Array(r).fill(0),
    groups: 1,
    ...spec,
  };
  const xd = rand(prod(spec.x), seed);
  const wd = rand(prod(spec.w), seed + 5);
  const want = transposeOracle(xd, wd, t);
  const x0 = b.fromArray(xd, spec.x);
  const x = view ? view(x0) : x0;
  const w = b.fromArray(wd, spec.w);
  const o = {
    stride: t.stride,
    dilation: t.dilation,
    padding: t.pads,
    outputPadding: t.outputPadding,
    groups: t.groups,
  };
  const { value: y, count } = counted('convTranspose', () => b.convTranspose(x, w, o));
  expect(y.shape).toEqual(want.shape);
  const got = (await b.read(y)) as Float32Array;
  for (let i = 0; i < got.length; i++) {
    const bound = (want.terms + 1) * 2 ** -23 * want.mag[i]! + 1e-30;
    if (!(Math.abs(got[i]! - want.y[i]!) <= bound)) throw new Error(`y[${i}] = ${got[i]}, want ${want.y[i]}`);
  }
  for (const a of [x0, w, y]) b.free(a);
  return { got, count };
}

describe('wasm convTranspose kernel', () => {
  const kernelCases: [string, TransposeSpec][] = [
    ['det head 2×2 stride 2, 24 → 24 channels', { x: [1, 24, 12, 21], w: [24, 24, 2, 2], stride: [2, 2] }],
    ['det head 2×2 stride 2, 24 → 1 channel', { x: [1, 24, 13, 16], w: [24, 1, 2, 2], stride: [2, 2] }],
    [
      'stride = kernel 3×3 with a crop',
      {
        x: [2, 5, 9, 11],
        w: [5, 6, 3, 3],
        stride: [3, 3],
        pads: [
          [1, 2],
          [0, 1],
        ],
      },
    ],
    ['stride > kernel (gaps of zeros)', { x: [1, 3, 5, 10], w: [3, 5, 2, 2], stride: [3, 4], outputPadding: [2, 1] }],
    [
      'overlapping taps, padding, outputPadding, dilation, groups',
      {
        x: [2, 6, 9, 11],
        w: [6, 5, 3, 3],
        stride: [2, 2],
        pads: [
          [1, 0],
          [2, 1],
        ],
        outputPadding: [1, 0],
        dilation: [1, 2],
        groups: 2,
      },
    ],
    [
      'stride 1, 3×3, padding 1',
      {
        x: [1, 3, 17, 29],
        w: [3, 7, 3, 3],
        pads: [
          [1, 1],
          [1, 1],
        ],
      },
    ],
    ['1-D, stride 3, kernel 4', { x: [2, 8, 37], w: [8, 4, 4], stride: [3], pads: [[1, 1]] }],
    ['1-D, stride 2 = kernel, groups 4', { x: [1, 8, 30], w: [8, 3, 2], stride: [2], groups: 4 }],
    // rows of 256 pixels: the row copies in scratch are padded apart (a multiple of 1 KiB otherwise)
    ['1-D overlapping, 256 pixels', { x: [1, 5, 256], w: [5, 6, 3], stride: [2], pads: [[1, 1]] }],
    ['1-D disjoint, 256 pixels', { x: [1, 5, 256], w: [5, 7, 2], stride: [2] }],
  ];
  test.each(kernelCases)('%s: the kernel, within the f64 bound, one thread giving the same bits', async (_, s) => {
    const split = await checkTranspose(s, 3);
    expect(split.count).toBeGreaterThan(0);
    const single = await checkTranspose(s, 3, one);
    expect(Array.from(split.got)).toEqual(Array.from(single.got));
  });

  test('a strided (permuted) x is read densely and still takes the kernel', async () => {
    // x built as [1, 12, 10, 4] and viewed as [1, 4, 12, 10]
    const spec = { x: [1, 12, 10, 4], w: [4, 6, 2, 2], stride: [2, 2] };
    const xd = rand(prod(spec.x), 9);
    const perm = (a: NDArray): NDArray => permuteView(a, [0, 3, 1, 2]);
    const dense = Float32Array.from({ length: prod(spec.x) }, (_, i) => {
      const [, c, h, wi] = unravel(i, [1, 4, 12, 10]) as [number, number, number, number];
      return xd[(h * 10 + wi) * 4 + c]!;
    });
    const wd = rand(prod(spec.w), 14);
    const want = transposeOracle(dense, wd, {
      x: [1, 4, 12, 10],
      w: spec.w,
      stride: [2, 2],
      dilation: [1, 1],
      pads: [
        [0, 0],
        [0, 0],
      ],
      outputPadding: [0, 0],
      groups: 1,
    });
    const x = be.fromArray(xd, spec.x);
    const w = be.fromArray(wd, spec.w);
    const { value: y, count } = counted('convTranspose', () => be.convTranspose(perm(x), w, { stride: 2 }));
    expect(count).toBeGreaterThan(0);
    const got = (await be.read(y)) as Float32Array;
    got.forEach((v, i) => expect(Math.abs(v - want.y[i]!)).toBeLessThanOrEqual(5 * 2 ** -23 * want.mag[i]! + 1e-30));
    for (const a of [x, w, y]) be.free(a);
  });

  test('3-D windows run the composite (no kernel call), still against the oracle', async () => {
    const { count } = await checkTranspose({ x: [1, 2, 3, 4, 3], w: [2, 3, 2, 2, 2], stride: [2, 1, 2] }, 4);
    expect(count).toBe(0);
  });

  test("bad operands and options get the composite's typed errors", () => {
    const x = be.fromArray(rand(2 * 3 * 4 * 4, 1), [2, 3, 4, 4]);
    const w = be.fromArray(rand(3 * 2 * 3 * 3, 2), [3, 2, 3, 3]);
    const xi = be.fromArray(new Int32Array(2 * 3 * 16), [2, 3, 4, 4], 'int32');
    const w4 = be.fromArray(rand(4 * 2 * 9, 3), [4, 2, 3, 3]);
    try {
      expect(() => be.convTranspose(x, w, { padding: 'same' as never })).toThrow(InvalidArgumentError);
      expect(() =>
        be.convTranspose(x, w, {
          padding: [
            [4, 4],
            [0, 0],
          ],
        }),
      ).toThrow(/crops more than the full output/);
      expect(() => be.convTranspose(x, w, { stride: 0 })).toThrow(InvalidArgumentError);
      expect(() => be.convTranspose(x, w, { outputPadding: -1 })).toThrow(InvalidArgumentError);
      expect(() => be.convTranspose(xi, w)).toThrow(DTypeError);
      expect(() => be.convTranspose(x, w4)).toThrow(ShapeMismatchError);
      expect(calls.convTranspose).toBeGreaterThan(0); // (the kernel cases ran before)
    } finally {
      for (const a of [x, w, xi, w4]) be.free(a);
    }
  });
});

/** ONNX Resize's nearest input index of output position j along one axis, in float64 (the spec's formulas). */
function nearestIndex(j: number, nIn: number, scale: number, o: ResizeOptions): number {
  const outF = scale * nIn;
  let xo: number;
  switch (o.coordinateTransformationMode ?? 'half_pixel') {
    case 'align_corners':
      xo = outF === 1 ? 0 : (j * (nIn - 1)) / (outF - 1);
      break;
    case 'asymmetric':
      xo = j / scale;
      break;
    case 'tf_half_pixel_for_nn':
      xo = (j + 0.5) / scale;
      break;
    case 'pytorch_half_pixel':
      xo = outF > 1 ? (j + 0.5) / scale - 0.5 : 0;
      break;
    default:
      xo = (j + 0.5) / scale - 0.5;
  }
  const half = xo - Math.floor(xo) === 0.5;
  let i: number;
  switch (o.nearestMode ?? 'round_prefer_floor') {
    case 'floor':
      i = Math.floor(xo);
      break;
    case 'ceil':
      i = Math.ceil(xo);
      break;
    case 'round_prefer_ceil':
      i = half ? Math.ceil(xo) : Math.round(xo);
      break;
    default:
      i = half ? Math.floor(xo) : Math.round(xo);
  }
  return Math.min(nIn - 1, Math.max(0, i));
}

/** resize on `b` against the oracle (exact: a copy); returns y and the kernel calls. */
async function checkResize(shape: number[], o: ResizeOptions, b = be, view?: (a: NDArray) => NDArray) {
  const xd = rand(prod(shape), 7);
  const x0 = b.fromArray(xd, shape);
  const x = view ? view(x0) : x0;
  const xs = x.shape;
  const sizes = o.sizes ?? xs.map((n, a) => Math.floor(n * o.scales![a]!));
  const scales = o.scales ?? sizes.map((d, a) => d / xs[a]!);
  const logical = view ? ((await b.read(b.contiguous(x))) as Float32Array) : xd;
  const want = Float32Array.from({ length: prod(sizes) }, (_, i) => {
    const at = unravel(i, sizes).map((j, a) => nearestIndex(j, xs[a]!, scales[a]!, o));
    return logical[at.reduce((acc, v, a) => acc * xs[a]! + v, 0)]!;
  });
  const { value: y, count } = counted('resizeNearest', () => b.resize(x, o));
  expect(y.shape).toEqual(sizes);
  const got = (await b.read(y)) as Float32Array;
  expect(Array.from(got)).toEqual(Array.from(want));
  b.free(x0);
  b.free(y);
  return { got, count };
}

describe('wasm nearest resize kernel', () => {
  const cases: [string, number[], ResizeOptions][] = [
    ['det FPN ×2 (f32x4 repeats, row copies)', [1, 6, 10, 13], { scales: [1, 1, 2, 2] }],
    ['×8 (splat stores)', [1, 2, 5, 7], { scales: [1, 1, 8, 8], coordinateTransformationMode: 'asymmetric' }],
    ['×3 upscale', [2, 3, 4, 5], { scales: [1, 1, 3, 3], nearestMode: 'floor' }],
    ['fractional, sizes', [2, 3, 7, 9], { sizes: [2, 3, 11, 5], coordinateTransformationMode: 'align_corners' }],
    ['downscale, ceil', [1, 2, 13, 17], { scales: [1, 1, 0.5, 0.4], nearestMode: 'ceil' }],
    [
      'pytorch_half_pixel, round_prefer_ceil',
      [3, 8, 6],
      { sizes: [3, 1, 17], coordinateTransformationMode: 'pytorch_half_pixel', nearestMode: 'round_prefer_ceil' },
    ],
    [
      'tf_half_pixel_for_nn, every axis',
      [4, 5, 6],
      { scales: [1.5, 0.6, 2.5], coordinateTransformationMode: 'tf_half_pixel_for_nn' },
    ],
    ['rank 1', [11], { sizes: [25] }],
    ['rank 5', [2, 1, 3, 2, 4], { scales: [1, 2, 1, 3, 2] }],
    ['identity (a copy)', [3, 4, 5], { scales: [1, 1, 1] }],
  ];
  test.each(cases)('%s: the kernel, exact, one thread giving the same bits', async (_, shape, o) => {
    const split = await checkResize(shape, o);
    expect(split.count).toBeGreaterThan(0);
    const single = await checkResize(shape, o, one);
    expect(Array.from(split.got)).toEqual(Array.from(single.got));
  });

  test('a permuted x (last-axis stride ≠ 1) takes the gathering path', async () => {
    const { count } = await checkResize([6, 5, 4], { scales: [1, 2, 2] }, be, (a) => permuteView(a, [2, 0, 1]));
    expect(count).toBeGreaterThan(0);
  });

  test('linear mode and tf_crop_and_resize run the composite (no kernel call)', async () => {
    const x = be.fromArray(rand(2 * 3 * 4, 1), [2, 3, 4]);
    try {
      for (const o of [
        { scales: [1, 2, 2], mode: 'linear' },
        { sizes: [2, 5, 5], coordinateTransformationMode: 'tf_crop_and_resize', roi: [0, 0.1, 0.2, 1, 0.9, 1.3] },
      ] as ResizeOptions[]) {
        const { value: y, count } = counted('resizeNearest', () => be.resize(x, o));
        expect(count).toBe(0);
        const x1 = one.fromArray(rand(2 * 3 * 4, 1), [2, 3, 4]);
        const ref = one.resize(x1, o);
        expect(Array.from((await be.read(y)) as Float32Array)).toEqual(
          Array.from((await one.read(ref)) as Float32Array),
        );
        be.free(y);
        one.free(x1);
        one.free(ref);
      }
    } finally {
      be.free(x);
    }
  });

  test("bad options and dtypes get the composite's typed errors", () => {
    const x = be.fromArray(rand(2 * 3 * 4, 1), [2, 3, 4]);
    const xi = be.fromArray(new Int32Array(24), [2, 3, 4], 'int32');
    try {
      expect(() => be.resize(x, {})).toThrow(InvalidArgumentError);
      expect(() => be.resize(x, { sizes: [2, 3] })).toThrow(InvalidArgumentError);
      expect(() => be.resize(x, { scales: [1, 0, 2] })).toThrow(InvalidArgumentError);
      expect(() => be.resize(x, { scales: [1, 2, 2], mode: 'bogus' as never })).toThrow(InvalidArgumentError);
      expect(() => be.resize(x, { scales: [1, 2, 2], coordinateTransformationMode: 'x' as never })).toThrow(
        InvalidArgumentError,
      );
      expect(() => be.resize(xi, { scales: [1, 2, 2] })).toThrow(DTypeError);
    } finally {
      be.free(x);
      be.free(xi);
    }
  });
});
