import { describe, expect, test } from '@jest/globals';
import {
  type ComputeBackend,
  type DType,
  DTypeError,
  float16Bits,
  float16FromBits,
  type HostArray,
  type NDArray,
  roundFloat16,
  UnsupportedOpError,
} from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

// The narrow dtypes int8, uint8 and float16 (hal/src/core/dtype.ts, contract/narrow.ts): float16 rounding against an
// exhaustive independent check, host conversions, the casts' saturation and wrapping rules on edge
// values, wrapping arithmetic, and every backend (cpu, wasm, webgpu, reference) bit for bit on casts
// of random float32 bit patterns.

const fx = crossBackends();
const all = (): [string, ComputeBackend][] => [['cpu', fx.cpu], ...Object.entries(fx.backends)];

const words = new Uint32Array(1);
const f32 = new Float32Array(words.buffer);
const fromBits = (u: number): number => {
  words[0] = u >>> 0;
  return f32[0]!;
};

/** Independent float16 rounding: the nearest of the two float16 neighbours found by bisection on the bits. */
function slowRound16(v: number): number {
  if (Number.isNaN(v)) return v;
  const a = Math.abs(v);
  if (a >= 65520) return v > 0 ? Infinity : -Infinity;
  // the largest float16 ≤ a, by binary search over the positive finite bit patterns 0 .. 0x7bff
  let lo = 0;
  let hi = 0x7bff;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (float16FromBits(mid) <= a) lo = mid;
    else hi = mid - 1;
  }
  const down = float16FromBits(lo);
  const up = lo === 0x7bff ? 65536 : float16FromBits(lo + 1);
  const r = a - down < up - a ? down : a - down > up - a ? up : lo % 2 === 0 ? down : up;
  return v < 0 || Object.is(v, -0) ? -r : r;
}

describe('roundFloat16 and the float16 bits', () => {
  test('every float16 is fixed; every midpoint rounds to even; its float64 neighbours round to the nearer', () => {
    const bad: string[] = [];
    const check = (what: string, got: number, want: number): void => {
      if (!Object.is(got, want)) bad.push(`${what}: got ${got}, want ${want}`);
    };
    for (let h = 0; h < 0x7c00; h++) {
      const v = float16FromBits(h);
      check(`${v}`, roundFloat16(v), v);
      check(`${-v}`, roundFloat16(-v), -v);
      check(`bits of ${v}`, float16Bits(v), h);
      check(`bits of ${-v}`, float16Bits(-v), h | 0x8000);
      const next = h === 0x7bff ? 65536 : float16FromBits(h + 1);
      const mid = (v + next) / 2;
      const even = h % 2 === 0 ? v : next;
      check(`midpoint ${mid}`, roundFloat16(mid), h === 0x7bff ? Infinity : even);
      const eps = mid * 2 ** -40;
      check(`below ${mid}`, roundFloat16(mid - eps), v);
      check(`above ${mid}`, roundFloat16(mid + eps), h === 0x7bff ? Infinity : next);
    }
    expect(bad.slice(0, 5)).toEqual([]);
  });

  test('special values and the edges of the range', () => {
    expect(roundFloat16(Number.NaN)).toBeNaN();
    expect(roundFloat16(Infinity)).toBe(Infinity);
    expect(roundFloat16(-Infinity)).toBe(-Infinity);
    expect(Object.is(roundFloat16(-0), -0)).toBe(true);
    expect(roundFloat16(65504)).toBe(65504);
    expect(roundFloat16(65519.99)).toBe(65504);
    expect(roundFloat16(65520)).toBe(Infinity);
    expect(roundFloat16(-65520)).toBe(-Infinity);
    expect(roundFloat16(2 ** -24)).toBe(2 ** -24);
    expect(roundFloat16(2 ** -25)).toBe(0); // a tie between 0 and 2^-24: to even
    expect(Object.is(roundFloat16(-(2 ** -25)), -0)).toBe(true);
    expect(roundFloat16(1.5 * 2 ** -24)).toBe(2 ** -23); // a tie between 2^-24 and 2^-23: to even
    expect(roundFloat16(2 ** -25 + 2 ** -40)).toBe(2 ** -24);
    expect(roundFloat16(1e-45)).toBe(0);
    expect(roundFloat16(0.1)).toBe(0.0999755859375);
    expect(float16Bits(Number.NaN)).toBe(0x7e00);
    expect(float16Bits(Infinity)).toBe(0x7c00);
    expect(float16Bits(-Infinity)).toBe(0xfc00);
    expect(float16FromBits(0x7e00)).toBeNaN();
  });

  test('random float32 bit patterns round as the bisection oracle rounds them', () => {
    let s = 12345;
    const bad: number[] = [];
    for (let i = 0; i < 20000; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const v = fromBits(s);
      const want = slowRound16(v);
      const got = roundFloat16(v);
      if (!(Number.isNaN(want) ? Number.isNaN(got) : Object.is(got, want))) bad.push(v);
    }
    expect(bad).toEqual([]);
  });
});

