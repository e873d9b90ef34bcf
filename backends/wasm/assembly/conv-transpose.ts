// Transposed 2-D convolution (float32, NCHW), the wasm backend's fast path for convTranspose
// (src/dispatch-conv-transpose.ts), for one batch item and group: every input pixel (iy, ix) scatters
// Σ_c x[c, iy, ix] · w[c, o, ky, kx] into y[o, iy·sh + ky·dh − pt, ix·sw + kx·dw − pl], each channel sum
// over c in order. Two paths:
// - disjoint taps ((kh − 1)·dh < sh and (kw − 1)·dw < sw, e.g. stride = kernel: no two taps reach one output):
//   a GEMM whose rows are the Og·K pairs (o, tap) in w's own layout [Cg, Og·K]; per input row, its 8-pixel
//   blocks packed channel-contiguous in scratch, then per block of 6 (then 4, then 1) rows the whole row of
//   pixels, 8 at a time (12 f32x4 accumulators, as conv.ts's micro-kernel), each sum stored straight to its
//   output (its only term); a 2-wide kernel of stride 2 stores the two kx rows interleaved (whole vectors);
// - otherwise the taps outermost (ky, then the input rows, then kx), so that each output receives its taps in
//   tap order, each tap's channel sum added to y (the composite's and the webgpu kernel's order); the input
//   row's channels copied to scratch, then per block of 4 output channels the row's pixels, 8 at a time, from
//   w packed per tap (convTransposePackW).
// Multiply-adds are madd (one FMA in the relaxed-SIMD build, as matmul.ts: the composite's matmul too), the
// pixels left over scalar (a multiply then an add). y must hold zeros where no tap lands (the dispatch fills it
// unless the taps cover y). Only the input pixels whose outputs land inside y are visited in vectors (the crop
// of the padding and the zeros of outputPadding need no test per lane). Parts split the output channels
// [o0, o1) or the input rows [r0, r1) (the latter only where no two input rows reach one output row,
// (kh − 1)·dh < sh); which pixels run in vectors depends on the geometry alone, so any split gives the same bits.
// Geometry arrives in a parameter block of i32 words (CT_*).

// Parameter block: word offsets.
export const CT_CG = 0, CT_OG = 1, CT_H = 2, CT_W = 3, CT_OH = 4, CT_OW = 5, CT_KH = 6, CT_KW = 7, CT_SH = 8;
export const CT_SW = 9, CT_DH = 10, CT_DW = 11, CT_PT = 12, CT_PL = 13, CT_X = 14, CT_WP = 15, CT_Y = 16;
export const CT_W_RAW = 17, CT_WORDS = 18;

/** a·b + c: one FMA in the relaxed-SIMD build (as matmul.ts and conv.ts), else a multiply then an add. */
@inline function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(c, f32x4.mul(a, b));
}

/**
 * Floats between the channels of an input row copied to scratch (the overlapping-taps path): W rounded up to
 * 8, plus 8 where that is a multiple of 256 (1 KiB), so that the copies do not share cache sets. The scratch
 * of a part: Cg × packedRow(W) floats (also enough for the disjoint path's Cg × W rounded up to 8).
 */
@inline function packedRow(W: i32): usize {
  const w8 = (W + 7) & ~7;
  return <usize>((w8 & 255) == 0 ? w8 + 8 : w8);
}

