/**
 * WGSL depthwise convolution (groups = C = O; hal/src/families/conv/conv.ts): one invocation per output
 * element of y [N, C, OH, OW] (row-major) sums its channel's kh×kw window of x [N, C, H, W] times the
 * channel's taps w [C, 1, kh, kw], in tap order (row-major over the window) as the HAL's composite does;
 * taps in the zero padding add 0·w, as the composite's padded input does (0·∞ is NaN). Any kernel size,
 * stride, dilation and padding; x and w are read through their strides (views need no copy). 1-D
 * convolutions run as 2-D ones of height 1.
 *
 * Params: 0 outputs · 1 C · 2 H · 3 W · 4 OH · 5 OW · 6 kh · 7 kw · 8 sh · 9 sw · 10 dh · 11 dw · 12 pad top ·
 * 13 pad left · 14 x offset · 15–18 x strides (N, C, H, W) · 19 w offset · 20–22 w strides (C, kh, kw) ·
 * 23 bias offset · 24 bias stride · 25 has bias (0: binding 4 is a placeholder), added to the finished sum.
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const DEPTHWISE_WORDS = 26;

export const depthwiseWgsl = `${paramsPrelude(DEPTHWISE_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let C = p(1u); let H = p(2u); let W = p(3u); let OH = p(4u); let OW = p(5u);
  let kh = p(6u); let kw = p(7u); let dh = p(10u); let dw = p(11u);
  let i = i32(idx);
  let ox = i % OW; let r = i / OW; let oy = r % OH; let r2 = r / OH; let c = r2 % C; let n = r2 / C;
  let iy0 = oy * p(8u) - p(12u); let ix0 = ox * p(9u) - p(13u);
  let xsh = p(17u); let xsw = p(18u); let wsh = p(21u); let wsw = p(22u);
  let xb = p(14u) + n * p(15u) + c * p(16u);
  let wb = p(19u) + c * p(20u);
  var acc = 0.0;
  for (var ky = 0; ky < kh; ky++) {
    let iy = iy0 + ky * dh;
    let inRow = iy >= 0 && iy < H;
    let xr = xb + iy * xsh; let wr = wb + ky * wsh;
    for (var kx = 0; kx < kw; kx++) {
      let ix = ix0 + kx * dw;
      var v = 0.0;
      if (inRow && ix >= 0 && ix < W) { v = x[xr + ix * xsw]; }
      acc += v * w[wr + kx * wsw];
    }
  }
  if (p(25u) != 0) { acc += bias[p(23u) + c * p(24u)]; }
  y[idx] = acc;
}`;
