import { describe, expect, test } from '@jest/globals';
import { capabilitiesOf, type ComputeBackend, UNARY_OP_DEFS, UNARY_OPS, unaryTakes } from '@polyhal/hal';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';

// The special-value rules and exactness claims the op table states for sign, the rounding ops, pow,
// minimum, the smooth activations and the trigonometric and hyperbolic functions, checked value by value
// on every backend (the conformance suite compares against the float64 oracle under a tolerance; these
// are the claims that must hold exactly).

/** x^n for integer x and n when float32 holds it exactly (odd part < 2^24, within the range), else undefined. */
function exactPow(x: number, n: number): number | undefined {
  if (n === 0 || x === 1) return 1;
  if (x === 0) return n > 0 ? 0 : undefined;
  if (n < 0) {
    // 1/x^|n| is a float32 only for x = ±2^k
    const k = Math.log2(Math.abs(x));
    if (!Number.isInteger(k) || k * -n < -149) return undefined;
    return (x < 0 && n % 2 !== 0 ? -1 : 1) * 2 ** (k * n);
  }
  let v = BigInt(x) ** BigInt(n);
  const neg = v < 0n;
  if (neg) v = -v;
  let twos = 0;
  while (v % 2n === 0n) {
    v /= 2n;
    twos++;
  }
  if (v >= 2n ** 24n || twos + v.toString(2).length > 128) return undefined;
  return (neg ? -1 : 1) * Number(v) * 2 ** twos;
}

const factories: Record<string, () => Promise<ComputeBackend>> = {
  ...REPO_BACKENDS,
  reference: async () => new ReferenceBackend(),
};