@inline function word(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function ptrAt(p: usize, i: i32): usize { return <usize>load<u32>(p + (<usize>i << 2)); }

/**
 * Packs w [Cg, Og, K] (one group's weights, row-major at w, K = kh·kw taps) as [K, Cg, Og] at dst: per tap,
 * per input channel, the Og output channels' weights side by side.
 */
export function convTransposePackW(w: usize, Cg: i32, Og: i32, K: i32, dst: usize): void {
  for (let c = 0; c < Cg; c++)
    for (let o = 0; o < Og; o++) {
      const src = w + ((<usize>(c * Og + o) * <usize>K) << 2);
      for (let t = 0; t < K; t++)
        store<f32>(dst + ((<usize>(t * Cg + c) * <usize>Og + <usize>o) << 2), load<f32>(src + (<usize>t << 2)));
    }
}

/** Adds the 8 sums a (pixels 0–3) and b (4–7) to y at p, p + step, … (step bytes apart). */
@inline function addLanes(p: usize, step: usize, a: v128, b: v128): void {
  if (step == 4) {
    v128.store(p, f32x4.add(v128.load(p), a));
    v128.store(p, f32x4.add(v128.load(p, 16), b), 16);
    return;
  }
  store<f32>(p, load<f32>(p) + f32x4.extract_lane(a, 0));
  store<f32>(p + step, load<f32>(p + step) + f32x4.extract_lane(a, 1));
  store<f32>(p + 2 * step, load<f32>(p + 2 * step) + f32x4.extract_lane(a, 2));
  store<f32>(p + 3 * step, load<f32>(p + 3 * step) + f32x4.extract_lane(a, 3));
  const q = p + 4 * step;
  store<f32>(q, load<f32>(q) + f32x4.extract_lane(b, 0));
  store<f32>(q + step, load<f32>(q + step) + f32x4.extract_lane(b, 1));
  store<f32>(q + 2 * step, load<f32>(q + 2 * step) + f32x4.extract_lane(b, 2));
  store<f32>(q + 3 * step, load<f32>(q + 3 * step) + f32x4.extract_lane(b, 3));
}

/**
 * One tap over one input row: input pixels [lo, hi) of the row at xr (channels `plane` floats apart), the
 * tap's packed weights at wt ([Cg, Og]), output channels [o0, o1) into the output row at yr (channels
 * `oplane` floats apart), pixel ix landing at ix·sw + shift. Per block of 4 channels the whole row (y's
 * channel rows, often a multiple of 4 KiB apart, would otherwise share cache sets).
 */
function tapRow(
  xr: usize, plane: usize, wt: usize, Cg: i32, Og: i32, o0: i32, o1: i32,
  yr: usize, oplane: usize, lo: i32, hi: i32, sw: i32, shift: i32,
): void {
  const step = <usize>sw << 2;
  const wstride = <usize>Og << 2;
  const xstride = plane << 2;
  const end = lo + ((hi - lo) & ~7);
  let o = o0;
  for (; o + 4 <= o1; o += 4) {
    const yo = yr + ((<usize>o * oplane) << 2);
    for (let ix = lo; ix < end; ix += 8) {
      const xp = xr + (<usize>ix << 2);
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
      let xc = xp;
      let wc = wt + (<usize>o << 2);
      for (let c = 0; c < Cg; c++) {
        const v0 = v128.load(xc), v1 = v128.load(xc, 16);
        const w0 = v128.load32_splat(wc), w1 = v128.load32_splat(wc, 4);
        const w2 = v128.load32_splat(wc, 8), w3 = v128.load32_splat(wc, 12);
        a0 = madd(v0, w0, a0);
        a1 = madd(v1, w0, a1);
        a2 = madd(v0, w1, a2);
        a3 = madd(v1, w1, a3);
        a4 = madd(v0, w2, a4);
        a5 = madd(v1, w2, a5);
        a6 = madd(v0, w3, a6);
        a7 = madd(v1, w3, a7);
        xc += xstride;
        wc += wstride;
      }
      const yp = yo + (<usize>(ix * sw + shift) << 2);
      addLanes(yp, step, a0, a1);
      addLanes(yp + (oplane << 2), step, a2, a3);
      addLanes(yp + (oplane << 3), step, a4, a5);
      addLanes(yp + 3 * (oplane << 2), step, a6, a7);
    }
  }
  for (; o < o1; o++) {
    const yo = yr + ((<usize>o * oplane) << 2);
    for (let ix = lo; ix < end; ix += 8) {
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0);
      let xc = xr + (<usize>ix << 2);
      let wc = wt + (<usize>o << 2);
      for (let c = 0; c < Cg; c++) {
        const w0 = v128.load32_splat(wc);
        a0 = madd(v128.load(xc), w0, a0);
        a1 = madd(v128.load(xc, 16), w0, a1);
        xc += xstride;
        wc += wstride;
      }
      addLanes(yo + (<usize>(ix * sw + shift) << 2), step, a0, a1);
    }
  }
  for (let ix = end; ix < hi; ix++) {
    const yp = yr + (<usize>(ix * sw + shift) << 2);
    for (let o = o0; o < o1; o++) {
      let s: f32 = 0;
      let xc = xr + (<usize>ix << 2);
      let wc = wt + (<usize>o << 2);
      for (let c = 0; c < Cg; c++) {
        s += load<f32>(xc) * load<f32>(wc);
        xc += xstride;
        wc += wstride;
      }
      const q = yp + ((<usize>o * oplane) << 2);
      store<f32>(q, load<f32>(q) + s);
    }
  }
}

