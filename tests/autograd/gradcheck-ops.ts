// The gradient checks of the differentiable ops of the HAL contract (and the layers built on them): one entry
// per op, with inputs kept away from the op's kinks. autograd.test.ts checks them against central differences on
// every backend; compile-gradchecks.test.ts checks compiled gradients against eager ones bit for bit.
import * as ag from '@polyhal/autograd';
import { type GradCheckInput, Tensor } from '@polyhal/autograd';
import { mulberry32 } from '@polyhal/hal';
import { scatterChecks } from './autograd-scatter-checks.js';
import type { Check } from './gradchecks.js';

/** The values of every check, then of autograd.test.ts's other tests (vals), in this order. */
const rng = mulberry32(42);
/** Random values in [lo, hi] kept at least `gap` away from `avoid` (kinks of relu, max, mod). */
export function vals(n: number, lo = -2, hi = 2, avoid: number[] = [], gap = 0.1): number[] {
  const out: number[] = [];
  while (out.length < n) {
    const v = lo + (hi - lo) * rng();
    if (avoid.every((a) => Math.abs(v - a) > gap)) out.push(v);
  }
  return out;
}
const inp = (shape: number[], lo?: number, hi?: number, avoid?: number[]): GradCheckInput => ({
  shape,
  values: vals(
    shape.reduce((p, d) => p * d, 1),
    lo,
    hi,
    avoid,
  ),
});

/** A shuffle of (i − n/2)/10: distinct values 0.1 apart (topk's order is stable under small changes). */
const spaced = (shape: number[]): GradCheckInput => {
  const n = shape.reduce((p, d) => p * d, 1);
  const v = Array.from({ length: n }, (_, i) => (i - n / 2) / 10);
  for (let i = v.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [v[i], v[j]] = [v[j]!, v[i]!];
  }
  return { shape, values: v };
};

