// WebGPU's conv kernels (backends/webgpu/src/dispatch-conv.ts): depthwise per output element and the implicit
// GEMM (pointwise, k×k, strided, dilated, padded, grouped, odd sizes, views as operands), each one dispatch,
// checked against a float64 convolution written here within a summation bound; 3-D windows and empty shapes
// fall back to the HAL's composite, and bad operands get the composite's typed errors (convTranspose:
// webgpu-conv-transpose.test.ts).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { chooseConvTile } from '../../backends/webgpu/src/dispatch-conv.js';
import { DTypeError, InvalidArgumentError, type NDArray, ShapeMismatchError } from '@polyhal/hal';

let be: WebGpuBackend;
/** matmulTile forced: the workgroup-tiled implicit GEMM even on a software adapter (which gets register blocks). */
let tiled: WebGpuBackend;
beforeAll(async () => {
  be = await createWebGpuBackend();
  tiled = await createWebGpuBackend({ matmulTile: 'medium' });
});
afterAll(() => {
  be.dispose();
  tiled.dispose();
});

const rand = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
const prod = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);

interface Geometry {
  stride: number[];
  dilation: number[];
  /** [before, after] per spatial axis. */
  pads: [number, number][];
  groups: number;
}

/**
 * Float64 cross-correlation of row-major x [N, C, ...in] and w [O, C/g, ...k]: the output and, per element,
 * Σ|x·w| (the scale of its float32 summation error).
 */
function oracle(x: Float32Array, xs: number[], w: Float32Array, ws: number[], g: Geometry) {
  const [N, C] = xs as [number, number];
  const O = ws[0]!;
  const inS = xs.slice(2);
  const kS = ws.slice(2);
  const r = inS.length;
  const outS = inS.map(
    (d, a) => Math.floor((d + g.pads[a]![0] + g.pads[a]![1] - g.dilation[a]! * (kS[a]! - 1) - 1) / g.stride[a]!) + 1,
  );
  const Cg = C / g.groups;
  const Og = O / g.groups;
  const P = prod(outS);
  const K = prod(kS);
  const y = new Float64Array(N * O * P);
  const mag = new Float64Array(N * O * P);
  const unravel = (i: number, s: number[]): number[] => {
    const idx = new Array<number>(s.length);
    for (let a = s.length - 1; a >= 0; a--) {
      idx[a] = i % s[a]!;
      i = Math.floor(i / s[a]!);
    }
    return idx;
  };
  for (let n = 0; n < N; n++)
    for (let o = 0; o < O; o++)
      for (let p = 0; p < P; p++) {
        const op = unravel(p, outS);
        const q = Math.floor(o / Og);
        let s = 0;
        let m = 0;
        for (let c = 0; c < Cg; c++)
          for (let k = 0; k < K; k++) {
            const kp = unravel(k, kS);
            let xi = n * C + q * Cg + c;
            let inside = true;
            for (let a = 0; a < r; a++) {
              const at = op[a]! * g.stride[a]! - g.pads[a]![0] + kp[a]! * g.dilation[a]!;
              if (at < 0 || at >= inS[a]!) inside = false;
              xi = xi * inS[a]! + at;
            }
            if (!inside) continue;
            const t = x[xi]! * w[(o * Cg + c) * K + k]!;
            s += t;
            m += Math.abs(t);
          }
        y[(n * O + o) * P + p] = s;
        mag[(n * O + o) * P + p] = m;
      }
  return { y, mag, shape: [N, O, ...outS] };
}

const defaultBackend = (): WebGpuBackend => be;

interface Spec {
  x: number[];
  w: number[];
  stride?: number[];
  dilation?: number[];
  pads?: [number, number][];
  groups?: number;
}

