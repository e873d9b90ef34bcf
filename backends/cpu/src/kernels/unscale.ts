/**
 * Mixed precision's unscale and overflow check (nonFiniteCheckAndUnscale, after PyTorch's
 * `_amp_foreach_non_finite_check_and_unscale_`): each gradient multiplied in place, one pass, no temporaries.
 */

/**
 * Multiplies every element of each gradient by f32(invScale), rounding each product to float32 (the bits of
 * `mul`), and returns whether any product is Inf or NaN — which covers a non-finite operand too, for a finite
 * factor (Inf·0 and NaN·v are NaN).
 */
export function unscaleKernel(grads: readonly Float32Array[], invScale: number): boolean {
  const v = Math.fround(invScale);
  let found = false;
  for (const g of grads) {
    for (let i = 0; i < g.length; i++) {
      const y = Math.fround(g[i]! * v);
      g[i] = y;
      if (y - y !== 0) found = true; // NaN and ±Inf only: y − y is 0 for every finite y
    }
  }
  return found;
}
