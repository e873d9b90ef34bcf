// Index kernels on the three-dim operands of hal/src/families/indexing/indexing.ts: x and the target [O, D, I], indices
// [K], updates and gather's output [O, K, I]; every stride and offset in elements. An index i reads
// i + D when negative; outside [0, D) gather writes `fill` (bits: NaN for float32, INT32_MIN for
// int32) and scatter skips the update. scatter applies the updates in index order (replace keeps the
// last; add and mul combine in that order): deterministic.

import { SCATTER_ADD, SCATTER_NONE } from './generated/op-codes';

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
      if (n == 1) {
        store<i32>(w, load<i32>(x + (<usize>p << 2)));
        w += 4;
      } else if (si == 1 && n >= 8) {
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
 * — `red` SCATTER_NONE: replaced, SCATTER_ADD: added, SCATTER_MUL: multiplied (`isInt`: int32, wrapping; else
 * float32, rounded at each step).
 */
export function scatter32(
  red: i32, isInt: i32, t: usize, tOff: i32, to: i32, td: i32, ti: i32, o: i32, dim: i32, n: i32,
  idx: usize, iOff: i32, is: i32, k: i32, u: usize, uOff: i32, uo: i32, uk: i32, ui: i32, out: usize,
): void {
  let w = out;
  for (let a = 0; a < o; a++)
    for (let j = 0; j < dim; j++) {
      let p = tOff + a * to + j * td;
      if (ti == 1) {
        memory.copy(w, t + (<usize>p << 2), <usize>n << 2);
        w += <usize>n << 2;
        continue;
      }
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
      const q = out + (<usize>((a * dim + j) * n) << 2);
      const p = uOff + a * uo + b * uk;
      if (ui == 1) combineRow(red, isInt, q, u + (<usize>p << 2), n);
      else combineStrided(red, isInt, q, u, p, ui, n);
    }
  }
}

/** n contiguous updates at v combined into q: replace by memory.copy, add with SIMD (four lanes at a time). */
function combineRow(red: i32, isInt: i32, q: usize, v: usize, n: i32): void {
  if (red == SCATTER_NONE) {
    memory.copy(q, v, <usize>n << 2);
    return;
  }
  let c = 0;
  if (red == SCATTER_ADD) {
    for (; c + 4 <= n; c += 4) {
      const o = <usize>c << 2;
      const a = v128.load(q + o);
      const b = v128.load(v + o);
      v128.store(q + o, isInt ? i32x4.add(a, b) : f32x4.add(a, b));
    }
  }
  combineStrided(red, isInt, q + (<usize>c << 2), v + (<usize>c << 2), 0, 1, n - c);
}

/** n updates from u at element p, stride ui, combined into the contiguous row q (replace, add or multiply). */
function combineStrided(red: i32, isInt: i32, q: usize, u: usize, p: i32, ui: i32, n: i32): void {
  for (let c = 0; c < n; c++) {
    const v = u + (<usize>p << 2);
    if (red == SCATTER_NONE) store<i32>(q, load<i32>(v));
    else if (red == SCATTER_ADD) {
      if (isInt) store<i32>(q, load<i32>(q) + load<i32>(v));
      else store<f32>(q, load<f32>(q) + load<f32>(v));
    } else if (isInt) store<i32>(q, load<i32>(q) * load<i32>(v));
    else store<f32>(q, load<f32>(q) * load<f32>(v));
    p += ui;
    q += 4;
  }
}

/**
 * Flat positions of index tuples [L, q] (element strides s0, s1 from iOff) into dims Q[q] (i32 at `dims`,
 * row-major strides at `strides`), `per` rows per batch of `inner` positions: out[l] = batch base +
 * Σ c'_m·stride_m, c'_m = c_m (+ Q_m when negative), or `total` when a component lies outside [−Q_m, Q_m).
 */
export function positions32(
  idx: usize, iOff: i32, s0: i32, s1: i32, L: i32, q: i32, per: i32, inner: i32, total: i32,
  dims: usize, strides: usize, out: usize,
): void {
  if (q == 2 && per == L) {
    positionPairs(idx, iOff, s0, s1, L, load<i32>(dims), load<i32>(dims + 4), load<i32>(strides), total, out);
    return;
  }
  let base = 0;
  let left = per;
  let p0 = iOff;
  for (let l = 0; l < L; l++) {
    let pos = base;
    let p = p0;
    for (let m = 0; m < q; m++) {
      const c = load<i32>(idx + (<usize>p << 2));
      const n = load<i32>(dims + (<usize>m << 2));
      if (c < -n || c >= n) {
        pos = total;
        break;
      }
      pos += (c < 0 ? c + n : c) * load<i32>(strides + (<usize>m << 2));
      p += s1;
    }
    store<i32>(out + (<usize>l << 2), pos);
    p0 += s0;
    if (--left == 0) {
      left = per;
      base += inner;
    }
  }
}

/** positions32 for pairs without batch dims: both components in registers, one select for the range. */
function positionPairs(
  idx: usize, iOff: i32, s0: i32, s1: i32, L: i32, n0: i32, n1: i32, st0: i32, total: i32, out: usize,
): void {
  let p = idx + (<usize>iOff << 2);
  const step = <usize>s0 << 2;
  const second = <usize>s1 << 2;
  for (let l = 0; l < L; l++) {
    const c0 = load<i32>(p);
    const c1 = load<i32>(p + second);
    const j0 = c0 < 0 ? c0 + n0 : c0;
    const j1 = c1 < 0 ? c1 + n1 : c1;
    const ok = <u32>j0 < <u32>n0 && <u32>j1 < <u32>n1;
    store<i32>(out + (<usize>l << 2), ok ? j0 * st0 + j1 : total);
    p += step;
  }
}