/**
 * One batch item and group of convTranspose: output channels [o0, o1) from input rows [r0, r1), the geometry
 * and the x, packed w (convTransposePackW), y and w pointers in the parameter block at `params` (CT_* words);
 * `scratch` holds Cg × packedRow(W) floats.
 */
export function convTranspose(params: usize, o0: i32, o1: i32, r0: i32, r1: i32, scratch: usize): void {
  const disjointTaps =
    (word(params, CT_KH) - 1) * word(params, CT_DH) < word(params, CT_SH) &&
    (word(params, CT_KW) - 1) * word(params, CT_DW) < word(params, CT_SW);
  if (disjointTaps) {
    disjoint(params, o0, o1, r0, r1, scratch);
    return;
  }
  const Cg = word(params, CT_CG), Og = word(params, CT_OG), W = word(params, CT_W);
  const H = word(params, CT_H), OH = word(params, CT_OH), OW = word(params, CT_OW);
  const kh = word(params, CT_KH), kw = word(params, CT_KW), sh = word(params, CT_SH), sw = word(params, CT_SW);
  const dh = word(params, CT_DH), dw = word(params, CT_DW), pt = word(params, CT_PT), pl = word(params, CT_PL);
  const x = ptrAt(params, CT_X), wp = ptrAt(params, CT_WP), y = ptrAt(params, CT_Y);
  const plane = <usize>H * <usize>W;
  const oplane = <usize>OH * <usize>OW;
  const row = packedRow(W);
  for (let ky = 0; ky < kh; ky++) {
    for (let iy = r0; iy < r1; iy++) {
      const oy = iy * sh + ky * dh - pt;
      if (oy < 0 || oy >= OH) continue;
      // the row's channels copied to scratch, `row` floats apart (read in place, a plane apart, they could share
      // cache sets)
      let src = x + ((<usize>iy * <usize>W) << 2);
      for (let c = 0; c < Cg; c++) {
        memory.copy(scratch + ((<usize>c * row) << 2), src, <usize>W << 2);
        src += plane << 2;
      }
      const yr = y + ((<usize>oy * <usize>OW) << 2);
      for (let kx = 0; kx < kw; kx++) {
        // input pixel ix lands at ix·sw + shift: the ones inside [0, OW)
        const shift = kx * dw - pl;
        const last = OW - 1 - shift;
        if (last < 0) continue;
        const lo = shift >= 0 ? 0 : (sw - 1 - shift) / sw;
        const hi = min(W, last / sw + 1);
        if (lo >= hi) continue;
        const wt = wp + ((<usize>(ky * kw + kx) * <usize>Cg * <usize>Og) << 2);
        tapRow(scratch, row, wt, Cg, Og, o0, o1, yr, oplane, lo, hi, sw, shift);
      }
    }
  }
}

