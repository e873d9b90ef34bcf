import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import {
  coalesce,
  contiguousStrides,
  isContiguous,
  planMatmulBatch,
  planRows,
  reshapeView,
  viewOf,
} from '@polyhal/hal';

/**
 * The HAL's view planning (hal/src/core/strided.ts) against a plain odometer walk: planRows and coalesce
 * visit the same element offsets, in the same order, for every operand; isContiguous holds exactly
 * when a walk of the view reads consecutive elements; reshapeView's no-copy views read what a copy
 * would. Random shapes (empty, size-1 dims, ranks 0 to 5) and strides (negative, zero, permuted).
 */
const seed = Number(process.env['POLYHAL_FC_SEED'] ?? 20261122);

/** Offsets of every element of `shape` in row-major order, for an operand of `strides` from `offset`. */
function walk(shape: readonly number[], strides: readonly number[], offset: number): number[] {
  const n = shape.reduce((p, d) => p * d, 1);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let rem = i;
    let at = offset;
    for (let d = shape.length - 1; d >= 0; d--) {
      at += (rem % shape[d]!) * strides[d]!;
      rem = Math.floor(rem / shape[d]!);
    }
    out.push(at);
  }
  return out;
}

/** Offsets planRows lists (row starts, then n steps per row), per operand. */
function rowsWalk(shape: readonly number[], strides: readonly (readonly number[])[], offsets: number[]): number[][] {
  const p = planRows(shape, strides, offsets);
  return offsets.map((_, o) => {
    const out: number[] = [];
    for (let r = 0; r < p.rows; r++) for (let i = 0; i < p.n; i++) out.push(p.starts[o]![r]! + i * p.step[o]!);
    return out;
  });
}

const shapeArb = fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 5 });
/** A shape with two operands' strides: each row-major, permuted, scaled, negated or broadcast per dim. */
const layoutArb = shapeArb.chain((shape) => {
  const strides = fc
    .tuple(
      fc.constantFrom('contiguous', 'scaled', 'random'),
      fc.array(fc.integer({ min: -7, max: 7 }), { minLength: shape.length, maxLength: shape.length }),
      fc.array(fc.boolean(), { minLength: shape.length, maxLength: shape.length }),
    )
    .map(([kind, random, broadcast]) => {
      const base = contiguousStrides(shape);
      const s = kind === 'contiguous' ? base : kind === 'scaled' ? base.map((x) => x * 2) : random;
      return s.map((x, i) => (broadcast[i] && kind !== 'contiguous' ? 0 : x));
    });
  return fc.tuple(fc.constant(shape), strides, strides, fc.integer({ min: 0, max: 50 }));
});

describe('view planning (hal/src/core/strided.ts)', () => {
  test('planRows visits what an odometer walk visits, for every operand', () => {
    fc.assert(
      fc.property(layoutArb, ([shape, sa, sb, off]) => {
        expect(rowsWalk(shape, [sa, sb], [off, 0])).toEqual([walk(shape, sa, off), walk(shape, sb, 0)]);
      }),
      { seed, numRuns: 2000 },
    );
  });

  test('coalesce keeps the walk of every operand and drops size-1 dims', () => {
    fc.assert(
      fc.property(layoutArb, ([shape, sa, sb]) => {
        const c = coalesce(shape, [sa, sb]);
        if (shape.includes(0)) return;
        expect(walk(c.shape, c.strides[0]!, 0)).toEqual(walk(shape, sa, 0));
        expect(walk(c.shape, c.strides[1]!, 0)).toEqual(walk(shape, sb, 0));
        expect(c.shape.includes(1)).toBe(false);
      }),
      { seed, numRuns: 2000 },
    );
  });

  test('isContiguous holds exactly when the walk reads consecutive elements', () => {
    fc.assert(
      fc.property(layoutArb, ([shape, strides, , offset]) => {
        const offsets = walk(shape, strides, offset);
        if (offsets.length === 0) return;
        const consecutive = offsets.every((o, i) => o === offset + i);
        expect(isContiguous({ shape, strides })).toBe(consecutive);
        // The test the webgpu backend made before (coalesced to one dim of stride 1) agrees.
        const c = coalesce(shape, [strides, contiguousStrides(shape)]);
        expect(c.shape.length <= 1 && (c.strides[0]?.[0] ?? 1) === 1).toBe(consecutive);
      }),
      { seed, numRuns: 2000 },
    );
  });

  test('planMatmulBatch plans the batch dims of both operands', () => {
    const a = { shape: [2, 3, 4, 5], strides: [60, 20, 5, 1], offset: 7 };
    const b = { shape: [2, 3, 5, 6], strides: [0, 30, 6, 1], offset: 0 };
    expect(planMatmulBatch(a, b)).toEqual(
      planRows(
        [2, 3],
        [
          [60, 20],
          [0, 30],
        ],
        [7, 0],
      ),
    );
  });

  test('reshapeView without a copy reads what the reshaped copy holds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 1000 }),
        (shape, pick) => {
          const size = shape.reduce((p, d) => p * d, 1);
          const buffer = { id: 1, dtype: 'float32' as const, size, byteLength: size * 4, owner: 'test' };
          // A permuted view, then every factorization of its size into at most 3 dims as a target.
          const perm = shape.map((_, i) => i).sort((x, y) => ((x * 7 + pick) % 5) - ((y * 7 + pick) % 5));
          const v = viewOf(buffer, shape);
          const x = { ...v, shape: perm.map((p) => shape[p]!), strides: perm.map((p) => v.strides[p]!) };
          const flat = walk(x.shape, x.strides, 0);
          for (let a = 1; a <= size; a++) {
            if (size % a) continue;
            const target = [a, size / a];
            const r = reshapeView(x, target);
            if (r) expect(walk(r.shape, r.strides, r.offset)).toEqual(flat);
          }
        },
      ),
      { seed, numRuns: 500 },
    );
  });
});
