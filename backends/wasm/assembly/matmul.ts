// GEMM C = A·B on float32 with strided A (sam, sak) and B (sbk, sbn), all strides in elements.
// Goto-style blocking: K in KC-deep blocks; B packed into 8-column panels (kc × 8), A into MR-row
// panels (kc × MR) whose elements are stored already broadcast (one f32x4 per element: the kernel
// then loads them with plain v128 loads — measured 3-5% faster than load32_splat in Node 20 and
// 7-12% in Deno's V8 15, at 4× the A panel's bytes). An MR×8 micro-kernel keeps 2·MR f32x4
// accumulators in registers. V8 gives SIMD code 15 xmm registers (xmm0-14), which decides MR:
// - plain SIMD: each multiply-add is mul then add and needs a temporary, so 10 accumulators + 2 B
//   + 1 A + 1 temporary = 14 registers: MR = 5 (5×8 measured 5-9% faster than 4×8);
// - relaxed SIMD (ASC_FEATURE_RELAXED_SIMD): f32x4.relaxed_madd is one FMA on x64 and arm64 with no
//   temporary, so 12 + 2 + 1 = 15 registers: MR = 6 (measured 1.25-1.3× the plain build at 4×8,
//   and 6×8 a further 5-15% over 4×8 with FMA).

/** Rows of the micro-kernel (and of a packed A panel). */
export const MR: i32 = ASC_FEATURE_RELAXED_SIMD ? 6 : 5;
export const KC: i32 = 256;
export const MC: i32 = 60; // a multiple of MR (5 and 6)

/** Rows per micro-kernel panel, so that callers can split M into whole panels. */
export function gemmRowBlock(): i32 { return MR; }

/** Bytes of packing scratch that gemm needs for A and for B (N columns): unsigned (N·1 KiB may pass 2 GiB). */
export function packBytesA(): usize { return <usize>(MC * KC * 16); }
export function packBytesB(n: i32): usize { return <usize>((n + 7) >> 3) * <usize>(8 * KC * 4); }

function packB(b: usize, sbk: i32, sbn: i32, k0: i32, kc: i32, N: i32, dst: usize): void {
  const panels = (N + 7) >> 3;
  let p = dst;
  for (let jp = 0; jp < panels; jp++) {
    const j0 = jp << 3;
    const full = j0 + 8 <= N;
    for (let k = 0; k < kc; k++) {
      const row = b + (<usize>((k0 + k) * sbk) << 2);
      if (full && sbn == 1) {
        v128.store(p, v128.load(row + (<usize>j0 << 2)));
        v128.store(p + 16, v128.load(row + (<usize>(j0 + 4) << 2)));
      } else {
        for (let jj = 0; jj < 8; jj++) {
          const j = j0 + jj;
          store<f32>(p + (<usize>jj << 2), j < N ? load<f32>(row + (<usize>(j * sbn) << 2)) : 0);
        }
      }
      p += 32;
    }
  }
}

function packA(a: usize, sam: i32, sak: i32, i0: i32, mc: i32, k0: i32, kc: i32, M: i32, dst: usize): void {
  const panels = (mc + MR - 1) / MR;
  let p = dst;
  for (let ip = 0; ip < panels; ip++) {
    for (let k = 0; k < kc; k++) {
      const col = a + (<usize>((k0 + k) * sak) << 2);
      for (let ii = 0; ii < MR; ii++) {
        const i = i0 + ip * MR + ii;
        v128.store(p + (<usize>ii << 4), f32x4.splat(i < M ? load<f32>(col + (<usize>(i * sam) << 2)) : 0));
      }
      p += MR << 4;
    }
  }
}

// a·b + c: one fused multiply-add where relaxed SIMD is compiled in (the FMA build), else mul then add.
// @ts-ignore: decorator
@inline export function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(c, f32x4.mul(a, b));
}

