/**
 * resize (ONNX Resize, PyTorch interpolate, TensorFlow resize): nearest, linear and cubic interpolation
 * of any axes, composed from HAL primitives. Interpolation is separable, so each resized axis is done on
 * its own, the last first (the order of ONNX's reference): the host maps every output coordinate x to
 * the input coordinate x_ori by the coordinate transformation, picks the n nearest input positions (1 for
 * nearest, 2 linear, 4 cubic; edge-clamped) and their weights in float64, and the device computes
 * Σ_t w_t · gather(x, idx_t, axis) (a single gather for nearest: exact). tf_crop_and_resize gives
 * `extrapolationValue` where x_ori falls outside [0, n − 1].
 *
 * Coordinate transformations (x output coordinate, s the axis' scale, n_in / n_out sizes, n_out' = s·n_in):
 * half_pixel (x + ½)/s − ½; pytorch_half_pixel the same but −½ when n_out' is 1; align_corners
 * x·(n_in − 1)/(n_out' − 1); asymmetric x/s; tf_half_pixel_for_nn (x + ½)/s; tf_crop_and_resize
 * start·(n_in − 1) + x·(end − start)·(n_in − 1)/(n_out' − 1) with the roi's start and end.
 */
import type { ComputeBackend } from '../../backend.js';
import { DTypeError, InvalidArgumentError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { describeValue } from '../../contract/validate.js';

/** Interpolation per axis: nearest neighbour, linear (2 taps) or cubic convolution (4 taps); as ONNX Resize. */
export type ResizeMode = 'nearest' | 'linear' | 'cubic';
/**
 * How an output coordinate maps to an input coordinate, as ONNX Resize defines each: `half_pixel` (the
 * default; PyTorch align_corners=False), `pytorch_half_pixel`, `align_corners`, `asymmetric` (x·in/out),
 * `tf_half_pixel_for_nn` and `tf_crop_and_resize` (with `roi`).
 */
export type CoordinateTransformationMode =
  | 'half_pixel'
  | 'pytorch_half_pixel'
  | 'align_corners'
  | 'asymmetric'
  | 'tf_half_pixel_for_nn'
  | 'tf_crop_and_resize';
/** How `nearest` rounds a fractional input coordinate (default round_prefer_floor), as ONNX Resize. */
export type NearestMode = 'round_prefer_floor' | 'round_prefer_ceil' | 'floor' | 'ceil';

/** Options of `resize`: ONNX Resize's attributes and inputs (sizes or scales, roi). */
export interface ResizeOptions {
  /** Output size per axis (all axes); or give `scales`. */
  sizes?: readonly number[];
  /** Scale per axis (output size ⌊n·s⌋); used by the coordinate transformation when given. */
  scales?: readonly number[];
  /** Interpolation (default 'nearest'). */
  mode?: ResizeMode;
  /** Output → input coordinate mapping (default 'half_pixel'). */
  coordinateTransformationMode?: CoordinateTransformationMode;
  /** Rounding of `nearest` (default 'round_prefer_floor'). */
  nearestMode?: NearestMode;
  /** Cubic convolution's a (default −0.75, PyTorch's and ONNX's; TensorFlow uses −0.5). */
  cubicCoeffA?: number;
  /** Cubic: weights of positions outside the input set to 0 and the rest renormalized. */
  excludeOutside?: boolean;
  /** tf_crop_and_resize: [starts..., ends...] per axis, normalized to [0, 1]. */
  roi?: readonly number[];
  /** tf_crop_and_resize: the value outside the cropped input (default 0). */
  extrapolationValue?: number;
}

const TRANSFORMS = [
  'half_pixel',
  'pytorch_half_pixel',
  'align_corners',
  'asymmetric',
  'tf_half_pixel_for_nn',
  'tf_crop_and_resize',
];

/** The taps of one axis: per output position, n input indices and weights; `outside` marks extrapolation. */
export interface AxisTaps {
  /** Taps per output position: 2 (nearest, as weights 1 and 0; linear) or 4 (cubic). */
  n: number;
  /** index[t][x]: the input index of tap t for output position x (clamped into the input). */
  index: Int32Array[];
  /** weight[t][x]: the weight of tap t for output position x. */
  weight: Float64Array[];
  /** outside[x] = 1 where output position x maps outside the input (tf_crop_and_resize: extrapolationValue). */
  outside: Uint8Array;
}

function coefficients(o: ResizeOptions, ratio: number): number[] {
  const mode = o.mode ?? 'nearest';
  if (mode === 'linear') return [1 - ratio, ratio];
  if (mode === 'cubic') {
    const A = o.cubicCoeffA ?? -0.75;
    const [r, q] = [ratio, 1 - ratio];
    return [
      ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
      ((A + 2) * r - (A + 3)) * r * r + 1,
      ((A + 2) * q - (A + 3)) * q * q + 1,
      ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A,
    ];
  }
  if (ratio === 1) return [0, 1];
  switch (o.nearestMode ?? 'round_prefer_floor') {
    case 'round_prefer_floor':
      return ratio <= 0.5 ? [1, 0] : [0, 1];
    case 'round_prefer_ceil':
      return ratio < 0.5 ? [1, 0] : [0, 1];
    case 'floor':
      return [1, 0];
    case 'ceil':
      return [0, 1];
  }
}

/** Host-side taps of one axis (sizes nIn → nOut, coordinate scale s). */
export function axisTaps(nIn: number, nOut: number, s: number, axis: number, rank: number, o: ResizeOptions): AxisTaps {
  const mode = o.coordinateTransformationMode ?? 'half_pixel';
  const outF = s * nIn; // ONNX's output_width: the scale times the input size, not the integer size
  const n = (o.mode ?? 'nearest') === 'cubic' ? 4 : 2;
  const index = Array.from({ length: n }, () => new Int32Array(nOut));
  const weight = Array.from({ length: n }, () => new Float64Array(nOut));
  const outside = new Uint8Array(nOut);
  for (let x = 0; x < nOut; x++) {
    let xo: number;
    if (mode === 'align_corners') xo = outF === 1 ? 0 : (x * (nIn - 1)) / (outF - 1);
    else if (mode === 'asymmetric') xo = x / s;
    else if (mode === 'tf_half_pixel_for_nn') xo = (x + 0.5) / s;
    else if (mode === 'pytorch_half_pixel') xo = outF === 1 ? -0.5 : (x + 0.5) / s - 0.5;
    else if (mode === 'tf_crop_and_resize') {
      const [start, end] = [o.roi?.[axis] ?? 0, o.roi?.[axis + rank] ?? 1];
      xo = outF === 1 ? ((end - start) * (nIn - 1)) / 2 : (x * (end - start) * (nIn - 1)) / (outF - 1);
      xo += start * (nIn - 1);
      if (xo < 0 || xo > nIn - 1) {
        outside[x] = 1;
        continue;
      }
    } else xo = (x + 0.5) / s - 0.5;
    // the left neighbour is strictly left of x_ori (ratio in (0, 1]), as ONNX's reference picks it
    const base = Math.ceil(xo) - 1;
    const coeffs = coefficients(o, xo - base);
    const first = base - (n / 2 - 1);
    let total = 0;
    for (let t = 0; t < n; t++) {
      const i = first + t;
      if (o.excludeOutside && (i < 0 || i >= nIn)) coeffs[t] = 0;
      total += coeffs[t]!;
      index[t]![x] = Math.min(nIn - 1, Math.max(0, i));
    }
    for (let t = 0; t < n; t++) weight[t]![x] = o.excludeOutside ? coeffs[t]! / total : coeffs[t]!;
  }
  return { n, index, weight, outside };
}

/** Validates the options; returns per axis the output size and coordinate scale. */
function plan(x: NDArray, o: ResizeOptions): { sizes: number[]; scales: number[] } {
  const r = x.shape.length;
  const list = (v: unknown, what: string, ok: (d: number) => boolean): number[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length !== r || !v.every((d) => typeof d === 'number' && ok(d)))
      throw new InvalidArgumentError(`resize: ${what} must be ${r} numbers (one per axis), got ${describeValue(v)}`);
    return v as number[];
  };
  const sizes = list(o?.sizes, 'sizes', (d) => Number.isInteger(d) && d >= 0);
  const scales = list(o?.scales, 'scales', (d) => Number.isFinite(d) && d > 0);
  if (!sizes && !scales) throw new InvalidArgumentError('resize: give sizes or scales');
  if (o.mode !== undefined && !['nearest', 'linear', 'cubic'].includes(o.mode))
    throw new InvalidArgumentError(`resize: mode must be 'nearest', 'linear' or 'cubic', got ${describeValue(o.mode)}`);
  const t = o.coordinateTransformationMode;
  if (t !== undefined && !TRANSFORMS.includes(t))
    throw new InvalidArgumentError(
      `resize: coordinateTransformationMode ${describeValue(t)} is not one of ${TRANSFORMS}`,
    );
  const nearest = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'];
  if (o.nearestMode !== undefined && !nearest.includes(o.nearestMode))
    throw new InvalidArgumentError(`resize: nearestMode ${describeValue(o.nearestMode)} is not one of ${nearest}`);
  for (const k of ['cubicCoeffA', 'extrapolationValue'] as const)
    if (o[k] !== undefined && typeof o[k] !== 'number')
      throw new InvalidArgumentError(`resize: ${k} must be a number, got ${describeValue(o[k])}`);
  if (t === 'tf_crop_and_resize' && o.roi !== undefined) list(o.roi.slice(0, r), 'roi starts', Number.isFinite);
  const out = sizes ?? x.shape.map((n, i) => Math.floor(n * scales![i]!));
  return { sizes: out, scales: scales ?? out.map((d, i) => d / x.shape[i]!) };
}

