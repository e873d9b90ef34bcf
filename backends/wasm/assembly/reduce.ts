// Reductions (sum, max) over a kept plan × reduced plan (see src/kernels.ts). float32 sums accumulate
// in float64 (f64x2 lanes on contiguous rows), so their error does not grow with n. `outer` mode, used
// when a kept axis has the smallest stride (column sums), accumulates whole output rows in a float64
// scratch instead. Every count here (kN, kRows, rN, rRows) is below 2^31: the caller folds broadcast
// (stride-0) reduced axes into `reps` — each reduced value stands for `reps` elements (sum × reps, max
// unchanged) — so a broadcast view of 2^32 and more elements never reaches an i32 counter.

@inline function rowSumF64(p: usize, n: i32): f64 {
  let acc0 = f64x2.splat(0), acc1 = f64x2.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(p + (<usize>i << 2));
    acc0 = f64x2.add(acc0, f64x2.promote_low_f32x4(v));
    acc1 = f64x2.add(acc1, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)));
  }
  const s = f64x2.add(acc0, acc1);
  let acc = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
  for (; i < n; i++) acc += <f64>load<f32>(p + (<usize>i << 2));
  return acc;
}

export function reduceF32(isMax: i32, x: usize, kN: i32, kRows: i32, kStarts: usize, kStep: i32, rN: i32, rRows: i32, rStarts: usize, rStep: i32, out: usize, outer: i32, scratch: usize, reps: f64): void {
  const outSize = kN * kRows;
  const scale: f64 = isMax ? 1 : reps;
  if (outer) {
    const init: f64 = isMax ? -Infinity : 0;
    for (let o = 0; o < outSize; o++) store<f64>(scratch + (<usize>o << 3), init);
    for (let r = 0; r < rRows; r++) {
      for (let ri = 0; ri < rN; ri++) {
        const roff = load<i32>(rStarts + (<usize>r << 2)) + ri * rStep;
        for (let kr = 0; kr < kRows; kr++) {
          let p = x + (<usize>(load<i32>(kStarts + (<usize>kr << 2)) + roff) << 2);
          let q = scratch + (<usize>(kr * kN) << 3);
          for (let i = 0; i < kN; i++) {
            const v = <f64>load<f32>(p);
            if (isMax) {
              const a = load<f64>(q);
              if (v > a || v != v) store<f64>(q, v);
            } else store<f64>(q, load<f64>(q) + v);
            p += <usize>(kStep << 2);
            q += 8;
          }
        }
      }
    }
    for (let o = 0; o < outSize; o++) store<f32>(out + (<usize>o << 2), <f32>(load<f64>(scratch + (<usize>o << 3)) * scale));
    return;
  }
  let o = 0;
  for (let kr = 0; kr < kRows; kr++) {
    for (let ki = 0; ki < kN; ki++) {
      const base = load<i32>(kStarts + (<usize>kr << 2)) + ki * kStep;
      let acc: f64 = isMax ? -Infinity : 0;
      for (let r = 0; r < rRows; r++) {
        let p = x + (<usize>(base + load<i32>(rStarts + (<usize>r << 2))) << 2);
        if (isMax) {
          let m: f32 = <f32>acc;
          let i = 0;
          if (rStep == 1 && rN >= 4) {
            let vm = f32x4.splat(m);
            for (; i + 4 <= rN; i += 4) vm = f32x4.max(vm, v128.load(p + (<usize>i << 2)));
            m = Mathf.max(Mathf.max(f32x4.extract_lane(vm, 0), f32x4.extract_lane(vm, 1)), Mathf.max(f32x4.extract_lane(vm, 2), f32x4.extract_lane(vm, 3)));
            p += <usize>i << 2;
          }
          for (; i < rN; i++) {
            const v = load<f32>(p);
            if (v > m || v != v) m = v;
            p += <usize>(rStep << 2);
          }
          acc = <f64>m;
        } else if (rStep == 1) {
          acc += rowSumF64(p, rN);
        } else {
          for (let i = 0; i < rN; i++) {
            acc += <f64>load<f32>(p);
            p += <usize>(rStep << 2);
          }
        }
      }
      store<f32>(out + (<usize>o << 2), <f32>(acc * scale));
      o++;
    }
  }
}

export function reduceI32(isMax: i32, x: usize, kN: i32, kRows: i32, kStarts: usize, kStep: i32, rN: i32, rRows: i32, rStarts: usize, rStep: i32, out: usize, reps: i32): void {
  let o = 0;
  for (let kr = 0; kr < kRows; kr++) {
    for (let ki = 0; ki < kN; ki++) {
      const base = load<i32>(kStarts + (<usize>kr << 2)) + ki * kStep;
      let acc: i32 = isMax ? -2147483648 : 0;
      for (let r = 0; r < rRows; r++) {
        let p = x + (<usize>(base + load<i32>(rStarts + (<usize>r << 2))) << 2);
        for (let i = 0; i < rN; i++) {
          const v = load<i32>(p);
          if (isMax) { if (v > acc) acc = v; } else acc += v;
          p += <usize>(rStep << 2);
        }
      }
      store<i32>(out + (<usize>o << 2), isMax ? acc : acc * reps); // int32 sums wrap (mod 2^32)
      o++;
    }
  }
}
