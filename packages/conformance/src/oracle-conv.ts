/**
 * The float64 oracle of convolution and pooling: each output element from its definition, by direct
 * loops over output positions and kernel taps on contiguous arrays — nothing shared with hal/src/families/conv/conv.ts
 * (no im2col, no col2im, no separable passes). The geometry is recomputed here from the op table's
 * formula: o = ⌊(n + before + after − d·(k − 1) − 1)/s⌋ + 1, 'same' pads ⌈n/s⌉ outputs with the odd
 * pixel at the end ('same-lower': at the start), ceil mode drops a last window starting in the end padding.
 */
import { numel, type Ref, ravel, unravel } from './oracle.js';

export interface WindowParams {
  stride?: number | number[];
  padding?: number | number[] | [number, number][] | 'valid' | 'same' | 'same-lower';
  dilation?: number | number[];
  groups?: number;
  outputPadding?: number | number[];
  kernelSize?: number | number[];
  ceilMode?: boolean;
  countIncludePad?: boolean;
}

const list = (v: number | number[] | undefined, r: number, dflt: number): number[] =>
  v === undefined ? Array(r).fill(dflt) : typeof v === 'number' ? Array(r).fill(v) : v;

interface Geo {
  k: number[];
  s: number[];
  d: number[];
  /** padding before each axis, and the user padding after (without ceil mode's extension) */
  before: number[];
  after: number[];
  out: number[];
}

function geometry(input: number[], k: number[], p: WindowParams, defaultStride: number[]): Geo {
  const r = input.length;
  const s = p.stride === undefined ? defaultStride : list(p.stride, r, 1);
  const d = list(p.dilation, r, 1);
  const before: number[] = [];
  const after: number[] = [];
  const out: number[] = [];
  for (let a = 0; a < r; a++) {
    const e = d[a]! * (k[a]! - 1) + 1;
    let [b, f] = [0, 0];
    if (p.padding === 'same' || p.padding === 'same-lower') {
      const o = Math.ceil(input[a]! / s[a]!);
      const total = Math.max(0, (o - 1) * s[a]! + e - input[a]!);
      b = p.padding === 'same' ? total >> 1 : total - (total >> 1);
      f = total - b;
    } else if (typeof p.padding === 'number') [b, f] = [p.padding, p.padding];
    else if (Array.isArray(p.padding)) {
      const v = p.padding[a]!;
      [b, f] = typeof v === 'number' ? [v, v] : v;
    }
    const span = input[a]! + b + f - e;
    let o = Math.floor(span / s[a]!) + 1;
    if (p.ceilMode) {
      o = Math.ceil(span / s[a]!) + 1;
      if ((o - 1) * s[a]! >= input[a]! + b) o -= 1;
    }
    before.push(b);
    after.push(f);
    out.push(o);
  }
  return { k, s, d, before, after, out };
}

/** Visits every kernel tap t (multi-index) of a window. */
function taps(k: number[]): number[][] {
  return Array.from({ length: numel(k) }, (_, i) => unravel(i, k));
}

/** conv: x [N, C, ...in], w [O, C/g, ...k] (+ bias [O]) → [N, O, ...out]; scale Σ|x·w| (+ |bias|). */
export function oConv(x: Ref, w: Ref, p: WindowParams, bias?: Ref): Ref {
  const [N, C] = x.shape as [number, number];
  const O = w.shape[0]!;
  const g = p.groups ?? 1;
  const [Cg, Og] = [C / g, O / g];
  const input = x.shape.slice(2);
  const k = w.shape.slice(2);
  const geo = geometry(input, k, p, list(undefined, input.length, 1));
  const shape = [N, O, ...geo.out];
  const data = new Float64Array(numel(shape));
  const scale = new Float64Array(data.length);
  const T = taps(k);
  for (let e = 0; e < data.length; e++) {
    const [n, o, ...pos] = unravel(e, shape) as [number, number, ...number[]];
    const grp = Math.floor(o / Og);
    let sum = 0;
    let mag = 0;
    for (let c = 0; c < Cg; c++) {
      for (const t of T) {
        const at = pos.map((q, a) => q * geo.s[a]! + t[a]! * geo.d[a]! - geo.before[a]!);
        if (at.some((v, a) => v < 0 || v >= input[a]!)) continue;
        const prod = x.data[ravel([n, grp * Cg + c, ...at], x.shape)]! * w.data[ravel([o, c, ...t], w.shape)]!;
        sum += prod;
        mag += Math.abs(prod);
      }
    }
    const b = bias ? bias.data[o]! : 0;
    data[e] = sum + b;
    scale[e] = mag + Math.abs(b);
  }
  return { shape, data, dtype: 'float32', scale };
}