/**
 * resize: x [...] float32 → [...sizes] (or ⌊shape·scales⌋). ONNX Resize semantics (opset 13) for
 * nearest, linear and cubic modes; InvalidArgumentError for options outside their domains, DTypeError
 * for int32. Axes whose size, scale and transformation leave them unchanged are skipped.
 */
export function resizeComposite(
  be: ComputeBackend & { check(x: NDArray, op: string, arg?: string): void },
  x: NDArray,
  o: ResizeOptions,
): NDArray {
  be.check(x, 'resize', 'x');
  if (x.dtype !== 'float32') throw new DTypeError(`resize: x must be float32, got ${x.dtype}`);
  const { sizes, scales } = plan(x, o);
  const r = x.shape.length;
  let y = x;
  try {
    for (let a = r - 1; a >= 0; a--) {
      const nIn = x.shape[a]!;
      const identity =
        sizes[a] === nIn &&
        scales[a] === 1 &&
        (o.coordinateTransformationMode ?? 'half_pixel') !== 'tf_crop_and_resize';
      if (identity) continue;
      const next = resizeAxis(be, y, a, axisTaps(nIn, sizes[a]!, scales[a]!, a, r, o), o);
      if (y !== x) be.free(y);
      y = next;
    }
    return y === x ? be.contiguous(x) : y;
  } catch (e) {
    if (y !== x) be.free(y);
    throw e;
  }
}