/** float32 bit patterns that stress the float16 rounding: every region, midpoints and their neighbours. */
function f16StressValues(): Float32Array {
  const out: number[] = [Number.NaN, Infinity, -Infinity, 0, -0, 65504, 65519, 65520, 65536, 1e10, -65520];
  out.push(2 ** -14, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -26, 1e-45, -1e-45, 1.17549435e-38, 0.1, -0.1, 1 / 3);
  for (let h = 0; h < 0x7c00; h += 7) {
    const v = float16FromBits(h);
    const next = float16FromBits(h + 1);
    const mid = Math.fround((v + next) / 2);
    f32[0] = mid;
    const bits = words[0]!;
    out.push(v, -v, mid, -mid, fromBits(bits + 1), fromBits(bits - 1));
  }
  let s = 99;
  for (let i = 0; i < 4000; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(fromBits(s));
  }
  return Float32Array.from(out);
}

async function castOn(be: ComputeBackend, data: HostArray, from: DType, to: DType): Promise<HostArray> {
  const x = be.fromArray(data, [data.length], from);
  const y = be.cast(x, to);
  try {
    return await be.read(y);
  } finally {
    be.free(x);
    be.free(y);
  }
}

const same = (got: ArrayLike<number>, want: ArrayLike<number>): void => {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i]!)) {
      if (!Number.isNaN(got[i]!)) throw new Error(`element ${i}: got ${got[i]}, want NaN`);
    } else if (!Object.is(got[i], want[i])) throw new Error(`element ${i}: got ${got[i]}, want ${want[i]}`);
  }
};

describe('casts on every backend', () => {
  test('float32 → float16: round to nearest even, overflow to ±Inf, subnormals, −0 (bit for bit)', async () => {
    const data = f16StressValues();
    const want = Array.from(data, slowRound16);
    for (const [name, be] of all()) {
      const got = await castOn(be, data, 'float32', 'float16');
      expect(got).toBeInstanceOf(Float32Array);
      try {
        same(got, want);
      } catch (e) {
        throw new Error(`${name}: ${(e as Error).message}`);
      }
    }
  });

  test('int32 → float16 and float16 → float32, int32, int8, uint8', async () => {
    const ints = Int32Array.of(0, 1, -1, 2049, 2051, 65504, 65519, 65520, -65521, 2147483647, -2147483648, 4097);
    const wantF16 = Array.from(ints, (v) => slowRound16(v));
    const halves = Float32Array.of(0.5, -1.5, 2.5, 65504, -65504, Number.NaN, Infinity, -Infinity, 200.75, -0);
    for (const [name, be] of all()) {
      const cases: [HostArray, DType, DType, number[]][] = [
        [ints, 'int32', 'float16', wantF16],
        [halves, 'float16', 'float32', Array.from(halves)],
        [halves, 'float16', 'int32', [0, -1, 2, 65504, -65504, 0, 2147483647, -2147483648, 200, 0]],
        [halves, 'float16', 'int8', [0, -1, 2, 127, -128, 0, 127, -128, 127, 0]],
        [halves, 'float16', 'uint8', [0, 0, 2, 255, 0, 0, 255, 0, 200, 0]],
      ];
      for (const [data, from, to, want] of cases) {
        const got = await castOn(be, data, from, to);
        try {
          same(got, want);
        } catch (e) {
          throw new Error(`${name} ${from} → ${to}: ${(e as Error).message}`);
        }
      }
    }
  });

  test('float → int8/uint8 saturates (NaN → 0); int → int8/uint8 wraps modulo 2^8', async () => {
    const floats = Float32Array.of(0, -0, 0.9, -0.9, 127.9, 128, -128.9, -129, 255.5, 256, 1e10, -1e10, Number.NaN);
    const ints = Int32Array.of(0, 127, 128, -128, -129, 255, 256, -1, 511, 2147483647, -2147483648, 300, -300);
    const wrap8 = (v: number): number => (((v % 256) + 384) % 256) - 128;
    const wrapU8 = (v: number): number => ((v % 256) + 256) % 256;
    for (const [name, be] of all()) {
      const cases: [HostArray, DType, DType, number[]][] = [
        [floats, 'float32', 'int8', [0, 0, 0, 0, 127, 127, -128, -128, 127, 127, 127, -128, 0]],
        [floats, 'float32', 'uint8', [0, 0, 0, 0, 127, 128, 0, 0, 255, 255, 255, 0, 0]],
        [ints, 'int32', 'int8', Array.from(ints, wrap8)],
        [ints, 'int32', 'uint8', Array.from(ints, wrapU8)],
        [Int8Array.of(-128, -1, 0, 127), 'int8', 'uint8', [128, 255, 0, 127]],
        [Uint8Array.of(255, 128, 127, 0), 'uint8', 'int8', [-1, -128, 127, 0]],
        [Int8Array.of(-128, -1, 0, 127), 'int8', 'int32', [-128, -1, 0, 127]],
        [Uint8Array.of(255, 128, 0), 'uint8', 'float32', [255, 128, 0]],
        [Int8Array.of(-128, -1, 0, 127), 'int8', 'float16', [-128, -1, 0, 127]],
        [Int8Array.of(-128, 0, 5), 'int8', 'bool', [1, 0, 1]],
        [Uint8Array.of(1, 0, 1), 'bool', 'uint8', [1, 0, 1]],
        [Float32Array.of(0, -0, Number.NaN, 1e-5), 'float16', 'bool', [0, 0, 1, 1]],
      ];
      for (const [data, from, to, want] of cases) {
        const got = await castOn(be, data, from, to);
        try {
          same(got, want);
        } catch (e) {
          throw new Error(`${name} ${from} → ${to}: ${(e as Error).message}`);
        }
      }
    }
  });
});