@inline function addStore(p: usize, v: v128): void {
  v128.store(p, f32x4.add(v128.load(p), v));
}

// Adds an MR×8 tile of accumulators into C (row stride ldc bytes); edge tiles (rows < MR or cols < 8)
// go through `tmp` and only their valid part is added.
// @ts-ignore: decorator
@inline export function storeTile(c: usize, ldc: usize, rows: i32, cols: i32, tmp: usize,
  c00: v128, c01: v128, c10: v128, c11: v128, c20: v128, c21: v128, c30: v128, c31: v128, c40: v128, c41: v128,
      c50: v128, c51: v128): void {
  if (rows == MR && cols == 8) {
    addStore(c, c00); addStore(c + 16, c01); c += ldc;
    addStore(c, c10); addStore(c + 16, c11); c += ldc;
    addStore(c, c20); addStore(c + 16, c21); c += ldc;
    addStore(c, c30); addStore(c + 16, c31); c += ldc;
    addStore(c, c40); addStore(c + 16, c41);
    if (MR == 6) { c += ldc; addStore(c, c50); addStore(c + 16, c51); }
    return;
  }
  v128.store(tmp, c00); v128.store(tmp + 16, c01); v128.store(tmp + 32, c10); v128.store(tmp + 48, c11);
  v128.store(tmp + 64, c20); v128.store(tmp + 80, c21); v128.store(tmp + 96, c30); v128.store(tmp + 112, c31);
  v128.store(tmp + 128, c40); v128.store(tmp + 144, c41); v128.store(tmp + 160, c50); v128.store(tmp + 176, c51);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const q = c + <usize>i * ldc + (<usize>j << 2);
      store<f32>(q, load<f32>(q) + load<f32>(tmp + (<usize>(i * 8 + j) << 2)));
    }
  }
}

/**
 * Stores a finished MR×8 tile of sums into C (row stride ldc bytes), each as 0 + sum (the bits of a sum added
 * into a zeroed C: −0 becomes +0) plus its row's bias where `bias` (the tile's first row's) is not 0; edge tiles
 * go through `tmp` and only their valid part is stored.
 */
// @ts-ignore: decorator
@inline export function finishTile(c: usize, ldc: usize, rows: i32, cols: i32, tmp: usize, bias: usize,
  c00: v128, c01: v128, c10: v128, c11: v128, c20: v128, c21: v128, c30: v128, c31: v128, c40: v128, c41: v128,
      c50: v128, c51: v128): void {
  const z = f32x4.splat(0);
  c00 = f32x4.add(z, c00); c01 = f32x4.add(z, c01); c10 = f32x4.add(z, c10); c11 = f32x4.add(z, c11);
  c20 = f32x4.add(z, c20); c21 = f32x4.add(z, c21); c30 = f32x4.add(z, c30); c31 = f32x4.add(z, c31);
  c40 = f32x4.add(z, c40); c41 = f32x4.add(z, c41); c50 = f32x4.add(z, c50); c51 = f32x4.add(z, c51);
  if (bias) {
    let b = v128.load32_splat(bias);
    c00 = f32x4.add(c00, b); c01 = f32x4.add(c01, b);
    if (rows > 1) { b = v128.load32_splat(bias, 4); c10 = f32x4.add(c10, b); c11 = f32x4.add(c11, b); }
    if (rows > 2) { b = v128.load32_splat(bias, 8); c20 = f32x4.add(c20, b); c21 = f32x4.add(c21, b); }
    if (rows > 3) { b = v128.load32_splat(bias, 12); c30 = f32x4.add(c30, b); c31 = f32x4.add(c31, b); }
    if (rows > 4) { b = v128.load32_splat(bias, 16); c40 = f32x4.add(c40, b); c41 = f32x4.add(c41, b); }
    if (MR == 6 && rows > 5) { b = v128.load32_splat(bias, 20); c50 = f32x4.add(c50, b); c51 = f32x4.add(c51, b); }
  }
  if (rows == MR && cols == 8) {
    v128.store(c, c00); v128.store(c, c01, 16); c += ldc;
    v128.store(c, c10); v128.store(c, c11, 16); c += ldc;
    v128.store(c, c20); v128.store(c, c21, 16); c += ldc;
    v128.store(c, c30); v128.store(c, c31, 16); c += ldc;
    v128.store(c, c40); v128.store(c, c41, 16);
    if (MR == 6) { c += ldc; v128.store(c, c50); v128.store(c, c51, 16); }
    return;
  }
  v128.store(tmp, c00); v128.store(tmp + 16, c01); v128.store(tmp + 32, c10); v128.store(tmp + 48, c11);
  v128.store(tmp + 64, c20); v128.store(tmp + 80, c21); v128.store(tmp + 96, c30); v128.store(tmp + 112, c31);
  v128.store(tmp + 128, c40); v128.store(tmp + 144, c41); v128.store(tmp + 160, c50); v128.store(tmp + 176, c51);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      store<f32>(c + <usize>i * ldc + (<usize>j << 2), load<f32>(tmp + (<usize>(i * 8 + j) << 2)));
    }
  }
}

