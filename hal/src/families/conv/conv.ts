/**
 * Convolution and transposed convolution over 1–3 spatial axes (PyTorch conv1d/2d/3d and
 * conv_transpose, ONNX Conv/ConvTranspose), composed from HAL primitives so every backend inherits
 * them. Channels first: x [N, C, ...spatial]; cross-correlation (no kernel flip), as every DL library.
 *
 * - conv: im2col as ONE strided view of the padded input ([N, ...out, C, ...k], NumPy as_strided:
 *   stride·step between windows, dilation·step inside one) materialized channels first ([N, C, ...k,
 *   ...out]) by the copy kernel, then one matmul batched over N and the groups, w [g, O/g, C/g·K] ·
 *   columns [N, g, C/g·K, P], whose output is channels first already; a 1×1 window of stride 1 without
 *   padding takes x itself as the columns.
 * - convTranspose (conv's adjoint in x): the matmul wᵀ [O·K, C] · x [C, P] (batched over N and the
 *   groups) gives every input pixel's contribution to each kernel tap, channels first; col2im then adds
 *   the taps at their output offsets, one spatial axis at a time (a box is separable): the taps' rows
 *   are zero-dilated by the stride once, each tap is padded to its offset d·tap and summed in tap order
 *   — a fixed order, so every backend gets the same sums. Where the stride equals the kernel (dilation 1)
 *   the taps tile the output and col2im is one permutation. Finally the padding is cropped (and output
 *   padding appended as zeros).
 *
 * The gradients (autograd's conv rules) come from the same three pieces: dx of conv is convTranspose
 * of dy, dx of convTranspose is conv of dy, and dW of either is `convWeightGrad` (dyᵀ · im2col).
 */
import { type ConvHost, checkConvBias, checkConvOperands, convGradDims } from './conv-check.js';
import { type ConvPadding, type PerAxis, perAxis, type WindowGeometry, windowGeometry } from './conv-geometry.js';
import type { DType } from '../../core/dtype.js';
import { DTypeError, InvalidArgumentError } from '../../core/errors.js';
import { asStridedView, type NDArray } from '../../core/ndarray.js';
import { withTemps } from '../../core/temps.js';

/** Options of `conv` (and autograd's Conv1d/2d/3d): PyTorch's convNd and ONNX Conv attributes. */
export interface ConvOptions {
  /** Step between windows per spatial axis (default 1). */
  stride?: PerAxis;
  /** Zero padding: integers, [before, after] pairs, 'valid' (default 0), 'same' or 'same-lower'. */
  padding?: ConvPadding;
  /** Step between kernel taps per spatial axis (default 1). */
  dilation?: PerAxis;
  /** Channel groups: C and O divisible by it (default 1; groups = C is a depthwise convolution). */
  groups?: number;
  /**
   * Added to each output channel's finished sums: float32 [O] (PyTorch conv's bias, ONNX Conv's B), the
   * same as conv then an add of bias reshaped to [1, O, 1, …], in one kernel where the backend has one.
   * Not for convInteger (InvalidArgumentError).
   */
  bias?: NDArray;
}

/** Options of `convTranspose`: PyTorch's conv_transposeNd and ONNX ConvTranspose attributes. */
export interface ConvTransposeOptions {
  /** Step between the input positions' windows in the output, per spatial axis (default 1). */
  stride?: PerAxis;
  /** Cropped from each end of the full output: integers or [before, after] pairs (default 0). */
  padding?: number | readonly number[] | readonly (readonly [number, number])[];
  /** Zeros appended at the end of each spatial axis (default 0). */
  outputPadding?: PerAxis;
  /** Step between kernel taps per spatial axis (default 1). */
  dilation?: PerAxis;
  /** Channel groups: C and O divisible by it (default 1). */
  groups?: number;
}

const prod = (xs: readonly number[]): number => xs.reduce((p, d) => p * d, 1);
const range = (n: number, from = 0): number[] => Array.from({ length: n }, (_, i) => from + i);

