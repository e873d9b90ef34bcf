/**
 * Conformance cases of floorDiv, truncDiv and the int32 shifts (hal/src/ops/binary-int.ts) beyond the
 * table's generated ones: float32 quotients at and next to integers (where the floor or trunc of the rounded
 * quotient is off by one), quotients past 2^24 whose floor is a float32 midpoint, signed zeros and infinite
 * divisors, the int32 edges with divisors 0 and −1, and shift counts outside [0, 31].
 */
import type { Case } from './cases.js';
import { SPECIAL } from './cases-util.js';

const f = Math.fround;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The float32 neighbour of finite nonzero x one ulp away from zero (up = true) or toward it. */
const step = (x: number, up: boolean): number => {
  f32[0] = x;
  u32[0] = u32[0]! + (up ? 1 : -1);
  return f32[0]!;
};

/** x = k·y rounded to float32 and its two neighbours, for quotients k from 1 to 2^23, both signs. */
function nearIntegers(): [number[], number[]] {
  const xs: number[] = [1, 0.7, 0.5, 2, 0.6, 0.3, 0.9].map(f);
  const ys: number[] = [0.1, 0.1, 0.1, 0.2, 0.2, 0.1, 0.3].map(f);
  for (const y of [0.1, -0.1, 0.3, 3, -7, 1e-3, 2.5e4, 1e-40]) {
    for (const k of [1, 2, 3, 10, 1000, 2 ** 20 + 1, 2 ** 23 - 1]) {
      for (const sign of [1, -1]) {
        const x = f(sign * k * f(y));
        for (const v of [x, step(x, true), step(x, false)]) {
          xs.push(v);
          ys.push(f(y));
        }
      }
    }
  }
  return [xs, ys];
}

/**
 * Quotients from 2^24 on whose floor (or trunc) is a float32 midpoint, q = m + 1/3 with m odd: the float32
 * rounding of floor(q) goes to the even neighbour, below q's own rounding (50331652 // 3 = 2^24, not
 * 2^24 + 2), a few such floors near 2^25 and 2^30 with 24-bit divisors, and larger quotients up to 2^100.
 */
function largeQuotients(): [number[], number[]] {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [x, y] of [
    [50331652, 3],
    [50331656, 3],
    [100663304, 3],
    [50331652, 6],
    [60738908, 1.590394377708435],
    [80108720, 1.3734816312789917],
    [2065376512, 1.4091936349868774],
    [1867570944, 1.3048306703567505],
    [2 ** 60, 3],
    [2 ** 100, 7],
    [3.4e38, 1e-45],
    [1e-45, 3.4e38],
    [16777215, 1.0000001],
  ] as const) {
    for (const [sx, sy] of [
      [1, 1],
      [-1, 1],
      [1, -1],
      [-1, -1],
    ] as const) {
      xs.push(f(sx * x));
      ys.push(f(sy * y));
    }
  }
  return [xs, ys];
}

const zx = [-0, 0, -6, 6, -0, 0, 6, -6, -3, 3, 0, -0, -0, 0, 1e-30, -1e-30, 5, -5, Infinity, -Infinity, 5, -0];
const zy = [3, 3, -3, -3, -3, -3, 3, 3, 3, -3, Infinity, Infinity, -Infinity, -Infinity, Infinity, -Infinity];
zy.push(Infinity, Infinity, 3, 3, 0, 0);

const INT_EDGES = [-2147483648, -2147483647, -65536, -7, -2, -1, 0, 1, 2, 7, 65536, 2147483646, 2147483647];
const COUNTS = [-2147483648, -32, -1, 0, 1, 5, 30, 31, 32, 33, 40, 2147483647];

export function divisionCases(): Case[] {
  const cases: Case[] = [];
  const pair = (id: string, op: string, [xs, ys]: [number[], number[]], dtype: 'float32' | 'int32'): Case => ({
    id: `${op}/${dtype}/${id}`,
    kind: 'binary',
    op,
    dtype,
    inputs: [
      { shape: [xs.length], gen: SPECIAL, values: xs, dtype },
      { shape: [ys.length], gen: SPECIAL, values: ys, dtype },
    ],
  });
  const outer = (op: string, xs: number[], ys: number[]): Case => ({
    id: `${op}/int32/edges`,
    kind: 'binary',
    op,
    dtype: 'int32',
    inputs: [
      { shape: [xs.length, 1], gen: SPECIAL, values: xs, dtype: 'int32' },
      { shape: [1, ys.length], gen: SPECIAL, values: ys, dtype: 'int32' },
    ],
  });
  for (const op of ['floorDiv', 'truncDiv']) {
    cases.push(pair('near-integers', op, nearIntegers(), 'float32'));
    cases.push(pair('quotient-2^24..2^100', op, largeQuotients(), 'float32'));
    cases.push(pair('signed-zeros', op, [zx.map(f), zy.map(f)], 'float32'));
    cases.push(outer(op, INT_EDGES, INT_EDGES));
  }
  for (const op of ['bitShiftLeft', 'bitShiftRight']) cases.push(outer(op, INT_EDGES, COUNTS));
  return cases;
}