/**
 * The MR×8 micro-kernel: C[0:rows, 0:cols] (row stride ldc bytes) += packed A panel (kc × MR splats) · packed B
 * panel (kc × 8); with `finish`, C = that product's finished sums instead (finishTile: + 0, + the rows' bias).
 */
export function micro(kc: i32, pa: usize, pb: usize, c: usize, ldc: usize, rows: i32, cols: i32, tmp: usize,
    finish: bool = false, bias: usize = 0): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  let c40 = f32x4.splat(0), c41 = f32x4.splat(0), c50 = f32x4.splat(0), c51 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
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
    pb += 32;
  }
  if (finish) finishTile(c, ldc, rows, cols, tmp, bias, c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51);
  else storeTile(c, ldc, rows, cols, tmp, c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51);
}

// The micro-kernel reading A in place (rows a0 … a0 + (MR−1)·sam, columns stepping by sak) with
// load32_splat instead of from a packed panel: for products with at most two 8-column panels of B
// (N ≤ 16: conv backward, skinny layers) a packed A panel would be used once or twice, and packing
// (16 bytes written per element) cost as much as the multiply-adds. Same operations in the same order
// as micro(), so results are bit-identical. Rows past M are clamped to the last row (`rows` < MR) and
// discarded by storeTile.
function microDirect(kc: i32, a0: usize, sam: i32, sak: i32, pb: usize, c: usize, ldc: usize, rows: i32,
    cols: i32, tmp: usize): void {
  const rs = <usize>sam << 2, ks = <usize>sak << 2;
  let p0 = a0, p1 = a0 + (rows > 1 ? rs : 0), p2 = a0 + (rows > 2 ? 2 * rs : 0);
  let p3 = a0 + (rows > 3 ? 3 * rs : 0), p4 = a0 + (rows > 4 ? 4 * rs : 0), p5 = a0 + (rows > 5 ? 5 * rs : 0);
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  let c40 = f32x4.splat(0), c41 = f32x4.splat(0), c50 = f32x4.splat(0), c51 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
    const b0 = v128.load(pb), b1 = v128.load(pb, 16);
    let a = v128.load32_splat(p0);
    c00 = madd(a, b0, c00); c01 = madd(a, b1, c01);
    a = v128.load32_splat(p1);
    c10 = madd(a, b0, c10); c11 = madd(a, b1, c11);
    a = v128.load32_splat(p2);
    c20 = madd(a, b0, c20); c21 = madd(a, b1, c21);
    a = v128.load32_splat(p3);
    c30 = madd(a, b0, c30); c31 = madd(a, b1, c31);
    a = v128.load32_splat(p4);
    c40 = madd(a, b0, c40); c41 = madd(a, b1, c41);
    if (MR == 6) {
      a = v128.load32_splat(p5);
      c50 = madd(a, b0, c50); c51 = madd(a, b1, c51);
    }
    p0 += ks; p1 += ks; p2 += ks; p3 += ks; p4 += ks; p5 += ks;
    pb += 32;
  }
  storeTile(c, ldc, rows, cols, tmp, c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51);
}

