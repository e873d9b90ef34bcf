// argmax/argmin of one row (the HAL's argReduceKernel, hal/src/host/host-scan.ts's rules): `isMax` 1 argmax, 0
// argmin; the first position among equals, the last with `last` 1; a NaN the extreme, its first (last)
// occurrence. Rows of stride 1 take two passes: the extreme by f32x4/i32x4 max or min (f32x4's propagate
// NaN, and count −0 and +0 as equal, as the rules do), then a scan for its first position (f32x4.eq
// four at a time; from the end, scalar, for the last). Other strides: scalar passes.

@inline function hit(v: f32, m: f32, nan: bool): bool {
  return nan ? v != v : v == m;
}

/** The position of the extreme `m` (NaN: any NaN) of row p[0..n) at `stride` elements, first or last. */
@inline function findF32(p: usize, n: i32, stride: i32, m: f32, last: i32): i32 {
  const nan = m != m;
  if (last) {
    for (let j = n - 1; j > 0; j--) if (hit(load<f32>(p + ((<usize>j * <usize>stride) << 2)), m, nan)) return j;
    return 0;
  }
  let j = 0;
  if (stride == 1) {
    // four at a time to the first vector holding a hit (m == v, or v != v when looking for a NaN)
    const mv = f32x4.splat(m);
    for (; j + 4 <= n; j += 4) {
      const v = v128.load(p + (<usize>j << 2));
      if (v128.any_true(nan ? f32x4.ne(v, v) : f32x4.eq(v, mv))) break;
    }
  }
  for (; j < n; j++) if (hit(load<f32>(p + ((<usize>j * <usize>stride) << 2)), m, nan)) return j;
  return 0;
}

@inline function findI32(p: usize, n: i32, stride: i32, m: i32, last: i32): i32 {
  if (last) {
    for (let j = n - 1; j > 0; j--) if (load<i32>(p + ((<usize>j * <usize>stride) << 2)) == m) return j;
    return 0;
  }
  let j = 0;
  if (stride == 1) {
    const mv = i32x4.splat(m);
    for (; j + 4 <= n; j += 4) if (v128.any_true(i32x4.eq(v128.load(p + (<usize>j << 2)), mv))) break;
  }
  for (; j < n; j++) if (load<i32>(p + ((<usize>j * <usize>stride) << 2)) == m) return j;
  return 0;
}

/**
 * The row's extreme, NaN when it holds one. Contiguous rows: lanes keep v where v > acc (v < acc for
 * argmin; a compare and a bitselect, where f32x4.max's NaN and signed-zero rules cost about ten x86
 * instructions), NaNs are OR-ed into a mask.
 */
function extremeF32(p: usize, n: i32, stride: i32, isMax: i32): f32 {
  let m = load<f32>(p);
  let j = 1;
  if (stride == 1 && n >= 8) {
    let acc = v128.load(p);
    let nans = f32x4.ne(acc, acc);
    j = n & ~3;
    if (isMax)
      for (let i = 4; i < j; i += 4) {
        const v = v128.load(p + (<usize>i << 2));
        acc = v128.bitselect(v, acc, f32x4.gt(v, acc));
        nans = v128.or(nans, f32x4.ne(v, v));
      }
    else
      for (let i = 4; i < j; i += 4) {
        const v = v128.load(p + (<usize>i << 2));
        acc = v128.bitselect(v, acc, f32x4.lt(v, acc));
        nans = v128.or(nans, f32x4.ne(v, v));
      }
    if (v128.any_true(nans)) return NaN;
    const a = f32x4.extract_lane(acc, 0), b = f32x4.extract_lane(acc, 1);
    const c = f32x4.extract_lane(acc, 2), d = f32x4.extract_lane(acc, 3);
    // no NaN left: Mathf.max/min only choose (either zero of a ±0 tie is fine: find compares with ==)
    m = isMax ? Mathf.max(Mathf.max(a, b), Mathf.max(c, d)) : Mathf.min(Mathf.min(a, b), Mathf.min(c, d));
  }
  for (; j < n && m == m; j++) {
    const v = load<f32>(p + ((<usize>j * <usize>stride) << 2));
    m = v != v ? v : isMax ? (v > m ? v : m) : v < m ? v : m;
  }
  return m;
}

function extremeI32(p: usize, n: i32, stride: i32, isMax: i32): i32 {
  let m = load<i32>(p);
  let j = 1;
  if (stride == 1 && n >= 8) {
    let acc = v128.load(p);
    j = n & ~3;
    if (isMax) for (let i = 4; i < j; i += 4) acc = i32x4.max_s(acc, v128.load(p + (<usize>i << 2)));
    else for (let i = 4; i < j; i += 4) acc = i32x4.min_s(acc, v128.load(p + (<usize>i << 2)));
    const a = i32x4.extract_lane(acc, 0), b = i32x4.extract_lane(acc, 1);
    const c = i32x4.extract_lane(acc, 2), d = i32x4.extract_lane(acc, 3);
    m = isMax ? max(max(a, b), max(c, d)) : min(min(a, b), min(c, d));
  }
  for (; j < n; j++) {
    const v = load<i32>(p + ((<usize>j * <usize>stride) << 2));
    m = isMax ? (v > m ? v : m) : v < m ? v : m;
  }
  return m;
}

/**
 * Rows r = 0 .. rows − 1 of x [rows, n] at element offsets x + r·rowStride (stride `stride` along n) →
 * out[r] (i32). `float` 1 float32, 0 int32.
 */
export function argReduce32(
  float: i32,
  isMax: i32,
  last: i32,
  x: usize,
  rows: i32,
  rowStride: i32,
  n: i32,
  stride: i32,
  out: usize,
): void {
  for (let r = 0; r < rows; r++) {
    const p = x + ((<usize>r * <usize>rowStride) << 2);
    store<i32>(
      out + (<usize>r << 2),
      float
        ? findF32(p, n, stride, extremeF32(p, n, stride, isMax), last)
        : findI32(p, n, stride, extremeI32(p, n, stride, isMax), last),
    );
  }
}
