/**
 * Convolution and pooling with gradients, over 1–3 spatial axes (PyTorch's torch.nn.functional
 * conv1d/conv2d/conv3d, conv_transpose*, max_pool*, avg_pool*), on the HAL's composites conv,
 * convTranspose, maxPool and avgPool (hal/src/families/conv/conv.ts, hal/src/families/conv/pool.ts). Channels first:
 * x [N, C, ...spatial], w [O, C/groups, ...k] (convTranspose: [C, O/groups, ...k]); float32.
 *
 * Gradients: conv's dx is convTranspose(dy, w) with the output padding that restores x's size, its dW
 * is convWeightGrad(x, dy) (dyᵀ · im2col(x), per group); convTranspose's dx is conv(dy, w) and its dW
 * convWeightGrad(dy, x); maxPool sends dy to the first maximal element of each window; avgPool spreads
 * dy/count over each window. Errors are the HAL's: ShapeMismatchError for disagreeing shapes,
 * InvalidArgumentError for options outside their domains, DTypeError for int32 operands.
 */
import {
  type AvgPoolOptions,
  avgPoolGrad,
  type ComputeBackend,
  type ConvHost,
  type ConvOptions,
  type ConvTransposeOptions,
  convWeightGrad,
  InvalidArgumentError,
  maxPoolGrad,
  type NDArray,
  type PoolOptions,
  perAxis,
  ShapeMismatchError,
  windowGeometry,
} from '@polyhal/hal';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

const host = (be: ComputeBackend): ConvHost => be as ConvHost;

function checkRank(x: Tensor, rank: number | null, op: string): void {
  if (rank !== null && x.rank !== rank + 2)
    throw new ShapeMismatchError(`${op} expects x with ${rank} spatial axes ([N, C, ...]), got [${x.shape}]`, [
      x.shape,
    ]);
}

/**
 * N-d convolution (the spatial rank from x): x [N, C, ...in], w [O, C/groups, ...k] → [N, O, ...out].
 * Options: stride, padding (integers, [before, after] pairs, 'valid', 'same', 'same-lower'), dilation, groups.
 */
export function conv(x: Tensor, w: Tensor, options: ConvOptions = {}, op = 'conv'): Tensor {
  return record(
    op,
    [x, w],
    (be, [xv, wv]) => be.conv(xv!, wv!, options),
    (be, g, [xv, wv], _out, needs) => {
      const kernel = wv!.shape.slice(2);
      const geo = windowGeometry(xv!.shape.slice(2), { kernel, ...options }, op);
      const dw = needs[1] ? convWeightGrad(host(be), xv!, g, kernel, options) : null;
      if (!needs[0]) return [null, dw];
      // convTranspose of dy restores x's size with the rows no window reached as output padding
      const outputPadding = geo.input.map(
        (n, a) =>
          n +
          geo.pads[a]![0] +
          geo.pads[a]![1] -
          ((geo.output[a]! - 1) * geo.stride[a]! + geo.dilation[a]! * (kernel[a]! - 1) + 1),
      );
      const dx = be.convTranspose(g, wv!, {
        stride: geo.stride,
        dilation: geo.dilation,
        padding: geo.pads,
        outputPadding,
        groups: options.groups,
      });
      return [dx, dw];
    },
  );
}

/** conv over one spatial axis: x [N, C, L], w [O, C/groups, k] → [N, O, Lo] (PyTorch conv1d). */
export function conv1d(x: Tensor, w: Tensor, options: ConvOptions = {}): Tensor {
  checkRank(x, 1, 'conv1d');
  return conv(x, w, options, 'conv1d');
}

/** conv over two spatial axes: x [N, C, H, W], w [O, C/groups, kh, kw] → [N, O, Ho, Wo] (PyTorch conv2d). */
export function conv2d(x: Tensor, w: Tensor, options: ConvOptions = {}): Tensor {
  checkRank(x, 2, 'conv2d');
  return conv(x, w, options, 'conv2d');
}