/** Runs conv on webgpu and checks it against the oracle; returns the dispatches it took. */
async function check(
  spec: Spec,
  seed: number,
  view?: (a: NDArray) => NDArray,
  be: WebGpuBackend = defaultBackend(),
): Promise<number> {
  const r = spec.x.length - 2;
  const g: Geometry = {
    stride: spec.stride ?? new Array(r).fill(1),
    dilation: spec.dilation ?? new Array(r).fill(1),
    pads: spec.pads ?? new Array(r).fill([0, 0]),
    groups: spec.groups ?? 1,
  };
  const xd = rand(prod(spec.x), seed);
  const wd = rand(prod(spec.w), seed + 7);
  const want = oracle(xd, spec.x, wd, spec.w, g);
  const x0 = be.fromArray(xd, spec.x);
  const x = view ? view(x0) : x0;
  const w = be.fromArray(wd, spec.w);
  await be.synchronize();
  const before = be.kernelStats().dispatches;
  const y = be.conv(x, w, { stride: g.stride, dilation: g.dilation, padding: g.pads, groups: g.groups });
  const dispatches = be.kernelStats().dispatches - before;
  expect(y.shape).toEqual(want.shape);
  const got = (await be.read(y)) as Float32Array;
  const K = prod(spec.w.slice(1));
  let worst = 0;
  for (let i = 0; i < want.y.length; i++) {
    const bound = (K + 2) * 2 ** -23 * want.mag[i]! + 1e-30;
    worst = Math.max(worst, Math.abs(got[i]! - want.y[i]!) / bound);
  }
  expect(worst).toBeLessThanOrEqual(1);
  for (const a of new Set([x0, x, w, y])) be.free(a);
  return dispatches;
}

