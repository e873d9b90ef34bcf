// cumsum and topk along axis 1 of x viewed as [O, n, I] (element strides s0, s1, s2), float32 or int32: the
// HAL's cumsumKernel/topkKernel (rules: hal/src/ops/scan-ops.ts, hal/src/host/host-scan.ts for the host form).
//   cumsum: one sequential scan per (o, i) line, float32 summed in a float64 accumulator and rounded per
//     element, int32 wrapping; out is [O, n, I] contiguous.
//   topk (k ≤ 64): a sorted buffer of the k best so far; once it is full, an element enters only if it beats
//     the worst kept, and contiguous rows test four elements at a time against it (f32x4/i32x4 compares),
//     so that most of a long row costs one compare per four elements. Values are copied bit for bit.

@inline function scanLine(float: bool, exclusive: bool, p: usize, dp: usize, w: usize, dw: usize, n: i32): void {
  if (float) {
    let acc: f64 = 0;
    for (let j = 0; j < n; j++, p += dp, w += dw) {
      if (exclusive) {
        store<f32>(w, <f32>acc);
        acc += <f64>load<f32>(p);
      } else {
        acc += <f64>load<f32>(p);
        store<f32>(w, <f32>acc);
      }
    }
  } else {
    let acc: i32 = 0;
    for (let j = 0; j < n; j++, p += dp, w += dw) {
      if (exclusive) {
        store<i32>(w, acc);
        acc += load<i32>(p);
      } else {
        acc += load<i32>(p);
        store<i32>(w, acc);
      }
    }
  }
}

/** Running sums: x at byte pointer `x` (its offset included), out [O, n, I] contiguous. */
export function cumsum32(
  float: i32, x: usize, O: i32, n: i32, I: i32, s0: i32, s1: i32, s2: i32, out: usize, exclusive: i32, reverse: i32,
): void {
  // Steps in bytes; a reversed line starts at its last element and steps back (usize wraps modulo 2^32).
  const dp = <usize>((reverse ? -s1 : s1) << 2);
  const dw = <usize>((reverse ? -I : I) << 2);
  for (let o = 0; o < O; o++) {
    for (let i = 0; i < I; i++) {
      const p = x + <usize>((o * s0 + i * s2 + (reverse ? (n - 1) * s1 : 0)) << 2);
      const w = out + <usize>((o * n * I + i + (reverse ? (n - 1) * I : 0)) << 2);
      if (float) {
        if (exclusive) scanLine(true, true, p, dp, w, dw, n);
        else scanLine(true, false, p, dp, w, dw, n);
      } else if (exclusive) scanLine(false, true, p, dp, w, dw, n);
      else scanLine(false, false, p, dp, w, dw, n);
    }
  }
}

// a at position ia ranks before b at ib: NaN above every number in both modes, the lower position among equals.
@inline function betterF(a: f32, ia: i32, b: f32, ib: i32, largest: bool): bool {
  const na = a != a, nb = b != b;
  if (na || nb) return na && nb ? ia < ib : largest ? na : nb;
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

@inline function betterI(a: i32, ia: i32, b: i32, ib: i32, largest: bool): bool {
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

// Offers element j (bits at p) to the sorted buffer (val, pos) holding `kept` of k; returns the new count.
@inline function offer(float: bool, largest: bool, p: usize, j: i32, val: usize, pos: usize, kept: i32, k: i32): i32 {
  const bits = load<i32>(p);
  const worst = <usize>(k - 1) << 2;
  if (kept == k) {
    const beats = float
      ? betterF(reinterpret<f32>(bits), j, load<f32>(val + worst), load<i32>(pos + worst), largest)
      : betterI(bits, j, load<i32>(val + worst), load<i32>(pos + worst), largest);
    if (!beats) return kept;
  }
  let q = kept < k ? kept++ : k - 1;
  for (; q > 0; q--) {
    const at = <usize>(q - 1) << 2;
    const beats = float
      ? betterF(reinterpret<f32>(bits), j, load<f32>(val + at), load<i32>(pos + at), largest)
      : betterI(bits, j, load<i32>(val + at), load<i32>(pos + at), largest);
    if (!beats) break;
    store<i32>(val + (<usize>q << 2), load<i32>(val + at));
    store<i32>(pos + (<usize>q << 2), load<i32>(pos + at));
  }
  store<i32>(val + (<usize>q << 2), bits);
  store<i32>(pos + (<usize>q << 2), j);
  return kept;
}

// Lanes of v that could beat the worst kept value w (a superset: ties never do, a later position ranks lower).
@inline function mayBeat(float: bool, largest: bool, v: v128, w: v128): bool {
  if (!float) return v128.any_true(largest ? i32x4.gt_s(v, w) : i32x4.lt_s(v, w));
  // NaN ranks above every number: when largest a NaN lane may enter; when smallest, any number beats a NaN w
  if (largest) return v128.any_true(v128.or(f32x4.gt(v, w), f32x4.ne(v, v)));
  return v128.any_true(v128.or(f32x4.lt(v, w), v128.and(f32x4.ne(w, w), f32x4.eq(v, v))));
}

@inline function topkRow(
  float: bool, largest: bool, base: usize, n: i32, s1: i32, k: i32, val: usize, pos: usize,
): void {
  let kept = 0;
  let j = 0;
  const step = <usize>s1 << 2;
  for (; j < n && kept < k; j++) kept = offer(float, largest, base + <usize>j * step, j, val, pos, kept, k);
  if (s1 == 1) {
    for (; j + 4 <= n; j += 4) {
      const p = base + (<usize>j << 2);
      if (!mayBeat(float, largest, v128.load(p), i32x4.splat(load<i32>(val + (<usize>(k - 1) << 2))))) continue;
      for (let t = 0; t < 4; t++) offer(float, largest, p + (<usize>t << 2), j + t, val, pos, k, k);
    }
  }
  for (; j < n; j++) kept = offer(float, largest, base + <usize>j * step, j, val, pos, kept, k);
}

/**
 * The k ≤ 64 best elements of each (o, i) line along axis 1, best first: values (x's bits) and int32
 * positions into [O, k, I] contiguous outputs; `val`/`pos` are scratch for k words each.
 */
export function topk32(
  float: i32, largest: i32, x: usize, O: i32, n: i32, I: i32, s0: i32, s1: i32, s2: i32, k: i32, values: usize,
  indices: usize, val: usize, pos: usize,
): void {
  if (k == 0) return;
  for (let o = 0; o < O; o++) {
    for (let i = 0; i < I; i++) {
      const base = x + <usize>((o * s0 + i * s2) << 2);
      if (float) {
        if (largest) topkRow(true, true, base, n, s1, k, val, pos);
        else topkRow(true, false, base, n, s1, k, val, pos);
      } else if (largest) topkRow(false, true, base, n, s1, k, val, pos);
      else topkRow(false, false, base, n, s1, k, val, pos);
      for (let j = 0; j < k; j++) {
        const w = <usize>(o * k * I + j * I + i) << 2;
        store<i32>(values + w, load<i32>(val + (<usize>j << 2)));
        store<i32>(indices + w, load<i32>(pos + (<usize>j << 2)));
      }
    }
  }
}
