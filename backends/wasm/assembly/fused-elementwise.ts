// fusedElementwise's kernel (hal/src/families/elementwise/fused.ts): a chain of float32 elementwise steps over
// a contiguous input into a contiguous output, in blocks of BLOCK elements: the first step reads the input's
// block, every later one rewrites the output's block in place while it is still in L1, so the chain passes over
// memory once instead of once per step. Each step runs the row kernels of the separate ops (unaryF32,
// binaryF32 with the scalar as a broadcast operand, or the array operand's block) on the block, so a chain gives
// the bits of its ops.
//
// The steps: `count` records of 4 words at `steps`: the kind (0 unary, 1 op(value, scalar), 2 op(scalar,
// value), 3 op(value, array), 4 op(array, value)), the op code (the op table's, generated/op-codes.ts), then
// the scalar's float32 bits, or the array's byte address and its period P: chain element e reads array element
// e % P (P = 0: element 0 for all; a contiguous array of the chain's length: P = n; a row broadcast over rows:
// P = the row length). `base`: the chain element that x's first element is (a part of a chain split across
// threads), so that array operands are read at the same positions.

import { binaryF32, unaryF32 } from './elementwise';

const BLOCK: i32 = 2048; // 8 KiB of float32: a block stays in L1 across the steps
const ZERO: usize = memory.data(4); // a one-row plan's row start: 0
const RECORD: i32 = 16;

/** The array step on `len` elements from chain element e: one binaryF32 per period segment. */
function arrayStep(op: i32, first: bool, len: i32, e: i32, src: usize, arr: usize, period: i32, dst: usize): void {
  if (period == 0) {
    if (first) binaryF32(op, len, 1, arr, ZERO, 0, src, ZERO, 1, dst);
    else binaryF32(op, len, 1, src, ZERO, 1, arr, ZERO, 0, dst);
    return;
  }
  for (let done = 0; done < len; ) {
    const pos = (e + done) % period;
    const seg = min(period - pos, len - done);
    const a = arr + (<usize>pos << 2);
    const o = <usize>done << 2;
    if (first) binaryF32(op, seg, 1, a, ZERO, 1, src + o, ZERO, 1, dst + o);
    else binaryF32(op, seg, 1, src + o, ZERO, 1, a, ZERO, 1, dst + o);
    done += seg;
  }
}

export function fusedF32(n: i32, x: usize, out: usize, steps: usize, count: i32, base: i32): void {
  for (let b = 0; b < n; b += BLOCK) {
    const len = min(BLOCK, n - b);
    let src = x + (<usize>b << 2);
    const dst = out + (<usize>b << 2);
    for (let s = 0; s < count; s++) {
      const p = steps + <usize>(s * RECORD);
      const kind = load<i32>(p);
      const op = load<i32>(p, 4);
      if (kind == 0) unaryF32(op, len, 1, src, ZERO, 1, dst);
      else if (kind == 1) binaryF32(op, len, 1, src, ZERO, 1, p + 8, ZERO, 0, dst);
      else if (kind == 2) binaryF32(op, len, 1, p + 8, ZERO, 0, src, ZERO, 1, dst);
      else arrayStep(op, kind == 4, len, base + b, src, <usize>load<u32>(p, 8), load<i32>(p, 12), dst);
      src = dst;
    }
  }
}
