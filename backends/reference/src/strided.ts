/**
 * Generic strided index walking, written plainly: an odometer over a shape that advances one element
 * offset per operand. Element (i0, i1, ...) of a view lives at `offset + Σ ik·strides[k]` (in elements;
 * strides may be 0 or negative), so every kernel of this backend is "walk the output's shape and read
 * each operand at its offset". No dimension merging, no fast paths: clarity over speed.
 */

/** Where a walk reads or writes: strides per dimension of the walked shape, and a start offset. */
export interface Walked {
  readonly strides: readonly number[];
  readonly offset: number;
}

/** Row-major (C-order) strides of a contiguous array of `shape`: [..., d2·d3, d3, 1]. */
export function rowMajor(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = step;
    step *= shape[d]!;
  }
  return strides;
}

/** The number of elements of `shape` (1 for a scalar, 0 when any dimension is 0). */
export function sizeOfShape(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Calls `visit(at)` once per element of `shape`, in row-major order, where `at[k]` is the element's
 * offset in operand k (`operands[k]` gives its strides over `shape` and its start offset). `at` is
 * reused between calls: read it, do not keep it.
 */
export function walk(
  shape: readonly number[],
  operands: readonly Walked[],
  visit: (at: readonly number[]) => void,
): void {
  const n = sizeOfShape(shape);
  if (n === 0) return;
  const rank = shape.length;
  const index = new Array<number>(rank).fill(0);
  const at = operands.map((o) => o.offset);
  for (let i = 0; i < n; i++) {
    visit(at);
    // Advance the odometer: bump the last dimension; on wrap-around rewind it and carry to the next.
    for (let d = rank - 1; d >= 0; d--) {
      index[d]!++;
      for (let k = 0; k < operands.length; k++) at[k]! += operands[k]!.strides[d]!;
      if (index[d]! < shape[d]!) break;
      for (let k = 0; k < operands.length; k++) at[k]! -= operands[k]!.strides[d]! * shape[d]!;
      index[d] = 0;
    }
  }
}
