// Elementwise kernels over row plans: `n` elements per row, `rows` rows; each input has a base pointer
// (bytes), an array of row start offsets (elements, i32) and an inner step (elements). Outputs are
// contiguous (row r starts at r·n). Contiguous rows (step 1) and broadcast scalars (step 0) run on
// f32x4/i32x4; other steps run scalar. Semantics: hal/src/ops/index.ts. The float32 comparisons (into a bool
// output) and where are in logic.ts; binaryI32 runs every op on int32 and bool (int32 0/1) operands.

import { divRoundedF, floorDivI, powF, powI, shiftLeftI, shiftRightI, truncDivI } from './binary-scalar';
import { binaryBroadcastF32, binaryDenseF32, hasVbin, vbin } from './binary-dense';
import { erf64, erfc64, sigmoid64 } from './special';
import { vacosh, vasinh, vcosh, vexpm1, vhardswish, vlog1p, vsinh, vsoftplus } from './vmath';
// The op codes by name (scripts/op-codes.mjs, from the op table; src/ dispatches with the same codes).
import {
  ABS, ACOS, ACOSH, ADD, ASIN, ASINH, ATAN, ATANH, BIT_SHIFT_LEFT, BIT_SHIFT_RIGHT, BITWISE_AND, BITWISE_OR,
  BITWISE_XOR, CEIL, CMPLT, COSH, DIV, EQUAL, ERF, EXP, EXP2, EXPM1, FLOOR, FLOOR_DIV, FMOD, GELU, GELU_GRAD,
  GELU_TANH, GREATER, GREATER_EQUAL, HARD_SWISH, LESS, LESS_EQUAL, LOG, LOG1P, LOG2, LOGICAL_AND, LOGICAL_OR,
  LOGICAL_XOR, MAXIMUM, MINIMUM, MOD, MUL, NEG, NOT_EQUAL, POW, RECIP, RELU, ROUND, SIGMOID, SIGN, SILU, SIN, SINH,
  SOFTPLUS, SQRT, SUB, TAN, TANH, TRUNC, TRUNC_DIV,
} from './generated/op-codes';

// gelu's gradient (GELU_GRAD, hal/src/ops/binary.ts): g·(Φ(x) + x·φ(x)), in f64 and rounded once.
const ONE_OVER_SQRT_2PI: f64 = 0.3989422804014327;
function geluGradF(x: f32, g: f32): f32 {
  if (x == Infinity) return g;
  if (x == -Infinity) return g * 0.0;
  const v = <f64>x;
  return <f32>(<f64>g * (0.5 * erfc64(-v * Math.SQRT1_2) + v * Math.exp(-0.5 * v * v) * ONE_OVER_SQRT_2PI));
}
// geluTanh(x) = x·sigmoid(2√(2/π)·(x + 0.044715·x³))
const GELU_2C: f64 = 1.5957691216057308, GELU_A: f64 = 0.044715;

@inline function fmodFloored(x: f32, y: f32): f32 {
  let r = x % y;
  if (r != 0 && (r < 0) != (y < 0)) r += y;
  return r;
}

@inline function sbin(op: i32, x: f32, y: f32): f32 {
  switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV: return x / y;
    case MAXIMUM: return x > y || x != x ? x : y;
    case MOD: return fmodFloored(x, y);
    case MINIMUM: return x < y || x != x ? x : y;
    case POW: return powF(x, y);
    case FMOD: return x % y; // C's fmod (AssemblyScript's f32 %): exact, x's sign; x fmod ±Inf = x
    case FLOOR_DIV: return divRoundedF(x, y, true);
    case TRUNC_DIV: return divRoundedF(x, y, false);
    case GELU_GRAD: return geluGradF(x, y);
    default: return x < y ? 1.0 : 0.0;
  }
}