/** Stores the 8 sums a (pixels 0–3) and b (4–7) to y at p, p + step, … (step bytes apart). */
@inline function storeLanes(p: usize, step: usize, a: v128, b: v128): void {
  if (step == 4) {
    v128.store(p, a);
    v128.store(p, b, 16);
    return;
  }
  store<f32>(p, f32x4.extract_lane(a, 0));
  store<f32>(p + step, f32x4.extract_lane(a, 1));
  store<f32>(p + 2 * step, f32x4.extract_lane(a, 2));
  store<f32>(p + 3 * step, f32x4.extract_lane(a, 3));
  const q = p + 4 * step;
  store<f32>(q, f32x4.extract_lane(b, 0));
  store<f32>(q + step, f32x4.extract_lane(b, 1));
  store<f32>(q + 2 * step, f32x4.extract_lane(b, 2));
  store<f32>(q + 3 * step, f32x4.extract_lane(b, 3));
}

/** Two kx rows' 8 sums each (a0, a1 of kx = 0; b0, b1 of kx = 1) interleaved into 16 consecutive outputs at p. */
@inline function storePairs(p: usize, a0: v128, a1: v128, b0: v128, b1: v128): void {
  v128.store(p, v128.shuffle<f32>(a0, b0, 0, 4, 1, 5));
  v128.store(p, v128.shuffle<f32>(a0, b0, 2, 6, 3, 7), 16);
  v128.store(p, v128.shuffle<f32>(a1, b1, 0, 4, 1, 5), 32);
  v128.store(p, v128.shuffle<f32>(a1, b1, 2, 6, 3, 7), 48);
}

/**
 * Element index in y of GEMM row m = (o, ky, kx)'s output for input pixel 0 of row iy (add ix·sw), or −2^31
 * where the row's output row lies outside y.
 */
@inline function rowBase(m: i32, K: i32, kw: i32, iy: i32, sh: i32, dh: i32, dw: i32, pt: i32, pl: i32, OH: i32,
  OW: i32): i32 {
  const o = m / K, t = m % K;
  const oy = iy * sh + (t / kw) * dh - pt;
  if (oy < 0 || oy >= OH) return i32.MIN_VALUE;
  return (o * OH + oy) * OW + (t % kw) * dw - pl;
}

/**
 * The disjoint-taps path of convTranspose (see the top): rows [r0, r1), output channels [o0, o1); `scratch`
 * holds Cg × W (W rounded up to 8) floats or more (one input row's channels, packed).
 */
