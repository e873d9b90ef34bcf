/**
 * The float64 oracle of convolution and pooling: each output element from its definition, by direct
 * loops over output positions and kernel taps on contiguous arrays — nothing shared with hal/src/conv.ts
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

/** conv: x [N, C, ...in], w [O, C/g, ...k] → [N, O, ...out]; scale Σ|x·w|. */
export function oConv(x: Ref, w: Ref, p: WindowParams): Ref {
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
    data[e] = sum;
    scale[e] = mag;
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
