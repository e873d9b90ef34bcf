// Reductions over a kept plan × reduced plan (see src/kernels.ts). `op` is the reduction's code
// (SUM, MAX, MIN, PROD: generated/op-codes.ts, from the HAL's REDUCE_OPS). float32 sums and products accumulate
// in float64 (f64x2 lanes on contiguous rows), so their error does not grow with n. `outer` mode, used
// when a kept axis has the smallest stride (column sums), accumulates whole output rows in a float64
// scratch instead. Every count here (kN, kRows, rN, rRows) is below 2^31: the caller folds broadcast
// (stride-0) reduced axes into `reps` — each reduced value stands for `reps` elements (sum × reps,
// prod ^ reps, max and min unchanged) — so a broadcast view of 2^32 and more elements never reaches an
// i32 counter.

import { MAX, MIN, PROD, SUM } from './generated/op-codes';

@inline function initF(op: i32): f64 {
  return op == MAX ? -Infinity : op == MIN ? Infinity : op == PROD ? 1 : 0;
}

/** Folds one value into a float64 accumulator (NaN stays once seen: `v > NaN` is false). */
@inline function foldF(op: i32, acc: f64, v: f64): f64 {
  if (op == SUM) return acc + v;
  if (op == PROD) return acc * v;
  if (op == MAX) return v > acc || v != v ? v : acc;
  return v < acc || v != v ? v : acc;
}

/** The result of `reps` copies of each reduced value. */
@inline function repeatF(op: i32, acc: f64, reps: f64): f64 {
  if (op == SUM) return acc * reps;
  if (op == PROD) return reps == 1 ? acc : Math.pow(acc, reps);
  return acc;
}

@inline function rowProdF64(p: usize, n: i32): f64 {
  let acc0 = f64x2.splat(1), acc1 = f64x2.splat(1);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(p + (<usize>i << 2));
    acc0 = f64x2.mul(acc0, f64x2.promote_low_f32x4(v));
    acc1 = f64x2.mul(acc1, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3,
        4, 5, 6, 7)));
  }
  const s = f64x2.mul(acc0, acc1);
  let acc = f64x2.extract_lane(s, 0) * f64x2.extract_lane(s, 1);
  for (; i < n; i++) acc *= <f64>load<f32>(p + (<usize>i << 2));
  return acc;
}

@inline function rowSumF64(p: usize, n: i32): f64 {
  let acc0 = f64x2.splat(0), acc1 = f64x2.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(p + (<usize>i << 2));
    acc0 = f64x2.add(acc0, f64x2.promote_low_f32x4(v));
    acc1 = f64x2.add(acc1, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3,
        4, 5, 6, 7)));
  }
  const s = f64x2.add(acc0, acc1);
  let acc = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
  for (; i < n; i++) acc += <f64>load<f32>(p + (<usize>i << 2));
  return acc;
}

