// WebGPU's convTranspose kernel (backends/webgpu/src/dispatch-conv.ts): each output element gathers its taps, one
// dispatch, checked against a float64 scatter written here (each input pixel's taps added to the full output, then
// cropped and output padding appended) within a summation bound; 3-D windows fall back to the HAL's composite, and
// bad options get the composite's typed errors.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { DTypeError, InvalidArgumentError, type NDArray, ShapeMismatchError } from '@polyhal/hal';

let be: WebGpuBackend;
beforeAll(async () => {
  be = await createWebGpuBackend();
});
afterAll(() => be.dispose());

const rand = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
const prod = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);

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
  const unravel = (i: number, s: number[]): number[] => s.map((_, a) => Math.floor(i / prod(s.slice(a + 1))) % s[a]!);
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

async function checkTranspose(spec: TransposeSpec, seed: number, view?: (a: NDArray) => NDArray): Promise<number> {
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
  const x0 = be.fromArray(xd, spec.x);
  const x = view ? view(x0) : x0;
  const w = be.fromArray(wd, spec.w);
  await be.synchronize();
  const before = be.kernelStats().dispatches;
  const options = { stride: t.stride, dilation: t.dilation, padding: t.pads, outputPadding: t.outputPadding };
  const y = be.convTranspose(x, w, { ...options, groups: t.groups });
  const dispatches = be.kernelStats().dispatches - before;
  expect(y.shape).toEqual(want.shape);
  const got = (await be.read(y)) as Float32Array;
  let worst = 0;
  for (let i = 0; i < want.y.length; i++) {
    const bound = (want.terms + 2) * 2 ** -23 * want.mag[i]! + 1e-30;
    worst = Math.max(worst, Math.abs(got[i]! - want.y[i]!) / bound);
  }
  expect(worst).toBeLessThanOrEqual(1);
  for (const a of new Set([x0, x, w, y])) be.free(a);
  return dispatches;
}

describe('webgpu convTranspose kernel', () => {
  test.each<[string, TransposeSpec]>([
    ['2×2 stride 2 (upsampling)', { x: [1, 8, 7, 6], w: [8, 5, 2, 2], stride: [2, 2] }],
    ['3×3, stride 1', { x: [2, 3, 5, 6], w: [3, 4, 3, 3] }],
    [
      '3×3 stride 2, padding 1, output padding 1',
      {
        x: [1, 4, 5, 6],
        w: [4, 3, 3, 3],
        stride: [2, 2],
        pads: [
          [1, 1],
          [1, 1],
        ],
        outputPadding: [1, 1],
      },
    ],
    [
      'groups 2, stride (3, 2), dilation (1, 2)',
      { x: [1, 4, 5, 5], w: [4, 1, 3, 2], stride: [3, 2], dilation: [1, 2], groups: 2 },
    ],
    [
      'asymmetric padding and output padding along W',
      {
        x: [2, 2, 4, 4],
        w: [2, 3, 3, 3],
        pads: [
          [0, 2],
          [1, 1],
        ],
        outputPadding: [0, 3],
      },
    ],
    ['1-D stride 2, padding 1', { x: [2, 3, 9], w: [3, 2, 4], stride: [2], pads: [[1, 1]], outputPadding: [1] }],
  ])('%s: one dispatch, within the summation bound of the float64 scatter', async (_, spec) => {
    expect(await checkTranspose(spec, spec.x.length + spec.w[1]!)).toBe(1);
  });

  test('a transposed x is read in place', async () => {
    const spec: TransposeSpec = { x: [1, 3, 5, 4], w: [3, 2, 2, 2], stride: [2, 2] };
    const view = (x0: NDArray): NDArray => be.permute(be.contiguous(be.permute(x0, [0, 1, 3, 2])), [0, 1, 3, 2]);
    expect(await checkTranspose(spec, 11, view)).toBe(1);
  });

  test('3-D windows fall back to the composite and still match the oracle', async () => {
    expect(await checkTranspose({ x: [1, 2, 3, 3, 3], w: [2, 2, 2, 2, 2], stride: [2, 2, 2] }, 13)).toBeGreaterThan(1);
  });

  test('bad options get the composite typed errors', () => {
    const x = be.full([1, 4, 5, 5], 0);
    const w = be.full([4, 2, 3, 3], 0);
    expect(() => be.convTranspose(x, w, { padding: 'same' as never })).toThrow(InvalidArgumentError);
    expect(() => be.convTranspose(x, w, { padding: 9 })).toThrow(InvalidArgumentError);
    expect(() => be.convTranspose(x, w, { stride: 0 })).toThrow(InvalidArgumentError);
    expect(() => be.convTranspose(x, be.full([3, 2, 3, 3], 0))).toThrow(ShapeMismatchError);
    expect(() => be.convTranspose(be.full([1, 4, 5, 5], 0, 'int32'), w)).toThrow(DTypeError);
  });
});
