// Philox4x32-10 uniforms (hal/src/core/philox.ts): out[i] = (word >>> 8) · 2^-24 of word (skip + i) mod 4
// of block (b0, b1) + floor((skip + i) / 4), key (k0, k1). Four blocks at a time in i32x4 lanes: the
// 32×32 → 64-bit products by i64x2.extmul (high words picked by a shuffle), the low words by i32x4.mul.

const M0: u32 = 0xd2511f53;
const M1: u32 = 0xcd9e8d57;
const W0: u32 = 0x9e3779b9;
const W1: u32 = 0xbb67ae85;
const SCALE: f32 = 5.9604644775390625e-8; // 2^-24

@inline function uniform(bits: u32): f32 {
  return <f32>(bits >>> 8) * SCALE;
}

/** One block, scalar: writes the words whose output index i + w lies in [0, n). */
function scalarBlock(out: usize, n: i32, i: i32, k0: u32, k1: u32, b0: u32, b1: u32): void {
  let c0 = b0;
  let c1 = b1;
  let c2: u32 = 0;
  let c3: u32 = 0;
  for (let r = 0; r < 10; r++) {
    const p0 = <u64>M0 * <u64>c0;
    const p1 = <u64>M1 * <u64>c2;
    c0 = (<u32>(p1 >>> 32)) ^ c1 ^ k0;
    c1 = <u32>p1;
    c2 = (<u32>(p0 >>> 32)) ^ c3 ^ k1;
    c3 = <u32>p0;
    k0 += W0;
    k1 += W1;
  }
  if (i >= 0 && i < n) store<f32>(out + (<usize>i << 2), uniform(c0));
  if (i + 1 >= 0 && i + 1 < n) store<f32>(out + (<usize>(i + 1) << 2), uniform(c1));
  if (i + 2 >= 0 && i + 2 < n) store<f32>(out + (<usize>(i + 2) << 2), uniform(c2));
  if (i + 3 >= 0 && i + 3 < n) store<f32>(out + (<usize>(i + 3) << 2), uniform(c3));
}

/** The high words of the lane-wise 32×32-bit products a·b. */
@inline function mulhi4(a: v128, b: v128): v128 {
  const lo = i64x2.extmul_low_i32x4_u(a, b);
  const hi = i64x2.extmul_high_i32x4_u(a, b);
  return v128.shuffle<i32>(lo, hi, 1, 3, 5, 7);
}

@inline function toUniform4(x: v128): v128 {
  return f32x4.mul(f32x4.convert_i32x4_s(i32x4.shr_u(x, 8)), f32x4.splat(SCALE));
}

/** Blocks (b0 + 0..3, b1 with carry) into 16 consecutive floats at `p`. */
@inline function simdBlocks(p: usize, k0: u32, k1: u32, b0: u32, b1: u32): void {
  let c0 = i32x4.add(i32x4.splat(b0), i32x4(0, 1, 2, 3));
  // A lane whose low word wrapped past 2^32 carries into the high word (lt_u gives −1 there).
  let c1 = i32x4.sub(i32x4.splat(b1), i32x4.lt_u(c0, i32x4.splat(b0)));
  let c2 = i32x4.splat(0);
  let c3 = i32x4.splat(0);
  const m0 = i32x4.splat(<i32>M0);
  const m1 = i32x4.splat(<i32>M1);
  for (let r = 0; r < 10; r++) {
    const hi0 = mulhi4(c0, m0);
    const lo0 = i32x4.mul(c0, m0);
    const hi1 = mulhi4(c2, m1);
    const lo1 = i32x4.mul(c2, m1);
    c0 = v128.xor(v128.xor(hi1, c1), i32x4.splat(k0));
    c1 = lo1;
    c2 = v128.xor(v128.xor(hi0, c3), i32x4.splat(k1));
    c3 = lo0;
    k0 += W0;
    k1 += W1;
  }
  // Lanes are blocks, vectors are words: transpose so that each store is one block's four words.
  const f0 = toUniform4(c0);
  const f1 = toUniform4(c1);
  const f2 = toUniform4(c2);
  const f3 = toUniform4(c3);
  const t0 = v128.shuffle<i32>(f0, f1, 0, 4, 1, 5);
  const t1 = v128.shuffle<i32>(f2, f3, 0, 4, 1, 5);
  const t2 = v128.shuffle<i32>(f0, f1, 2, 6, 3, 7);
  const t3 = v128.shuffle<i32>(f2, f3, 2, 6, 3, 7);
  v128.store(p, v128.shuffle<i32>(t0, t1, 0, 1, 4, 5));
  v128.store(p + 16, v128.shuffle<i32>(t0, t1, 2, 3, 6, 7));
  v128.store(p + 32, v128.shuffle<i32>(t2, t3, 0, 1, 4, 5));
  v128.store(p + 48, v128.shuffle<i32>(t2, t3, 2, 3, 6, 7));
}

/** n uniforms into `out`: out[0] is word `skip` (0..3) of block (b0, b1). */
export function philoxF32(out: usize, n: i32, k0: u32, k1: u32, b0: u32, b1: u32, skip: i32): void {
  let i = -skip; // output index of word 0 of block (b0, b1)
  if (skip != 0) {
    scalarBlock(out, n, i, k0, k1, b0, b1);
    i += 4;
    b0++;
    if (b0 == 0) b1++;
  }
  while (i + 16 <= n) {
    simdBlocks(out + (<usize>i << 2), k0, k1, b0, b1);
    i += 16;
    const next = b0 + 4;
    if (next < b0) b1++;
    b0 = next;
  }
  while (i < n) {
    scalarBlock(out, n, i, k0, k1, b0, b1);
    i += 4;
    b0++;
    if (b0 == 0) b1++;
  }
}