/** convTranspose: x [N, C, ...in], w [C, O/g, ...k] → [N, O, ...out]; the scatter definition. */
export function oConvTranspose(x: Ref, w: Ref, p: WindowParams): Ref {
  const [N, C] = x.shape as [number, number];
  const g = p.groups ?? 1;
  const [Cg, Og] = [C / g, w.shape[1]!];
  const input = x.shape.slice(2);
  const k = w.shape.slice(2);
  const r = input.length;
  const s = list(p.stride, r, 1);
  const d = list(p.dilation, r, 1);
  const op = list(p.outputPadding, r, 0);
  const pads = Array.from({ length: r }, (_, a): [number, number] => {
    if (p.padding === undefined) return [0, 0];
    if (typeof p.padding === 'number') return [p.padding, p.padding];
    const v = (p.padding as (number | [number, number])[])[a]!;
    return typeof v === 'number' ? [v, v] : v;
  });
  const out = input.map((n, a) => (n - 1) * s[a]! + d[a]! * (k[a]! - 1) + 1 - pads[a]![0] - pads[a]![1] + op[a]!);
  const shape = [N, g * Og, ...out];
  const data = new Float64Array(numel(shape));
  const scale = new Float64Array(data.length);
  const T = taps(k);
  for (let e = 0; e < x.data.length; e++) {
    const [n, c, ...pos] = unravel(e, x.shape) as [number, number, ...number[]];
    const grp = Math.floor(c / Cg);
    for (let o = 0; o < Og; o++) {
      for (const t of T) {
        const at = pos.map((q, a) => q * s[a]! + t[a]! * d[a]! - pads[a]![0]);
        if (at.some((v, a) => v < 0 || v >= out[a]!)) continue;
        const i = ravel([n, grp * Og + o, ...at], shape);
        const prod = x.data[e]! * w.data[ravel([c, o, ...t], w.shape)]!;
        data[i] += prod;
        scale[i] += Math.abs(prod);
      }
    }
  }
  return { shape, data, dtype: 'float32', scale };
}

/** maxPool / avgPool: x [N, C, ...in] → [N, C, ...out] by visiting each window's positions. */
export function oPool(x: Ref, p: WindowParams, kind: 'max' | 'avg'): Ref {
  const input = x.shape.slice(2);
  const k = list(p.kernelSize, input.length, 1);
  const geo = geometry(input, k, p, k);
  const shape = [x.shape[0]!, x.shape[1]!, ...geo.out];
  const data = new Float64Array(numel(shape));
  const scale = new Float64Array(data.length);
  const T = taps(k);
  const includePad = p.countIncludePad ?? true;
  for (let e = 0; e < data.length; e++) {
    const [n, c, ...pos] = unravel(e, shape) as [number, number, ...number[]];
    let acc = kind === 'max' ? -Infinity : 0;
    let count = 0;
    let mag = 0;
    for (const t of T) {
      const at = pos.map((q, a) => q * geo.s[a]! + t[a]! * geo.d[a]! - geo.before[a]!);
      const inside = at.every((v, a) => v >= 0 && v < input[a]!);
      const inPadded = at.every((v, a) => v >= -geo.before[a]! && v < input[a]! + geo.after[a]!);
      if (inside || (includePad && inPadded)) count++;
      if (!inside) continue;
      const v = x.data[ravel([n, c, ...at], x.shape)]!;
      mag += Math.abs(v);
      acc = kind === 'max' ? (Number.isNaN(v) || Number.isNaN(acc) ? Number.NaN : Math.max(acc, v)) : acc + v;
    }
    data[e] = kind === 'max' ? acc : acc / count;
    scale[e] = kind === 'max' ? Math.abs(acc) : mag / count;
  }
  return { shape, data, dtype: 'float32', scale };
}

export interface ResizeParams {
  sizes?: number[];
  scales?: number[];
  mode?: 'nearest' | 'linear' | 'cubic';
  coordinateTransformationMode?: string;
  nearestMode?: string;
  cubicCoeffA?: number;
  excludeOutside?: boolean;
  roi?: number[];
  extrapolationValue?: number;
}

/**
 * resize by ONNX's reference definition: each output element interpolated recursively (outer axis over
 * the interpolations of the inner ones), the neighbours of x_ori chosen as the n closest positions of
 * the edge-padded line (ties to the smaller index), weights in float64; scale Σ|w·v|.
 */