export function binaryF32(op: i32, n: i32, rows: i32, a: usize, aStarts: usize, aStep: i32, b: usize,
    bStarts: usize, bStep: i32, out: usize): void {
  for (let r = 0; r < rows; r++) {
    let pa = a + (<usize>load<i32>(aStarts + (<usize>r << 2)) << 2);
    let pb = b + (<usize>load<i32>(bStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>(r * n) << 2);
    let i = 0;
    if (aStep == 1 && bStep == 1) {
      i = binaryDenseF32(op, n, pa, pb, po);
      pa += <usize>i << 2;
      pb += <usize>i << 2;
    } else if ((aStep | bStep) == 1 && (aStep & bStep) == 0) { // one row contiguous, the other a scalar
      i = binaryBroadcastF32(op, n, pa, aStep, pb, bStep, po);
      pa += <usize>(i * aStep) << 2;
      pb += <usize>(i * bStep) << 2;
    }
    if (hasVbin(op) && (aStep == 1 || aStep == 0) && (bStep == 1 || bStep == 0)) {
      const sa = f32x4.splat(load<f32>(pa));
      const sb = f32x4.splat(load<f32>(pb));
      const ia = <usize>(aStep << 4);
      const ib = <usize>(bStep << 4);
      let qa = pa, qb = pb;
      const i0 = i;
      for (; i + 4 <= n; i += 4) {
        const va = aStep ? v128.load(qa) : sa;
        const vb = bStep ? v128.load(qb) : sb;
        v128.store(po + (<usize>i << 2), vbin(op, va, vb));
        qa += ia;
        qb += ib;
      }
      pa += <usize>((i - i0) * aStep) << 2;
      pb += <usize>((i - i0) * bStep) << 2;
    }
    const da = <usize>(aStep << 2), db = <usize>(bStep << 2);
    for (; i < n; i++) {
      store<f32>(po + (<usize>i << 2), sbin(op, load<f32>(pa), load<f32>(pb)));
      pa += da;
      pb += db;
    }
  }
}

@inline function sbinI(op: i32, x: i32, y: i32): i32 {
  switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case MAXIMUM: return x > y ? x : y;
    case MINIMUM: return x < y ? x : y;
    case POW: return powI(x, y);
    case MOD: {
      if (y == 0) return 0;
      let r = x % y;
      if (r != 0 && (r < 0) != (y < 0)) r += y;
      return r;
    }
    case FMOD: return y == 0 || y == -1 ? 0 : x % y; // truncated; x fmod 0 = 0, and INT_MIN fmod −1 = 0 (no trap)
    case EQUAL: return <i32>(x == y);
    case NOT_EQUAL: return <i32>(x != y);
    case LESS: return <i32>(x < y);
    case LESS_EQUAL: return <i32>(x <= y);
    case GREATER: return <i32>(x > y);
    case GREATER_EQUAL: return <i32>(x >= y);
    case LOGICAL_AND: case BITWISE_AND: return x & y; // bool is 0/1: the logical ops are the bitwise ones
    case LOGICAL_OR: case BITWISE_OR: return x | y;
    case LOGICAL_XOR: case BITWISE_XOR: return x ^ y;
    case FLOOR_DIV: return floorDivI(x, y);
    case TRUNC_DIV: return truncDivI(x, y);
    case BIT_SHIFT_LEFT: return shiftLeftI(x, y);
    case BIT_SHIFT_RIGHT: return shiftRightI(x, y);
    default: return x < y ? 1 : 0;
  }
}

// The int32 ops with an i32x4 form (comparisons: true lanes are −1, masked to 1).
@inline function vbinI(op: i32, a: v128, b: v128): v128 {
  const one = i32x4.splat(1);
  switch (op) {
    case ADD: return i32x4.add(a, b);
    case SUB: return i32x4.sub(a, b);
    case MUL: return i32x4.mul(a, b);
    case MAXIMUM: return i32x4.max_s(a, b);
    case MINIMUM: return i32x4.min_s(a, b);
    case EQUAL: return v128.and(i32x4.eq(a, b), one);
    case NOT_EQUAL: return v128.and(i32x4.ne(a, b), one);
    case LESS_EQUAL: return v128.and(i32x4.le_s(a, b), one);
    case GREATER: return v128.and(i32x4.gt_s(a, b), one);
    case GREATER_EQUAL: return v128.and(i32x4.ge_s(a, b), one);
    case LOGICAL_AND: case BITWISE_AND: return v128.and(a, b);
    case LOGICAL_OR: case BITWISE_OR: return v128.or(a, b);
    case LOGICAL_XOR: case BITWISE_XOR: return v128.xor(a, b);
    default: return v128.and(i32x4.lt_s(a, b), one); // CMPLT, LESS
  }
}

