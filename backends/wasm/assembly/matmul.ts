// GEMM C = A·B on float32 with strided A (sam, sak) and B (sbk, sbn), all strides in elements.
// Goto-style blocking: K in KC-deep blocks; B packed into 8-column panels (kc × 8), A into 4-row
// panels (kc × 4); a 4×8 micro-kernel keeps 8 f32x4 accumulators in registers (V8 gives SIMD code 15
// xmm registers, so 4×8 is the largest tile that does not spill) and loads A with load32_splat.

export const KC: i32 = 256;
export const MC: i32 = 64;

/** Bytes of packing scratch that gemm needs for A and for B (N columns). */
export function packBytesA(): i32 { return MC * KC * 4; }
export function packBytesB(n: i32): i32 { return ((n + 7) >> 3) * 8 * KC * 4; }

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
  const panels = (mc + 3) >> 2;
  let p = dst;
  for (let ip = 0; ip < panels; ip++) {
    for (let k = 0; k < kc; k++) {
      const col = a + (<usize>((k0 + k) * sak) << 2);
      for (let ii = 0; ii < 4; ii++) {
        const i = i0 + (ip << 2) + ii;
        store<f32>(p + (<usize>ii << 2), i < M ? load<f32>(col + (<usize>(i * sam) << 2)) : 0);
      }
      p += 16;
    }
  }
}

@inline function addStore(p: usize, v: v128): void {
  v128.store(p, f32x4.add(v128.load(p), v));
}

function micro4x8(kc: i32, pa: usize, pb: usize, c: usize, ldc: usize, rows: i32, cols: i32, tmp: usize): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0), c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0), c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
    const b0 = v128.load(pb), b1 = v128.load(pb, 16);
    let a = v128.load32_splat(pa);
    c00 = f32x4.add(c00, f32x4.mul(a, b0)); c01 = f32x4.add(c01, f32x4.mul(a, b1));
    a = v128.load32_splat(pa, 4);
    c10 = f32x4.add(c10, f32x4.mul(a, b0)); c11 = f32x4.add(c11, f32x4.mul(a, b1));
    a = v128.load32_splat(pa, 8);
    c20 = f32x4.add(c20, f32x4.mul(a, b0)); c21 = f32x4.add(c21, f32x4.mul(a, b1));
    a = v128.load32_splat(pa, 12);
    c30 = f32x4.add(c30, f32x4.mul(a, b0)); c31 = f32x4.add(c31, f32x4.mul(a, b1));
    pa += 16;
    pb += 32;
  }
  if (rows == 4 && cols == 8) {
    addStore(c, c00); addStore(c + 16, c01); c += ldc;
    addStore(c, c10); addStore(c + 16, c11); c += ldc;
    addStore(c, c20); addStore(c + 16, c21); c += ldc;
    addStore(c, c30); addStore(c + 16, c31);
    return;
  }
  v128.store(tmp, c00); v128.store(tmp + 16, c01); v128.store(tmp + 32, c10); v128.store(tmp + 48, c11);
  v128.store(tmp + 64, c20); v128.store(tmp + 80, c21); v128.store(tmp + 96, c30); v128.store(tmp + 112, c31);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const q = c + <usize>i * ldc + (<usize>j << 2);
      store<f32>(q, load<f32>(q) + load<f32>(tmp + (<usize>(i * 8 + j) << 2)));
    }
  }
}

/**
 * C[0:M, 0:N] (row-major, contiguous) = A·B, computing only rows [rowStart, rowEnd) (so that workers
 * can split M). `scratch` holds packBytesA() + packBytesB(N) + 128 bytes.
 */
export function gemm(M: i32, N: i32, K: i32, a: usize, sam: i32, sak: i32, b: usize, sbk: i32, sbn: i32, c: usize, scratch: usize, rowStart: i32, rowEnd: i32): void {
  const ldc = <usize>N << 2;
  memory.fill(c + <usize>rowStart * ldc, 0, <usize>(rowEnd - rowStart) * ldc);
  const pA = scratch;
  const pB = scratch + <usize>packBytesA();
  const tmp = pB + <usize>packBytesB(N);
  const panelsN = (N + 7) >> 3;
  for (let k0 = 0; k0 < K; k0 += KC) {
    const kc = min(KC, K - k0);
    packB(b, sbk, sbn, k0, kc, N, pB);
    for (let i0 = rowStart; i0 < rowEnd; i0 += MC) {
      const mc = min(MC, rowEnd - i0);
      packA(a, sam, sak, i0, mc, k0, kc, M, pA);
      const panelsM = (mc + 3) >> 2;
      for (let jp = 0; jp < panelsN; jp++) {
        const cols = min(8, N - (jp << 3));
        const pbj = pB + <usize>(jp * kc * 32);
        for (let ip = 0; ip < panelsM; ip++) {
          const rows = min(4, mc - (ip << 2));
          micro4x8(kc, pA + <usize>(ip * kc * 16), pbj, c + <usize>(i0 + (ip << 2)) * ldc + (<usize>(jp << 3) << 2), ldc, rows, cols, tmp);
        }
      }
    }
  }
}