function resizeAxis(be: ComputeBackend, y: NDArray, axis: number, taps: AxisTaps, o: ResizeOptions): NDArray {
  const nOut = taps.outside.length;
  const col = y.shape.map((_, i) => (i === axis ? nOut : 1));
  const temps: NDArray[] = [];
  const t = <A extends NDArray>(a: A): A => {
    temps.push(a);
    return a;
  };
  const replace = (acc: NDArray, next: NDArray): NDArray => {
    be.free(acc);
    return next;
  };
  try {
    const extrapolate = taps.outside.some((v) => v === 1);
    let acc: NDArray;
    if ((o.mode ?? 'nearest') === 'nearest') {
      // one input position per output (weights 0/1): a single gather, exact
      const idx = Int32Array.from(taps.index[0]!, (i0, x) => (taps.weight[0]![x] === 1 ? i0 : taps.index[1]![x]!));
      acc = be.gather(y, t(be.fromArray(idx, [nOut], 'int32')), axis);
      if (extrapolate)
        acc = replace(
          acc,
          be.mul(
            acc,
            t(
              be.fromArray(
                Float32Array.from(taps.outside, (v) => 1 - v),
                col,
              ),
            ),
          ),
        );
    } else {
      acc = be.mul(
        t(be.gather(y, t(be.fromArray(taps.index[0]!, [nOut], 'int32')), axis)),
        t(be.fromArray(Float32Array.from(taps.weight[0]!), col)),
      );
      for (let k = 1; k < taps.n; k++) {
        const picked = t(be.gather(y, t(be.fromArray(taps.index[k]!, [nOut], 'int32')), axis));
        const term = t(be.mul(picked, t(be.fromArray(Float32Array.from(taps.weight[k]!), col))));
        acc = replace(acc, be.add(acc, term));
      }
    }
    if (extrapolate) {
      const v = o.extrapolationValue ?? 0;
      acc = replace(
        acc,
        be.add(
          acc,
          t(
            be.fromArray(
              Float32Array.from(taps.outside, (out) => (out ? v : 0)),
              col,
            ),
          ),
        ),
      );
    }
    return acc;
  } finally {
    for (const a of temps) be.free(a);
  }
}

