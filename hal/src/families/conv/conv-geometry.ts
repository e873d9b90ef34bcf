/**
 * The geometry shared by convolution and pooling (hal/src/families/conv/conv.ts, pool.ts): options in
 * PyTorch's names (stride, padding, dilation, groups, ceilMode) resolved per spatial axis into
 * explicit [before, after] zero padding and output sizes. Inputs are channels-first, NCHW-style:
 * [N, C, ...spatial] with 1 to 3 spatial axes.
 *
 * Output size along an axis (PyTorch, ONNX): o = ⌊(n + before + after − e)/s⌋ + 1 with the effective
 * kernel e = d·(k − 1) + 1; `ceilMode` takes ⌈·⌉ instead, but a last window that would start in the
 * end padding is dropped (PyTorch's rule). `padding: 'same'` pads so that o = ⌈n/s⌉, the odd pixel at
 * the end (ONNX SAME_UPPER, TensorFlow 'SAME'); 'same-lower' puts it at the start (ONNX SAME_LOWER).
 */
import { InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { describeValue } from '../../contract/validate.js';

/**
 * Zero padding of the spatial axes: one integer for every side, one per axis (both sides), one
 * [before, after] pair per axis, or 'valid' (none), 'same' (o = ⌈n/s⌉, extra at the end) or 'same-lower'.
 */
export type ConvPadding = number | readonly number[] | readonly (readonly [number, number])[] | ConvPaddingMode;
/**
 * Padding by name: 'valid' pads nothing; 'same' pads so that o = ⌈n/s⌉, the odd element at the end (ONNX
 * SAME_UPPER, TensorFlow 'SAME'); 'same-lower' puts it at the start (ONNX SAME_LOWER).
 */
export type ConvPaddingMode = 'valid' | 'same' | 'same-lower';

/** Per-axis integers: one number for every spatial axis, or one per axis. */
export type PerAxis = number | readonly number[];

/** The resolved geometry of a window op over `rank` spatial axes. */
export interface WindowGeometry {
  /** Spatial input sizes. */
  input: number[];
  /** Kernel (window) size per axis. */
  kernel: number[];
  /** Step between windows per axis. */
  stride: number[];
  /** Step between kernel taps per axis (a window spans d·(k − 1) + 1 input positions). */
  dilation: number[];
  /** Zero padding [before, after] per axis, including the end padding ceil mode's last window reads. */
  pads: [number, number][];
  /** The padding the caller asked for (before ceil mode's extension): what count-include-pad counts. */
  userPads: [number, number][];
  /** Spatial output sizes: ⌊(in + before + after − d·(k − 1) − 1) / s⌋ + 1 (rounded up with ceil mode). */
  output: number[];
}

const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;

/** One positive (or, with min 0, non-negative) integer per axis from a number or a list. */
export function perAxis(v: PerAxis | undefined, rank: number, fallback: number, op: string, arg: string, min = 1) {
  const list = v === undefined ? Array<number>(rank).fill(fallback) : typeof v === 'number' ? Array(rank).fill(v) : v;
  if (!Array.isArray(list) || list.length !== rank || !list.every((d) => Number.isInteger(d) && d >= min)) {
    throw new InvalidArgumentError(
      `${op}: ${arg} must be an integer ≥ ${min} or a list of ${rank} of them, got ${describeValue(v)}`,
    );
  }
  return [...(list as number[])];
}

/** The explicit [before, after] pairs of a non-mode padding option. */
function explicitPads(padding: ConvPadding | undefined, rank: number, op: string): [number, number][] {
  const bad = (): never => {
    throw new InvalidArgumentError(
      `${op}: padding must be an integer ≥ 0, ${rank} of them, ${rank} [before, after] pairs, ` +
        `'valid', 'same' or 'same-lower', got ${describeValue(padding)}`,
    );
  };
  const ok = (d: unknown): d is number => Number.isInteger(d) && (d as number) >= 0;
  if (padding === undefined) return Array.from({ length: rank }, () => [0, 0]);
  if (typeof padding === 'number') return ok(padding) ? Array.from({ length: rank }, () => [padding, padding]) : bad();
  if (!Array.isArray(padding) || padding.length !== rank) return bad();
  return padding.map((p: unknown) => {
    if (ok(p)) return [p, p] as [number, number];
    if (Array.isArray(p) && p.length === 2 && ok(p[0]) && ok(p[1])) return [p[0], p[1]] as [number, number];
    return bad();
  });
}

/** What windowGeometry resolves: a window op's options with the kernel size known per axis. */
export interface WindowOptions {
  /** Kernel (window) size per spatial axis, each ≥ 1. */
  kernel: readonly number[];
  /** Step between windows (default 1). */
  stride?: PerAxis;
  /** Zero padding (default 0): see ConvPadding. */
  padding?: ConvPadding;
  /** Step between kernel taps (default 1). */
  dilation?: PerAxis;
  /** Output size rounded up: a last partial window that starts inside the input or its padding counts. */
  ceilMode?: boolean;
}

/**
 * Resolves a window op's geometry for spatial input sizes `input`. Throws InvalidArgumentError for
 * options outside their domains and ShapeMismatchError when a window does not fit the padded input.
 */
export function windowGeometry(input: readonly number[], o: WindowOptions, op: string): WindowGeometry {
  const rank = input.length;
  const kernel = perAxis(o.kernel, rank, 1, op, 'kernel size');
  const stride = perAxis(o.stride, rank, 1, op, 'stride');
  const dilation = perAxis(o.dilation, rank, 1, op, 'dilation');
  const mode = typeof o.padding === 'string' ? o.padding : null;
  if (mode !== null && mode !== 'valid' && mode !== 'same' && mode !== 'same-lower') {
    throw new InvalidArgumentError(`${op}: padding mode must be 'valid', 'same' or 'same-lower', got '${mode}'`);
  }
  const userPads = mode === null ? explicitPads(o.padding, rank, op) : [];
  const pads: [number, number][] = [];
  const output: number[] = [];
  for (let a = 0; a < rank; a++) {
    const [n, k, s, d] = [input[a]!, kernel[a]!, stride[a]!, dilation[a]!];
    const e = d * (k - 1) + 1;
    let [pb, pe] = [0, 0];
    let out: number;
    if (mode === 'same' || mode === 'same-lower') {
      out = Math.ceil(n / s);
      const total = Math.max(0, (out - 1) * s + e - n);
      pb = mode === 'same' ? Math.floor(total / 2) : Math.ceil(total / 2);
      pe = total - pb;
      userPads.push([pb, pe]);
    } else {
      if (mode === 'valid') userPads.push([0, 0]);
      [pb, pe] = userPads[a]!;
      const span = n + pb + pe - e;
      if (span < 0) {
        throw new ShapeMismatchError(
          `${op}: the window (kernel ${k}, dilation ${d}) is larger than the padded input ${n + pb + pe} along ` +
            `spatial axis ${a} (input ${shp(input)})`,
          [input, kernel],
        );
      }
      out = Math.floor(span / s) + 1;
      if (o.ceilMode && span % s !== 0 && out * s < n + pb) out += 1; // a last window starting inside
    }
    pe += Math.max(0, (out - 1) * s + e - (n + pb + pe)); // the end padding ceil mode's last window reads
    pads.push([pb, pe]);
    output.push(out);
  }
  return { input: [...input], kernel, stride, dilation, pads, userPads, output };
}

/** Checks x is [N, C, ...spatial] with 1–3 spatial axes; returns the spatial rank. */
export function spatialRank(x: NDArray, op: string): number {
  const r = x.shape.length - 2;
  if (r < 1 || r > 3) {
    throw new ShapeMismatchError(`${op} expects x [N, C, ...spatial] with 1 to 3 spatial axes, got ${shp(x.shape)}`, [
      x.shape,
    ]);
  }
  return r;
}

/** A 1-D or 2-D window as a 2-D one (1-D as height 1): input H × W, output OH × OW, kernel, stride, dilation, pads. */
export interface Window2d {
  /** Input height (1 for a 1-D window). */
  H: number;
  /** Input width. */
  W: number;
  /** Output height (1 for a 1-D window). */
  OH: number;
  /** Output width. */
  OW: number;
  /** Kernel height (1 for a 1-D window). */
  kh: number;
  /** Kernel width. */
  kw: number;
  /** Row stride (1 for a 1-D window). */
  sh: number;
  /** Column stride. */
  sw: number;
  /** Row dilation (1 for a 1-D window). */
  dh: number;
  /** Column dilation. */
  dw: number;
  /** Padding before the first row (0 for a 1-D window). */
  pt: number;
  /** Padding before the first column. */
  pl: number;
}

/**
 * The 2-D form of a 1-D or 2-D window geometry `g` over spatial input sizes `spatial` (the backends' direct conv
 * kernels work on [N, C, H, W] with H = 1 for a 1-D conv). Throws InvalidArgumentError for 3 or more axes.
 */
export function window2d(spatial: readonly number[], g: WindowGeometry): Window2d {
  const r = spatial.length;
  if (r < 1 || r > 2) throw new InvalidArgumentError(`window2d: 1 or 2 spatial axes, got ${r}`);
  const two = r === 2;
  return {
    H: two ? spatial[0]! : 1,
    W: spatial[r - 1]!,
    OH: two ? g.output[0]! : 1,
    OW: g.output[r - 1]!,
    kh: two ? g.kernel[0]! : 1,
    kw: g.kernel[r - 1]!,
    sh: two ? g.stride[0]! : 1,
    sw: g.stride[r - 1]!,
    dh: two ? g.dilation[0]! : 1,
    dw: g.dilation[r - 1]!,
    pt: two ? g.pads[0]![0] : 0,
    pl: g.pads[r - 1]![0],
  };
}