export function oResize(x: Ref, p: ResizeParams): Ref {
  const r = x.shape.length;
  const sizes = p.sizes ?? x.shape.map((n, i) => Math.floor(n * p.scales![i]!));
  const scales = p.scales ?? sizes.map((d, i) => d / x.shape[i]!);
  const mode = p.coordinateTransformationMode ?? 'half_pixel';
  const coeffs = (ratio: number): number[] => {
    if (p.mode === 'linear') return [1 - ratio, ratio];
    if (p.mode === 'cubic') {
      const A = p.cubicCoeffA ?? -0.75;
      const f = (d: number): number =>
        d <= 1 ? ((A + 2) * d - (A + 3)) * d * d + 1 : d < 2 ? ((A * d - 5 * A) * d + 8 * A) * d - 4 * A : 0;
      return [f(1 + ratio), f(ratio), f(1 - ratio), f(2 - ratio)];
    }
    if (Number.isInteger(ratio)) return [0, 1];
    const nm = p.nearestMode ?? 'round_prefer_floor';
    if (nm === 'round_prefer_floor') return [ratio <= 0.5 ? 1 : 0, ratio > 0.5 ? 1 : 0];
    if (nm === 'round_prefer_ceil') return [ratio < 0.5 ? 1 : 0, ratio >= 0.5 ? 1 : 0];
    return nm === 'floor' ? [1, 0] : [0, 1];
  };
  /** Interpolates the line `line` (values, scales) at output coordinate xo of axis a. */
  const interp1 = (line: [number, number][], a: number, xc: number): [number, number] => {
    const nIn = line.length;
    const s = scales[a]!;
    const outF = s * nIn;
    let xo: number;
    if (mode === 'align_corners') xo = outF === 1 ? 0 : (xc * (nIn - 1)) / (outF - 1);
    else if (mode === 'asymmetric') xo = xc / s;
    else if (mode === 'tf_half_pixel_for_nn') xo = (xc + 0.5) / s;
    else if (mode === 'pytorch_half_pixel') xo = outF === 1 ? -0.5 : (xc + 0.5) / s - 0.5;
    else if (mode === 'tf_crop_and_resize') {
      const [st, en] = [p.roi?.[a] ?? 0, p.roi?.[a + r] ?? 1];
      xo = (outF === 1 ? ((en - st) * (nIn - 1)) / 2 : (xc * (en - st) * (nIn - 1)) / (outF - 1)) + st * (nIn - 1);
      if (xo < 0 || xo > nIn - 1) return [p.extrapolationValue ?? 0, Math.abs(p.extrapolationValue ?? 0)];
    } else xo = (xc + 0.5) / s - 0.5;
    const ratio = Number.isInteger(xo) ? 1 : xo - Math.floor(xo);
    const c = coeffs(ratio);
    const n = c.length;
    const pad = Math.ceil(n / 2);
    const candidates = Array.from({ length: nIn + 2 * pad }, (_, i) => i - pad);
    candidates.sort((i, j) => Math.abs(xo - i) - Math.abs(xo - j) || i - j);
    const idx = candidates.slice(0, n).sort((i, j) => i - j);
    if (p.excludeOutside) {
      idx.forEach((i, t) => {
        if (i < 0 || i >= nIn) c[t] = 0;
      });
      const total = c.reduce((q, v) => q + v, 0);
      for (let t = 0; t < n; t++) c[t]! /= total;
    }
    let v = 0;
    let m = 0;
    idx.forEach((i, t) => {
      const [val, sc] = line[Math.min(nIn - 1, Math.max(0, i))]!;
      v += c[t]! * val;
      m += Math.abs(c[t]!) * sc;
    });
    return [v, m];
  };
  const at = (a: number, fixedIn: number[], outIdx: number[]): [number, number] => {
    if (a === r) {
      const v = x.data[ravel(fixedIn, x.shape)]!;
      return [v, Math.abs(v)];
    }
    const line = Array.from({ length: x.shape[a]! }, (_, i) => at(a + 1, [...fixedIn, i], outIdx));
    return interp1(line, a, outIdx[a]!);
  };
  const data = new Float64Array(numel(sizes));
  const scale = new Float64Array(data.length);
  for (let e = 0; e < data.length; e++) {
    const [v, m] = at(0, [], unravel(e, sizes));
    data[e] = v;
    scale[e] = m;
  }
  return { shape: sizes, data, dtype: 'float32', scale };
}