/**
 * resize's gradient: g [...sizes] → dx [...xShape], float32 — the transposed interpolation: each output's
 * gradient added with its weight into the input positions it was read from (scatterAdd per tap), axis by
 * axis in the reverse of the forward order. Extrapolated outputs (tf_crop_and_resize outside the roi)
 * pass none. Options as resize's (already validated by the forward call).
 */
export function resizeBackward(be: ComputeBackend, g: NDArray, xShape: readonly number[], o: ResizeOptions): NDArray {
  const { sizes, scales } = plan({ shape: xShape } as NDArray, o);
  const r = xShape.length;
  const temps: NDArray[] = [];
  const t = <A extends NDArray>(a: A): A => {
    temps.push(a);
    return a;
  };
  let cur = g;
  try {
    // The forward resized the last axis first, so axis 0's step is the last to undo… and the first here.
    for (let a = 0; a < r; a++) {
      const nIn = xShape[a]!;
      const identity =
        sizes[a] === nIn &&
        scales[a] === 1 &&
        (o.coordinateTransformationMode ?? 'half_pixel') !== 'tf_crop_and_resize';
      if (identity) continue;
      const taps = axisTaps(nIn, sizes[a]!, scales[a]!, a, r, o);
      const nOut = taps.outside.length;
      const inShape = cur.shape.map((d, i) => (i === a ? nIn : d));
      const col = cur.shape.map((_, i) => (i === a ? nOut : 1));
      const base = be.expand(t(be.full([], 0)), inShape);
      const nearest = (o.mode ?? 'nearest') === 'nearest';
      const tapList = nearest
        ? [
            {
              index: Int32Array.from(taps.index[0]!, (i0, x) => (taps.weight[0]![x] === 1 ? i0 : taps.index[1]![x]!)),
              weight: Float32Array.from(taps.outside, (v) => 1 - v),
            },
          ]
        : taps.index.map((index, k) => ({ index, weight: Float32Array.from(taps.weight[k]!) }));
      let acc: NDArray | null = null;
      for (const tap of tapList) {
        const gw = t(be.mul(cur, t(be.fromArray(tap.weight, col))));
        const part = be.scatterAdd(base, t(be.fromArray(tap.index, [nOut], 'int32')), gw, a);
        if (acc) {
          const sum = be.add(acc, part);
          be.free(acc);
          be.free(part);
          acc = sum;
        } else acc = part;
      }
      if (cur !== g) be.free(cur);
      cur = acc!;
    }
    return cur === g ? be.contiguous(g) : cur;
  } catch (e) {
    if (cur !== g) be.free(cur);
    throw e;
  } finally {
    for (const x of temps) be.free(x);
  }
}