function disjoint(params: usize, o0: i32, o1: i32, r0: i32, r1: i32, scratch: usize): void {
  const Cg = word(params, CT_CG), Og = word(params, CT_OG), W = word(params, CT_W);
  const H = word(params, CT_H), OH = word(params, CT_OH), OW = word(params, CT_OW);
  const kh = word(params, CT_KH), kw = word(params, CT_KW), sh = word(params, CT_SH), sw = word(params, CT_SW);
  const dh = word(params, CT_DH), dw = word(params, CT_DW), pt = word(params, CT_PT), pl = word(params, CT_PL);
  const x = ptrAt(params, CT_X), w = ptrAt(params, CT_W_RAW), y = ptrAt(params, CT_Y);
  const K = kh * kw, M = Og * K, m0 = o0 * K, m1 = o1 * K;
  const plane = (<usize>H * <usize>W) << 2;
  const wstride = <usize>M << 2;
  const step = <usize>sw << 2;
  // the input pixels whose every kx lands inside [0, OW)
  let lo = 0, hi = W;
  for (let kx = 0; kx < kw; kx++) {
    const shift = kx * dw - pl;
    const last = OW - 1 - shift;
    lo = max(lo, shift >= 0 ? 0 : (sw - 1 - shift) / sw);
    hi = last < 0 ? 0 : min(hi, last / sw + 1);
  }
  if (hi < lo) hi = lo;
  const end = lo + ((hi - lo) & ~7);
  const pairs = kw == 2 && sw == 2 && dw == 1;
  for (let iy = r0; iy < r1; iy++) {
    const xr = x + ((<usize>iy * <usize>W) << 2);
    // the row's 8-pixel blocks packed [block][c][8] (the channels' rows lie a plane apart, often a multiple of
    // 4 KiB: read in place, they would share the same cache sets)
    let pk = scratch;
    for (let ix = lo; ix < end; ix += 8) {
      let src = xr + (<usize>ix << 2);
      for (let c = 0; c < Cg; c++) {
        v128.store(pk, v128.load(src));
        v128.store(pk, v128.load(src, 16), 16);
        pk += 32;
        src += plane;
      }
    }
    const xstride: usize = 32;
    let m = m0;
    // per block of rows, the whole row of pixels: y written row by row (its channels' rows, a plane apart,
    // would otherwise share cache sets), the packed input row re-read from cache
    // 6 rows (3 kx pairs where pairs) per step while they last: 12 accumulators, as conv.ts's micro-kernel
    for (; m + 6 <= m1; m += 6) {
      const b0 = rowBase(m, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b2 = rowBase(m + 2, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b4 = rowBase(m + 4, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b1 = rowBase(m + 1, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b3 = rowBase(m + 3, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b5 = rowBase(m + 5, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      for (let ix = lo; ix < end; ix += 8) {
        const xp = scratch + (<usize>(((ix - lo) >> 3) * Cg) << 5);
        let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
        let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
        let a8 = f32x4.splat(0), a9 = f32x4.splat(0), a10 = f32x4.splat(0), a11 = f32x4.splat(0);
        let xc = xp;
        let wc = w + (<usize>m << 2);
        for (let c = 0; c < Cg; c++) {
          const v0 = v128.load(xc), v1 = v128.load(xc, 16);
          let wv = v128.load32_splat(wc);
          a0 = madd(v0, wv, a0);
          a1 = madd(v1, wv, a1);
          wv = v128.load32_splat(wc, 4);
          a2 = madd(v0, wv, a2);
          a3 = madd(v1, wv, a3);
          wv = v128.load32_splat(wc, 8);
          a4 = madd(v0, wv, a4);
          a5 = madd(v1, wv, a5);
          wv = v128.load32_splat(wc, 12);
          a6 = madd(v0, wv, a6);
          a7 = madd(v1, wv, a7);
          wv = v128.load32_splat(wc, 16);
          a8 = madd(v0, wv, a8);
          a9 = madd(v1, wv, a9);
          wv = v128.load32_splat(wc, 20);
          a10 = madd(v0, wv, a10);
          a11 = madd(v1, wv, a11);
          xc += xstride;
          wc += wstride;
        }
        if (pairs) {
          if (b0 != i32.MIN_VALUE) storePairs(y + (<usize>(b0 + ix * 2) << 2), a0, a1, a2, a3);
          if (b2 != i32.MIN_VALUE) storePairs(y + (<usize>(b2 + ix * 2) << 2), a4, a5, a6, a7);
          if (b4 != i32.MIN_VALUE) storePairs(y + (<usize>(b4 + ix * 2) << 2), a8, a9, a10, a11);
          continue;
        }
        if (b0 != i32.MIN_VALUE) storeLanes(y + (<usize>(b0 + ix * sw) << 2), step, a0, a1);
        if (b1 != i32.MIN_VALUE) storeLanes(y + (<usize>(b1 + ix * sw) << 2), step, a2, a3);
        if (b2 != i32.MIN_VALUE) storeLanes(y + (<usize>(b2 + ix * sw) << 2), step, a4, a5);
        if (b3 != i32.MIN_VALUE) storeLanes(y + (<usize>(b3 + ix * sw) << 2), step, a6, a7);
        if (b4 != i32.MIN_VALUE) storeLanes(y + (<usize>(b4 + ix * sw) << 2), step, a8, a9);
        if (b5 != i32.MIN_VALUE) storeLanes(y + (<usize>(b5 + ix * sw) << 2), step, a10, a11);
      }
    }
    for (; m + 4 <= m1; m += 4) {
      const b0 = rowBase(m, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b2 = rowBase(m + 2, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b1 = rowBase(m + 1, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      const b3 = rowBase(m + 3, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      for (let ix = lo; ix < end; ix += 8) {
        const xp = scratch + (<usize>(((ix - lo) >> 3) * Cg) << 5);
        let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
        let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
        let xc = xp;
        let wc = w + (<usize>m << 2);
        for (let c = 0; c < Cg; c++) {
          const v0 = v128.load(xc), v1 = v128.load(xc, 16);
          const w0 = v128.load32_splat(wc), w1 = v128.load32_splat(wc, 4);
          const w2 = v128.load32_splat(wc, 8), w3 = v128.load32_splat(wc, 12);
          a0 = madd(v0, w0, a0);
          a1 = madd(v1, w0, a1);
          a2 = madd(v0, w1, a2);
          a3 = madd(v1, w1, a3);
          a4 = madd(v0, w2, a4);
          a5 = madd(v1, w2, a5);
          a6 = madd(v0, w3, a6);
          a7 = madd(v1, w3, a7);
          xc += xstride;
          wc += wstride;
        }
        if (pairs) {
          // rows m, m + 1 (and m + 2, m + 3) are kx = 0 and 1 of one (o, ky): m0 and K are even
          if (b0 != i32.MIN_VALUE) storePairs(y + (<usize>(b0 + ix * 2) << 2), a0, a1, a2, a3);
          if (b2 != i32.MIN_VALUE) storePairs(y + (<usize>(b2 + ix * 2) << 2), a4, a5, a6, a7);
          continue;
        }
        if (b0 != i32.MIN_VALUE) storeLanes(y + (<usize>(b0 + ix * sw) << 2), step, a0, a1);
        if (b1 != i32.MIN_VALUE) storeLanes(y + (<usize>(b1 + ix * sw) << 2), step, a2, a3);
        if (b2 != i32.MIN_VALUE) storeLanes(y + (<usize>(b2 + ix * sw) << 2), step, a4, a5);
        if (b3 != i32.MIN_VALUE) storeLanes(y + (<usize>(b3 + ix * sw) << 2), step, a6, a7);
      }
    }
    for (; m < m1; m++) {
      const b = rowBase(m, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
      for (let ix = lo; ix < end; ix += 8) {
        const xp = scratch + (<usize>(((ix - lo) >> 3) * Cg) << 5);
        let a0 = f32x4.splat(0), a1 = f32x4.splat(0);
        let xc = xp;
        let wc = w + (<usize>m << 2);
        for (let c = 0; c < Cg; c++) {
          const w0 = v128.load32_splat(wc);
          a0 = madd(v128.load(xc), w0, a0);
          a1 = madd(v128.load(xc, 16), w0, a1);
          xc += xstride;
          wc += wstride;
        }
        if (b != i32.MIN_VALUE) storeLanes(y + (<usize>(b + ix * sw) << 2), step, a0, a1);
      }
    }
    // the pixels left (borders where some kx falls outside, the last < 8): one at a time, each tap tested
    for (let ix = 0; ix < W; ix++) {
      if (ix == lo && end > lo) ix = end;
      if (ix >= W) break;
      for (let m = m0; m < m1; m++) {
        const b = rowBase(m, K, kw, iy, sh, dh, dw, pt, pl, OH, OW);
        const ox = ix * sw + ((m % K) % kw) * dw - pl;
        if (b == i32.MIN_VALUE || ox < 0 || ox >= OW) continue;
        let s: f32 = 0;
        let xc = xr + (<usize>ix << 2);
        let wc = w + (<usize>m << 2);
        for (let c = 0; c < Cg; c++) {
          s += load<f32>(xc) * load<f32>(wc);
          xc += plane;
          wc += wstride;
        }
        store<f32>(y + (<usize>(b + ix * sw) << 2), s);
      }
    }
  }
}