/** One entry per differentiable op of the HAL contract (and the layers built on them). */
export const CHECKS: Check[] = [
  ['neg', ([x]) => ag.neg(x!), [inp([2, 3])]],
  ['exp', ([x]) => ag.exp(x!), [inp([2, 3])]],
  ['log', ([x]) => ag.log(x!), [inp([2, 3], 0.5, 3)]],
  ['relu', ([x]) => ag.relu(x!), [inp([2, 3], -2, 2, [0])]],
  ['sigmoid', ([x]) => ag.sigmoid(x!), [inp([2, 3])]],
  ['tanh', ([x]) => ag.tanh(x!), [inp([2, 3])]],
  ['sqrt', ([x]) => ag.sqrt(x!), [inp([2, 3], 0.5, 3)]],
  ['recip', ([x]) => ag.recip(x!), [inp([2, 3], 0.5, 2)]],
  ['exp2', ([x]) => ag.exp2(x!), [inp([2, 3])]],
  ['log2', ([x]) => ag.log2(x!), [inp([2, 3], 0.5, 3)]],
  ['sin', ([x]) => ag.sin(x!), [inp([2, 3])]],
  ['cos', ([x]) => ag.cos(x!), [inp([2, 3])]],
  ['abs', ([x]) => ag.abs(x!), [inp([2, 3], -2, 2, [0])]],
  // Piecewise constant: gradient 0 away from the jumps.
  ['sign', ([x]) => ag.mul(ag.sign(x!), x!), [inp([2, 3], -2, 2, [0])]],
  ['floor', ([x]) => ag.add(ag.floor(x!), x!), [inp([2, 3], -2, 2, [-1, 0, 1])]],
  ['ceil', ([x]) => ag.add(ag.ceil(x!), x!), [inp([2, 3], -2, 2, [-1, 0, 1])]],
  ['round', ([x]) => ag.add(ag.round(x!), x!), [inp([2, 3], -2, 2, [-1.5, -0.5, 0.5, 1.5])]],
  ['trunc', ([x]) => ag.add(ag.trunc(x!), x!), [inp([2, 3], -2, 2, [-1, 0, 1])]],
  ['erf', ([x]) => ag.erf(x!), [inp([2, 3])]],
  ['log1p', ([x]) => ag.log1p(x!), [inp([2, 3], -0.5, 3)]],
  ['expm1', ([x]) => ag.expm1(x!), [inp([2, 3])]],
  ['softplus', ([x]) => ag.softplus(x!), [inp([2, 3], -4, 4)]],
  ['gelu', ([x]) => ag.gelu(x!), [inp([2, 3], -3, 3)]],
  ['geluTanh', ([x]) => ag.geluTanh(x!), [inp([2, 3], -3, 3)]],
  ['silu', ([x]) => ag.silu(x!), [inp([2, 3], -4, 4)]],
  ['tan', ([x]) => ag.tan(x!), [inp([2, 3], -1.2, 1.2)]],
  ['asin', ([x]) => ag.asin(x!), [inp([2, 3], -0.9, 0.9)]],
  ['acos', ([x]) => ag.acos(x!), [inp([2, 3], -0.9, 0.9)]],
  ['atan', ([x]) => ag.atan(x!), [inp([2, 3], -3, 3)]],
  ['sinh', ([x]) => ag.sinh(x!), [inp([2, 3])]],
  ['cosh', ([x]) => ag.cosh(x!), [inp([2, 3], -2, 2, [0])]],
  ['asinh', ([x]) => ag.asinh(x!), [inp([2, 3], -3, 3)]],
  ['acosh', ([x]) => ag.acosh(x!), [inp([2, 3], 1.2, 4)]],
  ['atanh', ([x]) => ag.atanh(x!), [inp([2, 3], -0.9, 0.9)]],
  ['add (broadcast)', ([a, b]) => ag.add(a!, b!), [inp([2, 3]), inp([3])]],
  ['sub (broadcast)', ([a, b]) => ag.sub(a!, b!), [inp([2, 1]), inp([1, 3])]],
  ['mul (broadcast)', ([a, b]) => ag.mul(a!, b!), [inp([2, 3]), inp([2, 1])]],
  ['div (broadcast)', ([a, b]) => ag.div(a!, b!), [inp([2, 3]), inp([3], 0.5, 2)]],
  [
    'maximum',
    ([a, b]) => ag.maximum(a!, b!),
    [
      { shape: [4], values: [1, -1, 0.5, 2] },
      { shape: [4], values: [0.2, 0.3, -1, 2.5] },
    ],
  ],
  [
    'minimum',
    ([a, b]) => ag.minimum(a!, b!),
    [
      { shape: [4], values: [1, -1, 0.5, 2] },
      { shape: [4], values: [0.2, 0.3, -1, 2.5] },
    ],
  ],
  ['pow (broadcast)', ([a, b]) => ag.pow(a!, b!), [inp([2, 3], 0.5, 2), inp([3], -2, 2)]],
  ['pow (integer exponents, negative bases)', ([a]) => ag.pow(a!, 3), [{ shape: [4], values: [-1.5, -0.5, 0.7, 2] }]],
  [
    'mod',
    ([a, b]) => ag.mod(a!, b!),
    [
      { shape: [4], values: [2.3, -1.7, 5.2, 0.6] },
      { shape: [4], values: [1.5, 1.1, -2.2, 0.9] },
    ],
  ],
  ['scalar operands', ([x]) => ag.div(ag.sub(3, ag.mul(x!, 2)), 1.5), [inp([3])]],
  ['sum (axes, keepdims)', ([x]) => ag.sum(x!, [0, 2], true), [inp([2, 3, 2])]],
  ['sum (all)', ([x]) => ag.sum(x!), [inp([2, 3])]],
  ['mean', ([x]) => ag.mean(x!, 1), [inp([2, 3])]],
  ['max', ([x]) => ag.max(x!, 1), [{ shape: [2, 3], values: [0.1, 0.9, -0.5, 2, 1, 1.5] }]],
  ['min', ([x]) => ag.min(x!, 0, true), [{ shape: [2, 3], values: [0.1, 0.9, -0.5, 2, 1, 1.5] }]],
  ['prod', ([x]) => ag.prod(x!, [0, 2]), [inp([2, 3, 2], 0.5, 1.5)]],
  // one zero in a row: it gets the product of the rest, the others 0; two zeros: all 0
  ['prod (zeros)', ([x]) => ag.prod(x!, 1), [{ shape: [3, 3], values: [0.5, 0, 1.5, 0, 2, 0, 0.7, 1.2, -0.9] }]],
  ['reshape', ([x]) => ag.mul(ag.reshape(x!, [3, 2]), ag.reshape(x!, [3, 2])), [inp([2, 3])]],
  ['layerNorm', ([x, w, b]) => ag.layerNorm(x!, [4], w!, b!), [inp([3, 4]), inp([4]), inp([4])]],
  ['rmsNorm', ([x, w]) => ag.rmsNorm(x!, [2, 3], w!), [inp([2, 2, 3]), inp([2, 3])]],
  [
    'scaledDotProductAttention (causal, additive mask)',
    ([q, k, v, m]) => ag.scaledDotProductAttention(q!, k!, v!, { causal: true, mask: m! }),
    [inp([2, 3, 4]), inp([2, 3, 4]), inp([2, 3, 2]), inp([3, 3])],
  ],
  ['permute', ([x]) => ag.mul(ag.permute(x!, [2, 0, 1]), 2), [inp([2, 3, 2])]],
  ['expand', ([x]) => ag.expand(x!, [2, 3, 4]), [inp([3, 1])]],
  [
    'pad',
    ([x]) =>
      ag.pad(
        x!,
        [
          [1, 0],
          [2, 1],
        ],
        0.5,
      ),
    [inp([2, 3])],
  ],
  [
    'shrink',
    ([x]) =>
      ag.shrink(x!, [
        [1, 3],
        [0, 2],
      ]),
    [inp([3, 4])],
  ],
  ['stride', ([x]) => ag.stride(x!, [2, 3]), [inp([5, 7])]],
  ['concat', ([a, b]) => ag.concat([a!, b!], 1), [inp([2, 3]), inp([2, 2])]],
  ['stack', ([a, b]) => ag.stack([a!, b!], -1), [inp([2, 3]), inp([2, 3])]],
  [
    'split',
    ([x]) => {
      const [p, , q] = x!.split([1, 2, 2], 1);
      return ag.add(p!, ag.mul(q!, 2).sum(1, true));
    },
    [inp([3, 5])],
  ],
  ['tile', ([x]) => x!.tile([2, 1, 3]), [inp([2, 3])]],
  ['flip', ([x]) => ag.mul(x!.flip([0]), x!), [inp([3, 2])]],
  ['trilu', ([x]) => ag.mul(x!.trilu(1, true), 2).add(x!.trilu(-1, false)), [inp([2, 3, 4])]],
  ...(['edge', 'reflect', 'wrap'] as const).map(
    (mode): Check => [
      `pad (${mode})`,
      ([x]) =>
        x!.pad(
          [
            [2, 5],
            [1, 3],
          ],
          0,
          mode,
        ),
      [inp([3, 4])],
    ],
  ),
  // gather: duplicate indices (−1 and 3 both read row 3: their gradients add up) and negative ones.
  [
    'gather (axis 0, duplicate and negative indices)',
    ([x]) => ag.gather(x!, Tensor.fromArray(x!.backend, [3, -1, 0, 2, 3, -4], [2, 3], { dtype: 'int32' }), 0),
    [inp([4, 3])],
  ],
  // An index out of range (6) gathers NaN and gets no gradient: its slice is cut away before the loss.
  [
    'gather (axis 1, method form, an out-of-range index)',
    ([x]) =>
      x!.gather(Tensor.fromArray(x!.backend, [6, 1, -2, 1], [4], { dtype: 'int32' }), 1).shrink([
        [0, 2],
        [1, 4],
        [0, 3],
      ]),
    [inp([2, 5, 3])],
  ],
  [
    'oneHot (a constant mask)',
    ([x]) => ag.mul(x!, Tensor.fromArray(x!.backend, [2, -1, 5, 0], [4], { dtype: 'int32' }).oneHot(3)),
    [inp([4, 3])],
  ],
  ...scatterChecks(),
  ['matmul', ([a, b]) => ag.matmul(a!, b!), [inp([3, 4]), inp([4, 2])]],
  [
    'matmul (batched, broadcast, transposed)',
    ([a, b]) => ag.matmul(a!, ag.transpose(b!)),
    [inp([2, 3, 4]), inp([5, 4])],
  ],
  [
    'matmul with a bias (a Linear layer on sequences: bias [N])',
    ([a, b, c]) => ag.matmul(a!, ag.transpose(b!), c!),
    [inp([2, 3, 4]), inp([5, 4]), inp([5])],
  ],
  [
    'matmul with a bias (batched, bias [3, 1] summed over the batch and N)',
    ([a, b, c]) => ag.matmul(a!, b!, c!),
    [inp([2, 3, 4]), inp([2, 4, 5]), inp([3, 1])],
  ],
  ['softmax', ([x]) => ag.softmax(x!), [inp([2, 4])]],
  ['logSoftmax', ([x]) => ag.logSoftmax(x!, 0), [inp([3, 2])]],
  [
    'softmaxCrossEntropy',
    ([x, y]) => ag.softmaxCrossEntropy(x!, y!),
    [inp([3, 4]), { shape: [3, 4], values: [0, 1, 0, 0, 0.5, 0, 0.5, 0, 0, 0, 0, 1] }],
  ],
  [
    'conv2d (stride 2, padding 1)',
    ([x, w]) => ag.conv2d(x!, w!, { stride: 2, padding: 1 }),
    [inp([2, 2, 5, 5]), inp([3, 2, 3, 3])],
  ],
  ['conv2d (stride 1, no padding)', ([x, w]) => ag.conv2d(x!, w!), [inp([1, 1, 4, 4]), inp([2, 1, 2, 2])]],
  // stride larger than the kernel (rows no window reads get no gradient), odd sizes
  [
    'conv2d (stride 3, kernel 2, padding 1)',
    ([x, w]) => ag.conv2d(x!, w!, { stride: 3, padding: 1 }),
    [inp([2, 2, 7, 7]), inp([2, 2, 2, 2])],
  ],
  // stride 2 with a 5×5 kernel: several taps per stride phase, padded size not a multiple of the stride
  [
    'conv2d (stride 2, kernel 5, padding 2)',
    ([x, w]) => ag.conv2d(x!, w!, { stride: 2, padding: 2 }),
    [inp([1, 2, 9, 9]), inp([2, 2, 5, 5])],
  ],
  // the general convolution: groups, dilation, 'same' padding, asymmetric pads, 1-D and 3-D
  [
    'conv2d (groups 2, dilation 2, padding same)',
    ([x, w]) => ag.conv2d(x!, w!, { groups: 2, dilation: 2, padding: 'same' }),
    [inp([1, 4, 6, 5]), inp([2, 2, 3, 3])],
  ],
  [
    'conv1d (stride 2, pads [1, 2])',
    ([x, w]) => ag.conv1d(x!, w!, { stride: 2, padding: [[1, 2]] }),
    [inp([2, 3, 9]), inp([2, 3, 3])],
  ],
  ['conv (3-D)', ([x, w]) => ag.conv(x!, w!, { padding: [1, 0, 0] }), [inp([1, 2, 3, 3, 4]), inp([2, 2, 2, 2, 2])]],
  [
    'convTranspose2d (stride 2, padding 1, outputPadding 1)',
    ([x, w]) => ag.convTranspose2d(x!, w!, { stride: 2, padding: 1, outputPadding: 1 }),
    [inp([1, 2, 3, 4]), inp([2, 3, 3, 3])],
  ],
  [
    'convTranspose (1-D, groups 2, dilation 2)',
    ([x, w]) => ag.convTranspose(x!, w!, { groups: 2, dilation: 2, stride: 3 }),
    [inp([2, 4, 5]), inp([4, 1, 3])],
  ],
  [
    'maxPool2d (kernel 3, stride 2, padding 1, ceilMode)',
    ([x]) => ag.maxPool2d(x!, { kernelSize: 3, stride: 2, padding: 1, ceilMode: true }),
    // Values 0.1 apart: a window's maximum stays the same element under the finite-difference step.
    [spaced([1, 2, 6, 7])],
  ],
  [
    'avgPool2d (kernel [3, 2], padding 1, countIncludePad false)',
    ([x]) => ag.avgPool2d(x!, { kernelSize: [3, 2], stride: 1, padding: [1, 1], countIncludePad: false }),
    [inp([1, 2, 5, 4])],
  ],
  ['avgPool (1-D, ceilMode)', ([x]) => ag.avgPool(x!, { kernelSize: 3, stride: 2, ceilMode: true }), [inp([2, 1, 8])]],
  ['logsumexp (axes 0 and 2, keepdims)', ([x]) => ag.logsumexp(x!, [0, 2], true), [inp([2, 3, 4])]],
  ['logsumexp (all axes)', ([x]) => ag.logsumexp(x!), [inp([3, 5], -4, 4)]],
  [
    'groupNorm (3 groups of 2 channels, weight and bias)',
    ([x, w, b]) => ag.groupNorm(x!, 3, w!, b!),
    [inp([2, 6, 3]), inp([6]), inp([6])],
  ],
  // where: the condition from a comparison (away from its threshold), x and y broadcast, a number operand
  [
    'where (cond from greater, y broadcast)',
    ([x, y]) => ag.where(ag.greater(x!, 0.1), x!, y!),
    [inp([2, 3], -2, 2, [0.1]), inp([3])],
  ],
  [
    'where (x broadcast by the condition, number y)',
    ([x, c]) => ag.add(ag.where(ag.less(c!, 0), x!, 0), c!),
    [inp([1, 3]), inp([2, 3], -2, 2, [0])],
  ],
  // |x| < 2y and x kept 0.1 away from ±y, where fmod jumps
  [
    'fmod (x by a broadcast y)',
    ([x, y]) => ag.fmod(x!, y!),
    [inp([2, 3], -4.9, 4.9, [-2.55, 2.55]), inp([3], 2.52, 2.58)],
  ],
  ['cumsum (axis 1, two levels of blocks)', ([x]) => ag.cumsum(x!, 1), [inp([2, 37])]],
  [
    'cumsum (exclusive, reverse, axis 0)',
    ([x]) => ag.cumsum(x!, 0, { exclusive: true, reverse: true }),
    [inp([20, 2])],
  ],
  // values at least 0.1 apart, so the finite differences (h = 0.01) never reorder them
  ['topk (k 3, two rounds)', ([x]) => ag.topk(x!, 3, 1).values, [spaced([2, 24])]],
  ['topk (smallest, axis 0)', ([x]) => ag.topk(x!, 2, 0, { largest: false }).values, [spaced([5, 3])]],
  // appended last: the inputs above are drawn from one generator in order
  ['layerNorm (two dims, weight only)', ([x, w]) => ag.layerNorm(x!, [3, 4], w!), [inp([2, 3, 4]), inp([3, 4])]],
  ['layerNorm (no affine, eps 0.1)', ([x]) => ag.layerNorm(x!, [5], null, null, 0.1), [inp([2, 2, 5])]],
  ['layerNorm (bias only)', ([x, b]) => ag.layerNorm(x!, [4], null, b!), [inp([3, 4]), inp([4])]],
  ['resize (nearest, 2× up)', ([x]) => ag.resize(x!, { sizes: [1, 2, 6, 8] }), [inp([1, 2, 3, 4])]],
  [
    'resize (linear, half_pixel, 3 × 4 → 5 × 7)',
    ([x]) => ag.resize(x!, { sizes: [2, 5, 7], mode: 'linear' }),
    [inp([2, 3, 4])],
  ],
  [
    'resize (cubic, align_corners, down and up)',
    ([x]) => ag.resize(x!, { sizes: [1, 3, 6], mode: 'cubic', coordinateTransformationMode: 'align_corners' }),
    [inp([1, 4, 4])],
  ],
  [
    'resize (linear, tf_crop_and_resize: outputs outside the roi get no gradient)',
    ([x]) =>
      ag.resize(x!, {
        sizes: [3, 5],
        mode: 'linear',
        coordinateTransformationMode: 'tf_crop_and_resize',
        roi: [0, -0.4, 1, 1.2],
        extrapolationValue: 2,
      }),
    [inp([3, 4])],
  ],
];
