// The bool kernels over row plans (the layout of elementwise.ts: `n` elements per row, `rows` rows, each
// input a base pointer, row starts and an inner step; the output contiguous): the float32 comparisons,
// whose output is bool (int32 0 or 1), and where. Rows whose steps are all 0 or 1 run on f32x4/i32x4;
// other steps run scalar. Semantics: hal/src/ops/binary-logic.ts and hal/src/families/logic/logic.ts.

import { EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, NOT_EQUAL } from './generated/op-codes';

// IEEE comparisons: false with a NaN operand except ≠, which is true; −0 = +0. True lanes are −1: masked to 1.
@inline function vcmp(op: i32, a: v128, b: v128): v128 {
  const one = i32x4.splat(1);
  switch (op) {
    case EQUAL: return v128.and(f32x4.eq(a, b), one);
    case NOT_EQUAL: return v128.and(f32x4.ne(a, b), one);
    case LESS: return v128.and(f32x4.lt(a, b), one);
    case LESS_EQUAL: return v128.and(f32x4.le(a, b), one);
    case GREATER: return v128.and(f32x4.gt(a, b), one);
    default: return v128.and(f32x4.ge(a, b), one);
  }
}

@inline function scmp(op: i32, x: f32, y: f32): i32 {
  switch (op) {
    case EQUAL: return <i32>(x == y);
    case NOT_EQUAL: return <i32>(x != y);
    case LESS: return <i32>(x < y);
    case LESS_EQUAL: return <i32>(x <= y);
    case GREATER: return <i32>(x > y);
    default: return <i32>(x >= y);
  }
}

// Steps 0 or 1 (not both 0): 8 lanes per step where both are contiguous, else 4 against a splat, with
// `op` a constant after inlining; returns the elements done.
@inline function compareVec(op: i32, n: i32, pa: usize, aStep: i32, pb: usize, bStep: i32, po: usize): i32 {
  let i = 0;
  if (aStep == 1 && bStep == 1) {
    for (; i + 8 <= n; i += 8) {
      const o = <usize>i << 2;
      v128.store(po + o, vcmp(op, v128.load(pa + o), v128.load(pb + o)));
      v128.store(po + o, vcmp(op, v128.load(pa + o, 16), v128.load(pb + o, 16)), 16);
    }
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      v128.store(po + o, vcmp(op, v128.load(pa + o), v128.load(pb + o)));
    }
  } else if (aStep == 1) {
    const sb = f32x4.splat(load<f32>(pb));
    for (; i + 4 <= n; i += 4) v128.store(po + (<usize>i << 2), vcmp(op, v128.load(pa + (<usize>i << 2)), sb));
  } else {
    const sa = f32x4.splat(load<f32>(pa));
    for (; i + 4 <= n; i += 4) v128.store(po + (<usize>i << 2), vcmp(op, sa, v128.load(pb + (<usize>i << 2))));
  }
  return i;
}

function compareVecRow(op: i32, n: i32, pa: usize, aStep: i32, pb: usize, bStep: i32, po: usize): i32 {
  switch (op) {
    case EQUAL: return compareVec(EQUAL, n, pa, aStep, pb, bStep, po);
    case NOT_EQUAL: return compareVec(NOT_EQUAL, n, pa, aStep, pb, bStep, po);
    case LESS: return compareVec(LESS, n, pa, aStep, pb, bStep, po);
    case LESS_EQUAL: return compareVec(LESS_EQUAL, n, pa, aStep, pb, bStep, po);
    case GREATER: return compareVec(GREATER, n, pa, aStep, pb, bStep, po);
    default: return compareVec(GREATER_EQUAL, n, pa, aStep, pb, bStep, po);
  }
}

/** float32 a, b → bool out (int32 0/1): the comparison `op` (EQUAL … GREATER_EQUAL, the op table's codes). */
export function compareF32(op: i32, n: i32, rows: i32, a: usize, aStarts: usize, aStep: i32, b: usize,
    bStarts: usize, bStep: i32, out: usize): void {
  const da = <usize>(aStep << 2), db = <usize>(bStep << 2);
  const vec = (aStep == 1 || aStep == 0) && (bStep == 1 || bStep == 0) && (aStep | bStep) != 0;
  for (let r = 0; r < rows; r++) {
    let pa = a + (<usize>load<i32>(aStarts + (<usize>r << 2)) << 2);
    let pb = b + (<usize>load<i32>(bStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>(r * n) << 2);
    let i = 0;
    if (vec) {
      i = compareVecRow(op, n, pa, aStep, pb, bStep, po);
      pa += <usize>(i * aStep) << 2;
      pb += <usize>(i * bStep) << 2;
    }
    for (; i < n; i++) {
      store<i32>(po + (<usize>i << 2), scmp(op, load<f32>(pa), load<f32>(pb)));
      pa += da;
      pb += db;
    }
  }
}

/**
 * out = cond ? x : y as 32-bit words (float32, int32 or bool alike: NaN payloads and −0 move unchanged);
 * cond is bool (int32 0/1). Steps 0 or 1 select 4 lanes at a time with a mask (cond ≠ 0).
 */
export function where32(n: i32, rows: i32, c: usize, cStarts: usize, cStep: i32, x: usize, xStarts: usize,
    xStep: i32, y: usize, yStarts: usize, yStep: i32, out: usize): void {
  const dc = <usize>(cStep << 2), dx = <usize>(xStep << 2), dy = <usize>(yStep << 2);
  const dense = cStep == 1 && xStep == 1 && yStep == 1;
  const vec = (cStep == 1 || cStep == 0) && (xStep == 1 || xStep == 0) && (yStep == 1 || yStep == 0);
  const zero = i32x4.splat(0);
  for (let r = 0; r < rows; r++) {
    let pc = c + (<usize>load<i32>(cStarts + (<usize>r << 2)) << 2);
    let px = x + (<usize>load<i32>(xStarts + (<usize>r << 2)) << 2);
    let py = y + (<usize>load<i32>(yStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>(r * n) << 2);
    let i = 0;
    if (dense) {
      for (; i + 4 <= n; i += 4) {
        const o = <usize>i << 2;
        const m = i32x4.ne(v128.load(pc + o), zero);
        v128.store(po + o, v128.bitselect(v128.load(px + o), v128.load(py + o), m));
      }
      pc += <usize>i << 2;
      px += <usize>i << 2;
      py += <usize>i << 2;
    } else if (vec) {
      const sc = i32x4.splat(load<i32>(pc)), sx = i32x4.splat(load<i32>(px)), sy = i32x4.splat(load<i32>(py));
      const ic = <usize>(cStep << 4), ix = <usize>(xStep << 4), iy = <usize>(yStep << 4);
      for (; i + 4 <= n; i += 4) {
        const m = i32x4.ne(cStep ? v128.load(pc) : sc, zero);
        v128.store(po + (<usize>i << 2), v128.bitselect(xStep ? v128.load(px) : sx, yStep ? v128.load(py) : sy, m));
        pc += ic;
        px += ix;
        py += iy;
      }
    }
    for (; i < n; i++) {
      store<i32>(po + (<usize>i << 2), load<i32>(pc) != 0 ? load<i32>(px) : load<i32>(py));
      pc += dc;
      px += dx;
      py += dy;
    }
  }
}
