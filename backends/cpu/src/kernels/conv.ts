/**
 * Depthwise convolution (groups = C = O) over 1 or 2 spatial axes on float32, for the CPU backend's conv:
 * per plane and output row, each tap's weight times a strided run of the input row added into a float64
 * row (taps in kernel order, the row's valid span computed once per tap, so the inner loop has no bounds
 * checks), then rounded once into the output. The HAL's composite runs two elementwise passes over the
 * whole output per tap instead.
 */
import type { Window2d } from '@polyhal/hal/internal';
import type { Strided } from './strided.js';

/**
 * y [N, C, OH, OW] (contiguous) = depthwise conv of x [N, C, H, W] (any strides) with w [C, 1, kh, kw]
 * (any strides): y[n, c] = Σ_taps w[c, 0, i, j] · x[n, c, oh·sh − pt + i·dh, ow·sw − pl + j·dw] (zero padding).
 */
export function depthwiseConvKernel(
  x: Strided<Float32Array>,
  w: Strided<Float32Array>,
  g: Window2d,
  N: number,
  C: number,
  out: Float32Array,
): void {
  const [sxn, sxc, sxh, sxw] = x.strides as [number, number, number, number];
  const [swc, , swh, sww] = w.strides as [number, number, number, number];
  const row = new Float64Array(g.OW);
  // per tap column j: the outputs whose input column is inside [0, W)
  const lo = new Int32Array(g.kw);
  const hi = new Int32Array(g.kw);
  for (let j = 0; j < g.kw; j++) {
    const off = j * g.dw - g.pl; // input column of output 0
    lo[j] = Math.min(g.OW, Math.max(0, Math.ceil(-off / g.sw)));
    hi[j] = Math.max(lo[j]!, Math.min(g.OW, Math.floor((g.W - 1 - off) / g.sw) + 1));
  }
  let o = 0;
  for (let n = 0; n < N; n++)
    for (let c = 0; c < C; c++) {
      const plane = x.offset + n * sxn + c * sxc;
      const wc = w.offset + c * swc;
      for (let oh = 0; oh < g.OH; oh++, o += g.OW) {
        row.fill(0);
        for (let i = 0; i < g.kh; i++) {
          const ih = oh * g.sh - g.pt + i * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          const base = plane + ih * sxh;
          for (let j = 0; j < g.kw; j++) {
            const wv = w.data[wc + i * swh + j * sww]!;
            const step = g.sw * sxw;
            let p = base + (lo[j]! * g.sw + j * g.dw - g.pl) * sxw;
            for (let ow = lo[j]!, end = hi[j]!; ow < end; ow++, p += step) row[ow]! += wv * x.data[p]!;
          }
        }
        for (let ow = 0; ow < g.OW; ow++) out[o + ow] = row[ow]!;
      }
    }
}