// Operand steps 0 or 1 (a broadcast scalar or contiguous), 4 lanes per step with `op` a constant after
// inlining; returns the elements done.
@inline function binaryVecI32(op: i32, n: i32, pa: usize, aStep: i32, pb: usize, bStep: i32, po: usize): i32 {
  const sa = i32x4.splat(load<i32>(pa)), sb = i32x4.splat(load<i32>(pb));
  let i = 0;
  if (aStep == 1 && bStep == 1) {
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      v128.store(po + o, vbinI(op, v128.load(pa + o), v128.load(pb + o)));
    }
  } else if (aStep == 1) {
    for (; i + 4 <= n; i += 4) v128.store(po + (<usize>i << 2), vbinI(op, v128.load(pa + (<usize>i << 2)), sb));
  } else {
    for (; i + 4 <= n; i += 4) v128.store(po + (<usize>i << 2), vbinI(op, sa, v128.load(pb + (<usize>i << 2))));
  }
  return i;
}

function binaryVecRowI32(op: i32, n: i32, pa: usize, aStep: i32, pb: usize, bStep: i32, po: usize): i32 {
  switch (op) {
    case ADD: return binaryVecI32(ADD, n, pa, aStep, pb, bStep, po);
    case SUB: return binaryVecI32(SUB, n, pa, aStep, pb, bStep, po);
    case MUL: return binaryVecI32(MUL, n, pa, aStep, pb, bStep, po);
    case MAXIMUM: return binaryVecI32(MAXIMUM, n, pa, aStep, pb, bStep, po);
    case MINIMUM: return binaryVecI32(MINIMUM, n, pa, aStep, pb, bStep, po);
    case CMPLT: case LESS: return binaryVecI32(LESS, n, pa, aStep, pb, bStep, po);
    case EQUAL: return binaryVecI32(EQUAL, n, pa, aStep, pb, bStep, po);
    case NOT_EQUAL: return binaryVecI32(NOT_EQUAL, n, pa, aStep, pb, bStep, po);
    case LESS_EQUAL: return binaryVecI32(LESS_EQUAL, n, pa, aStep, pb, bStep, po);
    case GREATER: return binaryVecI32(GREATER, n, pa, aStep, pb, bStep, po);
    case GREATER_EQUAL: return binaryVecI32(GREATER_EQUAL, n, pa, aStep, pb, bStep, po);
    case LOGICAL_AND: case BITWISE_AND: return binaryVecI32(BITWISE_AND, n, pa, aStep, pb, bStep, po);
    case LOGICAL_OR: case BITWISE_OR: return binaryVecI32(BITWISE_OR, n, pa, aStep, pb, bStep, po);
    case LOGICAL_XOR: case BITWISE_XOR: return binaryVecI32(BITWISE_XOR, n, pa, aStep, pb, bStep, po);
    default: return 0; // mod, pow, fmod, the divisions and shifts: scalar
  }
}