/** Frees `a` unless it shares `src`'s buffer (a view): for reshape results that may or may not copy. */
function ownedBy(t: <A extends NDArray>(a: A) => A, a: NDArray, ...srcs: NDArray[]): NDArray {
  return srcs.some((s) => s.buffer === a.buffer) ? a : t(a);
}

/** x padded with zeros (or `value`) by the geometry's pads; x itself when there are none. */
export function padSpatial(be: ConvHost, x: NDArray, g: WindowGeometry, value = 0): NDArray {
  if (g.pads.every(([b, a]) => b === 0 && a === 0)) return x;
  return be.pad(x, [[0, 0], [0, 0], ...g.pads], value);
}

/**
 * im2col: the windows of the padded input xp [N, C, ...padded] as a view [N, ...out, C, ...k]
 * (no copy: strides stride·step and dilation·step over xp's own strides).
 */
export function windowsView(xp: NDArray, g: WindowGeometry): NDArray {
  const r = g.output.length;
  const [sn, sc] = xp.strides as [number, number];
  const sp = xp.strides.slice(2);
  return asStridedView(
    xp,
    [xp.shape[0]!, ...g.output, xp.shape[1]!, ...g.kernel],
    [sn, ...range(r).map((a) => g.stride[a]! * sp[a]!), sc, ...range(r).map((a) => g.dilation[a]! * sp[a]!)],
    xp.offset,
  );
}

/** Columns [N·P, C·K] of x for geometry g (a fresh array). */
function im2col(be: ConvHost, x: NDArray, g: WindowGeometry): NDArray {
  const xp = padSpatial(be, x, g);
  try {
    const cols = be.contiguous(windowsView(xp, g));
    return be.reshape(cols, [x.shape[0]! * prod(g.output), x.shape[1]! * prod(g.kernel)]);
  } finally {
    if (xp !== x) be.free(xp);
  }
}

/** Whether a convolution of C input and O output channels in `groups` groups is depthwise (groups = C = O). */
export function isDepthwise(groups: number, C: number, O: number): boolean {
  return groups > 1 && groups === C && groups === O;
}

/**
 * conv: x [N, C, ...in], w [O, C/groups, ...k] → [N, O, ...out], float32. With `integer` (convInteger,
 * quantize.ts): integer operands (int32; int8 or uint8, both of one dtype, except depthwise), and their
 * product is that integer matmul (exact, wrapping modulo 2^32).
 */
export function convComposite(
  be: ConvHost,
  x: NDArray,
  w: NDArray,
  o: ConvOptions = {},
  integer?: (a: NDArray, b: NDArray) => NDArray,
): NDArray {
  const op = integer ? 'convInteger' : 'conv';
  const dtypes: DType[] = integer ? ['int32', 'int8', 'uint8'] : ['float32'];
  const { O } = checkConvOperands(be, x, w, o.groups, op, false, dtypes);
  if (integer && o.bias !== undefined) throw new InvalidArgumentError(`${op}: takes no bias (add it to the result)`);
  const bias = checkConvBias(be, o.bias, O, op);
  const y = convNoBias(be, x, w, o, integer);
  if (!bias) return y;
  return withTemps(be, (t) =>
    be.add(t(y), ownedBy(t, be.reshape(bias, [1, O, ...y.shape.slice(2).map(() => 1)]), bias)),
  );
}

