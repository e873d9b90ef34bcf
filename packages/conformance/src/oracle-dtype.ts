/**
 * The oracle's dtypes: how a float64 result is stored in each dtype, written independently of the HAL
 * (no code shared with hal/src/core/dtype.ts or any backend). float16 rounding is found by bisection over the
 * 31 744 finite float16 magnitudes (each decoded from its bits), then the nearer of the two neighbours,
 * ties to the even bit pattern; int8 and uint8 keep the integer modulo 2^8.
 */
import type { DType } from '@polyhal/hal';

/** The value of IEEE 754 binary16 bits `h` (positive patterns 0 ... 0x7bff here). */
function decode16(h: number): number {
  const e = h >> 10;
  const f = h & 1023;
  return e === 0 ? f / 16777216 : (1024 + f) * 2 ** (e - 25);
}

/** The float16 nearest to `v` (ties to even); ±Inf from 65520 (half-way to 2^16); NaN and ±0 kept. */
export function oRound16(v: number): number {
  if (Number.isNaN(v) || v === 0) return v;
  const a = Math.abs(v);
  let r: number;
  if (a >= 65520) r = Infinity;
  else {
    let lo = 0; // the largest pattern whose value is ≤ a
    let hi = 0x7bff;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (decode16(mid) <= a) lo = mid;
      else hi = mid - 1;
    }
    const down = decode16(lo);
    const up = lo === 0x7bff ? 65536 : decode16(lo + 1);
    r = a - down < up - a ? down : a - down > up - a ? up : lo % 2 === 0 ? down : up;
  }
  return v < 0 ? -r : r;
}

/** One float16 unit in the last place at `w` (a float16): 2^(e − 10) for |w| in [2^e, 2^(e+1)), 2^-24 below 2^-14. */
export function ulp16(w: number): number {
  const a = Math.abs(w);
  if (a < 2 ** -14) return 2 ** -24;
  let e = -14;
  while (2 ** (e + 1) <= a) e++;
  return 2 ** (e - 10);
}

/** An exact integer `v` modulo 2^8 in int8's range [−128, 127] or uint8's [0, 255]. */
function mod8(v: number, signed: boolean): number {
  const m = ((v % 256) + 256) % 256;
  return signed && m >= 128 ? m - 256 : m;
}

/**
 * A host number as a device array of `dtype` holds it (the rule of fromArray and full): float64 as it
 * is, float32 rounded to float32, float16 to float16; the integers truncated toward zero and wrapped
 * (NaN and ±Inf → 0); bool 0/1.
 */
export function oHostValue(dtype: DType, v: number): number {
  if (dtype === 'float64') return v;
  if (dtype === 'float32') return Math.fround(v);
  if (dtype === 'float16') return oRound16(v);
  if (dtype === 'bool') return v !== 0 ? 1 : 0;
  if (!Number.isFinite(v)) return 0;
  const t = Math.trunc(v);
  if (dtype === 'int8') return mod8(t, true);
  if (dtype === 'uint8') return mod8(t, false);
  const m = ((t % 2 ** 32) + 2 ** 32) % 2 ** 32; // int32: modulo 2^32
  return m >= 2 ** 31 ? m - 2 ** 32 : m;
}

/** An exact (or int32-wrapped) integer result stored in int8/uint8: modulo 2^8. Other dtypes unchanged. */
export function oStoreInt(dtype: DType, v: number): number {
  return dtype === 'int8' ? mod8(v, true) : dtype === 'uint8' ? mod8(v, false) : v;
}

/** The range [min, max] of an integer dtype. */
export function oIntRange(dtype: DType): [number, number] {
  return dtype === 'int8' ? [-128, 127] : dtype === 'uint8' ? [0, 255] : [-2147483648, 2147483647];
}

export const oIsFloat = (dtype: DType): boolean => dtype === 'float32' || dtype === 'float16' || dtype === 'float64';
export const oIsInt = (dtype: DType): boolean => dtype === 'int32' || dtype === 'int8' || dtype === 'uint8';