for (const [name, factory] of Object.entries(factories)) {
  describe(`elementwise special values and exactness on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => (be = b));

    // WGSL lets an implementation ignore the sign of a zero: there, −0 and 0 compare equal.
    const zeros = (v: number): number => (v === 0 && capabilitiesOf(be!).arithmetic === 'wgsl' ? 0 : v);
    const unary = async (op: string, xs: number[], dtype: 'float32' | 'int32' = 'float32'): Promise<number[]> => {
      const x = be!.fromArray(xs, [xs.length], dtype);
      const y = be!.unary(op as never, x);
      const out = Array.from(await be!.read(y), zeros);
      be!.free(x);
      be!.free(y);
      return out;
    };
    const binary = async (op: string, as: number[], bs: number[], dtype: 'float32' | 'int32' = 'float32') => {
      const a = be!.fromArray(as, [as.length], dtype);
      const b = be!.fromArray(bs, [bs.length], dtype);
      const y = be!.binary(op as never, a, b);
      const out = Array.from(await be!.read(y), zeros);
      for (const t of [a, b, y]) be!.free(t);
      return out;
    };
    const want = (vs: number[]): number[] => vs.map(zeros);

    test('pow of integers is exact wherever float32 holds the result', async () => {
      if (!be) return;
      const xs: number[] = [];
      const ys: number[] = [];
      const want: number[] = [];
      const pairs: [number, number][] = [];
      for (let x = -16; x <= 16; x++) for (let n = -16; n <= 40; n++) pairs.push([x, n]);
      pairs.push([3, 15], [-7, 8], [5, 10], [12, 12], [2, 127], [2, -149], [-2, -149], [6, 11], [24, 6], [1000, 5]);
      for (const [x, n] of pairs) {
        const v = exactPow(x, n);
        if (v === undefined) continue;
        xs.push(x);
        ys.push(n);
        want.push(v);
      }
      expect(want.length).toBeGreaterThan(700);
      const got = await binary('pow', xs, ys);
      const wrong = got.flatMap((g, i) => (g === want[i] ? [] : [`${xs[i]}^${ys[i]} = ${g}, not ${want[i]}`]));
      expect(wrong).toEqual([]);
    });

    test("pow's IEEE special values", async () => {
      if (!be) return;
      const inf = Infinity;
      const cases: [number, number, number][] = [
        [1, NaN, 1],
        [NaN, 0, 1],
        [NaN, -0, 1],
        [-1, inf, 1],
        [-1, -inf, 1],
        [-0, -3, -inf],
        [0, -3, inf],
        [-0, -2, inf],
        [-0, 3, -0],
        [-0, 0.5, 0],
        [0, -inf, inf],
        [0.5, inf, 0],
        [0.5, -inf, inf],
        [2, -inf, 0],
        [-inf, -3, -0],
        [-inf, 3, -inf],
        [-inf, 2, inf],
        [-inf, 0.5, inf],
        [-8, 1 / 3, NaN],
        [-2, 3, -8],
        [-2, 127, -(2 ** 127)],
        [-2, 129, -inf], // overflow keeps the sign of an odd power
        [-1, 16777215, -1], // the largest odd float32 exponent
        [2, 200, inf],
        [2, -200, 0],
        [NaN, 1, NaN],
        [1.5, NaN, NaN],
      ];
      const got = await binary(
        'pow',
        cases.map((c) => c[0]),
        cases.map((c) => Math.fround(c[1])),
      );
      cases.forEach(([x, y, w], i) => expect([x, y, got[i]]).toEqual([x, y, zeros(w)]));
    });

    test('pow on int32 wraps modulo 2^32; negative exponents follow the integer rule', async () => {
      if (!be) return;
      const xs = [3, -2, 7, 2, 0, 1, -1, -1, 5, 0, -3];
      const ys = [40, 31, 13, 32, 0, -5, -3, -4, -1, -2, 2];
      const want = xs.map((x, i) => {
        const n = ys[i]!;
        if (n < 0) return x === 1 ? 1 : x === -1 ? (n % 2 === 0 ? 1 : -1) : 0;
        return Number(BigInt.asIntN(32, BigInt(x) ** BigInt(n)));
      });
      expect(await binary('pow', xs, ys, 'int32')).toEqual(want);
    });

    test('round is half to even; floor, ceil, trunc and sign keep their rules at the edges', async () => {
      if (!be) return;
      const xs = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 8388607.5, 4194304.5, 16777216, -7.5];
      expect(await unary('round', xs)).toEqual(want([0, 2, 2, -0, -2, -2, 0, -0, 8388608, 4194304, 16777216, -8]));
      expect(await unary('floor', [-0.5, 0.5, -0, 8388607.5, -1e-30])).toEqual(want([-1, 0, -0, 8388607, -1]));
      expect(await unary('ceil', [-0.5, 0.5, 8388607.5, 1e-30])).toEqual(want([-0, 1, 8388608, 1]));
      expect(await unary('trunc', [-0.7, 0.7, -8388607.5, 3.4e38])).toEqual(
        want([-0, 0, -8388607, Math.fround(3.4e38)]),
      );
      const s = await unary('sign', [0, -0, 3, -1e-30, Infinity, -Infinity, NaN]);
      expect(s.slice(0, 6).map((v) => v + 0)).toEqual([0, 0, 1, -1, 1, -1]);
      expect(s[6]).toBeNaN();
    });

    test('int32 sign and abs (|−2^31| wraps to −2^31), int32 minimum', async () => {
      if (!be) return;
      const xs = [-2147483648, -5, 0, 7, 2147483647];
      expect(await unary('sign', xs, 'int32')).toEqual([-1, -1, 0, 1, 1]);
      expect(await unary('abs', xs, 'int32')).toEqual([-2147483648, 5, 0, 7, 2147483647]);
      expect(await binary('minimum', xs, [0, 0, 0, 0, 0], 'int32')).toEqual([-2147483648, -5, 0, 0, 0]);
    });

    test('minimum propagates NaN from either side', async () => {
      if (!be) return;
      const got = await binary('minimum', [NaN, 1, -Infinity, 2], [1, NaN, 0, -3]);
      expect(got[0]).toBeNaN();
      expect(got[1]).toBeNaN();
      expect(got.slice(2)).toEqual([-Infinity, -3]);
    });

    test('activations at the ends: limits, no overflow, tiny arguments', async () => {
      if (!be) return;
      const at = [-Infinity, Infinity, 100, -200, 1e-10];
      for (const op of ['gelu', 'geluTanh', 'silu'])
        expect([op, ...(await unary(op, at)).slice(0, 4)]).toEqual([op, ...want([-0, Infinity, 100, -0])]);
      expect(await unary('softplus', [-Infinity, Infinity, 100, 1000])).toEqual([0, Infinity, 100, 1000]);
      expect(await unary('erf', [-Infinity, Infinity, -0, 10])).toEqual(want([-1, 1, -0, 1]));
      for (const [op, x] of [
        ['log1p', 1e-10],
        ['expm1', 1e-10],
        ['log1p', -3e-9],
        ['expm1', -3e-9],
        ['erf', 1e-20],
      ] as const) {
        const [got] = await unary(op, [x]);
        const want = op === 'erf' ? (2 / Math.sqrt(Math.PI)) * Math.fround(x) : Math.fround(x);
        expect(Math.abs(got! - want)).toBeLessThanOrEqual(2.4e-7 * Math.abs(want));
      }
      expect(await unary('log1p', [-1, Infinity])).toEqual([-Infinity, Infinity]);
      expect((await unary('log1p', [-2]))[0]).toBeNaN();
      expect(await unary('expm1', [-Infinity, Infinity, -100])).toEqual([-1, Infinity, -1]);
    });

    test('trigonometric and hyperbolic functions: poles, domain errors, overflow, limits, tiny arguments', async () => {
      if (!be) return;
      const inf = Infinity;
      const [pi2, pi] = [Math.fround(Math.PI / 2), Math.fround(Math.PI)];
      expect(await unary('tan', [-0, inf, -inf])).toEqual(want([-0, NaN, NaN]));
      expect(await unary('asin', [1, -1, -0, 1.0000001, -2, inf])).toEqual(want([pi2, -pi2, -0, NaN, NaN, NaN]));
      expect(await unary('acos', [1, -1, 1.0000001, -inf])).toEqual([0, pi, NaN, NaN]);
      expect(await unary('atan', [inf, -inf, -0])).toEqual(want([pi2, -pi2, -0]));
      // sinh and cosh overflow past ~89.42, where the result does, not at 88.72 where e^x does
      expect(await unary('sinh', [inf, -inf, -0, 89.5, -89.5])).toEqual(want([inf, -inf, -0, inf, -inf]));
      expect(await unary('cosh', [inf, -inf, -0, 89.5, -89.5])).toEqual([inf, inf, 1, inf, inf]);
      expect(await unary('asinh', [inf, -inf, -0])).toEqual(want([inf, -inf, -0]));
      expect(await unary('acosh', [1, inf, 0.99999994, -inf, -1])).toEqual([0, inf, NaN, NaN, NaN]);
      expect(await unary('atanh', [1, -1, -0, 1.0000001, -inf])).toEqual(want([inf, -inf, -0, NaN, NaN]));
      // Finite near the ends of the range: within the table's 4 ulp of the float64 reference.
      for (const [op, x] of [
        ['sinh', 89.4],
        ['sinh', -89.4],
        ['cosh', 89.4],
        ['cosh', -88.8],
        ['asinh', 3.4e38],
        ['asinh', -3.4e38],
        ['acosh', 3.4e38],
        ['tan', Math.fround(Math.PI / 2)],
        ['tan', 1000],
        ['atanh', 0.99999994],
        ['acosh', 1.0000001],
      ] as const) {
        const [got] = await unary(op, [x]);
        const w = Math[op](Math.fround(x));
        expect([op, x, Math.abs(got! - w) <= 4.8e-7 * Math.abs(w)]).toEqual([op, x, true]);
      }
      // Odd functions at a tiny x: x itself (the next term of each series is below half an ulp).
      for (const op of ['tan', 'asin', 'atan', 'sinh', 'asinh', 'atanh'])
        expect([op, ...(await unary(op, [1e-20, -3e-8]))]).toEqual([op, Math.fround(1e-20), Math.fround(-3e-8)]);
    });

    test("a float32 unary op's value for an element does not depend on where it sits (lanes, tails)", async () => {
      // 11 elements: two f32x4 lanes and a scalar tail on wasm; reversed, every value changes place.
      for (const op of UNARY_OPS) {
        if (!unaryTakes(op).includes('float32')) continue;
        const { lo, hi } = UNARY_OP_DEFS[op].domain;
        const xs = Array.from({ length: 11 }, (_, i) => Math.fround(lo + ((hi - lo) * (i * 7 + 3)) / 80));
        const forward = await unary(op, xs);
        const backward = await unary(op, xs.toReversed());
        expect([op, backward.toReversed()]).toEqual([op, forward]);
      }
    });
  });
}
