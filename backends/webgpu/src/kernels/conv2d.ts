/**
 * WGSL 2-D convolution as an implicit GEMM (no im2col buffer): for batch item n and group q (workgroup z =
 * n·groups + q), y[n, q·Og + m, p] = Σ_k w[q·Og + m, k] · cols[k, p] with k = (c, ky, kx) over the group's
 * Cg input channels and the kh×kw window, and cols[k, p] = x[n, q·Cg + c, oy·sh − pt + ky·dh, ox·sw − pl + kx·dw]
 * (0 in the padding) read straight from x through the window indices. A workgroup of 16×16 invocations
 * computes a BM×BN tile of [Og, P] (each invocation RM×RN outputs in registers, rows and columns 16 apart),
 * K advancing in BK-deep slabs of w and of the windows staged in workgroup memory, as kernels/matmul.ts
 * tiles a GEMM. Summed in k order. A 1×1 window of stride 1 without padding (`pointwise`) skips the window
 * arithmetic: k is the channel and p the pixel. x and w are read through their strides; y is row-major
 * [N, O, OH, OW].
 *
 * Params: 0 Og · 1 P · 2 K · 3 groups · 4 Cg · 5 H · 6 W · 7 OW · 8 kh · 9 kw · 10 sh · 11 sw · 12 dh · 13 dw ·
 * 14 pad top · 15 pad left · 16 x offset · 17–20 x strides (N, C, H, W) · 21 w offset · 22–25 w strides
 * (O, C, kh, kw) · 26 bias offset · 27 bias stride · 28 has bias (0: binding 4 is a placeholder). The bias
 * is added to the finished sum, as the composite adds it.
 */
import { paramsPrelude } from '../layout.js';

export const CONV2D_WORDS = 29;
/** Depth of a K slab. */
export const CONV_BK = 16;

/** A conv tile: RM×RN outputs per invocation, so BM = 16·RM output channels by BN = 16·RN pixels per workgroup. */
export interface ConvTile {
  rm: number;
  rn: number;
}

/** WGSL of the implicit-GEMM conv for `tile`, general or `pointwise` (1×1, stride 1, no padding). */
export function conv2dWgsl(tile: ConvTile, pointwise: boolean): string {
  const { rm, rn } = tile;
  const BM = 16 * rm;
  const BN = 16 * rn;
  const BK = CONV_BK;
  const aLoads = (BM * BK) / 256;
  const bLoads = (BN * BK) / 256;
  // cols[gk, gp] for the pixel (oy, ox) of gp: the window tap of gk, or the channel gk itself (pointwise)
  const colsAt = pointwise
    ? `let pix = xn + gk * p(18u) + oy * p(19u) + ox * p(20u); v = x[pix];`
    : `let kx = gk % kw; let t = gk / kw; let ky = t % kh; let c = t / kh;
        let iy = oy * p(10u) - p(14u) + ky * p(12u); let ix = ox * p(11u) - p(15u) + kx * p(13u);
        if (iy >= 0 && iy < H && ix >= 0 && ix < W) { v = x[xn + c * p(18u) + iy * p(19u) + ix * p(20u)]; }`;
  const wAt = pointwise
    ? `wq + gm * p(22u) + gk * p(23u)`
    : `wq + gm * p(22u) + (gk / (kh * kw)) * p(23u) + ((gk / kw) % kh) * p(24u) + (gk % kw) * p(25u)`;
  // the register tile written out (acc_i_j, a_i, b_j): indexed arrays in loops may live in memory (lavapipe)
  const ids = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
  const decl = ids(rm)
    .map((i) =>
      ids(rn)
        .map((j) => `var acc_${i}_${j} = 0.0;`)
        .join(' '),
    )
    .join('\n  ');
  const inner = `    workgroupBarrier();
    for (var kk = 0; kk < ${BK}; kk++) {
      ${ids(rn)
        .map((j) => `let b_${j} = Bs[kk * ${BN} + ${j * 16} + i32(lid.x)];`)
        .join(' ')}
      ${ids(rm)
        .map((i) => `let a_${i} = As[kk * ${BM} + ${i * 16} + i32(lid.y)];`)
        .join(' ')}
      ${ids(rm)
        .flatMap((i) => ids(rn).map((j) => `acc_${i}_${j} += a_${i} * b_${j};`))
        .join(' ')}
    }
    workgroupBarrier();
  }
`;
  const store = ids(rm)
    .map(
      (i) => `  {
    let gm = m0 + ${i * 16} + i32(lid.y);
    if (gm < Og) {
      let row = (n * O + q * Og + gm) * P;
      var bv = 0.0;
      if (p(28u) != 0) { bv = bias[p(26u) + (q * Og + gm) * p(27u)]; }
${ids(rn)
  .map((j) => `      { let gp = p0 + ${j * 16} + i32(lid.x); if (gp < P) { y[row + gp] = acc_${i}_${j} + bv; } }`)
  .join('\n')}
    }
  }`,
    )
    .join('\n');
  return `${paramsPrelude(CONV2D_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
var<workgroup> As: array<f32, ${BK * BM}>;
var<workgroup> Bs: array<f32, ${BK * BN}>;
@compute @workgroup_size(16, 16) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let Og = p(0u); let P = p(1u); let K = p(2u); let groups = p(3u); let Cg = p(4u);
  let H = p(5u); let W = p(6u); let OW = p(7u); let kh = p(8u); let kw = p(9u);
  let n = i32(wid.z) / groups; let q = i32(wid.z) % groups;
  let m0 = i32(wid.y) * ${BM}; let p0 = i32(wid.x) * ${BN};
  let tid = i32(lid.y * 16u + lid.x);
  let xn = p(16u) + n * p(17u) + q * Cg * p(18u);
  let wq = p(21u) + q * Og * p(22u);
  ${decl}
  for (var k0 = 0; k0 < K; k0 += ${BK}) {
    for (var e = 0; e < ${aLoads}; e++) {
      let li = e * 256 + tid; let kk = li % ${BK}; let mm = li / ${BK};
      let gm = m0 + mm; let gk = k0 + kk;
      var v = 0.0;
      if (gm < Og && gk < K) { v = w[${wAt}]; }
      As[kk * ${BM} + mm] = v;
    }
    for (var e = 0; e < ${bLoads}; e++) {
      let li = e * 256 + tid; let nn = li % ${BN}; let kk = li / ${BN};
      let gp = p0 + nn; let gk = k0 + kk;
      var v = 0.0;
      if (gp < P && gk < K) {
        let oy = gp / OW; let ox = gp % OW;
        ${colsAt}
      }
      Bs[kk * ${BN} + nn] = v;
    }
${inner}  let O = Og * groups;
${store}
}`;
}
