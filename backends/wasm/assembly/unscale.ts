// Mixed precision's unscale and overflow check (nonFiniteCheckAndUnscale, after PyTorch's
// _amp_foreach_non_finite_check_and_unscale_): one contiguous float32 gradient multiplied in place.

// g[i] ← g[i]·inv for i < n (f32x4.mul: each product rounded to f32, the bits of mul); returns 1 when a
// product is Inf or NaN (its exponent bits all ones), which covers a non-finite operand for a finite inv.
export function unscaleF32(n: i32, g: usize, inv: f32): i32 {
  const vi = f32x4.splat(inv);
  const exp = i32x4.splat(0x7f800000);
  let bad = i32x4.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = g + (<usize>i << 2);
    const y = f32x4.mul(v128.load(p), vi);
    v128.store(p, y);
    bad = v128.or(bad, i32x4.eq(v128.and(y, exp), exp));
  }
  let found: i32 = v128.any_true(bad) ? 1 : 0;
  for (; i < n; i++) {
    const p = g + (<usize>i << 2);
    const y = load<f32>(p) * inv;
    store<f32>(p, y);
    if ((reinterpret<u32>(y) & 0x7f800000) == 0x7f800000) found = 1;
  }
  return found;
}