/**
 * Transposed convolution (conv's adjoint in x): x [N, C, ...in], w [C, O/groups, ...k] → [N, O, ...out],
 * out = (in − 1)·s − before − after + d·(k − 1) + outputPadding + 1. PyTorch's rule: outputPadding must be
 * smaller than the stride or the dilation (InvalidArgumentError otherwise).
 */
export function convTranspose(x: Tensor, w: Tensor, options: ConvTransposeOptions = {}, op = 'convTranspose'): Tensor {
  const r = x.rank - 2;
  if (r >= 1) {
    const s = perAxis(options.stride, r, 1, op, 'stride');
    const d = perAxis(options.dilation, r, 1, op, 'dilation');
    const p = perAxis(options.outputPadding, r, 0, op, 'outputPadding', 0);
    if (p.some((v, a) => v >= s[a]! && v >= d[a]!))
      throw new InvalidArgumentError(`${op}: outputPadding must be smaller than the stride or the dilation`);
  }
  return record(
    op,
    [x, w],
    (be, [xv, wv]) => be.convTranspose(xv!, wv!, options),
    (be, g, [xv, wv], _out, needs) => {
      const s = perAxis(options.stride, r, 1, op, 'stride');
      const p = perAxis(options.outputPadding, r, 0, op, 'outputPadding', 0);
      // output rows past s·⌊p/s⌋ of padding receive nothing from x: drop them so conv(dy) has x's size
      const extra = p.map((v, a) => s[a]! * Math.floor(v / s[a]!));
      const gc = extra.some((e) => e > 0)
        ? be.contiguous(
            be.shrink(
              g,
              g.shape.map((n, a) => [0, a < 2 ? n : n - extra[a - 2]!] as [number, number]),
            ),
          )
        : g;
      try {
        const co = {
          stride: options.stride,
          dilation: options.dilation,
          padding: options.padding,
          groups: options.groups,
        };
        const dw = needs[1] ? convWeightGrad(host(be), gc, xv!, wv!.shape.slice(2), co) : null;
        const dx = needs[0] ? be.conv(gc, wv!, co) : null;
        return [dx, dw];
      } finally {
        if (gc !== g) be.free(gc as NDArray);
      }
    },
  );
}

/** convTranspose over two spatial axes (PyTorch conv_transpose2d). */
export function convTranspose2d(x: Tensor, w: Tensor, options: ConvTransposeOptions = {}): Tensor {
  checkRank(x, 2, 'convTranspose2d');
  return convTranspose(x, w, options, 'convTranspose2d');
}

/**
 * Max pooling: x [N, C, ...in] → [N, C, ...out]; kernelSize, stride (default kernelSize), padding, dilation, ceilMode.
 */
export function maxPool(x: Tensor, options: PoolOptions, op = 'maxPool'): Tensor {
  return record(
    op,
    [x],
    (be, [xv]) => be.maxPool(xv!, options),
    (be, g, [xv]) => [maxPoolGrad(host(be), xv!, g, options)],
  );
}

/** Average pooling: x [N, C, ...in] → [N, C, ...out]; PoolOptions plus countIncludePad (default true). */
export function avgPool(x: Tensor, options: AvgPoolOptions, op = 'avgPool'): Tensor {
  return record(
    op,
    [x],
    (be, [xv]) => be.avgPool(xv!, options),
    (be, g, [xv]) => [avgPoolGrad(host(be), g, xv!.shape, options)],
  );
}

/** maxPool over two spatial axes (PyTorch max_pool2d). */
export function maxPool2d(x: Tensor, options: PoolOptions): Tensor {
  checkRank(x, 2, 'maxPool2d');
  return maxPool(x, options, 'maxPool2d');
}

/** avgPool over two spatial axes (PyTorch avg_pool2d). */
export function avgPool2d(x: Tensor, options: AvgPoolOptions): Tensor {
  checkRank(x, 2, 'avgPool2d');
  return avgPool(x, options, 'avgPool2d');
}