/** convComposite without the bias: the window product itself. */
function convNoBias(
  be: ConvHost,
  x: NDArray,
  w: NDArray,
  o: ConvOptions,
  integer?: (a: NDArray, b: NDArray) => NDArray,
): NDArray {
  const op = integer ? 'convInteger' : 'conv';
  const dtypes: DType[] = integer ? ['int32', 'int8', 'uint8'] : ['float32'];
  const { groups, N, O } = checkConvOperands(be, x, w, o.groups, op, false, dtypes);
  const matmul = integer ?? ((a: NDArray, b: NDArray) => be.matmul(a, b));
  const g = windowGeometry(x.shape.slice(2), { kernel: w.shape.slice(2), ...o }, op);
  if (isDepthwise(groups, x.shape[1]!, O)) {
    // depthwise: elementwise int products, which wrap modulo 2^8 in int8 or uint8; the caller casts
    if (integer && x.dtype !== 'int32') throw new DTypeError(`${op}: a depthwise product takes int32 operands`);
    return depthwise(be, x, w, g);
  }
  const P = prod(g.output);
  const KC = prod(w.shape.slice(1)); // C/groups · K
  // a window of one pixel, stride 1, no padding: x itself is the columns
  const pointwise = [...g.kernel, ...g.stride].every((v) => v === 1) && g.pads.every(([b, e]) => b === 0 && e === 0);
  return withTemps(be, (t) => {
    // columns channels first, [N, groups, C/g·K, P]: the windows view permuted to [N, C, ...k, ...out]
    const cols = pointwise
      ? ownedBy(t, be.reshape(x, [N, groups, KC, P]), x)
      : t(be.reshape(columnsChannelsFirst(be, x, g, t), [N, groups, KC, P]));
    const wc = ownedBy(t, be.contiguous(w), w);
    // [groups, O/g, C/g·K] · [N, groups, C/g·K, P] → [N, groups, O/g, P]: channels first already
    const y = matmul(be.reshape(wc, [groups, O / groups, KC]), cols);
    return be.reshape(y, [N, O, ...g.output]);
  });
}

/** im2col channels first: [N, C, ...k, ...out] (a fresh array) of the padded input's windows. */
function columnsChannelsFirst(be: ConvHost, x: NDArray, g: WindowGeometry, t: <A extends NDArray>(a: A) => A): NDArray {
  const r = g.output.length;
  const xp = padSpatial(be, x, g);
  if (xp !== x) t(xp);
  // windowsView is [N, ...out, C, ...k]
  return be.contiguous(be.permute(windowsView(xp, g), [0, r + 1, ...range(r, r + 2), ...range(r, 1)]));
}

/**
 * Depthwise conv (groups = C = O): y = Σ_taps tapView · w[:, 0, tap], each tap a strided view [N, C, ...out]
 * of the padded input and its weights a [1, C, 1, ...] view: two elementwise passes per tap, summed in tap
 * order, instead of C one-column matrix products.
 */
function depthwise(be: ConvHost, x: NDArray, w: NDArray, g: WindowGeometry): NDArray {
  const r = g.output.length;
  return withTemps(be, (t) => {
    const xp = padSpatial(be, x, g);
    if (xp !== x) t(xp);
    const wc = ownedBy(t, be.contiguous(w), w);
    const [sn, sc] = xp.strides as [number, number];
    const sp = xp.strides.slice(2);
    const C = x.shape[1]!;
    const K = prod(g.kernel);
    let acc: NDArray | null = null;
    for (let k = 0; k < K; k++) {
      let rest = k;
      let offset = xp.offset;
      for (let a = r - 1; a >= 0; a--) {
        offset += (rest % g.kernel[a]!) * g.dilation[a]! * sp[a]!;
        rest = Math.floor(rest / g.kernel[a]!);
      }
      const steps = g.stride.map((s, a) => s * sp[a]!);
      const view = asStridedView(xp, [x.shape[0]!, C, ...g.output], [sn, sc, ...steps], offset);
      const col = asStridedView(wc, [1, C, ...g.output.map(() => 1)], [0, K, ...g.output.map(() => 0)], wc.offset + k);
      const term = be.mul(view, col);
      if (acc) {
        const sum: NDArray = be.add(acc, term);
        be.free(acc);
        be.free(term);
        acc = sum;
      } else acc = term;
    }
    return acc!;
  });
}

/**
 * col2im along one spatial axis: taps [pre, k, i, post] → [pre, F, post] with F = (i − 1)·s + d·(k − 1) + 1,
 * out[s·j + d·t] += taps[t, j], summed in tap order.
 */
