// WebGPU's nearest resize kernel (backends/webgpu/src/dispatch-conv.ts): one dispatch over every axis, checked
// element for element against ONNX Resize's nearest rule computed here in float64 (a gather is exact), for each
// coordinate transformation and rounding, up- and downsampling, views; other modes fall back to the composite,
// and bad options get the composite's typed errors.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { DTypeError, InvalidArgumentError, type NDArray, type ResizeOptions } from '@polyhal/hal';

let be: WebGpuBackend;
beforeAll(async () => {
  be = await createWebGpuBackend();
});
afterAll(() => be.dispose());

const prod = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);

/** ONNX Resize's nearest input index of output coordinate x along an axis (float64). */
function nearestIndex(x: number, nIn: number, scale: number, o: ResizeOptions): number {
  const outF = scale * nIn;
  let xo: number;
  switch (o.coordinateTransformationMode ?? 'half_pixel') {
    case 'asymmetric':
      xo = x / scale;
      break;
    case 'align_corners':
      xo = outF === 1 ? 0 : (x * (nIn - 1)) / (outF - 1);
      break;
    case 'tf_half_pixel_for_nn':
      xo = (x + 0.5) / scale;
      break;
    case 'pytorch_half_pixel':
      xo = outF === 1 ? -0.5 : (x + 0.5) / scale - 0.5;
      break;
    default:
      xo = (x + 0.5) / scale - 0.5;
  }
  const f = Math.floor(xo);
  const frac = xo - f;
  let i: number;
  switch (o.nearestMode ?? 'round_prefer_floor') {
    case 'floor':
      i = f;
      break;
    case 'ceil':
      i = Math.ceil(xo);
      break;
    case 'round_prefer_ceil':
      i = frac >= 0.5 ? f + 1 : f;
      break;
    default:
      i = frac > 0.5 ? f + 1 : f;
  }
  return Math.min(nIn - 1, Math.max(0, i));
}

/** y[...] = x[idx_0(y_0), idx_1(y_1), ...] in row-major order. */
function oracle(x: Float32Array, shape: number[], sizes: number[], scales: number[], o: ResizeOptions): Float32Array {
  const tables = sizes.map((n, a) => Array.from({ length: n }, (_, i) => nearestIndex(i, shape[a]!, scales[a]!, o)));
  const y = new Float32Array(prod(sizes));
  for (let k = 0; k < y.length; k++) {
    let rem = k;
    let at = 0;
    let step = 1;
    for (let a = sizes.length - 1; a >= 0; a--) {
      at += tables[a]![rem % sizes[a]!]! * step;
      rem = Math.floor(rem / sizes[a]!);
      step *= shape[a]!;
    }
    y[k] = x[at]!;
  }
  return y;
}

async function check(shape: number[], o: ResizeOptions, view?: (a: NDArray) => NDArray): Promise<number> {
  const xd = Float32Array.from({ length: prod(shape) }, (_, i) => i * 0.5 - 3);
  const sizes = o.sizes ? [...o.sizes] : shape.map((n, a) => Math.floor(n * o.scales![a]!));
  const scales = o.scales ? [...o.scales] : sizes.map((n, a) => n / shape[a]!);
  const x0 = be.fromArray(xd, shape);
  const x = view ? view(x0) : x0;
  await be.synchronize();
  const before = be.kernelStats().dispatches;
  const y = be.resize(x, o);
  const dispatches = be.kernelStats().dispatches - before;
  expect(y.shape).toEqual(sizes);
  expect(Array.from((await be.read(y)) as Float32Array)).toEqual(Array.from(oracle(xd, shape, sizes, scales, o)));
  for (const a of new Set([x0, x, y])) be.free(a);
  return dispatches;
}

