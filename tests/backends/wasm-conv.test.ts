// The wasm backend's conv kernels (backends/wasm/src/dispatch-conv.ts): stride-1 convs on convDirect (assembly/
// conv-direct.ts: B read from the zero-padded image, or from x in place without padding), other strides and wide
// grids with too many extra pixels on convGemm, depthwise convs on depthwiseConv (two output rows at a time, then
// the odd row; 8 and 4 pixels a step). Which calls take which kernel (counted through the kernel exports),
// checked against a float64 convolution written here; the parts split across worker threads give one thread's bits.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createWasmBackend, type WasmBackend } from '@polyhal/backend-wasm';
import type { ConvOptions, NDArray } from '@polyhal/hal';

type Kernels = Record<string, (...args: number[]) => unknown>;
let be: WasmBackend;
let one: WasmBackend;
const calls: Record<string, number> = { convDirect: 0, convGemm: 0, depthwiseConv: 0 };

beforeAll(async () => {
  // two threads splitting every conv, and one thread: the same bits
  be = await createWasmBackend({ threads: 2, threadThreshold: 1 });
  one = await createWasmBackend({ threads: 1 });
  for (const b of [be, one]) {
    const k = (b as unknown as { ctx: { k: Kernels } }).ctx.k;
    for (const name of Object.keys(calls)) {
      const kernel = k[name]!;
      k[name] = (...args: number[]) => {
        calls[name]!++;
        return kernel(...args);
      };
    }
  }
});
afterAll(() => {
  be.dispose();
  one.dispose();
});

const rand = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
const prod = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);

interface Spec {
  x: number[]; // [N, C, H, W] or [N, C, L]
  w: number[];
  stride?: number[];
  dilation?: number[];
  pads?: [number, number][];
  groups?: number;
  bias?: boolean;
}

/** float64 conv of NCHW x with OIHW w (1-D as height 1), and each output's Σ|x·w| (its rounding scale). */
function oracle(s: Spec, x: Float32Array, w: Float32Array, b: Float32Array | null) {
  const d2 = s.x.length === 4;
  const [N, C, H, W] = d2 ? s.x : [s.x[0]!, s.x[1]!, 1, s.x[2]!];
  const [O, Cg, kh, kw] = d2 ? s.w : [s.w[0]!, s.w[1]!, 1, s.w[2]!];
  const [sh, sw] = d2 ? (s.stride ?? [1, 1]) : [1, s.stride?.[0] ?? 1];
  const [dh, dw] = d2 ? (s.dilation ?? [1, 1]) : [1, s.dilation?.[0] ?? 1];
  const pads =
    s.pads ??
    (d2
      ? [
          [0, 0],
          [0, 0],
        ]
      : [[0, 0]]);
  const [[pt, pb], [pl, pr]] = d2 ? pads : [[0, 0], pads[0]!];
  const OH = Math.floor((H + pt! + pb! - dh * (kh - 1) - 1) / sh) + 1;
  const OW = Math.floor((W + pl! + pr! - dw * (kw - 1) - 1) / sw) + 1;
  const g = s.groups ?? 1;
  const Og = O / g;
  const y = new Float64Array(N * O * OH * OW);
  const mag = new Float64Array(y.length);
  for (let n = 0; n < N; n++)
    for (let o = 0; o < O; o++)
      for (let oh = 0; oh < OH; oh++)
        for (let ow = 0; ow < OW; ow++) {
          let acc = 0;
          let m = 0;
          for (let c = 0; c < Cg; c++)
            for (let i = 0; i < kh; i++)
              for (let j = 0; j < kw; j++) {
                const ih = oh * sh + i * dh - pt!;
                const iw = ow * sw + j * dw - pl!;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const v =
                  x[((n * C + Math.floor(o / Og) * Cg + c) * H + ih) * W + iw]! * w[((o * Cg + c) * kh + i) * kw + j]!;
                acc += v;
                m += Math.abs(v);
              }
          const at = ((n * O + o) * OH + oh) * OW + ow;
          y[at] = acc + (b ? b[o]! : 0);
          mag[at] = m + (b ? Math.abs(b[o]!) : 0);
        }
  return { y, mag, shape: [N, O, ...(d2 ? [OH, OW] : [OW])] };
}

function run(b: WasmBackend, s: Spec, x: Float32Array, w: Float32Array, bias: Float32Array | null) {
  const before = { ...calls };
  const xa = b.fromArray(x, s.x);
  const wa = b.fromArray(w, s.w);
  const ba = bias ? b.fromArray(bias, [s.w[0]!]) : undefined;
  const o: ConvOptions = { stride: s.stride, dilation: s.dilation, groups: s.groups, bias: ba };
  if (s.pads) o.padding = s.pads;
  const y: NDArray = b.conv(xa, wa, o);
  const out = { shape: [...y.shape], data: b.readSync(y) as Float32Array };
  for (const a of [y, xa, wa, ...(ba ? [ba] : [])]) b.free(a);
  return {
    ...out,
    direct: calls.convDirect! - before.convDirect!,
    gemm: calls.convGemm! - before.convGemm!,
    depthwise: calls.depthwiseConv! - before.depthwiseConv!,
  };
}

