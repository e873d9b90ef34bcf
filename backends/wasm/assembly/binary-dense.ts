// The float32 binary ops with an f32x4 form (vbin) over contiguous rows, `op` a constant after inlining (no
// per-element dispatch): both operands contiguous (binaryDenseF32), or one contiguous and the other one
// value broadcast along the row (binaryBroadcastF32: x + 3, a per-channel scale over a channel's pixels).
// elementwise.ts's binaryF32 calls them per row and finishes the rest of a row itself.

import { divRoundedDense } from './binary-scalar';
import { ADD, CMPLT, DIV, FLOOR_DIV, MAXIMUM, MINIMUM, MUL, SUB, TRUNC_DIV } from './generated/op-codes';

@inline export function vbin(op: i32, a: v128, b: v128): v128 {
  switch (op) {
    case ADD: return f32x4.add(a, b);
    case SUB: return f32x4.sub(a, b);
    case MUL: return f32x4.mul(a, b);
    case DIV: return f32x4.div(a, b);
    case MAXIMUM: return f32x4.max(a, b);
    case MINIMUM: return f32x4.min(a, b); // NaN-propagating, as maximum
    default: return v128.and(f32x4.lt(a, b), f32x4.splat(1.0));
  }
}

/** The ops with an f32x4 form (vbin). */
@inline export function hasVbin(op: i32): bool {
  return op == ADD || op == SUB || op == MUL || op == DIV || op == MAXIMUM || op == CMPLT || op == MINIMUM;
}

// Both inputs contiguous: 8 lanes per step with `op` a constant after inlining (no per-element
// dispatch); returns the elements done.
@inline function binaryDense(op: i32, n: i32, pa: usize, pb: usize, po: usize): i32 {
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    v128.store(po + o, vbin(op, v128.load(pa + o), v128.load(pb + o)));
    v128.store(po + o, vbin(op, v128.load(pa + o, 16), v128.load(pb + o, 16)), 16);
  }
  return i;
}

export function binaryDenseF32(op: i32, n: i32, pa: usize, pb: usize, po: usize): i32 {
  switch (op) {
    case ADD: return binaryDense(ADD, n, pa, pb, po);
    case SUB: return binaryDense(SUB, n, pa, pb, po);
    case MUL: return binaryDense(MUL, n, pa, pb, po);
    case DIV: return binaryDense(DIV, n, pa, pb, po);
    case MAXIMUM: return binaryDense(MAXIMUM, n, pa, pb, po);
    case CMPLT: return binaryDense(CMPLT, n, pa, pb, po);
    case MINIMUM: return binaryDense(MINIMUM, n, pa, pb, po);
    case FLOOR_DIV: return divRoundedDense(true, n, pa, pb, po);
    case TRUNC_DIV: return divRoundedDense(false, n, pa, pb, po);
    default: return 0;
  }
}

// One operand contiguous (pv), the other the value at ps broadcast; `scalarFirst`: the broadcast one is a.
@inline function binaryBroadcast(op: i32, scalarFirst: bool, n: i32, pv: usize, ps: usize, po: usize): i32 {
  const s = v128.load32_splat(ps);
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    const v0 = v128.load(pv + o), v1 = v128.load(pv + o, 16);
    v128.store(po + o, scalarFirst ? vbin(op, s, v0) : vbin(op, v0, s));
    v128.store(po + o, scalarFirst ? vbin(op, s, v1) : vbin(op, v1, s), 16);
  }
  return i;
}

@inline function broadcastSide(op: i32, scalarFirst: bool, n: i32, pv: usize, ps: usize, po: usize): i32 {
  switch (op) {
    case ADD: return binaryBroadcast(ADD, scalarFirst, n, pv, ps, po);
    case SUB: return binaryBroadcast(SUB, scalarFirst, n, pv, ps, po);
    case MUL: return binaryBroadcast(MUL, scalarFirst, n, pv, ps, po);
    case DIV: return binaryBroadcast(DIV, scalarFirst, n, pv, ps, po);
    case MAXIMUM: return binaryBroadcast(MAXIMUM, scalarFirst, n, pv, ps, po);
    case CMPLT: return binaryBroadcast(CMPLT, scalarFirst, n, pv, ps, po);
    case MINIMUM: return binaryBroadcast(MINIMUM, scalarFirst, n, pv, ps, po);
    default: return 0;
  }
}

/** A row of a (step aStep) op b (step bStep), one step 1 and the other 0; returns the elements done. */
export function binaryBroadcastF32(op: i32, n: i32, pa: usize, aStep: i32, pb: usize, bStep: i32, po: usize): i32 {
  return aStep == 0 ? broadcastSide(op, true, n, pb, pa, po) : broadcastSide(op, false, n, pa, pb, po);
}
