// Softmax over the last axis of contiguous float32 rows, fused into three passes per row: m = the row's maximum
// (NaN when the row holds one), e = exp(x − m) (vmath.ts vexp, within 2 ulp of float64) stored, Σ e accumulated in
// float64 and rounded to float32, then e / Σ. The HAL's composite (hal composites.ts) does the same arithmetic in
// five kernels, its exp the unary op's (Mathf.exp, correctly rounded but scalar).
import { vexp } from './vmath';

/** y[r, :] = softmax(x[r, :]) for rows [rowStart, rowEnd) of n floats each (x and y row-major; y may be x). */
export function softmaxF32(n: i32, x: usize, y: usize, rowStart: i32, rowEnd: i32): void {
  for (let r = rowStart; r < rowEnd; r++) {
    const px = x + (<usize>r * <usize>n << 2), py = y + (<usize>r * <usize>n << 2);
    // the maximum by pmax (V8's f32x4.max is a long sequence), NaN lanes tracked apart
    let mv = f32x4.splat(-Infinity), nan = f32x4.splat(0);
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const v = v128.load(px + (<usize>i << 2));
      mv = f32x4.pmax(mv, v);
      nan = v128.or(nan, f32x4.ne(v, v));
    }
    let m = Mathf.max(Mathf.max(f32x4.extract_lane(mv, 0), f32x4.extract_lane(mv, 1)),
        Mathf.max(f32x4.extract_lane(mv, 2), f32x4.extract_lane(mv, 3)));
    if (v128.any_true(nan)) m = NaN;
    for (; i < n; i++) m = Mathf.max(m, load<f32>(px + (<usize>i << 2))); // NaN wins
    // e = exp(x − m), stored; Σ e in float64 (two f64x2 lanes)
    const mv4 = f32x4.splat(m);
    let s2 = f64x2.splat(0);
    for (i = 0; i + 4 <= n; i += 4) {
      const q = <usize>i << 2;
      const e = vexp(f32x4.sub(v128.load(px + q), mv4));
      v128.store(py + q, e);
      s2 = f64x2.add(s2, f64x2.add(f64x2.promote_low_f32x4(e), f64x2.promote_low_f32x4(
          v128.shuffle<f32>(e, e, 2, 3, 0, 1))));
    }
    let s = f64x2.extract_lane(s2, 0) + f64x2.extract_lane(s2, 1);
    for (; i < n; i++) {
      const q = <usize>i << 2;
      const e = f32x4.extract_lane(vexp(f32x4.splat(load<f32>(px + q) - m)), 0);
      store<f32>(py + q, e);
      s += <f64>e;
    }
    const sf = <f32>s;
    const sv = f32x4.splat(sf);
    for (i = 0; i + 4 <= n; i += 4) {
      const q = <usize>i << 2;
      v128.store(py + q, f32x4.div(v128.load(py + q), sv));
    }
    for (; i < n; i++) store<f32>(py + (<usize>i << 2), load<f32>(py + (<usize>i << 2)) / sf);
  }
}
