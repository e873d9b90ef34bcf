// Integer GEMM C = A·B on int32 storage, exact modulo 2^32 (i32x4.mul and add wrap), with strided A
// (sam, sak) and B (sbk, sbn), strides in elements, C contiguous [M, N]. Row by row: one A element
// splatted against a row of B (four columns per i32x4 where B's rows are contiguous), added into C's row,
// which stays in cache for a row of B up to a few thousand columns.

export function gemmI32(
  a: usize, sam: i32, sak: i32, b: usize, sbk: i32, sbn: i32, c: usize, M: i32, K: i32, N: i32,
): void {
  memory.fill(c, 0, <usize>M * <usize>N * 4);
  for (let i = 0; i < M; i++) {
    const crow = c + ((<usize>i * <usize>N) << 2);
    for (let k = 0; k < K; k++) {
      const x = load<i32>(a + (<usize>(i * sam + k * sak) << 2));
      if (x == 0) continue;
      const brow = b + (<usize>(k * sbk) << 2);
      let j = 0;
      if (sbn == 1) {
        const xv = i32x4.splat(x);
        for (; j + 8 <= N; j += 8) {
          const p = crow + (<usize>j << 2);
          const q = brow + (<usize>j << 2);
          v128.store(p, i32x4.add(v128.load(p), i32x4.mul(xv, v128.load(q))));
          v128.store(p + 16, i32x4.add(v128.load(p + 16), i32x4.mul(xv, v128.load(q + 16))));
        }
        for (; j + 4 <= N; j += 4) {
          const p = crow + (<usize>j << 2);
          v128.store(p, i32x4.add(v128.load(p), i32x4.mul(xv, v128.load(brow + (<usize>j << 2)))));
        }
      }
      for (; j < N; j++) {
        const p = crow + (<usize>j << 2);
        store<i32>(p, load<i32>(p) + x * load<i32>(brow + (<usize>(j * sbn) << 2)));
      }
    }
  }
}

// int16 path: where every value of A and B fits int16 (int8/uint8 operands, shifted by zero points
// included), A's rows and Bᵀ's rows (B's columns) are packed as int16 rows of Kp (K rounded up to 8,
// zero-padded) and multiplied with i32x4.dot_i16x8_s: eight products per instruction into four int32
// lanes, 2×4 outputs at a time. Sums wrap modulo 2^32 as gemmI32's do, so both give the same bits.

/**
 * Packs `rows` rows of K int32 values (row r, column k at src + (r·sr + k·sc)·4) as int16 rows of Kp at
 * dst, zero-padded; returns 0 (dst partly written) when a value does not fit int16, else 1.
 */
export function packI16(src: usize, rows: i32, K: i32, sr: i32, sc: i32, dst: usize, Kp: i32): i32 {
  for (let r = 0; r < rows; r++) {
    const row = dst + ((<usize>r * <usize>Kp) << 1);
    for (let k = 0; k < K; k++) {
      const v = load<i32>(src + (<usize>(r * sr + k * sc) << 2));
      if (v != <i32>(<i16>v)) return 0;
      store<i16>(row + (<usize>k << 1), <i16>v);
    }
    for (let k = K; k < Kp; k++) store<i16>(row + (<usize>k << 1), 0);
  }
  return 1;
}

@inline function hsum(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}

// One output: the dot product of packed rows p and q (Kp int16 each).
@inline function dotRow(p: usize, q: usize, Kp: i32): i32 {
  let acc = i32x4.splat(0);
  for (let k = 0; k < Kp; k += 8) {
    const o = <usize>k << 1;
    acc = i32x4.add(acc, i32x4.dot_i16x8_s(v128.load(p + o), v128.load(q + o)));
  }
  return hsum(acc);
}

/** C [M, N] int32 = A·B from packed A [M, Kp] and packed Bᵀ [N, Kp] (int16, Kp a multiple of 8). */
export function gemmI16(pa: usize, pb: usize, c: usize, M: i32, N: i32, Kp: i32): void {
  const rowBytes = <usize>Kp << 1;
  let i = 0;
  for (; i + 2 <= M; i += 2) {
    const a0 = pa + <usize>i * rowBytes;
    const a1 = a0 + rowBytes;
    const c0 = c + ((<usize>i * <usize>N) << 2);
    const c1 = c0 + (<usize>N << 2);
    let j = 0;
    for (; j + 4 <= N; j += 4) {
      const b0 = pb + <usize>j * rowBytes;
      const b1 = b0 + rowBytes;
      const b2 = b1 + rowBytes;
      const b3 = b2 + rowBytes;
      let s00 = i32x4.splat(0), s01 = i32x4.splat(0), s02 = i32x4.splat(0), s03 = i32x4.splat(0);
      let s10 = i32x4.splat(0), s11 = i32x4.splat(0), s12 = i32x4.splat(0), s13 = i32x4.splat(0);
      for (let k = 0; k < Kp; k += 8) {
        const o = <usize>k << 1;
        const x0 = v128.load(a0 + o), x1 = v128.load(a1 + o);
        const y0 = v128.load(b0 + o), y1 = v128.load(b1 + o), y2 = v128.load(b2 + o), y3 = v128.load(b3 + o);
        s00 = i32x4.add(s00, i32x4.dot_i16x8_s(x0, y0));
        s01 = i32x4.add(s01, i32x4.dot_i16x8_s(x0, y1));
        s02 = i32x4.add(s02, i32x4.dot_i16x8_s(x0, y2));
        s03 = i32x4.add(s03, i32x4.dot_i16x8_s(x0, y3));
        s10 = i32x4.add(s10, i32x4.dot_i16x8_s(x1, y0));
        s11 = i32x4.add(s11, i32x4.dot_i16x8_s(x1, y1));
        s12 = i32x4.add(s12, i32x4.dot_i16x8_s(x1, y2));
        s13 = i32x4.add(s13, i32x4.dot_i16x8_s(x1, y3));
      }
      const o0 = c0 + (<usize>j << 2), o1 = c1 + (<usize>j << 2);
      store<i32>(o0, hsum(s00));
      store<i32>(o0, hsum(s01), 4);
      store<i32>(o0, hsum(s02), 8);
      store<i32>(o0, hsum(s03), 12);
      store<i32>(o1, hsum(s10));
      store<i32>(o1, hsum(s11), 4);
      store<i32>(o1, hsum(s12), 8);
      store<i32>(o1, hsum(s13), 12);
    }
    for (; j < N; j++) {
      const b = pb + <usize>j * rowBytes;
      store<i32>(c0 + (<usize>j << 2), dotRow(a0, b, Kp));
      store<i32>(c1 + (<usize>j << 2), dotRow(a1, b, Kp));
    }
  }
  for (; i < M; i++) {
    const a = pa + <usize>i * rowBytes;
    const ci = c + ((<usize>i * <usize>N) << 2);
    for (let j = 0; j < N; j++) store<i32>(ci + (<usize>j << 2), dotRow(a, pb + <usize>j * rowBytes, Kp));
  }
}
