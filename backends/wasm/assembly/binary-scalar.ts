// The scalar forms of the binary ops that have no f32x4/i32x4 one (elementwise.ts calls them per element):
// pow, the rounded divisions floorDiv and truncDiv, and the int32 shifts. Semantics: hal/src/ops/binary.ts
// and binary-int.ts.

// IEEE pow in f64, rounded once: exact wherever f32 holds the result. AssemblyScript's pow gives NaN
// for 1^NaN and (−1)^±Inf, which IEEE defines as 1.
@inline export function powF(x: f32, y: f32): f32 {
  if (x == 1 || (x == -1 && Mathf.abs(y) == Infinity)) return 1;
  return <f32>Math.pow(<f64>x, <f64>y);
}

// int32 x^y modulo 2^32 by squaring; y < 0: 1 for x = 1, ±1 for x = −1, else 0.
@inline export function powI(x: i32, y: i32): i32 {
  if (y < 0) return x == 1 ? 1 : x == -1 ? 1 - ((y & 1) << 1) : 0;
  let r = 1;
  for (let e = <u32>y; e != 0; e >>= 1) {
    if (e & 1) r *= x;
    x *= x;
  }
  return r;
}

// floor (floor = true) or trunc of the exact quotient x/y, rounded once to f32. The f32 remainder is
// exact, so (x − fmod(x, y))/y in f64 is within two roundings of the integer trunc(x/y) and rounds to it
// while |x/y| < 2^50; from 2^49 on, the rounding of the quotient itself is the result's. Special
// operands: x/±0 as IEEE division; floor: ±Inf // y = NaN, x // ±Inf = −1 where x ≠ 0 and the signs
// differ; trunc: ±Inf / finite = ±Inf; otherwise a zero result takes x/y's sign.
@inline export function divRoundedF(x: f32, y: f32, floor: bool): f32 {
  const xd = <f64>x, yd = <f64>y;
  const q = xd / yd;
  if (y == 0 || q != q) return <f32>q;
  if (Mathf.abs(x) == Infinity) return floor ? <f32>NaN : <f32>q;
  if (Mathf.abs(y) == Infinity) return floor && x != 0 && (x < 0) != (y < 0) ? -1 : <f32>(q * 0);
  const a = Math.abs(q);
  if (a >= 562949953421312.0) return <f32>q; // 2^49
  // q is within a·2^-53 of the exact quotient: a fraction farther than a·2^-50 from 0 and 1 rounds the
  // same either way (a zero keeps q's sign); only near integers is the (software) fmod needed.
  const k0 = floor ? Math.floor(q) : Math.trunc(q);
  const d = Math.abs(q - k0);
  const e = a * 8.881784197001252e-16;
  if (d > e && d < 1 - e) return <f32>k0;
  const r = x % y;
  let k = Math.round((xd - <f64>r) / yd);
  if (floor && r != 0 && (r < 0) != (y < 0)) k -= 1;
  return k == 0 ? <f32>(q * 0) : <f32>k;
}

// divRoundedF on 4 contiguous lanes: the float32 quotient q is within |q|·2^-24 of the exact one, so where
// it lies farther than |q|·2^-22 + 2^-23 from every integer, floor(q) (trunc(q)) is the exact quotient's
// (the same bits as divRoundedF). Vectors with a lane nearer an integer, or a special operand (those make
// the distance NaN or 0), take divRoundedF lane by lane. Returns the elements done (a multiple of 4).
export function divRoundedDense(floor: bool, n: i32, pa: usize, pb: usize, po: usize): i32 {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    const q = f32x4.div(v128.load(pa + o), v128.load(pb + o));
    const k = floor ? f32x4.floor(q) : f32x4.trunc(q);
    const d = f32x4.abs(f32x4.sub(q, k));
    const e = f32x4.add(f32x4.mul(f32x4.abs(q), f32x4.splat(2.384185791015625e-7)), f32x4.splat(1.1920928955078125e-7));
    if (i32x4.all_true(v128.and(f32x4.gt(d, e), f32x4.lt(d, f32x4.sub(f32x4.splat(1), e))))) {
      v128.store(po + o, k);
      continue;
    }
    for (let t: usize = 0; t < 16; t += 4)
      store<f32>(po + o + t, divRoundedF(load<f32>(pa + o + t), load<f32>(pb + o + t), floor));
  }
  return i;
}

// int32 floored division; x // 0 = 0, and −2^31 // −1 wraps to −2^31 (i32.div_s would trap).
@inline export function floorDivI(x: i32, y: i32): i32 {
  if (y == 0) return 0;
  if (y == -1) return -x;
  const q = x / y;
  return x % y != 0 && (x ^ y) < 0 ? q - 1 : q;
}

// int32 truncated division; x / 0 = 0, −2^31 / −1 = −2^31.
@inline export function truncDivI(x: i32, y: i32): i32 {
  return y == 0 ? 0 : y == -1 ? -x : x / y;
}

// x << s for counts in [0, 31], else 0 (i32.shl would take the count mod 32).
@inline export function shiftLeftI(x: i32, s: i32): i32 {
  return <u32>s <= 31 ? x << s : 0;
}

// Arithmetic x >> s for counts in [0, 31], else x >> 31 (0 or −1).
@inline export function shiftRightI(x: i32, s: i32): i32 {
  return x >> (<u32>s <= 31 ? s : 31);
}