describe('host arrays', () => {
  test('read returns Int8Array, Uint8Array and Float32Array; host numbers convert as the typed arrays do', async () => {
    for (const [name, be] of all()) {
      const a = be.fromArray([1, -1, 127, 128, 255, 256, -129, 3.9, -3.9, Number.NaN], [10], 'int8');
      const b = be.fromArray([1, -1, 127, 128, 255, 256, -129, 3.9, -3.9, Number.NaN], [10], 'uint8');
      const c = be.fromArray([0.1, 65504, 65520, 1e-8, -0, 3], [6], 'float16');
      const d = be.fromArray(Int8Array.of(-5, 6), [2]);
      const e = be.full([2], 300, 'int8');
      const f = be.full([2], 0.1, 'float16');
      try {
        const [ra, rb, rc, rd, re, rf] = await Promise.all([a, b, c, d, e, f].map((x) => be.read(x)));
        expect(ra).toBeInstanceOf(Int8Array);
        expect(rb).toBeInstanceOf(Uint8Array);
        expect(rc).toBeInstanceOf(Float32Array);
        expect(d.dtype).toBe('int8');
        expect([...ra!]).toEqual([...Int8Array.from([1, -1, 127, 128, 255, 256, -129, 3.9, -3.9, Number.NaN])]);
        expect([...rb!]).toEqual([...Uint8Array.from([1, -1, 127, 128, 255, 256, -129, 3.9, -3.9, Number.NaN])]);
        expect([...rc!]).toEqual([roundFloat16(0.1), 65504, Infinity, roundFloat16(1e-8), -0, 3]);
        expect([...rd!]).toEqual([-5, 6]);
        expect([...re!]).toEqual([44, 44]);
        expect([...rf!]).toEqual([0.0999755859375, 0.0999755859375]);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      } finally {
        for (const x of [a, b, c, d, e, f]) be.free(x);
      }
    }
  });

  test('write takes the dtype host array (float16 values rounded) and refuses others with DTypeError', async () => {
    const be = fx.cpu;
    const x = be.full([3], 0, 'float16');
    const y = be.full([2], 0, 'uint8');
    try {
      be.write(x.buffer, Float32Array.of(0.1, 70000, 1));
      expect([...(await be.read(x))]).toEqual([0.0999755859375, Infinity, 1]);
      expect(() => be.write(y.buffer, Int8Array.of(1, 2) as unknown as Uint8Array)).toThrow(DTypeError);
      be.write(y.buffer, Uint8Array.of(200, 7));
      expect([...(await be.read(y))]).toEqual([200, 7]);
    } finally {
      be.free(x);
      be.free(y);
    }
  });
});

