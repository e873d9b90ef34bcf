import { InvalidArgumentError, ShapeMismatchError } from './errors.js';

/** The size of each dimension, outermost first; `[]` is a scalar. Sizes are integers ≥ 0. */
export type Shape = readonly number[];

/** Number of elements of a shape (1 for a scalar `[]`, 0 if any dimension is 0). */
export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major (C order) strides of a shape, in elements. */
export function contiguousStrides(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

/**
 * Where the input of a constant pad lands in the contiguous output: the output's row-major strides
 * and the element offset of the input's first element. shape: the input's; pads: [before, after]
 * per dimension (already validated).
 */
export function padPlacement(
  shape: Shape,
  pads: readonly (readonly [number, number])[],
): { strides: number[]; offset: number } {
  const strides = contiguousStrides(shape.map((d, i) => d + pads[i]![0] + pads[i]![1]));
  return { strides, offset: pads.reduce((acc, [before], i) => acc + before * strides[i]!, 0) };
}

/** Throws InvalidArgumentError unless every dimension is a non-negative integer. */
export function assertShape(shape: Shape, what = 'shape'): void {
  if (!Array.isArray(shape)) throw new InvalidArgumentError(`${what} must be an array of integers`);
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new InvalidArgumentError(
        `${what} [${shape.join(', ')}] has an invalid dimension ${d}: dimensions are non-negative integers`,
      );
    }
  }
}

/**
 * NumPy broadcasting of two shapes: dimensions are aligned from the right; each pair must be equal or
 * contain a 1. Throws ShapeMismatchError otherwise.
 */
export function broadcastShapes(a: Shape, b: Shape): number[] {
  const rank = Math.max(a.length, b.length);
  const out = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new ShapeMismatchError(
        `shapes [${a.join(', ')}] and [${b.join(', ')}] cannot be broadcast: dimension ${i} is ${da} vs ${db}`,
        [a, b],
      );
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/**
 * Normalizes reduction axes: negative axes count from the end; duplicates and out-of-range axes throw
 * InvalidArgumentError. `undefined` means every axis. Returns sorted axes.
 */
export function normalizeAxes(axes: number | readonly number[] | undefined, rank: number): number[] {
  if (axes === undefined) return Array.from({ length: rank }, (_, i) => i);
  const list = typeof axes === 'number' ? [axes] : [...axes];
  const seen = new Set<number>();
  for (const ax of list) {
    if (!Number.isInteger(ax) || ax < -rank || ax >= rank) {
      throw new InvalidArgumentError(`axis ${ax} is out of range for rank ${rank} (valid: ${-rank}..${rank - 1})`);
    }
    const a = ax < 0 ? ax + rank : ax;
    if (seen.has(a)) throw new InvalidArgumentError(`axis ${ax} is repeated in [${list.join(', ')}]`);
    seen.add(a);
  }
  return [...seen].sort((x, y) => x - y);
}

/** Normalizes one axis (negative counts from the end); throws InvalidArgumentError if out of range. */
export function normalizeAxis(axis: number, rank: number): number {
  return normalizeAxes(axis, rank)[0]!;
}

/** Whether two shapes have the same rank and the same size in each dimension. */
export function shapesEqual(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
