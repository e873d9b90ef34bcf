// 2-D convolution kernels (float32, NCHW), the wasm backend's fast path for conv (src/dispatch-conv.ts; stride-1
// convs run on conv-direct.ts, which shares the parameter block and convPackA):
// - convGemm: one group's Y[M, P] = W[M, K] · cols[K, P] (M output channels, P = OH·OW output pixels,
//   K = C·kh·kw), the im2col matrix never materialized: B's 8-column panels are packed straight from the
//   image (packColumns: two f32x4 loads per tap where the 8 pixels lie in one row, four and a shuffle for
//   stride 2), A (the weights) packed once per call by convPackA, and matmul.ts's MR×8 micro-kernel
//   accumulates into Y, which is NCHW already. Parts split the pixels (columns) in multiples of 8.
// - depthwiseConv: groups = C = O, per channel plane: the plane copied into a zero-padded scratch plane,
//   then 8 (or 4) outputs of two rows per step (four independent sums per tap, where one row's two were bound
//   by the adds' latency: 1.2-1.3× on 5×5 and 3×3 stride-1 windows), the odd last row alone; Σ over taps of
//   tap view · weight in tap order (mul then add, the composite's order: the same bits). Parts split the
//   planes (N·C).
// Geometry arrives in a parameter block of i32 words (GEO_*) so that a job fits the pool's 13 arguments.
import { KC, micro, MR } from './matmul';

// Parameter block: word offsets.
export const GEO_C = 0, GEO_H = 1, GEO_W = 2, GEO_OH = 3, GEO_OW = 4, GEO_KH = 5, GEO_KW = 6, GEO_SH = 7;
export const GEO_SW = 8, GEO_DH = 9, GEO_DW = 10, GEO_PT = 11, GEO_PL = 12, GEO_M = 13, GEO_X = 14, GEO_A = 15;
export const GEO_OUT = 16, GEO_BIAS = 17, GEO_WORDS = 18;

/** Output pixels (columns of B) per block: a packed B block is KC × NC floats (128 KiB), L2-resident. */
const NC: i32 = 128;

