/**
 * Conformance cases, runner and float64 oracle of mixed precision's gradient unscaling (hal/src/ops/amp-ops.ts):
 * nonFiniteCheckAndUnscale over lists of gradients (one, three, twenty; an empty gradient among them; none) at
 * factors that are powers of two and that are not, Inf, −Inf and NaN in the first, a middle and the last gradient,
 * a finite gradient whose product overflows, and a flag that was already set (it stays set).
 *
 * The case's inputs are the gradients, then foundInf ([1]); the invScale is `hyper.invScale`. The oracle takes
 * f32(invScale), multiplies in float64 (exact for two float32 values) and flags an element whose operand or whose
 * product rounded to float32 is not finite; the gradients are compared after rounding to float32.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { fmt, SPECIAL, U } from './cases-util.js';
import type { OpRunner } from './op-runners.js';
import type { Ref } from './oracle.js';

const OP = 'nonFiniteCheckAndUnscale';

/** [gradients multiplied by f32(invScale)..., foundInf after the call]. */
export function oNonFiniteCheckAndUnscale(grads: readonly Ref[], foundInf: Ref, invScale: number): Ref[] {
  const v = Math.fround(invScale);
  let found = false;
  const out = grads.map((g): Ref => {
    const data = g.data.map((x) => x * v);
    for (let i = 0; i < data.length; i++)
      if (!Number.isFinite(g.data[i]!) || !Number.isFinite(Math.fround(data[i]!))) found = true;
    return { shape: [...g.shape], data, dtype: 'float32' };
  });
  out.push({ shape: [1], data: Float64Array.of(found ? 1 : foundInf.data[0]!), dtype: 'float32' });
  return out;
}

export const AMP_OP_RUNNERS = {
  nonFiniteCheckAndUnscale: {
    device: (be: ComputeBackend, xs: NDArray[], p) => {
      const grads = xs.slice(0, -1);
      be.nonFiniteCheckAndUnscale(
        grads.map((g) => g.buffer),
        xs.at(-1)!.buffer,
        p.hyper!['invScale']!,
      );
      return xs;
    },
    oracle: (xs: Ref[], p) => oNonFiniteCheckAndUnscale(xs.slice(0, -1), xs.at(-1)!, p.hyper!['invScale']!),
  },
} satisfies Record<string, OpRunner>;

/** A gradient of explicit values (SPECIAL marks the input as holding chosen values). */
const given = (values: number[]): InputSpec => ({ shape: [values.length], gen: SPECIAL, values });
const flag = (v: number): InputSpec => given([v]);

export function ampCases(): Case[] {
  const cases: Case[] = [];
  const add = (tag: string, grads: InputSpec[], invScale: number, found = 0): void => {
    cases.push({
      id: `${OP}/float32/${tag}`,
      kind: 'optimizer',
      op: OP,
      dtype: 'float32',
      inputs: [...grads, flag(found)],
      params: { hyper: { invScale } },
    });
  };
  const three = (lo: number, hi: number): InputSpec[] =>
    [[513], [31, 33], [7]].map((shape) => ({ shape, gen: U(lo, hi) }));
  const shapes = (g: InputSpec[]): string => g.map((x) => fmt(x.shape)).join('+');
  add(`${shapes(three(-1, 1))}/inv2^-16`, three(-6e4, 6e4), 2 ** -16);
  // not a power of two: f32(1/3000) and each product rounded
  add(`${shapes(three(-1, 1))}/inv1÷3000`, three(-3e4, 3e4), 1 / 3000);
  // a factor above 1 (a scale below 1 after many overflows)
  add(`${shapes(three(-1, 1))}/inv8`, three(-1, 1), 8);
  add('[70000]/inv2^-10', [{ shape: [70000], gen: U(-1000, 1000) }], 2 ** -10);
  // twenty gradients of assorted sizes: more than one dispatch's worth of slots on a GPU
  const twenty = Array.from({ length: 20 }, (_, i): InputSpec => ({ shape: [((i * 37) % 300) + 1], gen: U(-9, 9) }));
  add('20-grads/inv2^-3', twenty, 2 ** -3);
  add('[4]+[0]+[3]/inv2^-4', [given([1, -2, 3, 4]), { shape: [0], gen: U(-1, 1) }, given([5, 6, -7])], 2 ** -4);
  add('empty-list', [], 2 ** -16);
  add('empty-list/found', [], 2 ** -16, 1);
  // Inf, −Inf and NaN in the first, a middle and the last of three gradients
  for (const [name, bad] of [
    ['inf', Number.POSITIVE_INFINITY],
    ['-inf', Number.NEGATIVE_INFINITY],
    ['nan', Number.NaN],
  ] as const) {
    for (const [where, at] of [
      ['first', 0],
      ['middle', 1],
      ['last', 2],
    ] as const) {
      const grads = [given([0.5, -1.5, 2, 3]), given([1, 2, 3, 4, 5, 6]), given([-8, 16, 0])];
      const values = grads[at]!.values!;
      values[at === 1 ? 3 : values.length - 1] = bad;
      add(`[4]+[6]+[3]/${name}-in-${where}`, grads, 2 ** -16);
    }
  }
  // finite operands, a product past the float32 range: flagged (the unscaled gradient is Inf)
  add('[3]+[3]/overflow', [given([1, 2, 3]), given([1, 5e37, -2])], 8);
  // a flag already set stays set over finite gradients (found_inf accumulates over calls)
  add('[4]+[6]/found', [given([0.5, -1.5, 2, 3]), given([1, 2, 3, 4, 5, 6])], 0.25, 1);
  return cases;
}
