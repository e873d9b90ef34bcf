// Stride-1 convolution as a GEMM whose B operand is read straight from the image, never packed (float32, NCHW;
// the wasm backend's path for stride-1 convs, src/dispatch-conv.ts; other strides use conv.ts's convGemm).
// With stride 1 the im2col matrix of a zero-padded image xp (C planes Hp × Wp) over the "wide" output grid
// (OH rows of Wp pixels, the pixels past OW in each row computed and discarded) is a shifted view of xp:
//   B[k, q] = xp[off(k) + q],  off(k) = c·Hp·Wp + i·dh·Wp + j·dw  for tap k = (c, i, j),
// so 8 consecutive pixels of a tap are 8 consecutive floats: the micro-kernel takes its two f32x4 of B from
// xp + off(k) (a table of tap offsets) where matmul.ts's micro reads a packed panel. A part (wide pixels
// [q0, q1), q0 a multiple of 8) first copies the rows its windows reach into a zero-padded scratch image, or,
// where the conv has no padding, reads x in place. Blocks, loop order and sums are convGemm's (KC-deep blocks
// of taps accumulated into an output block, the bias added to the finished sums), so results are bit-identical.
import { GEO_A, GEO_BIAS, GEO_C, GEO_DH, GEO_DW, GEO_H, GEO_KH, GEO_KW, GEO_M, GEO_OH, GEO_OUT, GEO_OW, GEO_PL,
  GEO_PT, GEO_W, GEO_X } from './conv';
import { finishTile, KC, madd, micro, MR, storeTile } from './matmul';

/** Output pixels per block (as convGemm's NC) and the output block's row stride (floats). */
const NC: i32 = 128;
const LDT: i32 = NC + 4;

@inline function geo(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function geoPtr(p: usize, i: i32): usize { return <usize>load<u32>(p + (<usize>i << 2)); }

/** Width of the padded image: the wide output row (OW plus the window's reach), at least the padded input row. */
@inline function paddedWidth(g: usize): i32 {
  return max(geo(g, GEO_W) + geo(g, GEO_PL), geo(g, GEO_OW) + (geo(g, GEO_KW) - 1) * geo(g, GEO_DW));
}

/** Whether the conv has no padding on any side: parts then read x in place (the wide grid is x's own). */
@inline function unpadded(g: usize): bool {
  return geo(g, GEO_PT) == 0 && geo(g, GEO_PL) == 0 && paddedWidth(g) == geo(g, GEO_W) &&
      geo(g, GEO_OH) + (geo(g, GEO_KH) - 1) * geo(g, GEO_DH) <= geo(g, GEO_H);
}

/** Rows of the part's padded image: its output rows plus the window's reach. */
@inline function partRows(g: usize, q0: i32, q1: i32): i32 {
  const wp = paddedWidth(g);
  return (q1 - 1) / wp - q0 / wp + 1 + (geo(g, GEO_KH) - 1) * geo(g, GEO_DH);
}

/**
 * Floats between the planes of a part's padded image: its rows rounded up to an odd number of 64-byte lines, so
 * that the taps of consecutive channels fall into different cache sets.
 */
@inline function planeStride(g: usize, q0: i32, q1: i32): i32 {
  const lines = (partRows(g, q0, q1) * paddedWidth(g) + 15) >> 4;
  return (lines | 1) << 4;
}

/** Floats read past the end of an image: the last tap's column reach and a whole 8-pixel panel. */
@inline function slack(g: usize): i32 { return (geo(g, GEO_KW) - 1) * geo(g, GEO_DW) + 8; }

/**
 * Bytes of scratch one convDirect part over wide pixels [q0, q1) needs for M output channels: the output block,
 * a packed B block, the edge-tile buffer, the tap-offset table and (padded convs) the part's padded image.
 */
export function convDirectScratchBytes(g: usize, q0: i32, q1: i32): usize {
  const M = geo(g, GEO_M), K = geo(g, GEO_C) * geo(g, GEO_KH) * geo(g, GEO_KW);
  let bytes = <usize>(KC * NC * 4) + <usize>((M + MR - 1) / MR) * <usize>(MR * LDT * 4) + 256 + (<usize>K << 2);
  if (!unpadded(g)) {
    bytes += (<usize>geo(g, GEO_C) * <usize>planeStride(g, q0, q1) + <usize>slack(g)) << 2;
  }
  return (bytes + 15) & ~15;
}


/**
 * Packs taps [k0, k0 + kc) (byte offsets at `offs`) × pixels [0, nc) of the image at xb into 8-pixel panels at dst
 * (kc × 8 floats each): two f32x4 copied per tap and panel, with no edge cases (a partial last panel takes the
 * floats that follow, which storeTile never keeps).
 */
function packImage(xb: usize, offs: usize, kc: i32, nc: i32, dst: usize): void {
  const panels = (nc + 7) >> 3;
  const step = <usize>kc << 5;
  for (let k = 0; k < kc; k++) {
    let src = xb + <usize>load<u32>(offs + (<usize>k << 2));
    let p = dst + (<usize>k << 5);
    for (let jp = 0; jp < panels; jp++, src += 32, p += step) {
      v128.store(p, v128.load(src));
      v128.store(p, v128.load(src, 16), 16);
    }
  }
}

// The MR×8 micro-kernel of matmul.ts with B read at xb + off(k): the same operations in the same order.
function microImage(kc: i32, pa: usize, xb: usize, offs: usize, c: usize, ldc: usize, rows: i32, cols: i32,
    tmp: usize, finish: bool, bias: usize): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  let c40 = f32x4.splat(0), c41 = f32x4.splat(0), c50 = f32x4.splat(0), c51 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
    const pb = xb + <usize>load<u32>(offs);
    const b0 = v128.load(pb), b1 = v128.load(pb, 16);
    let a = v128.load(pa);
    c00 = madd(a, b0, c00); c01 = madd(a, b1, c01);
    a = v128.load(pa, 16);
    c10 = madd(a, b0, c10); c11 = madd(a, b1, c11);
    a = v128.load(pa, 32);
    c20 = madd(a, b0, c20); c21 = madd(a, b1, c21);
    a = v128.load(pa, 48);
    c30 = madd(a, b0, c30); c31 = madd(a, b1, c31);
    a = v128.load(pa, 64);
    c40 = madd(a, b0, c40); c41 = madd(a, b1, c41);
    if (MR == 6) { // compile-time: only in the relaxed-SIMD build
      a = v128.load(pa, 80);
      c50 = madd(a, b0, c50); c51 = madd(a, b1, c51);
    }
    pa += MR << 4;
    offs += 4;
  }
  if (finish) finishTile(c, ldc, rows, cols, tmp, bias, c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51);
  else storeTile(c, ldc, rows, cols, tmp, c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51);
}

