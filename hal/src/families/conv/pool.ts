/**
 * Max and average pooling over 1–3 spatial axes (PyTorch max_pool/avg_pool, ONNX MaxPool/AveragePool),
 * composed from HAL primitives. x [N, C, ...spatial] float32 → [N, C, ...out] (geometry: conv-geometry.ts).
 *
 * A box reduction is separable, so the forward reduces one spatial axis at a time: the k taps of that
 * axis are strided views of the padded input (stride·inner between windows, dilation·inner between
 * taps), folded with the elementwise maximum or add in tap order; no window is materialized. maxPool
 * pads with −Inf (a NaN in a window gives NaN); avgPool sums zero-padded windows and divides by the
 * window's count: the kernel's size with `countIncludePad` (PyTorch's default; padding from ceil mode's
 * extension is never counted), else the number of input elements it covers (ONNX's default,
 * count_include_pad = 0).
 *
 * Gradients (autograd): maxPoolGrad sends each window's gradient to its first maximal element in window
 * order (PyTorch's choice among ties), avgPoolGrad spreads dy/count over the window; both by col2im.
 */
import type { ConvHost } from './conv-check.js';
import { type ConvPadding, type PerAxis, perAxis, type WindowGeometry, windowGeometry } from './conv-geometry.js';
import { col2im, cropTo, padSpatial, windowsView } from './conv.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { asStridedView, type NDArray } from '../../core/ndarray.js';
import { isContiguous } from '../../core/strided.js';
import { withTemps } from '../../core/temps.js';

/** Options of `maxPool` (and the base of avgPool's): PyTorch max_poolNd and ONNX MaxPool attributes. */
export interface PoolOptions {
  /** Window size per spatial axis. */
  kernelSize: PerAxis;
  /** Step between windows (default: the kernel size, as PyTorch; ONNX's default is 1). */
  stride?: PerAxis;
  /** Padding: integers, [before, after] pairs, 'valid' (default 0), 'same' or 'same-lower'. */
  padding?: ConvPadding;
  /** Step between window elements (default 1). */
  dilation?: PerAxis;
  /** Output size rounded up (a last partial window that starts inside the input or its padding). */
  ceilMode?: boolean;
}

/** Options of `avgPool`: PoolOptions plus whether padded positions count (PyTorch avg_poolNd, ONNX AveragePool). */
export interface AvgPoolOptions extends PoolOptions {
  /** Divide by the kernel size including padded positions (default true, PyTorch). */
  countIncludePad?: boolean;
}

const prod = (xs: readonly number[]): number => xs.reduce((p, d) => p * d, 1);

