// fusedElementwise's kernel (hal/src/families/elementwise/fused.ts): a chain of float32 elementwise steps over
// a contiguous input into a contiguous output, in blocks of BLOCK elements: the first step reads the input's
// block, every later one rewrites the output's block in place while it is still in L1, so the chain passes over
// memory once instead of once per step. Each step runs the row kernels of the separate ops (unaryF32,
// binaryF32 with the scalar as a broadcast operand) on the block, so a chain gives the bits of its ops.
//
// The steps: `count` records of 3 words at `steps`: the kind (0 unary, 1 op(value, scalar), 2 op(scalar,
// value)), the op code (the op table's, generated/op-codes.ts) and the scalar's float32 bits.

import { binaryF32, unaryF32 } from './elementwise';

const BLOCK: i32 = 2048; // 8 KiB of float32: a block stays in L1 across the steps
const ZERO: usize = memory.data(4); // a one-row plan's row start: 0

export function fusedF32(n: i32, x: usize, out: usize, steps: usize, count: i32): void {
  for (let b = 0; b < n; b += BLOCK) {
    const len = min(BLOCK, n - b);
    let src = x + (<usize>b << 2);
    const dst = out + (<usize>b << 2);
    for (let s = 0; s < count; s++) {
      const p = steps + <usize>(s * 12);
      const kind = load<i32>(p);
      const op = load<i32>(p, 4);
      if (kind == 0) unaryF32(op, len, 1, src, ZERO, 1, dst);
      else if (kind == 1) binaryF32(op, len, 1, src, ZERO, 1, p + 8, ZERO, 0, dst);
      else binaryF32(op, len, 1, p + 8, ZERO, 0, src, ZERO, 1, dst);
      src = dst;
    }
  }
}
