import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { capabilitiesOf, type ComputeBackend } from '@polyhal/hal';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { REPO_BACKENDS, requiredBackends } from './backends.js';

// The special-value rules and exactness claims the op table states for sign, the rounding ops and the
// smooth activations, checked value by value on every backend (the conformance suite
// compares against the float64 oracle under a tolerance; these are the claims that must hold exactly).

const factories: Record<string, () => Promise<ComputeBackend>> = {
  ...REPO_BACKENDS,
  reference: async () => new ReferenceBackend(),
};

for (const [name, factory] of Object.entries(factories)) {
  describe(`elementwise special values and exactness on ${name}`, () => {
    let be: ComputeBackend | undefined;
    beforeAll(async () => {
      try {
        be = await factory();
      } catch (e) {
        if (requiredBackends().includes(name) || (e as Error).name !== 'BackendUnavailableError') throw e;
      }
    });
    afterAll(() => be?.dispose());

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

    test('int32 sign and abs (|−2^31| wraps to −2^31)', async () => {
      if (!be) return;
      const xs = [-2147483648, -5, 0, 7, 2147483647];
      expect(await unary('sign', xs, 'int32')).toEqual([-1, -1, 0, 1, 1]);
      expect(await unary('abs', xs, 'int32')).toEqual([-2147483648, 5, 0, 7, 2147483647]);
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
  });
}