// int32 and bool (int32 0/1) operands: arithmetic, comparisons into bool, fmod, logical and bitwise ops.
// Rows whose steps are 0 or 1 (not both 0) run on i32x4.
export function binaryI32(op: i32, n: i32, rows: i32, a: usize, aStarts: usize, aStep: i32, b: usize,
    bStarts: usize, bStep: i32, out: usize): void {
  const da = <usize>(aStep << 2), db = <usize>(bStep << 2);
  const vec = (aStep == 1 || aStep == 0) && (bStep == 1 || bStep == 0) && (aStep | bStep) != 0;
  for (let r = 0; r < rows; r++) {
    let pa = a + (<usize>load<i32>(aStarts + (<usize>r << 2)) << 2);
    let pb = b + (<usize>load<i32>(bStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>(r * n) << 2);
    let i = 0;
    if (vec) {
      i = binaryVecRowI32(op, n, pa, aStep, pb, bStep, po);
      pa += <usize>(i * aStep) << 2;
      pb += <usize>(i * bStep) << 2;
    }
    for (; i < n; i++) {
      store<i32>(po + (<usize>i << 2), sbinI(op, load<i32>(pa), load<i32>(pb)));
      pa += da;
      pb += db;
    }
  }
}

@inline function sun(op: i32, x: f32): f32 {
  switch (op) {
    case NEG: return -x;
    case EXP: return Mathf.exp(x);
    case LOG: return Mathf.log(x);
    case RELU: return x > 0 || x != x ? x : 0;
    case SIGMOID: {
      if (x >= 0) return 1.0 / (1.0 + Mathf.exp(-x));
      const e = Mathf.exp(x);
      return e / (1.0 + e);
    }
    case TANH: return Mathf.tanh(x);
    case SQRT: return Mathf.sqrt(x);
    case RECIP: return 1.0 / x;
    case EXP2: return Mathf.exp2(x);
    case LOG2: return Mathf.log2(x);
    case SIN: return Mathf.sin(x);
    case ABS: return Mathf.abs(x);
    case SIGN: return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x;
    case FLOOR: return Mathf.floor(x);
    case CEIL: return Mathf.ceil(x);
    case ROUND: return nearest<f32>(x); // ties to even
    case TRUNC: return Mathf.trunc(x);
    case ERF: return <f32>erf64(x);
    // log1p, expm1, softplus, sinh, cosh, asinh, acosh: the f32x4 forms (vmath.ts) on one lane, so that
    // strided rows and the tails of contiguous ones give the same bits as their vector lanes.
    case LOG1P: return f32x4.extract_lane(vlog1p(f32x4.splat(x)), 0);
    case EXPM1: return f32x4.extract_lane(vexpm1(f32x4.splat(x)), 0);
    case SOFTPLUS: return f32x4.extract_lane(vsoftplus(f32x4.splat(x)), 0);
    case HARD_SWISH: return f32x4.extract_lane(vhardswish(f32x4.splat(x)), 0);
    case GELU: return x == -Infinity ? -0.0 : <f32>(0.5 * <f64>x * erfc64(-<f64>x * Math.SQRT1_2));
    case GELU_TANH: {
      const v = <f64>x;
      return x == -Infinity ? -0.0 : <f32>(v * sigmoid64(GELU_2C * (v + GELU_A * v * v * v)));
    }
    case SILU: return x == -Infinity ? -0.0 : <f32>(<f64>x * sigmoid64(x));
    // the other trigonometric and hyperbolic functions: AssemblyScript's float32 ports of musl (≤ 2.2 ulp)
    case TAN: return Mathf.tan(x);
    case ASIN: return Mathf.asin(x);
    case ACOS: return x == -1 ? <f32>Math.PI : Mathf.acos(x); // musl's acosf(−1) is 1 ulp below float32 π
    case ATAN: // musl's atanf past 2^26 (±Inf included) is 1 ulp below float32 π/2
      return Mathf.abs(x) >= 67108864 ? (x < 0 ? -<f32>(Math.PI / 2) : <f32>(Math.PI / 2)) : Mathf.atan(x);
    case SINH: return f32x4.extract_lane(vsinh(f32x4.splat(x)), 0);
    case COSH: return f32x4.extract_lane(vcosh(f32x4.splat(x)), 0);
    case ASINH: return f32x4.extract_lane(vasinh(f32x4.splat(x)), 0);
    case ACOSH: return f32x4.extract_lane(vacosh(f32x4.splat(x)), 0);
    case ATANH: return Mathf.abs(x) < 2.44140625e-4 ? x : Mathf.atanh(x); // musl's atanhf is 1 ulp off for some tiny x
    default: return Mathf.cos(x);
  }
}

@inline function vun(op: i32, v: v128): v128 {
  const zero = f32x4.splat(0);
  if (op == NEG) return f32x4.neg(v);
  if (op == RELU) return v128.bitselect(v, zero, v128.or(f32x4.gt(v, zero), f32x4.ne(v, v)));
  if (op == SQRT) return f32x4.sqrt(v);
  if (op == ABS) return f32x4.abs(v);
  if (op == SIGN) {
    const s = v128.or(v128.and(f32x4.gt(v, zero), f32x4.splat(1)), v128.and(f32x4.lt(v, zero), f32x4.splat(-1)));
    return v128.bitselect(v, s, f32x4.ne(v, v)); // NaN stays NaN
  }
  if (op == FLOOR) return f32x4.floor(v);
  if (op == CEIL) return f32x4.ceil(v);
  if (op == ROUND) return f32x4.nearest(v);
  if (op == TRUNC) return f32x4.trunc(v);
  if (op == LOG1P) return vlog1p(v);
  if (op == EXPM1) return vexpm1(v);
  if (op == SOFTPLUS) return vsoftplus(v);
  if (op == HARD_SWISH) return vhardswish(v);
  if (op == SINH) return vsinh(v);
  if (op == COSH) return vcosh(v);
  if (op == ASINH) return vasinh(v);
  if (op == ACOSH) return vacosh(v);
  return f32x4.div(f32x4.splat(1), v);
}

// Contiguous input: 8 lanes per step with `op` a constant after inlining; returns the elements done.
@inline function unaryDense(op: i32, n: i32, px: usize, po: usize): i32 {
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    v128.store(po + o, vun(op, v128.load(px + o)));
    v128.store(po + o, vun(op, v128.load(px + o, 16)), 16);
  }
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    v128.store(po + o, vun(op, v128.load(px + o)));
  }
  return i;
}