function col2imAxis(be: ConvHost, taps: NDArray, s: number, d: number): NDArray {
  const [pre, k, i, post] = taps.shape as [number, number, number, number];
  const F = (i - 1) * s + d * (k - 1) + 1;
  const L = i * s + d * (k - 1); // F + s − 1: the dilated rows' trailing zeros included
  return withTemps(be, (t) => {
    const dil =
      s === 1
        ? taps
        : t(
            be.reshape(
              be.pad(be.reshape(taps, [pre, k, i, 1, post]), [
                [0, 0],
                [0, 0],
                [0, 0],
                [0, s - 1],
                [0, 0],
              ]),
              [pre, k, i * s, post],
            ),
          );
    let acc: NDArray | null = null;
    for (let tap = 0; tap < k; tap++) {
      const row = be.reshape(
        be.shrink(dil, [
          [0, pre],
          [tap, tap + 1],
          [0, i * s],
          [0, post],
        ]),
        [pre, i * s, post],
      );
      const placed = be.pad(row, [
        [0, 0],
        [d * tap, L - d * tap - i * s],
        [0, 0],
      ]);
      if (row.buffer !== dil.buffer) be.free(row);
      if (acc) {
        const sum: NDArray = be.add(acc, placed);
        be.free(acc);
        be.free(placed);
        acc = sum;
      } else acc = placed;
    }
    t(acc!);
    return be.contiguous(
      be.shrink(acc!, [
        [0, pre],
        [0, F],
        [0, post],
      ]),
    );
  });
}

/**
 * col2im: taps [N, C, ...k, ...in] → [N, C, ...F], F = (in − 1)·s + d·(k − 1) + 1 per axis; each tap's
 * block added at offset d·tap with stride s (the adjoint of windowsView on an unpadded input). Where every
 * axis has s = k and d = 1 the blocks tile the output without overlap: one permutation, no sums.
 */
export function col2im(be: ConvHost, taps: NDArray, stride: readonly number[], dilation: readonly number[]): NDArray {
  const r = stride.length;
  const [N, C] = taps.shape as [number, number];
  const k = taps.shape.slice(2, 2 + r);
  const input = taps.shape.slice(2 + r);
  // [N, C, k0, i0, k1, i1, ...] (or [N, C, i0, k0, ...] where the blocks tile): each axis' pair adjacent
  const tiles = range(r).every((a) => stride[a] === k[a] && dilation[a] === 1);
  const pairs = range(r).flatMap((a) => (tiles ? [2 + r + a, 2 + a] : [2 + a, 2 + r + a]));
  const cur = be.contiguous(be.permute(taps, [0, 1, ...pairs]));
  if (tiles) return be.reshape(cur, [N, C, ...input.map((n, a) => n * k[a]!)]);
  return withTemps(be, (t) => {
    let next = t(cur);
    const done: number[] = [];
    for (let a = 0; a < r; a++) {
      const post = prod(k.slice(a + 1)) * prod(input.slice(a + 1));
      const view = be.reshape(next, [N * C * prod(done), k[a]!, input[a]!, post]);
      next = col2imAxis(be, view, stride[a]!, dilation[a]!); // fresh and contiguous
      done.push(next.shape[1]!);
      if (a < r - 1) t(next);
    }
    return be.reshape(next, [N, C, ...done]);
  });
}

/** [N, C, ...full] cropped by `pads` and extended with zeros to `out` per spatial axis. */
export function cropTo(
  be: ConvHost,
  full: NDArray,
  pads: readonly (readonly [number, number])[],
  out: number[],
): NDArray {
  const sp = full.shape.slice(2);
  const extra = sp.map((f, a) => Math.max(0, pads[a]![0] + out[a]! - f));
  return withTemps(be, (t) => {
    const ext = extra.some((e) => e > 0)
      ? t(be.pad(full, [[0, 0], [0, 0], ...extra.map((e) => [0, e] as const)]))
      : full;
    const [N, C] = full.shape as [number, number];
    return be.contiguous(
      be.shrink(ext, [[0, N], [0, C], ...pads.map(([b], a) => [b, b + out[a]!] as [number, number])]),
    );
  });
}