describe('webgpu conv kernels', () => {
  test.each<[string, Spec]>([
    [
      'depthwise 3×3, padding 1',
      {
        x: [1, 8, 12, 12],
        w: [8, 1, 3, 3],
        pads: [
          [1, 1],
          [1, 1],
        ],
        groups: 8,
      },
    ],
    [
      'depthwise 5×5, stride 2, padding 2, odd size',
      {
        x: [2, 6, 13, 11],
        w: [6, 1, 5, 5],
        stride: [2, 2],
        pads: [
          [2, 2],
          [2, 2],
        ],
        groups: 6,
      },
    ],
    [
      'depthwise, dilation 2, asymmetric padding, stride (1, 3)',
      {
        x: [1, 5, 9, 17],
        w: [5, 1, 3, 2],
        stride: [1, 3],
        dilation: [2, 2],
        pads: [
          [0, 2],
          [1, 0],
        ],
        groups: 5,
      },
    ],
    ['depthwise 1-D', { x: [2, 4, 19], w: [4, 1, 3], dilation: [2], pads: [[2, 2]], groups: 4 }],
    ['pointwise 1×1, odd channels and size', { x: [2, 24, 13, 11], w: [40, 24, 1, 1] }],
    ['pointwise 1×1, O > 64, P > 64', { x: [1, 19, 10, 10], w: [70, 19, 1, 1] }],
    ['1×1 stride 2', { x: [1, 6, 9, 9], w: [10, 6, 1, 1], stride: [2, 2] }],
    [
      '3×3 stride 2 padding 1 (stem)',
      {
        x: [1, 3, 17, 16],
        w: [16, 3, 3, 3],
        stride: [2, 2],
        pads: [
          [1, 1],
          [1, 1],
        ],
      },
    ],
    [
      '3×3 dilation 2, asymmetric padding',
      {
        x: [2, 5, 11, 12],
        w: [33, 5, 3, 3],
        dilation: [2, 2],
        pads: [
          [1, 2],
          [0, 3],
        ],
      },
    ],
    ['2×4 window, no padding', { x: [1, 7, 8, 9], w: [9, 7, 2, 4] }],
    [
      'groups 2',
      {
        x: [2, 6, 7, 7],
        w: [4, 3, 3, 3],
        pads: [
          [1, 1],
          [1, 1],
        ],
        groups: 2,
      },
    ],
    ['groups 3, multiplier 2', { x: [1, 3, 6, 5], w: [6, 1, 3, 3], groups: 3 }],
    ['1-D, stride 2 padding 2', { x: [2, 3, 17], w: [4, 3, 5], stride: [2], pads: [[2, 2]] }],
    [
      'padding along W only',
      {
        x: [1, 2, 5, 5],
        w: [3, 2, 3, 3],
        pads: [
          [0, 0],
          [1, 1],
        ],
      },
    ],
  ])('%s: one dispatch, within the summation bound of the float64 oracle', async (_, spec) => {
    expect(await check(spec, spec.x.length + spec.w[0]!)).toBe(1);
    expect(await check(spec, spec.x.length + spec.w[0]!, undefined, tiled)).toBe(1);
  });

  test('a small output over a long K launches smaller tiles, not one workgroup (PP-OCRv4 rec)', async () => {
    // 60 rows × 40 pixels fit one 4×4-tiled workgroup; the tile shrinks until the grid has 64 workgroups or 1×1
    expect(chooseConvTile(60, 40)).toEqual({ rm: 1, rn: 1 });
    expect(chooseConvTile(64, 4096)).toEqual({ rm: 4, rn: 4 }); // 64 workgroups at 4×4 already
    expect(chooseConvTile(24, 1024, 2)).toEqual({ rm: 2, rn: 2 }); // 16 × 1 × 2 planes at 2×4: 32, so 2×2: 64
    const spec: Spec = {
      x: [1, 240, 1, 40],
      w: [60, 240, 3, 3],
      pads: [
        [1, 1],
        [1, 1],
      ],
    };
    expect(await check(spec, 11, undefined, tiled)).toBe(1);
  });

  test('strided views as operands: a transposed x and a channels-last x, read in place', async () => {
    const spec: Spec = {
      x: [1, 4, 9, 7],
      w: [5, 4, 3, 3],
      pads: [
        [1, 1],
        [1, 1],
      ],
    };
    // x placed transposed in H and W, then viewed back: the kernel reads it through its strides
    for (const b of [be, tiled]) {
      const view = (x0: NDArray): NDArray => b.permute(b.contiguous(b.permute(x0, [0, 1, 3, 2])), [0, 1, 3, 2]);
      expect(await check(spec, 3, view, b)).toBe(1);
    }
    const dw = await check({ x: [1, 6, 8, 8], w: [6, 1, 3, 3], groups: 6 }, 4, (x0) =>
      be.permute(be.contiguous(be.permute(x0, [0, 2, 3, 1])), [0, 3, 1, 2]),
    );
    expect(dw).toBe(1);
  });

  test('3-D windows fall back to the composite and still match the oracle', async () => {
    const dispatches = await check(
      {
        x: [1, 2, 4, 5, 3],
        w: [3, 2, 2, 3, 2],
        pads: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      },
      9,
    );
    expect(dispatches).toBeGreaterThan(1);
  });

  test('a padded tap times an infinite weight is NaN, as the composite pads x with zeros', async () => {
    const x = be.fromArray(new Float32Array(9).fill(1), [1, 1, 3, 3]);
    const taps = new Float32Array(9).fill(0.5);
    taps[0] = Infinity; // tap (0, 0) lies in the padding for the first output row and column
    const want = [NaN, NaN, NaN, NaN, Infinity, Infinity, NaN, Infinity, Infinity];
    for (const b of [be, tiled]) {
      const xb = b === be ? x : b.fromArray(new Float32Array(9).fill(1), [1, 1, 3, 3]);
      const w = b.fromArray(taps, [1, 1, 3, 3]);
      // groups 1 runs the implicit GEMM; a depthwise pair of channels the depthwise kernel
      const y = b.conv(xb, w, { padding: 1 });
      expect(Array.from((await b.read(y)) as Float32Array)).toEqual(want);
      const x2 = b.fromArray(new Float32Array(18).fill(1), [1, 2, 3, 3]);
      const w2 = b.fromArray(Float32Array.of(...taps, ...taps), [2, 1, 3, 3]);
      const y2 = b.conv(x2, w2, { padding: 1, groups: 2 });
      expect(Array.from((await b.read(y2)) as Float32Array)).toEqual([...want, ...want]);
    }
  });

  test('an empty batch gives an empty output', async () => {
    const y = be.conv(be.full([0, 3, 5, 5], 0), be.full([4, 3, 3, 3], 0));
    expect(y.shape).toEqual([0, 4, 3, 3]);
  });

  test('bad operands get the composite typed errors', () => {
    const x = be.full([1, 4, 5, 5], 0);
    const w = be.full([6, 4, 3, 3], 0);
    expect(() => be.conv(be.full([1, 4, 5, 5], 0, 'int32'), w)).toThrow(DTypeError);
    expect(() => be.conv(be.full([1, 4, 5, 5], 0, 'float16'), w)).toThrow(DTypeError);
    expect(() => be.conv(x, be.full([6, 3, 3, 3], 0))).toThrow(ShapeMismatchError);
    expect(() => be.conv(x, w, { groups: 0 })).toThrow(InvalidArgumentError);
    expect(() => be.conv(x, w, { groups: 3 })).toThrow(ShapeMismatchError);
    expect(() => be.conv(x, be.full([6, 4, 7, 7], 0))).toThrow(ShapeMismatchError); // window past the input
    expect(() => be.conv(x, be.full([6, 4, 0, 3], 0))).toThrow(InvalidArgumentError);
  });
});
