// Copy kernels over a row plan with strided source and destination: plain copy (same dtype),
// float32 → int32 (truncate toward zero, saturate, NaN → 0) and int32 → float32; the narrowing casts
// into int8 and uint8 storage (int32: from float32 truncate and saturate, NaN → 0; from int32 wrap modulo
// 2^8) and float16 storage (float32: round to nearest even, ±Inf from 65520). And fill.

export const COPY = 0, F32_TO_I32 = 1, I32_TO_F32 = 2;
export const F32_TO_I8 = 3, F32_TO_U8 = 4, I32_TO_I8 = 5, I32_TO_U8 = 6, F32_TO_F16 = 7, I32_TO_F16 = 8;

/** float32 → int32: truncate toward zero, saturate, NaN → 0. */
@inline function toI32(v: f32): i32 {
  return v != v ? 0 : v >= 2147483647.0 ? 2147483647 : v <= -2147483648.0 ? -2147483648 : <i32>v;
}

/** float32 → [lo, hi] (int8, uint8): truncate toward zero, saturate, NaN → 0. */
@inline function toRange(v: f32, lo: f32, hi: f32): i32 {
  return v != v ? 0 : v <= lo ? <i32>lo : v >= hi ? <i32>hi : <i32>v;
}

/**
 * The float32 bits `u` rounded to float16, as float32 bits: 10 fraction bits kept, the 13 dropped ones
 * rounded to nearest, ties to even; below 2^-14 a multiple of 2^-24 (subnormals); ±Inf from 65520.
 */
@inline function f16Bits(u: u32): u32 {
  const sign = u & 0x80000000;
  const a = u & 0x7fffffff;
  if (a >= 0x7f800000) return u; // NaN, ±Inf
  if (a >= 0x477ff000) return sign | 0x7f800000;
  if (a >= 0x38800000) {
    const rem = a & 0x1fff;
    let r = a - rem;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 0x2000) != 0)) r += 0x2000;
    return sign | r;
  }
  const e = a >> 23;
  if (e < 102) return sign; // below 2^-25: ±0
  const m = (a & 0x7fffff) | 0x800000;
  const shift = 126 - e; // 14 ... 24
  const q = m >> shift;
  const rem = m & ((<u32>1 << shift) - 1);
  const half = <u32>1 << (shift - 1);
  const r = rem > half || (rem == half && (q & 1) != 0) ? q + 1 : q;
  return sign | reinterpret<u32>(<f32>r * <f32>5.9604644775390625e-8); // r·2^-24, exact
}

/** One element of a narrowing copy (modes F32_TO_I8 ... I32_TO_F16) from px into po. */
@inline function narrowOne(mode: i32, px: usize, po: usize): void {
  if (mode == F32_TO_I8) store<i32>(po, toRange(load<f32>(px), -128.0, 127.0));
  else if (mode == F32_TO_U8) store<i32>(po, toRange(load<f32>(px), 0.0, 255.0));
  else if (mode == I32_TO_I8) store<i32>(po, (load<i32>(px) << 24) >> 24);
  else if (mode == I32_TO_U8) store<i32>(po, load<i32>(px) & 255);
  else if (mode == F32_TO_F16) store<u32>(po, f16Bits(load<u32>(px)));
  else store<u32>(po, f16Bits(reinterpret<u32>(<f32>load<i32>(px))));
}

export function copyRows(mode: i32, n: i32, rows: i32, x: usize, xStarts: usize, xStep: i32, out: usize,
    oStarts: usize, oStep: i32): void {
  for (let r = 0; r < rows; r++) {
    const px = x + (<usize>load<i32>(xStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>load<i32>(oStarts + (<usize>r << 2)) << 2);
    copyRow(mode, n, px, xStep, po, oStep);
  }
}

export function fillF32(out: usize, n: i32, value: f32): void {
  const v = f32x4.splat(value);
  let i = 0;
  for (; i + 4 <= n; i += 4) v128.store(out + (<usize>i << 2), v);
  for (; i < n; i++) store<f32>(out + (<usize>i << 2), value);
}

export function fillI32(out: usize, n: i32, value: i32): void {
  for (let i = 0; i < n; i++) store<i32>(out + (<usize>i << 2), value);
}

// One row of n elements: source step sx, destination step so (elements). Contiguous copies use 4-lane
// vector moves (memory.copy only from 64 elements: its call costs more than a short row).
@inline function copyRow(mode: i32, n: i32, px: usize, sx: i32, po: usize, so: i32): void {
  if (mode == COPY && sx == 1 && so == 1) {
    if (n >= 64) {
      memory.copy(po, px, <usize>n << 2);
      return;
    }
    let i = 0;
    for (; i + 4 <= n; i += 4) v128.store(po + (<usize>i << 2), v128.load(px + (<usize>i << 2)));
    for (; i < n; i++) store<i32>(po + (<usize>i << 2), load<i32>(px + (<usize>i << 2)));
    return;
  }
  const dx = <usize>(sx << 2), dO = <usize>(so << 2);
  for (let i = 0; i < n; i++) {
    if (mode == COPY) store<i32>(po, load<i32>(px));
    else if (mode == I32_TO_F32) store<f32>(po, <f32>load<i32>(px));
    else if (mode == F32_TO_I32) store<i32>(po, toI32(load<f32>(px)));
    else narrowOne(mode, px, po);
    px += dx;
    po += dO;
  }
}

/**
 * Strided copy of an N-d view (rank ≥ 2, dims already coalesced by the caller) without a row list:
 * an odometer over the outer dims, a tight 2-d loop over the last two (an im2col window's KH × KW
 * rows). `meta` holds rank·3 i32: shape, source strides, destination strides; `idx` is rank i32 of
 * scratch. Used for views with many short rows (im2col).
 */
export function copyNd(mode: i32, rank: i32, meta: usize, idx: usize, x: usize, xOff: i32, out: usize,
    oOff: i32): void {
  const last = rank - 1, inner = rank - 2;
  const n = load<i32>(meta + (<usize>last << 2));
  const sx = load<i32>(meta + (<usize>(rank + last) << 2));
  const so = load<i32>(meta + (<usize>(2 * rank + last) << 2));
  const m = load<i32>(meta + (<usize>inner << 2));
  const mx = load<i32>(meta + (<usize>(rank + inner) << 2));
  const mo = load<i32>(meta + (<usize>(2 * rank + inner) << 2));
  let total: i64 = 1;
  for (let d = 0; d < inner; d++) {
    store<i32>(idx + (<usize>d << 2), 0);
    total *= <i64>load<i32>(meta + (<usize>d << 2));
  }
  let xo = xOff, oo = oOff;
  for (let r: i64 = 0; r < total; r++) {
    let px = x + (<usize>xo << 2), po = out + (<usize>oo << 2);
    for (let j = 0; j < m; j++) {
      copyRow(mode, n, px, sx, po, so);
      px += <usize>(mx << 2);
      po += <usize>(mo << 2);
    }
    for (let d = inner - 1; d >= 0; d--) {
      const q = idx + (<usize>d << 2);
      const dim = load<i32>(meta + (<usize>d << 2));
      const k = load<i32>(q) + 1;
      const dsx = load<i32>(meta + (<usize>(rank + d) << 2));
      const dso = load<i32>(meta + (<usize>(2 * rank + d) << 2));
      if (k < dim) {
        store<i32>(q, k);
        xo += dsx;
        oo += dso;
        break;
      }
      store<i32>(q, 0);
      xo -= dsx * (dim - 1);
      oo -= dso * (dim - 1);
    }
  }
}