/** convTranspose: x [N, C, ...in], w [C, O/groups, ...k] → [N, O, ...out]. */
export function convTransposeComposite(be: ConvHost, x: NDArray, w: NDArray, o: ConvTransposeOptions = {}): NDArray {
  const { r, groups, N, C } = checkConvOperands(be, x, w, o.groups, 'convTranspose', true);
  const input = x.shape.slice(2);
  const kernel = w.shape.slice(2);
  const stride = perAxis(o.stride, r, 1, 'convTranspose', 'stride');
  const dilation = perAxis(o.dilation, r, 1, 'convTranspose', 'dilation');
  const outputPadding = perAxis(o.outputPadding, r, 0, 'convTranspose', 'outputPadding', 0);
  if (typeof o.padding === 'string') {
    throw new InvalidArgumentError(
      `convTranspose: padding must be integers or [before, after] pairs, got '${o.padding}'`,
    );
  }
  const pads = windowGeometry(Array(r).fill(1 << 20), { kernel, padding: o.padding }, 'convTranspose').userPads;
  const full = input.map((n, a) => (n - 1) * stride[a]! + dilation[a]! * (kernel[a]! - 1) + 1);
  const out = full.map((f, a) => f - pads[a]![0] - pads[a]![1] + outputPadding[a]!);
  if (out.some((d) => d < 0)) {
    throw new InvalidArgumentError(
      `convTranspose: padding ${JSON.stringify(pads)} crops more than the full output [${full.join(', ')}]`,
    );
  }
  const Og = w.shape[1]!;
  const Cg = C / groups;
  const P = prod(input);
  const K = prod(kernel);
  const whole = pads.every(([b, e]) => b === 0 && e === 0) && out.every((d, a) => d === full[a]);
  return withTemps(be, (t) => {
    // channels first, no transposes: taps [N, g, O/g·K, P] = wᵀ [g, O/g·K, C/g] · x [N, g, C/g, P]
    const wc = ownedBy(t, be.contiguous(w), w);
    const wT = be.permute(be.reshape(wc, [groups, Cg, Og * K]), [0, 2, 1]);
    const xv = ownedBy(t, be.reshape(x, [N, groups, Cg, P]), x);
    const cols = t(be.matmul(wT, xv));
    const placed = col2im(be, be.reshape(cols, [N, groups * Og, ...kernel, ...input]), stride, dilation);
    if (whole) return placed; // nothing to crop or append
    t(placed);
    return cropTo(be, placed, pads, out);
  });
}

/**
 * dW of conv(x, w, o): [O, C/groups, ...k] = dyᵀ · im2col(x), per group. x [N, C, ...in], dy [N, O, ...out]
 * (out as conv's geometry gives it). Used by autograd for conv's and convTranspose's weight gradients.
 */
export function convWeightGrad(
  be: ConvHost,
  x: NDArray,
  dy: NDArray,
  kernel: readonly number[],
  o: ConvOptions = {},
): NDArray {
  const { N, C, O, groups, r } = convGradDims(x, dy, o.groups, 'convWeightGrad');
  const g = windowGeometry(x.shape.slice(2), { kernel, ...o }, 'convWeightGrad');
  const P = prod(g.output);
  const KC = (C / groups) * prod(kernel);
  return withTemps(be, (t) => {
    const cols = t(im2col(be, x, g)); // [N·P, C·K]
    const dyr = t(be.contiguous(be.permute(dy, [0, ...range(r, 2), 1]))); // [N, ...out, O]
    const a = be.permute(be.reshape(dyr, [N * P, groups, O / groups]), [1, 2, 0]); // [g, O/g, N·P]
    const b = be.permute(be.reshape(cols, [N * P, groups, KC]), [1, 0, 2]); // [g, N·P, C/g·K]
    const dw = groups === 1 ? be.matmul(be.permute(be.reshape(dyr, [N * P, O]), [1, 0]), cols) : be.matmul(a, b);
    return be.reshape(dw, [O, C / groups, ...kernel]);
  });
}
