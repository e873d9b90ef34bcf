/**
 * WGSL 2-D transposed convolution (conv's adjoint in x; hal/src/families/conv/conv.ts convTranspose), gathered
 * per output: one invocation per element of y [N, O, OH, OW] (row-major) sums, over the kernel taps (ky, kx)
 * whose input position iy = (oy + pad top − ky·dh)/sh, ix = (ox + pad left − kx·dw)/sw is whole and inside x,
 * Σ_c x[n, q·Cg + c, iy, ix] · w[q·Cg + c, o, ky, kx] over the group's Cg input channels — each tap's channel
 * sum first, then the taps in tap order, as the composite's matmul and col2im sum them. Output padding is the
 * positions no tap reaches (zeros). x and w are read through their strides.
 *
 * Params: 0 outputs · 1 Cg · 2 Og · 3 O · 4 H · 5 W · 6 OH · 7 OW · 8 kh · 9 kw · 10 sh · 11 sw · 12 dh · 13 dw ·
 * 14 pad top · 15 pad left · 16 x offset · 17–20 x strides (N, C, H, W) · 21 w offset · 22–25 w strides
 * (C, O/groups, kh, kw).
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const CONV_TRANSPOSE_WORDS = 26;

export const convTransposeWgsl = `${paramsPrelude(CONV_TRANSPOSE_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let Cg = p(1u); let Og = p(2u); let O = p(3u); let H = p(4u); let W = p(5u); let OH = p(6u); let OW = p(7u);
  let kh = p(8u); let kw = p(9u); let sh = p(10u); let sw = p(11u); let dh = p(12u); let dw = p(13u);
  let i = i32(idx);
  let ox = i % OW; let r = i / OW; let oy = r % OH; let r2 = r / OH; let oc = r2 % O; let n = r2 / O;
  let q = oc / Og; let o = oc % Og;
  let xsc = p(18u); let wsc = p(22u);
  let xb = p(16u) + n * p(17u) + q * Cg * xsc;
  let wb = p(21u) + q * Cg * wsc + o * p(23u);
  let fy = oy + p(14u); let fx = ox + p(15u);
  var acc = 0.0;
  for (var ky = 0; ky < kh; ky++) {
    let ty = fy - ky * dh;
    if (ty < 0 || ty % sh != 0 || ty / sh >= H) { continue; }
    let iy = ty / sh;
    for (var kx = 0; kx < kw; kx++) {
      let tx = fx - kx * dw;
      if (tx < 0 || tx % sw != 0 || tx / sw >= W) { continue; }
      let xo = xb + iy * p(19u) + (tx / sw) * p(20u);
      let wo = wb + ky * p(24u) + kx * p(25u);
      var s = 0.0;
      for (var c = 0; c < Cg; c++) { s += x[xo + c * xsc] * w[wo + c * wsc]; }
      acc += s;
    }
  }
  y[idx] = acc;
}`;
