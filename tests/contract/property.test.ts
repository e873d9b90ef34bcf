import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { BINARY_OPS, binaryTakes, type ComputeBackend, UNARY_OPS } from '@polyhal/hal';
import { type Case, type InputSpec, runCase, SPECIAL_VALUES, type ViewSpec } from '@polyhal/conformance';
import { REPO_BACKENDS } from '../support/backends.js';

/**
 * Property-based differential testing: random shapes (empty, scalar, size 1, broadcastable pairs),
 * random non-contiguous views (permute, stride with negative steps, shrink) and random values mixing
 * IEEE specials (NaN, ±Inf, −0, subnormals, ±1000, 1e-30) — every backend against the float64 oracle,
 * under the same tolerance table and domains as the fixed suite. Seeded: a failure prints the seed and
 * the shrunk case; rerun with POLYHAL_FC_SEED=<seed>.
 */
const seed = Number(process.env['POLYHAL_FC_SEED'] ?? 20261122);
const runs = Number(process.env['POLYHAL_FC_RUNS'] ?? 1000);

const value = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -8, max: 8, noNaN: true }).map(Math.fround) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_VALUES.map(Math.fround)) },
  { weight: 1, arbitrary: fc.integer({ min: -3, max: 3 }) },
);

const dims = fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 0, maxLength: 3 });
/** Ranks 6 to 8 with small dims (at most 3^8 elements): views whose dims do not merge, on every backend. */
const highRankDims = fc.array(fc.integer({ min: 2, max: 3 }), { minLength: 6, maxLength: 8 });
const size = (s: number[]): number => s.reduce((p, d) => p * d, 1);

/** A stored shape plus a view applied on the device; returns the InputSpec and the viewed shape. */
const viewed = (shape: number[]): fc.Arbitrary<{ spec: Omit<InputSpec, 'gen' | 'values'>; shape: number[] }> => {
  const r = shape.length;
  const plain = fc.constant({ spec: { shape }, shape });
  if (r === 0) return plain;
  const perm = fc
    .shuffledSubarray([...Array(r).keys()], { minLength: r, maxLength: r })
    .map((p) => ({ spec: { shape, view: { permute: p } as ViewSpec }, shape: p.map((i) => shape[i]!) }));
  const stride = fc.array(fc.constantFrom(1, 2, -1, -2), { minLength: r, maxLength: r }).map((steps) => ({
    spec: { shape, view: { stride: steps } as ViewSpec },
    shape: shape.map((d, i) => Math.ceil(d / Math.abs(steps[i]!))),
  }));
  const shrink = fc
    .tuple(
      ...shape.map((d) =>
        fc
          .integer({ min: 0, max: d })
          .chain((a) => fc.integer({ min: a, max: d }).map((b) => [a, b] as [number, number])),
      ),
    )
    .map((bounds) => ({ spec: { shape, view: { shrink: bounds } as ViewSpec }, shape: bounds.map(([a, b]) => b - a) }));
  return fc.oneof(plain, perm, stride, shrink);
};

/** Values for an input of `shape`. */
const valuesFor = (shape: number[]): fc.Arbitrary<number[]> =>
  fc.array(value, { minLength: size(shape), maxLength: size(shape) });

const unaryCaseOf = (dimsArb: fc.Arbitrary<number[]>): fc.Arbitrary<Case> =>
  fc.tuple(fc.constantFrom(...UNARY_OPS), dimsArb).chain(([op, shape]) =>
    viewed(shape).chain((v) =>
      valuesFor(shape).map(
        (values): Case => ({
          id: `property/${op}`,
          kind: 'unary',
          op,
          dtype: 'float32',
          inputs: [{ ...v.spec, gen: { kind: 'special' }, values }],
        }),
      ),
    ),
  );

/** Broadcastable operands: each drops some leading dims and turns some dims into 1. */
const binaryCaseOf = (dimsArb: fc.Arbitrary<number[]>): fc.Arbitrary<Case> =>
  fc
    .tuple(fc.constantFrom(...BINARY_OPS.filter((op) => binaryTakes(op).includes('float32'))), dimsArb)
    .chain(([op, out]) => {
      const operand = fc
        .tuple(
          fc.integer({ min: 0, max: out.length }),
          fc.array(fc.boolean(), { minLength: out.length, maxLength: out.length }),
        )
        .map(([drop, ones]) => out.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d)));
      return fc.tuple(operand, operand).chain(([sa, sb]) =>
        fc.tuple(viewed(sa), viewed(sb)).chain(([va, vb]) =>
          fc.tuple(valuesFor(sa), valuesFor(sb)).map(([xa, xb]): Case | null => {
            // The view must keep the operand broadcastable: only views that preserve its shape qualify.
            if (va.shape.join() !== sa.join() || vb.shape.join() !== sb.join()) return null;
            return {
              id: `property/${op}`,
              kind: 'binary',
              op,
              dtype: 'float32',
              inputs: [
                { ...va.spec, gen: { kind: 'special' }, values: xa },
                { ...vb.spec, gen: { kind: 'special' }, values: xb },
              ],
            };
          }),
        ),
      );
    })
    .filter((c): c is Case => c !== null);

const reduceCaseOf = (dimsArb: fc.Arbitrary<number[]>): fc.Arbitrary<Case> =>
  fc.tuple(fc.constantFrom('sum', 'max', 'mean'), dimsArb).chain(([op, shape]) =>
    fc.tuple(viewed(shape), fc.subarray([...Array(shape.length).keys()]), fc.boolean()).chain(([v, axes, keepdims]) =>
      fc
        .array(fc.double({ min: -8, max: 8, noNaN: true }).map(Math.fround), {
          minLength: size(shape),
          maxLength: size(shape),
        })
        .map(
          (values): Case => ({
            id: `property/${op}`,
            kind: 'reduce',
            op,
            dtype: 'float32',
            inputs: [{ ...v.spec, gen: { kind: 'special' }, values }],
            params: { axes: axes.length ? axes : undefined, keepdims },
          }),
        ),
    ),
  );

const unaryCase = unaryCaseOf(dims);
const binaryCase = binaryCaseOf(dims);
const reduceCase = reduceCaseOf(dims);
const highRankCase = fc.oneof(unaryCaseOf(highRankDims), binaryCaseOf(highRankDims), reduceCaseOf(highRankDims));

const describeCase = (c: Case): string =>
  JSON.stringify({
    op: c.op,
    inputs: c.inputs.map((i) => ({ shape: i.shape, view: i.view, values: i.values })),
    params: c.params,
  });

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`property-based differential testing on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test.each([
      ['elementwise unary', unaryCase],
      ['elementwise binary with broadcasting', binaryCase],
      ['reductions', reduceCase],
      ['ranks 6 to 8 (unary, binary, reductions)', highRankCase],
    ] as const)(
      '%s agrees with the float64 oracle',
      async (label, arbitrary) => {
        await fc.assert(
          fc.asyncProperty(arbitrary, async (c) => {
            const r = await runCase(be, c, seed);
            if (!r.pass) throw new Error(`${r.message}\n  case: ${describeCase(c)}`);
          }),
          { seed, numRuns: Math.ceil((name === 'webgpu' ? runs / 2 : runs) / (label.startsWith('ranks') ? 5 : 1)) },
        );
        expect(be.liveBufferCount()).toBe(0);
      },
      180_000,
    );
  });
}
