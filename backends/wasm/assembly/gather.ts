// Index kernels on the three-dim operands of hal/src/indexing.ts: x and the target [O, D, I], indices
// [K], updates and gather's output [O, K, I]; every stride and offset in elements. An index i reads
// i + D when negative; outside [0, D) gather writes `fill` (bits: NaN for float32, INT32_MIN for
// int32) and scatter skips the update. scatter applies the updates in index order (replace keeps the
// last; add and mul combine in that order): deterministic.

@inline function position(i: i32, dim: i32): i32 {
  const j = i < 0 ? i + dim : i;
  return j >= 0 && j < dim ? j : -1;
}

/** out[o, k, i] = x[o, position(idx[k]), i] as 32-bit words (float32 or int32 alike), or `fill`. */
export function gather32(
  x: usize, xOff: i32, so: i32, sd: i32, si: i32, o: i32, dim: i32, n: i32,
  idx: usize, iOff: i32, is: i32, k: i32, out: usize, fill: i32,
): void {
  let w = out;
  for (let a = 0; a < o; a++) {
    for (let b = 0; b < k; b++) {
      const j = position(load<i32>(idx + (<usize>(iOff + b * is) << 2)), dim);
      if (j < 0) {
        for (let c = 0; c < n; c++) {
          store<i32>(w, fill);
          w += 4;
        }
        continue;
      }
      let p = xOff + a * so + j * sd;
      if (si == 1) {
        memory.copy(w, x + (<usize>p << 2), <usize>n << 2);
        w += <usize>n << 2;
      } else {
        for (let c = 0; c < n; c++) {
          store<i32>(w, load<i32>(x + (<usize>p << 2)));
          p += si;
          w += 4;
        }
      }
    }
  }
}

/**
 * out [O, D, I] = target, then updates[o, k, i] combined at [o, position(idx[k]), i] for k = 0, 1, ...
 * — `red` 0: replaced, 1: added, 2: multiplied (`isInt`: int32, wrapping; else float32, rounded at
 * each step).
 */
export function scatter32(
  red: i32, isInt: i32, t: usize, tOff: i32, to: i32, td: i32, ti: i32, o: i32, dim: i32, n: i32,
  idx: usize, iOff: i32, is: i32, k: i32, u: usize, uOff: i32, uo: i32, uk: i32, ui: i32, out: usize,
): void {
  let w = out;
  for (let a = 0; a < o; a++)
    for (let j = 0; j < dim; j++) {
      let p = tOff + a * to + j * td;
      for (let c = 0; c < n; c++) {
        store<i32>(w, load<i32>(t + (<usize>p << 2)));
        p += ti;
        w += 4;
      }
    }
  for (let b = 0; b < k; b++) {
    const j = position(load<i32>(idx + (<usize>(iOff + b * is) << 2)), dim);
    if (j < 0) continue;
    for (let a = 0; a < o; a++) {
      let q = out + (<usize>((a * dim + j) * n) << 2);
      let p = uOff + a * uo + b * uk;
      for (let c = 0; c < n; c++) {
        const v = u + (<usize>p << 2);
        if (red == 0) store<i32>(q, load<i32>(v));
        else if (red == 1) {
          if (isInt) store<i32>(q, load<i32>(q) + load<i32>(v));
          else store<f32>(q, load<f32>(q) + load<f32>(v));
        } else if (isInt) store<i32>(q, load<i32>(q) * load<i32>(v));
        else store<f32>(q, load<f32>(q) * load<f32>(v));
        p += ui;
        q += 4;
      }
    }
  }
}