const wrap8 = (v: number): number => (v << 24) >> 24;
const wrapU8 = (v: number): number => v & 255;

describe('arithmetic in the narrow dtypes', () => {
  test('int8 and uint8 wrap modulo 2^8 (add, sub, mul, neg, abs, shifts, floorDiv, mod, bitwiseNot, sum)', async () => {
    const xs = [-128, -127, -100, -2, -1, 0, 1, 2, 3, 64, 100, 127];
    const ys = [127, 1, -1, 3, -128, 2, 100, -2, 0, 7, -3, 64];
    const us = [0, 1, 2, 3, 100, 127, 128, 200, 254, 255, 5, 9];
    const vs = [255, 255, 1, 200, 3, 2, 0, 100, 2, 255, 7, 1];
    const floorDiv = (a: number, b: number): number => (b === 0 ? 0 : Math.floor(a / b));
    const mod = (a: number, b: number): number => (b === 0 ? 0 : a - b * Math.floor(a / b));
    for (const [name, be] of all()) {
      for (const [dtype, a, b, w] of [
        ['int8', xs, ys, wrap8],
        ['uint8', us, vs, wrapU8],
      ] as const) {
        const A = be.fromArray(a, [a.length], dtype);
        const B = be.fromArray(b, [b.length], dtype);
        const checks: [string, () => NDArray, number[]][] = [
          ['add', () => be.add(A, B), a.map((x, i) => w(x + b[i]!))],
          ['sub', () => be.sub(A, B), a.map((x, i) => w(x - b[i]!))],
          ['mul', () => be.mul(A, B), a.map((x, i) => w(x * b[i]!))],
          ['neg', () => be.neg(A), a.map((x) => w(-x))],
          ['abs', () => be.abs(A), a.map((x) => w(Math.abs(x)))],
          ['maximum', () => be.maximum(A, B), a.map((x, i) => Math.max(x, b[i]!))],
          ['floorDiv', () => be.floorDiv(A, B), a.map((x, i) => w(floorDiv(x, b[i]!)))],
          ['mod', () => be.mod(A, B), a.map((x, i) => mod(x, b[i]!))],
          ['bitShiftLeft 3', () => be.bitShiftLeft(A, 3), a.map((x) => w(x * 8))],
          ['bitShiftRight 2', () => be.bitShiftRight(A, 2), a.map((x) => Math.floor(x / 4))],
          ['bitwiseNot', () => be.bitwiseNot(A), a.map((x) => w(~x))],
          ['add 300', () => be.add(A, 300), a.map((x) => w(x + 300))],
          ['sum', () => be.sum(A), [w(a.reduce((p, x) => p + x, 0))]],
          ['prod', () => be.prod(A), [w(Number(a.reduce((p, x) => (p * BigInt(x)) % 256n, 1n)))]],
          ['max', () => be.max(A), [Math.max(...a)]],
        ];
        try {
          for (const [what, run, want] of checks) {
            const y = run();
            try {
              expect(y.dtype).toBe(dtype);
              const got = [...(await be.read(y))];
              if (got.join() !== want.join())
                throw new Error(`${dtype} ${what}: got ${got.join(', ')}, want ${want.join(', ')}`);
            } finally {
              be.free(y);
            }
          }
        } catch (err) {
          throw new Error(`${name}: ${(err as Error).message}`);
        } finally {
          be.free(A);
          be.free(B);
        }
      }
    }
  });

  test('float16 results are rounded: add, mul, div and sqrt correctly; sum rounded once', async () => {
    let s = 7;
    const rnd = (): number => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    const a = Array.from({ length: 257 }, () => roundFloat16((rnd() - 0.5) * 200));
    const b = Array.from({ length: 257 }, () => roundFloat16((rnd() - 0.5) * 3));
    a.push(65504, 2048, 1, Number.NaN, Infinity);
    b.push(65504, 1, 2 ** -11, 1, -Infinity);
    for (const [name, be] of all()) {
      const A = be.fromArray(a, [a.length], 'float16');
      const B = be.fromArray(b, [b.length], 'float16');
      const abs = be.abs(B);
      const checks: [string, () => NDArray, number[]][] = [
        ['add', () => be.add(A, B), a.map((x, i) => roundFloat16(x + b[i]!))],
        ['mul', () => be.mul(A, B), a.map((x, i) => roundFloat16(x * b[i]!))],
        ['div', () => be.div(A, B), a.map((x, i) => roundFloat16(x / b[i]!))],
        ['sqrt', () => be.sqrt(abs), b.map((x) => roundFloat16(Math.sqrt(Math.abs(x))))],
        ['sum', () => be.sum(abs), [roundFloat16(Math.fround(b.reduce((p, x) => p + Math.abs(x), 0)))]],
      ];
      try {
        for (const [what, run, want] of checks) {
          const y = run();
          try {
            expect(y.dtype).toBe('float16');
            const got = await be.read(y);
            // webgpu's division is x·(1/y) within 2.5 ulp of float32: one float16 rounding may differ
            const tol = what === 'div' && name === 'webgpu' ? 1 : 0;
            for (let i = 0; i < want.length; i++) {
              const g = got[i]!;
              const w = want[i]!;
              if (Number.isNaN(w) ? Number.isNaN(g) : g === w) continue;
              const ulp = 2 ** (Math.floor(Math.log2(Math.abs(w))) - 10);
              if (Math.abs(g - w) <= tol * ulp) continue;
              throw new Error(`float16 ${what}[${i}]: got ${g}, want ${w}`);
            }
          } finally {
            be.free(y);
          }
        }
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      } finally {
        for (const x of [A, B, abs]) be.free(x);
      }
    }
  });

  test('comparisons, isnan/isinf/isfinite, where, gather fill, pad and concat keep the narrow dtypes', async () => {
    for (const [name, be] of all()) {
      const h = be.fromArray([1, Number.NaN, -Infinity, 0.5], [4], 'float16');
      const u = be.fromArray([3, 250, 7], [3], 'uint8');
      const i8 = be.fromArray([-3, 100, 7], [3], 'int8');
      const idx = be.fromArray(Int32Array.of(2, 5, -1, -9), [4]);
      const outs: NDArray[] = [];
      const read = async (y: NDArray): Promise<number[]> => {
        outs.push(y);
        return [...(await be.read(y))];
      };
      try {
        expect(await read(be.less(h, 0.75))).toEqual([0, 0, 1, 1]);
        expect(await read(be.isnan(h))).toEqual([0, 1, 0, 0]);
        expect(await read(be.isinf(h))).toEqual([0, 0, 1, 0]);
        expect(await read(be.greater(u, 200))).toEqual([0, 1, 0]);
        expect(await read(be.gather(u, idx))).toEqual([7, 255, 7, 255]);
        expect(await read(be.gather(i8, idx))).toEqual([7, -128, 7, -128]);
        expect(await read(be.gather(h, idx))).toEqual([-Infinity, Number.NaN, 0.5, Number.NaN]);
        expect(await read(be.pad(u, [[1, 1]], 256 + 9))).toEqual([9, 3, 250, 7, 9]);
        expect(await read(be.pad(h, [[0, 1]], 0.1))).toEqual([1, Number.NaN, -Infinity, 0.5, 0.0999755859375]);
        const small = be.less(u, 5);
        outs.push(small);
        expect(await read(be.where(small, u, 300))).toEqual([3, 44, 44]);
        expect(await read(be.concat([i8, i8], 0))).toEqual([-3, 100, 7, -3, 100, 7]);
        const y = be.flip(i8, [0]); // a view of i8
        expect(y.dtype).toBe('int8');
        expect([...(await be.read(y))]).toEqual([7, 100, -3]);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      } finally {
        for (const x of [h, u, i8, idx, ...outs]) be.free(x);
      }
    }
  });

  test('ops outside the narrow dtypes throw UnsupportedOpError naming the dtype', () => {
    const be = fx.cpu;
    const h = be.fromArray([1, 2, 3, 4], [2, 2], 'float16');
    const u = be.fromArray([1, 2], [2], 'uint8');
    try {
      expect(() => be.bitwiseAnd(h, h)).toThrow(/float16/);
      expect(() => be.exp(u)).toThrow(/uint8/);
      expect(() => be.logicalAnd(u, u)).toThrow(UnsupportedOpError);
      expect(() => be.bitwiseAnd(h, h)).toThrow(UnsupportedOpError);
      expect(() => be.add(h, u)).toThrow(DTypeError);
    } finally {
      be.free(h);
      be.free(u);
    }
  });
});