export function reduceF32(op: i32, x: usize, kN: i32, kRows: i32, kStarts: usize, kStep: i32, rN: i32,
    rRows: i32, rStarts: usize, rStep: i32, out: usize, outer: i32, scratch: usize, reps: f64): void {
  const outSize = kN * kRows;
  const init = initF(op);
  if (outer) {
    for (let o = 0; o < outSize; o++) store<f64>(scratch + (<usize>o << 3), init);
    for (let r = 0; r < rRows; r++) {
      for (let ri = 0; ri < rN; ri++) {
        const roff = load<i32>(rStarts + (<usize>r << 2)) + ri * rStep;
        for (let kr = 0; kr < kRows; kr++) {
          let p = x + (<usize>(load<i32>(kStarts + (<usize>kr << 2)) + roff) << 2);
          let q = scratch + (<usize>(kr * kN) << 3);
          for (let i = 0; i < kN; i++) {
            store<f64>(q, foldF(op, load<f64>(q), <f64>load<f32>(p)));
            p += <usize>(kStep << 2);
            q += 8;
          }
        }
      }
    }
    for (let o = 0; o < outSize; o++) store<f32>(out + (<usize>o << 2), <f32>repeatF(op,
        load<f64>(scratch + (<usize>o << 3)), reps));
    return;
  }
  let o = 0;
  for (let kr = 0; kr < kRows; kr++) {
    for (let ki = 0; ki < kN; ki++) {
      const base = load<i32>(kStarts + (<usize>kr << 2)) + ki * kStep;
      let acc: f64 = init;
      for (let r = 0; r < rRows; r++) {
        let p = x + (<usize>(base + load<i32>(rStarts + (<usize>r << 2))) << 2);
        if (op == MAX || op == MIN) {
          // f32x4.max/min propagate NaN, as the scalar tail does.
          let m: f32 = <f32>acc;
          let i = 0;
          if (rStep == 1 && rN >= 4) {
            // Four independent accumulators: f32x4.max/min (NaN-propagating) take several instructions
            // each on x86, and one accumulator would serialize them.
            let v0 = f32x4.splat(m), v1 = v0, v2 = v0, v3 = v0;
            if (op == MAX) {
              for (; i + 16 <= rN; i += 16) {
                const q = p + (<usize>i << 2);
                v0 = f32x4.max(v0, v128.load(q));
                v1 = f32x4.max(v1, v128.load(q, 16));
                v2 = f32x4.max(v2, v128.load(q, 32));
                v3 = f32x4.max(v3, v128.load(q, 48));
              }
              for (; i + 4 <= rN; i += 4) v0 = f32x4.max(v0, v128.load(p + (<usize>i << 2)));
              const vm = f32x4.max(f32x4.max(v0, v1), f32x4.max(v2, v3));
              m = Mathf.max(Mathf.max(f32x4.extract_lane(vm, 0), f32x4.extract_lane(vm, 1)),
                  Mathf.max(f32x4.extract_lane(vm, 2), f32x4.extract_lane(vm, 3)));
            } else {
              for (; i + 16 <= rN; i += 16) {
                const q = p + (<usize>i << 2);
                v0 = f32x4.min(v0, v128.load(q));
                v1 = f32x4.min(v1, v128.load(q, 16));
                v2 = f32x4.min(v2, v128.load(q, 32));
                v3 = f32x4.min(v3, v128.load(q, 48));
              }
              for (; i + 4 <= rN; i += 4) v0 = f32x4.min(v0, v128.load(p + (<usize>i << 2)));
              const vm = f32x4.min(f32x4.min(v0, v1), f32x4.min(v2, v3));
              m = Mathf.min(Mathf.min(f32x4.extract_lane(vm, 0), f32x4.extract_lane(vm, 1)),
                  Mathf.min(f32x4.extract_lane(vm, 2), f32x4.extract_lane(vm, 3)));
            }
            p += <usize>i << 2;
          }
          for (; i < rN; i++) {
            const v = load<f32>(p);
            if (op == MAX ? v > m : v < m) m = v;
            else if (v != v) m = v;
            p += <usize>(rStep << 2);
          }
          acc = <f64>m;
        } else if (rStep == 1) {
          acc = op == SUM ? acc + rowSumF64(p, rN) : acc * rowProdF64(p, rN);
        } else {
          for (let i = 0; i < rN; i++) {
            acc = foldF(op, acc, <f64>load<f32>(p));
            p += <usize>(rStep << 2);
          }
        }
      }
      store<f32>(out + (<usize>o << 2), <f32>repeatF(op, acc, reps));
      o++;
    }
  }
}

/** x^n with wrap-around (modulo 2^32), by squaring. */
function ipow(x: i32, n: i32): i32 {
  let r: i32 = 1;
  while (n > 0) {
    if (n & 1) r *= x;
    x *= x;
    n >>>= 1;
  }
  return r;
}

/** sum (wrapping), max or min of acc and n contiguous int32 at p: i32x4 lanes, then the lanes folded. */
@inline function rowFoldI32(op: i32, acc: i32, p: usize, n: i32): i32 {
  let a = i32x4.splat(op == SUM ? 0 : acc);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(p + (<usize>i << 2));
    a = op == SUM ? i32x4.add(a, v) : op == MAX ? i32x4.max_s(a, v) : i32x4.min_s(a, v);
  }
  let r = acc;
  r = foldI32(op, r, i32x4.extract_lane(a, 0));
  r = foldI32(op, r, i32x4.extract_lane(a, 1));
  r = foldI32(op, r, i32x4.extract_lane(a, 2));
  r = foldI32(op, r, i32x4.extract_lane(a, 3));
  for (; i < n; i++) r = foldI32(op, r, load<i32>(p + (<usize>i << 2)));
  return r;
}

@inline function foldI32(op: i32, acc: i32, v: i32): i32 {
  return op == SUM ? acc + v : op == MAX ? max(acc, v) : min(acc, v);
}

export function reduceI32(op: i32, x: usize, kN: i32, kRows: i32, kStarts: usize, kStep: i32, rN: i32,
    rRows: i32, rStarts: usize, rStep: i32, out: usize, reps: i32): void {
  const init: i32 = op == MAX ? -2147483648 : op == MIN ? 2147483647 : op == PROD ? 1 : 0;
  let o = 0;
  for (let kr = 0; kr < kRows; kr++) {
    for (let ki = 0; ki < kN; ki++) {
      const base = load<i32>(kStarts + (<usize>kr << 2)) + ki * kStep;
      let acc: i32 = init;
      for (let r = 0; r < rRows; r++) {
        let p = x + (<usize>(base + load<i32>(rStarts + (<usize>r << 2))) << 2);
        if (rStep == 1 && op != PROD && rN >= 16) {
          acc = rowFoldI32(op, acc, p, rN);
          continue;
        }
        for (let i = 0; i < rN; i++) {
          const v = load<i32>(p);
          if (op == SUM) acc += v;
          else if (op == MAX) { if (v > acc) acc = v; }
          else if (op == MIN) { if (v < acc) acc = v; }
          else acc *= v;
          p += <usize>(rStep << 2);
        }
      }
      // int32 sums and products wrap (mod 2^32)
      store<i32>(out + (<usize>o << 2), op == SUM ? acc * reps : op == PROD ? ipow(acc, reps) : acc);
      o++;
    }
  }
}