@inline function geo(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function geoPtr(p: usize, i: i32): usize { return <usize>load<u32>(p + (<usize>i << 2)); }

/** Bytes of A that convPackA writes for M rows and K columns (MR-row panels, each element as an f32x4). */
export function convPackBytesA(M: i32, K: i32): usize {
  return <usize>((M + MR - 1) / MR) * <usize>MR * <usize>K * 16;
}

/**
 * Row stride (floats) of the output block convGemm accumulates in: NC plus 4, so that the block's rows do
 * not fall into the same cache sets (y's own rows are P floats apart, a multiple of 4 KiB at 160 × 160).
 */
const LDT: i32 = NC + 4;

/**
 * Bytes of scratch one convGemm part needs for M output channels: a packed B block, three per-tap tables,
 * the edge-tile buffer and the output block (M rounded up to MR rows of LDT floats).
 */
export function convScratchBytes(M: i32): usize {
  return <usize>(KC * NC * 4 + 3 * KC * 4 + 256) + <usize>((M + MR - 1) / MR) * <usize>(MR * LDT * 4);
}

/**
 * Packs W [M, K] (row-major at w) for convGemm: per KC-deep block of K, per MR-row panel, kc steps of MR
 * f32x4 splats (rows past M zero). Block kb starts at kb·KC·Mp·16 bytes (Mp = M rounded up to MR). Only panels
 * [panelStart, panelEnd) are written (parts of the pool split the panels).
 */
export function convPackA(w: usize, M: i32, K: i32, dst: usize, panelStart: i32, panelEnd: i32): void {
  const Mp = (M + MR - 1) / MR * MR;
  for (let k0 = 0; k0 < K; k0 += KC) {
    const kc = min(KC, K - k0);
    let p = dst + (<usize>k0 * <usize>Mp << 4) + <usize>(panelStart * kc * (MR << 4));
    for (let ip = panelStart; ip < panelEnd; ip++) {
      for (let k = 0; k < kc; k++) {
        for (let ii = 0; ii < MR; ii++) {
          const i = ip * MR + ii;
          const v: f32 = i < M ? load<f32>(w + ((<usize>i * <usize>K + <usize>(k0 + k)) << 2)) : 0;
          v128.store(p + (<usize>ii << 4), f32x4.splat(v));
        }
        p += MR << 4;
      }
    }
  }
}

/**
 * Packs the im2col columns [k0, k0 + kc) × pixels [n0, n0 + nc) of image x (C planes H × W) into 8-column
 * panels at dst (kc × 8 floats each; pixels past nc zero). Taps k = (c, i, j) in C, kh, kw order; a tap
 * outside the image (padding) is 0. Panels whose 8 pixels lie in one output row are packed in runs along
 * the row, tap by tap: one input row per tap and run, two f32x4 loads per panel (stride 1; four and two
 * shuffles for stride 2), element by element only where a window reaches into the padding.
 */
function packColumns(g: usize, x: usize, k0: i32, kc: i32, n0: i32, nc: i32, dst: usize, tab: usize): void {
  const H = geo(g, GEO_H), W = geo(g, GEO_W), OW = geo(g, GEO_OW);
  const kh = geo(g, GEO_KH), kw = geo(g, GEO_KW), sh = geo(g, GEO_SH), sw = geo(g, GEO_SW);
  const dh = geo(g, GEO_DH), dw = geo(g, GEO_DW), pt = geo(g, GEO_PT), pl = geo(g, GEO_PL);
  const tOff = tab, tIH = tab + <usize>(KC << 2), tIW = tab + <usize>(KC << 3);
  // per-tap tables: the tap's row and column offsets and the element offset of its channel's plane
  const taps = kh * kw;
  let c = k0 / taps, rem = k0 % taps;
  let i = rem / kw, j = rem % kw;
  for (let k = 0; k < kc; k++) {
    const q = <usize>k << 2;
    store<i32>(tIH + q, i * dh);
    store<i32>(tIW + q, j * dw);
    store<i32>(tOff + q, c * H * W);
    if (++j == kw) { j = 0; if (++i == kh) { i = 0; c++; } }
  }
  const panels = (nc + 7) >> 3;
  const panelBytes = <usize>kc << 5; // one panel: kc × 8 floats
  const reach = sw == 1 ? 8 : sw == 2 ? 16 : W + 1; // floats the vector path reads (stride 1, 2; else none)
  let jp = 0;
  while (jp < panels) {
    const n = n0 + (jp << 3);
    const oh = n / OW, ow = n % OW;
    const run = min((OW - ow) >> 3, (n0 + nc - n) >> 3); // whole panels left in this output row
    const p0 = dst + <usize>jp * panelBytes;
    if (run > 0) {
      const ih0 = oh * sh - pt, iw0 = ow * sw - pl;
      const step = <usize>(sw << 5); // bytes of input between panels
      for (let k = 0; k < kc; k++) {
        const q = <usize>k << 2;
        const ih = ih0 + load<i32>(tIH + q);
        let p = p0 + (<usize>k << 5);
        if (<u32>ih >= <u32>H) {
          for (let r = 0; r < run; r++, p += panelBytes) {
            v128.store(p, f32x4.splat(0)); v128.store(p, f32x4.splat(0), 16);
          }
          continue;
        }
        const row = x + (<usize>(load<i32>(tOff + q) + ih * W) << 2);
        let iw = iw0 + load<i32>(tIW + q);
        let src = row + (<usize>iw << 2);
        for (let r = 0; r < run; r++, p += panelBytes, iw += sw << 3, src += step) {
          if (iw >= 0 && iw + reach <= W) {
            if (sw == 1) {
              v128.store(p, v128.load(src)); v128.store(p, v128.load(src, 16), 16);
            } else {
              v128.store(p, v128.shuffle<f32>(v128.load(src), v128.load(src, 16), 0, 2, 4, 6));
              v128.store(p, v128.shuffle<f32>(v128.load(src, 32), v128.load(src, 48), 0, 2, 4, 6), 16);
            }
          } else {
            for (let jj = 0; jj < 8; jj++) {
              const cw = iw + jj * sw;
              store<f32>(p + (<usize>jj << 2), <u32>cw < <u32>W ? load<f32>(row + (<usize>cw << 2)) : 0);
            }
          }
        }
      }
      jp += run;
      continue;
    }
    // a panel across a row boundary, or a partial one: element by element
    const cols = min(8, nc - (jp << 3));
    let p = p0;
    for (let k = 0; k < kc; k++) {
      const q = <usize>k << 2;
      const plane = x + (<usize>load<i32>(tOff + q) << 2);
      const di = load<i32>(tIH + q) - pt, dj = load<i32>(tIW + q) - pl;
      for (let jj = 0; jj < 8; jj++) {
        let v: f32 = 0;
        if (jj < cols) {
          const m = n + jj;
          const ih = (m / OW) * sh + di, iw = (m % OW) * sw + dj;
          if (<u32>ih < <u32>H && <u32>iw < <u32>W) v = load<f32>(plane + (<usize>(ih * W + iw) << 2));
        }
        store<f32>(p + (<usize>jj << 2), v);
      }
      p += 32;
    }
    jp++;
  }
}

/**
 * One group's conv as a GEMM over output pixels [colStart, colEnd) (multiples of 8 except at P): y[M, P]
 * (row stride P) = W · im2col(x), plus the bias (GEO_BIAS, 0: none) added to the finished sums. The block at
 * `g` gives the geometry, x (the group's C input planes), A (convPackA of the group's weights) and y. Each block of
 * NC pixels is accumulated in scratch (rows LDT floats apart) and then copied to y. `scratch` holds
 * convScratchBytes(M).
 */
export function convGemm(g: usize, colStart: i32, colEnd: i32, scratch: usize): void {
  const C = geo(g, GEO_C), M = geo(g, GEO_M);
  const P = geo(g, GEO_OH) * geo(g, GEO_OW);
  const K = C * geo(g, GEO_KH) * geo(g, GEO_KW);
  const x = geoPtr(g, GEO_X), a = geoPtr(g, GEO_A), y = geoPtr(g, GEO_OUT), bias = geoPtr(g, GEO_BIAS);
  const ldc = <usize>P << 2;
  const panelsM = (M + MR - 1) / MR;
  const Mp = panelsM * MR;
  const pB = scratch;
  const tab = pB + <usize>(KC * NC * 4);
  const tmp = tab + <usize>(3 * KC * 4);
  const t = tmp + 256; // the output block: M rows of LDT floats
  const ldt = <usize>LDT << 2;
  // one block of taps: the micro-kernel's sums are final and go straight to y, with the bias (finishTile)
  const once = K <= KC;
  for (let n0 = colStart; n0 < colEnd; n0 += NC) {
    const nc = min(NC, colEnd - n0);
    if (once) {
      packColumns(g, x, 0, K, n0, nc, pB, tab);
      for (let jp = 0; jp < (nc + 7) >> 3; jp++) {
        const cols = min(8, nc - (jp << 3));
        const pbj = pB + <usize>jp * <usize>(K * 32);
        const yj = y + (<usize>(n0 + (jp << 3)) << 2);
        for (let ip = 0; ip < panelsM; ip++) {
          micro(K, a + <usize>(ip * K * (MR << 4)), pbj, yj + <usize>(ip * MR) * ldc, ldc, min(MR, M - ip * MR), cols,
              tmp, true, bias ? bias + (<usize>(ip * MR) << 2) : 0);
        }
      }
      continue;
    }
    for (let i = 0; i < M; i++) memory.fill(t + <usize>i * ldt, 0, <usize>nc << 2);
    for (let k0 = 0; k0 < K; k0 += KC) {
      const kc = min(KC, K - k0);
      packColumns(g, x, k0, kc, n0, nc, pB, tab);
      const aBlock = a + (<usize>k0 * <usize>Mp << 4);
      for (let jp = 0; jp < (nc + 7) >> 3; jp++) {
        const cols = min(8, nc - (jp << 3));
        const pbj = pB + <usize>jp * <usize>(kc * 32);
        const cj = t + (<usize>(jp << 3) << 2);
        for (let ip = 0; ip < panelsM; ip++) {
          micro(kc, aBlock + <usize>(ip * kc * (MR << 4)), pbj, cj + <usize>(ip * MR) * ldt, ldt,
              min(MR, M - ip * MR), cols, tmp);
        }
      }
    }
    for (let i = 0; i < M; i++) {
      const dst = y + <usize>i * ldc + (<usize>n0 << 2), src = t + <usize>i * ldt;
      if (!bias) {
        memory.copy(dst, src, <usize>nc << 2);
        continue;
      }
      // the bias added to the finished sums (the composite's order: the same bits as conv, then add)
      const bv: f32 = load<f32>(bias + (<usize>i << 2));
      const b = f32x4.splat(bv);
      let jj = 0;
      for (; jj + 4 <= nc; jj += 4) {
        const at = <usize>jj << 2;
        v128.store(dst + at, f32x4.add(v128.load(src + at), b));
      }
      for (; jj < nc; jj++) store<f32>(dst + (<usize>jj << 2), load<f32>(src + (<usize>jj << 2)) + bv);
    }
  }
}

/** Bytes of the padded plane depthwiseConv needs per part for this geometry. */
export function depthwiseScratchBytes(g: usize): usize {
  const hp = (geo(g, GEO_OH) - 1) * geo(g, GEO_SH) + (geo(g, GEO_KH) - 1) * geo(g, GEO_DH) + 1;
  return <usize>hp * <usize>depthwiseRowWidth(g) << 2;
}

/** Floats per padded row: the widest window reach plus room for the last step's whole-vector reads. */
@inline function depthwiseRowWidth(g: usize): i32 {
  const wu = (geo(g, GEO_OW) - 1) * geo(g, GEO_SW) + (geo(g, GEO_KW) - 1) * geo(g, GEO_DW) + 1;
  return ((wu + 8 * geo(g, GEO_SW) + 3) >> 2) << 2;
}

/** 4 outputs of a stride-`sw` row at p (sw 1 or 2; other strides gather lane by lane). */
@inline function tapVector(p: usize, sw: i32): v128 {
  if (sw == 1) return v128.load(p);
  if (sw == 2) return v128.shuffle<f32>(v128.load(p), v128.load(p, 16), 0, 2, 4, 6);
  const s = <usize>sw << 2;
  let v = f32x4.splat(load<f32>(p));
  v = f32x4.replace_lane(v, 1, load<f32>(p + s));
  v = f32x4.replace_lane(v, 2, load<f32>(p + 2 * s));
  return f32x4.replace_lane(v, 3, load<f32>(p + 3 * s));
}

/** The first min(n, 4) lanes of v at q. */
@inline function storeTail(q: usize, v: v128, n: i32): void {
  store<f32>(q, f32x4.extract_lane(v, 0));
  if (n > 1) store<f32>(q, f32x4.extract_lane(v, 1), 4);
  if (n > 2) store<f32>(q, f32x4.extract_lane(v, 2), 8);
  if (n > 3) store<f32>(q, f32x4.extract_lane(v, 3), 12);
}

/**
 * Depthwise conv of planes [planeStart, planeEnd) of x ([N·C] planes H × W; weights [C, kh·kw]) into y
 * ([N·C] planes OH × OW), plus its bias (GEO_BIAS, 0: none) added to the finished sums. `scratch` holds
 * depthwiseScratchBytes(g).
 */
export function depthwiseConv(g: usize, planeStart: i32, planeEnd: i32, scratch: usize): void {
  const C = geo(g, GEO_C), H = geo(g, GEO_H), W = geo(g, GEO_W), OH = geo(g, GEO_OH), OW = geo(g, GEO_OW);
  const kh = geo(g, GEO_KH), kw = geo(g, GEO_KW), sh = geo(g, GEO_SH), sw = geo(g, GEO_SW);
  const dh = geo(g, GEO_DH), dw = geo(g, GEO_DW), pt = geo(g, GEO_PT), pl = geo(g, GEO_PL);
  const x = geoPtr(g, GEO_X), w = geoPtr(g, GEO_A), y = geoPtr(g, GEO_OUT), bias = geoPtr(g, GEO_BIAS);
  const hp = (OH - 1) * sh + (kh - 1) * dh + 1;
  const wp = depthwiseRowWidth(g);
  const rowBytes = <usize>wp << 2;
  const pad = scratch;
  const step = <usize>(sw << 2);
  for (let plane = planeStart; plane < planeEnd; plane++) {
    const ch = plane % C;
    // the plane into the padded scratch: zeros around, the rows that windows reach copied in
    memory.fill(pad, 0, <usize>hp * rowBytes);
    const width = min(W, wp - pl);
    const src = x + (<usize>plane * <usize>H * <usize>W << 2);
    for (let ih = max(0, -pt); ih < H && ih + pt < hp; ih++) {
      if (width > 0) memory.copy(pad + <usize>(ih + pt) * rowBytes + (<usize>pl << 2), src + (<usize>(ih * W) << 2),
          <usize>width << 2);
    }
    const wk = w + (<usize>(ch * kh * kw) << 2);
    const b = f32x4.splat(bias ? load<f32>(bias + (<usize>ch << 2)) : 0);
    const out = y + (<usize>plane * <usize>OH * <usize>OW << 2);
    let oh = 0;
    // two output rows at a time: four independent sums per tap (one row's two are bound by the adds' latency)
    const rowStep = <usize>sh * rowBytes;
    for (; oh + 2 <= OH; oh += 2) {
      const base = pad + <usize>(oh * sh) * rowBytes;
      const o = out + (<usize>(oh * OW) << 2);
      const o1 = o + (<usize>OW << 2);
      let ow = 0;
      for (; ow + 8 <= OW; ow += 8) {
        let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0), acc2 = f32x4.splat(0), acc3 = f32x4.splat(0);
        for (let i = 0; i < kh; i++) {
          const row = base + <usize>(i * dh) * rowBytes + <usize>ow * step;
          const wr = wk + (<usize>(i * kw) << 2);
          for (let j = 0; j < kw; j++) {
            const wv = v128.load32_splat(wr + (<usize>j << 2));
            const p = row + (<usize>(j * dw) << 2);
            acc0 = f32x4.add(acc0, f32x4.mul(tapVector(p, sw), wv));
            acc1 = f32x4.add(acc1, f32x4.mul(tapVector(p + 4 * step, sw), wv));
            acc2 = f32x4.add(acc2, f32x4.mul(tapVector(p + rowStep, sw), wv));
            acc3 = f32x4.add(acc3, f32x4.mul(tapVector(p + rowStep + 4 * step, sw), wv));
          }
        }
        v128.store(o + (<usize>ow << 2), f32x4.add(acc0, b));
        v128.store(o + (<usize>ow << 2), f32x4.add(acc1, b), 16);
        v128.store(o1 + (<usize>ow << 2), f32x4.add(acc2, b));
        v128.store(o1 + (<usize>ow << 2), f32x4.add(acc3, b), 16);
      }
      for (; ow < OW; ow += 4) {
        let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0);
        for (let i = 0; i < kh; i++) {
          const row = base + <usize>(i * dh) * rowBytes + <usize>ow * step;
          const wr = wk + (<usize>(i * kw) << 2);
          for (let j = 0; j < kw; j++) {
            const wv = v128.load32_splat(wr + (<usize>j << 2));
            const p = row + (<usize>(j * dw) << 2);
            acc0 = f32x4.add(acc0, f32x4.mul(tapVector(p, sw), wv));
            acc1 = f32x4.add(acc1, f32x4.mul(tapVector(p + rowStep, sw), wv));
          }
        }
        storeTail(o + (<usize>ow << 2), f32x4.add(acc0, b), OW - ow);
        storeTail(o1 + (<usize>ow << 2), f32x4.add(acc1, b), OW - ow);
      }
    }
    for (; oh < OH; oh++) {
      const base = pad + <usize>(oh * sh) * rowBytes;
      const o = out + (<usize>(oh * OW) << 2);
      let ow = 0;
      for (; ow + 8 <= OW; ow += 8) {
        let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0);
        for (let i = 0; i < kh; i++) {
          const row = base + <usize>(i * dh) * rowBytes + <usize>ow * step;
          const wr = wk + (<usize>(i * kw) << 2);
          for (let j = 0; j < kw; j++) {
            const wv = v128.load32_splat(wr + (<usize>j << 2));
            const p = row + (<usize>(j * dw) << 2);
            acc0 = f32x4.add(acc0, f32x4.mul(tapVector(p, sw), wv));
            acc1 = f32x4.add(acc1, f32x4.mul(tapVector(p + 4 * step, sw), wv));
          }
        }
        v128.store(o + (<usize>ow << 2), f32x4.add(acc0, b));
        v128.store(o + (<usize>ow << 2), f32x4.add(acc1, b), 16);
      }
      for (; ow < OW; ow += 4) {
        let acc = f32x4.splat(0);
        for (let i = 0; i < kh; i++) {
          const row = base + <usize>(i * dh) * rowBytes + <usize>ow * step;
          const wr = wk + (<usize>(i * kw) << 2);
          for (let j = 0; j < kw; j++) {
            acc = f32x4.add(acc, f32x4.mul(tapVector(row + (<usize>(j * dw) << 2), sw), v128.load32_splat(wr +
                (<usize>j << 2))));
          }
        }
        storeTail(o + (<usize>ow << 2), f32x4.add(acc, b), OW - ow);
      }
    }
  }
}