/**
 * One group's stride-1 conv over wide output pixels [q0, q1) (q0 a multiple of 8; the wide grid is OH rows of
 * paddedWidth pixels): y[M, OH·OW] (the pixels of the part that lie within OW) = W · im2col(x) plus the bias
 * (GEO_BIAS, 0: none). The block at `g` is convGemm's (x the group's C planes, A its convPackA'd weights).
 * `scratch` holds convDirectScratchBytes(g, q0, q1).
 */
export function convDirect(g: usize, q0: i32, q1: i32, scratch: usize): void {
  const C = geo(g, GEO_C), H = geo(g, GEO_H), W = geo(g, GEO_W), M = geo(g, GEO_M);
  const OW = geo(g, GEO_OW), kh = geo(g, GEO_KH), kw = geo(g, GEO_KW), dh = geo(g, GEO_DH), dw = geo(g, GEO_DW);
  const pt = geo(g, GEO_PT), pl = geo(g, GEO_PL);
  const x = geoPtr(g, GEO_X), a = geoPtr(g, GEO_A), y = geoPtr(g, GEO_OUT), bias = geoPtr(g, GEO_BIAS);
  const K = C * kh * kw, P = geo(g, GEO_OH) * OW;
  const wp = paddedWidth(g);
  const panelsM = (M + MR - 1) / MR;
  const Mp = panelsM * MR;
  const ldt = <usize>LDT << 2;
  const pB = scratch; // a packed B block: KC × NC floats
  const t = pB + <usize>(KC * NC * 4); // the output block: M rows of LDT floats
  const tmp = t + <usize>panelsM * <usize>(MR * LDT * 4);
  const offs = tmp + 256;
  const row0 = q0 / wp; // the part's first output row: its pixels are counted from row0·wp
  // the image the taps read: x in place (planes H·W floats apart), or the part's rows of the zero-padded image
  let img = x, ps = H * W;
  if (!unpadded(g)) {
    img = offs + (<usize>K << 2);
    const hp = partRows(g, q0, q1);
    ps = planeStride(g, q0, q1);
    const ih0 = max(0, row0 - pt), ih1 = min(H, row0 - pt + hp);
    const r0 = ih0 + pt - row0, r1 = ih1 + pt - row0; // the rows that hold image rows; zeros around
    const rowBytes = <usize>wp << 2;
    for (let c = 0; c < C; c++) {
      const plane = img + (<usize>(c * ps) << 2);
      memory.fill(plane, 0, <usize>r0 * rowBytes);
      for (let r = r0; r < r1; r++) {
        const row = plane + <usize>r * rowBytes;
        memory.fill(row, 0, <usize>pl << 2);
        memory.copy(row + (<usize>pl << 2), x + ((<usize>(c * H + r - r0 + ih0) * <usize>W) << 2), <usize>W << 2);
        memory.fill(row + (<usize>(pl + W) << 2), 0, <usize>(wp - pl - W) << 2);
      }
      memory.fill(plane + <usize>r1 * rowBytes, 0, <usize>(ps - r1 * wp) << 2);
    }
    memory.fill(img + (<usize>(C * ps) << 2), 0, <usize>slack(g) << 2);
  } else img += <usize>row0 * <usize>wp << 2;
  // tap offsets (bytes): off(k) for k = (c, i, j) in C, kh, kw order
  let k = 0;
  for (let c = 0; c < C; c++) {
    for (let i = 0; i < kh; i++) {
      for (let j = 0; j < kw; j++, k++) store<u32>(offs + (<usize>k << 2), <u32>(c * ps + i * dh * wp + j * dw) << 2);
    }
  }
  // 1×1 windows pack B (their taps' rows lie a plane apart, often a multiple of 4 KiB: the cache sets of one
  // column); larger windows read it in place (packing would write the whole kh·kw-fold im2col matrix)
  const pack = kh * kw == 1;
  // one block of taps over a grid without extra pixels: the sums go straight to y, with the bias (finishTile)
  const once = K <= KC && wp == OW;
  const ldc = <usize>P << 2;
  for (let n0 = q0; n0 < q1; n0 += NC) {
    const nc = min(NC, q1 - n0);
    const xb = img + (<usize>(n0 - row0 * wp) << 2);
    if (once) {
      if (pack) packImage(xb, offs, K, nc, pB);
      for (let jp = 0; jp < (nc + 7) >> 3; jp++) {
        const cols = min(8, nc - (jp << 3));
        const yj = y + (<usize>(n0 + (jp << 3)) << 2);
        const pbj = pB + <usize>jp * <usize>(K * 32), xj = xb + (<usize>(jp << 3) << 2);
        for (let ip = 0; ip < panelsM; ip++) {
          const pa = a + <usize>(ip * K * (MR << 4)), c = yj + <usize>(ip * MR) * ldc;
          const rows = min(MR, M - ip * MR), b = bias ? bias + (<usize>(ip * MR) << 2) : 0;
          if (pack) micro(K, pa, pbj, c, ldc, rows, cols, tmp, true, b);
          else microImage(K, pa, xj, offs, c, ldc, rows, cols, tmp, true, b);
        }
      }
      continue;
    }
    for (let i = 0; i < M; i++) memory.fill(t + <usize>i * ldt, 0, <usize>nc << 2);
    for (let k0 = 0; k0 < K; k0 += KC) {
      const kc = min(KC, K - k0);
      const aBlock = a + (<usize>k0 * <usize>Mp << 4);
      const ok = offs + (<usize>k0 << 2);
      if (pack) packImage(xb, ok, kc, nc, pB);
      for (let jp = 0; jp < (nc + 7) >> 3; jp++) {
        const cols = min(8, nc - (jp << 3));
        const cj = t + (<usize>(jp << 3) << 2);
        const pbj = pB + <usize>jp * <usize>(kc * 32), xj = xb + (<usize>(jp << 3) << 2);
        for (let ip = 0; ip < panelsM; ip++) {
          const pa = aBlock + <usize>(ip * kc * (MR << 4)), c = cj + <usize>(ip * MR) * ldt;
          const rows = min(MR, M - ip * MR);
          if (pack) micro(kc, pa, pbj, c, ldt, rows, cols, tmp);
          else microImage(kc, pa, xj, ok, c, ldt, rows, cols, tmp, false, 0);
        }
      }
    }
    // the block's pixels that lie within OW, row segment by row segment, plus the bias
    let q = n0;
    while (q < n0 + nc) {
      const oh = q / wp, ow = q % wp;
      const len = min(wp - ow, n0 + nc - q);
      const keep = min(len, OW - ow);
      if (keep > 0) {
        for (let i = 0; i < M; i++) {
          const dst = y + ((<usize>i * <usize>P + <usize>(oh * OW + ow)) << 2);
          const src = t + <usize>i * ldt + (<usize>(q - n0) << 2);
          if (!bias) {
            memory.copy(dst, src, <usize>keep << 2);
            continue;
          }
          const bv: f32 = load<f32>(bias + (<usize>i << 2));
          const b = f32x4.splat(bv);
          let jj = 0;
          for (; jj + 4 <= keep; jj += 4) {
            const at = <usize>jj << 2;
            v128.store(dst + at, f32x4.add(v128.load(src + at), b));
          }
          for (; jj < keep; jj++) store<f32>(dst + (<usize>jj << 2), load<f32>(src + (<usize>jj << 2)) + bv);
        }
      }
      q += len;
    }
  }
}