const cases: [string, Spec, 'direct' | 'gemm' | 'depthwise'][] = [
  [
    '3×3, padding 1, bias',
    {
      x: [1, 5, 9, 60],
      w: [7, 5, 3, 3],
      pads: [
        [1, 1],
        [1, 1],
      ],
      bias: true,
    },
    'direct',
  ],
  ['1×1 over 35 pixels, x read in place', { x: [1, 6, 5, 7], w: [11, 6, 1, 1], bias: true }, 'direct'],
  ['3×3 without padding (x in place, wide rows)', { x: [2, 3, 6, 64], w: [4, 3, 3, 3] }, 'direct'],
  [
    '3×2, dilation [2, 1], asymmetric padding',
    {
      x: [1, 4, 7, 40],
      w: [6, 4, 3, 2],
      dilation: [2, 1],
      pads: [
        [0, 2],
        [3, 1],
      ],
    },
    'direct',
  ],
  [
    'groups 2, 3×3, padding 1',
    {
      x: [2, 4, 5, 96],
      w: [6, 2, 3, 3],
      groups: 2,
      pads: [
        [1, 1],
        [1, 1],
      ],
      bias: true,
    },
    'direct',
  ],
  ['1-D, kernel 3, padding 1', { x: [2, 3, 50], w: [5, 3, 3], pads: [[1, 1]], bias: true }, 'direct'],
  ['more than one K block: 300 channels, 1×1', { x: [1, 300, 4, 20], w: [13, 300, 1, 1], bias: true }, 'direct'],
  [
    'more than one K block: 40 channels, 3×3',
    {
      x: [1, 40, 10, 64],
      w: [9, 40, 3, 3],
      pads: [
        [1, 1],
        [1, 1],
      ],
    },
    'direct',
  ],
  [
    'stride 2: convGemm',
    {
      x: [1, 3, 11, 17],
      w: [5, 3, 3, 3],
      stride: [2, 2],
      pads: [
        [1, 1],
        [1, 1],
      ],
    },
    'gemm',
  ],
  [
    'depthwise 5×5, 7 rows of 21',
    {
      x: [2, 3, 7, 21],
      w: [3, 1, 5, 5],
      groups: 3,
      pads: [
        [2, 2],
        [2, 2],
      ],
      bias: true,
    },
    'depthwise',
  ],
  [
    'depthwise 3×3, stride 2, 9 rows of 30',
    {
      x: [1, 4, 9, 30],
      w: [4, 1, 3, 3],
      groups: 4,
      stride: [2, 2],
      pads: [
        [1, 1],
        [1, 1],
      ],
    },
    'depthwise',
  ],
  [
    'depthwise 5×5, stride [2, 1]',
    {
      x: [1, 5, 12, 19],
      w: [5, 1, 5, 5],
      groups: 5,
      stride: [2, 1],
      pads: [
        [2, 2],
        [2, 2],
      ],
      bias: true,
    },
    'depthwise',
  ],
  [
    'depthwise 3×3, dilation 2, stride 3',
    {
      x: [1, 2, 14, 26],
      w: [2, 1, 3, 3],
      groups: 2,
      dilation: [2, 2],
      stride: [3, 3],
      pads: [
        [2, 1],
        [0, 2],
      ],
    },
    'depthwise',
  ],
  [
    'weights packed by both threads: 1×1, 300 → 120 channels',
    { x: [1, 300, 2, 12], w: [120, 300, 1, 1], bias: true },
    'direct',
  ],
  [
    '1×3 over 40 pixels (wide grid 5% larger): convGemm',
    {
      x: [1, 8, 1, 40],
      w: [6, 8, 1, 3],
      pads: [
        [0, 0],
        [1, 1],
      ],
    },
    'gemm',
  ],
];

test.each(cases)('%s: %j takes %s and matches float64', (_, s, kernel) => {
  const x = rand(prod(s.x), 1);
  const w = rand(prod(s.w), 2);
  const bias = s.bias ? rand(s.w[0]!, 3) : null;
  const want = oracle(s, x, w, bias);
  const two = run(be, s, x, w, bias);
  const single = run(one, s, x, w, bias);
  expect(two.shape).toEqual(want.shape);
  expect(single.direct > 0).toBe(kernel === 'direct');
  expect(single.gemm > 0).toBe(kernel === 'gemm');
  expect(single.depthwise > 0).toBe(kernel === 'depthwise');
  let worst = 0;
  for (let i = 0; i < want.y.length; i++)
    worst = Math.max(worst, Math.abs(single.data[i]! - want.y[i]!) - (1e-6 * want.mag[i]! + 1e-7));
  expect(worst).toBeLessThanOrEqual(0);
  expect(Buffer.from(two.data.buffer).equals(Buffer.from(single.data.buffer))).toBe(true);
});