/**
 * C[0:M, 0:N] (row-major, contiguous) = A·B, computing only rows [rowStart, rowEnd) (so that workers
 * can split M). `scratch` holds packBytesA() + packBytesB(N) + 256 bytes (the last 192 for edge tiles).
 */
export function gemm(M: i32, N: i32, K: i32, a: usize, sam: i32, sak: i32, b: usize, sbk: i32, sbn: i32,
    c: usize, scratch: usize, rowStart: i32, rowEnd: i32): void {
  gemmRows(M, N, K, a, sam, sak, b, sbk, sbn, c, <usize>N << 2, scratch, rowStart, rowEnd);
}

/**
 * C[0:M, 0:N] = A·B with C's rows `ldc` floats apart: every row, N of C's columns, so that workers can
 * split N (b and c then point at the part's first column). Scratch as gemm's.
 */
export function gemmCols(M: i32, N: i32, K: i32, a: usize, sam: i32, sak: i32, b: usize, sbk: i32, sbn: i32,
    c: usize, ldc: i32, scratch: usize): void {
  gemmRows(M, N, K, a, sam, sak, b, sbk, sbn, c, <usize>ldc << 2, scratch, 0, M);
}

/** C[rowStart:rowEnd, 0:N] = A·B with C's rows `ldc` bytes apart (gemm, gemmCols, gemmBatched). */
export function gemmRows(M: i32, N: i32, K: i32, a: usize, sam: i32, sak: i32, b: usize, sbk: i32, sbn: i32,
    c: usize, ldc: usize, scratch: usize, rowStart: i32, rowEnd: i32): void {
  for (let i = rowStart; i < rowEnd; i++) memory.fill(c + <usize>i * ldc, 0, <usize>N << 2);
  const pA = scratch;
  const pB = scratch + packBytesA();
  const tmp = pB + packBytesB(N);
  const panelsN = (N + 7) >> 3;
  for (let k0 = 0; k0 < K; k0 += KC) {
    const kc = min(KC, K - k0);
    packB(b, sbk, sbn, k0, kc, N, pB);
    for (let i0 = rowStart; i0 < rowEnd; i0 += MC) {
      const mc = min(MC, rowEnd - i0);
      if (panelsN <= 2) { // skinny: A read in place (see microDirect)
        for (let jp = 0; jp < panelsN; jp++) {
          const cols = min(8, N - (jp << 3));
          const pbj = pB + <usize>jp * <usize>(kc * 32);
          for (let i = i0; i < i0 + mc; i += MR) {
            const ap = a + ((<usize>i * <usize>sam + <usize>k0 * <usize>sak) << 2);
            microDirect(kc, ap, sam, sak, pbj, c + <usize>i * ldc + (<usize>(jp << 3) << 2), ldc, min(MR,
                i0 + mc - i), cols, tmp);
          }
        }
        continue;
      }
      packA(a, sam, sak, i0, mc, k0, kc, M, pA);
      const panelsM = (mc + MR - 1) / MR;
      for (let jp = 0; jp < panelsN; jp++) {
        const cols = min(8, N - (jp << 3));
        const pbj = pB + <usize>jp * <usize>(kc * 32);
        for (let ip = 0; ip < panelsM; ip++) {
          const rows = min(MR, mc - ip * MR);
          micro(kc, pA + <usize>(ip * kc * (MR << 4)), pbj,
              c + <usize>(i0 + ip * MR) * ldc + (<usize>(jp << 3) << 2), ldc, rows, cols, tmp);
        }
      }
    }
  }
}