describe('webgpu nearest resize kernel', () => {
  test.each<[string, number[], ResizeOptions]>([
    [
      '2× upsampling, asymmetric floor (det)',
      [1, 4, 5, 6],
      { scales: [1, 1, 2, 2], coordinateTransformationMode: 'asymmetric', nearestMode: 'floor' },
    ],
    ['default half_pixel, round_prefer_floor', [1, 2, 5, 7], { sizes: [1, 2, 9, 16] }],
    ['downsampling, round_prefer_ceil', [2, 3, 11, 9], { sizes: [2, 3, 4, 5], nearestMode: 'round_prefer_ceil' }],
    [
      'align_corners, ceil',
      [1, 1, 6, 6],
      { sizes: [1, 1, 11, 4], coordinateTransformationMode: 'align_corners', nearestMode: 'ceil' },
    ],
    [
      'pytorch_half_pixel, to one pixel',
      [1, 2, 5, 4],
      { sizes: [1, 2, 1, 7], coordinateTransformationMode: 'pytorch_half_pixel' },
    ],
    [
      'tf_half_pixel_for_nn, scale 1.5',
      [1, 3, 4, 6],
      { scales: [1, 1, 1.5, 1.5], coordinateTransformationMode: 'tf_half_pixel_for_nn' },
    ],
    ['1-D', [10], { sizes: [23] }],
    ['every axis of a rank-5 array', [2, 3, 2, 3, 2], { sizes: [3, 2, 4, 5, 1] }],
  ])('%s: one dispatch, the ONNX nearest indices exactly', async (_, shape, o) => {
    expect(await check(shape, o)).toBe(1);
  });

  test('a transposed x is read in place', async () => {
    const view = (x0: NDArray): NDArray => be.permute(be.contiguous(be.permute(x0, [0, 1, 3, 2])), [0, 1, 3, 2]);
    expect(await check([1, 2, 5, 3], { scales: [1, 1, 2, 2] }, view)).toBe(1);
  });

  test('linear mode and tf_crop_and_resize fall back to the composite', async () => {
    const x = be.fromArray(
      new Float32Array(24).map((_, i) => i),
      [1, 1, 4, 6],
    );
    const before = be.kernelStats().dispatches;
    const linear = be.resize(x, { sizes: [1, 1, 8, 12], mode: 'linear' });
    expect(be.kernelStats().dispatches - before).toBeGreaterThan(1);
    // half_pixel 2× of a ramp along W (x = 6·row + col): the first output row is input row 0, clamped
    const row0 = Array.from(((await be.read(linear)) as Float32Array).slice(0, 12));
    expect(row0).toEqual([0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4.25, 4.75, 5]);
    const cropped = be.resize(x, {
      sizes: [1, 1, 3, 3],
      coordinateTransformationMode: 'tf_crop_and_resize',
      roi: [0, 0, 0.5, 0.5, 1, 1, 2, 2],
      extrapolationValue: -7,
    });
    const got = (await be.read(cropped)) as Float32Array;
    // H: x_ori = 1.5 + 2.25·y, W: 2.5 + 3.75·x; all but (1.5, 2.5) fall outside and take the extrapolation value
    expect(Array.from(got)).toEqual([8, -7, -7, -7, -7, -7, -7, -7, -7]);
  });

  test('bad options get the composite typed errors', () => {
    const x = be.full([1, 1, 4, 4], 1);
    expect(() => be.resize(x, {})).toThrow(InvalidArgumentError);
    expect(() => be.resize(x, { sizes: [1, 1, 8] })).toThrow(InvalidArgumentError);
    expect(() => be.resize(x, { scales: [1, 1, 0, 2] })).toThrow(InvalidArgumentError);
    expect(() => be.resize(x, { sizes: [1, 1, 8, 8], coordinateTransformationMode: 'other' as never })).toThrow(
      InvalidArgumentError,
    );
    expect(() => be.resize(be.full([1, 1, 4, 4], 1, 'int32'), { sizes: [1, 1, 8, 8] })).toThrow(DTypeError);
  });
});
