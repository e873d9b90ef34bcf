/**
 * Conformance cases of matmul on float16 operands (a float16 result, summed in float32 and rounded once;
 * hal/src/ops/array-ops.ts): small and odd shapes, a 64×96×80 product (a blocked kernel's tiles and
 * edges), batches with broadcast and merged into M, transposed and expanded views, results past 65504
 * (±Inf), small magnitudes (subnormal float16 results), and biases (row, column, scalar, transposed),
 * which each backend adds to the float32 product before the one rounding. Their tolerance is
 * tolerances.ts's matmulTolerance: one float16 ulp plus the float32 sum's bound. The empty forms (K = 0 and
 * zero-sized M, N, batch) are in cases-matmul-empty.ts.
 */
import type { Case, InputSpec } from './cases.js';
import { fmt, U, viewName } from './cases-util.js';

const u = U(-1, 1);
const f16 = (shape: number[], extra: Partial<InputSpec> = {}): InputSpec => ({
  shape,
  gen: u,
  dtype: 'float16',
  ...extra,
});

/** [a, b] or [a, b, bias] of each case, then a tag for cases whose shapes alone do not name them. */
const CASES_F16: [InputSpec[], string?][] = [
  [[f16([1, 1]), f16([1, 1])]],
  [[f16([3, 5]), f16([5, 7])]],
  [[f16([17, 33]), f16([33, 9])]],
  [[f16([64, 96]), f16([96, 80])]],
  [[f16([2, 1, 4, 5]), f16([3, 5, 6])]],
  [[f16([3, 17, 9]), f16([9, 5])]],
  [[f16([31, 17], { view: { transpose: true } }), f16([31, 33])]],
  [[f16([17, 31]), f16([33, 31], { view: { transpose: true } })]],
  [[f16([5, 1], { view: { expand: [2, 5, 3] } }), f16([3, 2])]],
  // sums past 65504 round to ±Inf (256·256 = 65536), 255·256 − 200 = 65080 stays finite (65088)
  [[f16([3, 2], { values: [256, 0, 255, 200, -256, 0] }), f16([2, 2], { values: [256, 1, -1, 1] })], 'overflow'],
  // |products| up to 9·10^4: a mix of finite results and ±Inf
  [[f16([8, 4], { gen: U(-300, 300) }), f16([4, 8], { gen: U(-300, 300) })], 'large'],
  // |a·b| ≤ 2^-12: results down among float16's subnormals (multiples of 2^-24)
  [[f16([9, 40], { gen: U(-(2 ** -6), 2 ** -6) }), f16([40, 7], { gen: U(-(2 ** -6), 2 ** -6) })], 'small'],
  // with a bias: added to the float32 product, then one rounding
  [[f16([17, 31]), f16([31, 33]), f16([33])]],
  [[f16([64, 96]), f16([96, 80]), f16([80])]],
  // a Linear over [batch, tokens, features]: the batch merged into M, then the bias
  [[f16([2, 24, 40]), f16([40, 72]), f16([72])]],
  [[f16([3, 17, 9]), f16([9, 5]), f16([17, 1])]],
  [[f16([2, 1, 4, 5]), f16([3, 5, 6]), f16([])]],
  [[f16([3, 8]), f16([8, 5]), f16([5, 3], { view: { transpose: true } })]],
  [[f16([17, 31]), f16([33, 31], { view: { transpose: true } }), f16([33])]],
];

export function float16MatmulCases(): Case[] {
  return CASES_F16.map(([inputs, tag]) => {
    const [a, b, bias] = inputs as [InputSpec, InputSpec, InputSpec?];
    const name = (s: InputSpec): string => `${fmt(s.shape)}${viewName(s.view)}`;
    return {
      id: `matmul/float16/${name(a)}x${name(b)}${bias ? `+bias${name(bias)}` : ''}${tag ? `/${tag}` : ''}`,
      kind: 'matmul',
      op: 'matmul',
      dtype: 'float16',
      inputs,
    };
  });
}