function unaryDenseF32(op: i32, n: i32, px: usize, po: usize): i32 {
  switch (op) {
    case NEG: return unaryDense(NEG, n, px, po);
    case RELU: return unaryDense(RELU, n, px, po);
    case SQRT: return unaryDense(SQRT, n, px, po);
    case RECIP: return unaryDense(RECIP, n, px, po);
    case ABS: return unaryDense(ABS, n, px, po);
    case SIGN: return unaryDense(SIGN, n, px, po);
    case FLOOR: return unaryDense(FLOOR, n, px, po);
    case CEIL: return unaryDense(CEIL, n, px, po);
    case ROUND: return unaryDense(ROUND, n, px, po);
    case TRUNC: return unaryDense(TRUNC, n, px, po);
    case LOG1P: return unaryDense(LOG1P, n, px, po);
    case EXPM1: return unaryDense(EXPM1, n, px, po);
    case SOFTPLUS: return unaryDense(SOFTPLUS, n, px, po);
    case HARD_SWISH: return unaryDense(HARD_SWISH, n, px, po);
    case SINH: return unaryDense(SINH, n, px, po);
    case COSH: return unaryDense(COSH, n, px, po);
    case ASINH: return unaryDense(ASINH, n, px, po);
    case ACOSH: return unaryDense(ACOSH, n, px, po);
    default: return 0;
  }
}

export function unaryF32(op: i32, n: i32, rows: i32, x: usize, xStarts: usize, xStep: i32, out: usize): void {
  const dx = <usize>(xStep << 2);
  for (let r = 0; r < rows; r++) {
    let px = x + (<usize>load<i32>(xStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>(r * n) << 2);
    let i = 0;
    if (xStep == 1) {
      i = unaryDenseF32(op, n, px, po);
      px += <usize>i << 2;
    }
    for (; i < n; i++) {
      store<f32>(po + (<usize>i << 2), sun(op, load<f32>(px)));
      px += dx;
    }
  }
}

@inline function sunI(op: i32, x: i32): i32 {
  if (op == NEG) return -x;
  if (op == ABS) return x < 0 ? -x : x; // |−2^31| wraps to −2^31
  return <i32>(x > 0) - <i32>(x < 0); // SIGN
}

@inline function vunI(op: i32, v: v128): v128 {
  if (op == NEG) return i32x4.neg(v);
  if (op == ABS) return i32x4.abs(v);
  const zero = i32x4.splat(0);
  return i32x4.sub(i32x4.lt_s(v, zero), i32x4.gt_s(v, zero)); // true lanes are −1: (−[x < 0]) − (−[x > 0])
}

// The int32 unary ops (neg, abs, sign: the op table's codes): contiguous rows 4 lanes at a time.
@inline function unaryRowsI32(op: i32, n: i32, rows: i32, x: usize, xStarts: usize, xStep: i32, out: usize): void {
  const dx = <usize>(xStep << 2);
  for (let r = 0; r < rows; r++) {
    let px = x + (<usize>load<i32>(xStarts + (<usize>r << 2)) << 2);
    const po = out + (<usize>(r * n) << 2);
    let i = 0;
    if (xStep == 1) {
      for (; i + 4 <= n; i += 4) v128.store(po + (<usize>i << 2), vunI(op, v128.load(px + (<usize>i << 2))));
      px += <usize>i << 2;
    }
    for (; i < n; i++) {
      store<i32>(po + (<usize>i << 2), sunI(op, load<i32>(px)));
      px += dx;
    }
  }
}

export function unaryI32(op: i32, n: i32, rows: i32, x: usize, xStarts: usize, xStep: i32, out: usize): void {
  if (op == NEG) unaryRowsI32(NEG, n, rows, x, xStarts, xStep, out);
  else if (op == ABS) unaryRowsI32(ABS, n, rows, x, xStarts, xStep, out);
  else unaryRowsI32(SIGN, n, rows, x, xStarts, xStep, out);
}