/** Checks x and resolves the geometry. */
export function poolGeometry(be: ConvHost, x: NDArray, o: PoolOptions, op: string): WindowGeometry {
  be.check(x, op, 'x');
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: x must be float32, got ${x.dtype}`);
  const r = x.shape.length - 2;
  if (r < 1 || r > 3) {
    throw new ShapeMismatchError(`${op} expects x [N, C, ...spatial] with 1 to 3 spatial axes, got [${x.shape}]`, [
      x.shape,
    ]);
  }
  if (o?.kernelSize === undefined) throw new InvalidArgumentError(`${op}: options.kernelSize is required`);
  const kernel = perAxis(o.kernelSize, r, 1, op, 'kernelSize');
  return windowGeometry(x.shape.slice(2), { ...o, kernel, stride: o.stride ?? kernel }, op);
}

/**
 * Reduces the windows of xp (padded) one spatial axis at a time: per axis, the k tap views [outer, out,
 * inner] of the current array (stride·inner between windows, offset dilation·inner·tap; no copies) folded
 * with the elementwise `op` in tap order — k − 1 elementwise passes instead of a reduction over a strided axis.
 */
function separable(be: ConvHost, xp: NDArray, g: WindowGeometry, op: 'maximum' | 'add'): NDArray {
  const shape = [...xp.shape];
  let y = xp;
  for (let a = 0; a < g.output.length; a++) {
    const ax = 2 + a;
    const [outer, len, inner] = [prod(shape.slice(0, ax)), shape[ax]!, prod(shape.slice(ax + 1))];
    const c = y === xp && !isContiguous(xp) ? be.contiguous(xp) : y;
    const tap = (t: number): NDArray =>
      asStridedView(
        c,
        [outer, g.output[a]!, inner],
        [len * inner, g.stride[a]! * inner, 1],
        c.offset + t * g.dilation[a]! * inner,
      );
    let acc: NDArray = g.kernel[a]! === 1 ? be.contiguous(tap(0)) : tap(0);
    try {
      for (let t = 1; t < g.kernel[a]!; t++) {
        const next = be.binary(op, acc, tap(t));
        if (t > 1) be.free(acc);
        acc = next;
      }
    } finally {
      if (c !== y) be.free(c);
      if (y !== xp) be.free(y);
    }
    shape[ax] = g.output[a]!;
    y = be.reshape(acc, shape);
  }
  return y === xp ? be.contiguous(xp) : y;
}

/** The count each output averages over, [...out] float32 (outer product of per-axis counts). */
function divisor(be: ConvHost, g: WindowGeometry, includePad: boolean): NDArray {
  const perAxisCounts = g.output.map((out, a) => {
    const [pb, pe] = g.userPads[a]!;
    const [lo, hi] = includePad ? [0, g.input[a]! + pb + pe] : [pb, pb + g.input[a]!];
    return Array.from({ length: out }, (_, o) => {
      let n = 0;
      for (let j = 0; j < g.kernel[a]!; j++) {
        const p = o * g.stride[a]! + j * g.dilation[a]!;
        if (p >= lo && p < hi) n++;
      }
      return n;
    });
  });
  const data = new Float32Array(prod(g.output));
  data.forEach((_, i) => {
    let rest = i;
    let c = 1;
    for (let a = g.output.length - 1; a >= 0; a--) {
      c *= perAxisCounts[a]![rest % g.output[a]!]!;
      rest = Math.floor(rest / g.output[a]!);
    }
    data[i] = c;
  });
  return be.fromArray(data, g.output, 'float32');
}

/** maxPool: [N, C, ...in] → [N, C, ...out], the maximum of each window (NaN if it holds one). */
export function maxPoolComposite(be: ConvHost, x: NDArray, o: PoolOptions): NDArray {
  const g = poolGeometry(be, x, o, 'maxPool');
  const xp = padSpatial(be, x, g, -Infinity);
  try {
    return separable(be, xp, g, 'maximum');
  } finally {
    if (xp !== x) be.free(xp);
  }
}

/** avgPool: [N, C, ...in] → [N, C, ...out], each window's sum over its count. */
export function avgPoolComposite(be: ConvHost, x: NDArray, o: AvgPoolOptions): NDArray {
  const g = poolGeometry(be, x, o, 'avgPool');
  return withTemps(be, (t) => {
    const xp = padSpatial(be, x, g, 0);
    if (xp !== x) t(xp);
    const sums = t(separable(be, xp, g, 'add'));
    return be.div(sums, t(divisor(be, g, o.countIncludePad ?? true)));
  });
}

/** dx of maxPool: dy [N, C, ...out] to the first maximal element of each window of x. */
export function maxPoolGrad(be: ConvHost, x: NDArray, dy: NDArray, o: PoolOptions): NDArray {
  const g = poolGeometry(be, x, o, 'maxPoolGrad');
  const [N, C] = x.shape as [number, number];
  const r = g.output.length;
  const P = prod(g.output);
  const K = prod(g.kernel);
  return withTemps(be, (t) => {
    const xp = padSpatial(be, x, g, -Infinity);
    if (xp !== x) t(xp);
    const win = t(be.contiguous(windowsView(xp, g))); // [N, ...out, C, ...k]
    const first = t(be.argmax(be.reshape(win, [N * P * C, K]), 1)); // [N·P·C]
    const hot = t(be.oneHot(first, K));
    const dyr = t(be.contiguous(be.permute(dy, [0, ...g.output.map((_, a) => 2 + a), 1]))); // [N, ...out, C]
    const taps = t(be.mul(hot, be.reshape(dyr, [N * P * C, 1]))); // [N·P·C, K]
    const lifted = be.reshape(taps, [N, ...g.output, C, ...g.kernel]);
    const perm = [0, r + 1, ...g.kernel.map((_, a) => r + 2 + a), ...g.output.map((_, a) => 1 + a)];
    const full = t(col2im(be, be.permute(lifted, perm), g.stride, g.dilation));
    return cropTo(
      be,
      full,
      g.pads.map(([b]) => [b, 0] as [number, number]),
      g.input,
    );
  });
}

/** dx of avgPool: dy/count spread evenly over each window, [N, C, ...in]. */
export function avgPoolGrad(be: ConvHost, dy: NDArray, xShape: readonly number[], o: AvgPoolOptions): NDArray {
  const r = xShape.length - 2;
  const kernel = perAxis(o?.kernelSize, Math.max(r, 0), 1, 'avgPoolGrad', 'kernelSize');
  const g = windowGeometry(xShape.slice(2), { ...o, kernel, stride: o.stride ?? kernel }, 'avgPoolGrad');
  const [N, C] = xShape as [number, number];
  return withTemps(be, (t) => {
    const scaled = t(be.div(dy, t(divisor(be, g, o.countIncludePad ?? true))));
    const lifted = be.reshape(scaled, [N, C, ...g.kernel.map(() => 1), ...g.output]);
    const taps = be.expand(lifted, [N, C, ...g.kernel, ...g.output]);
    const full = t(col2im(be, taps, g.stride, g.dilation));
    return cropTo(
      be,
      full,
      g.pads.map(([b]) => [b, 0] as [number, number]),
      g.input,
    );
  });
}
