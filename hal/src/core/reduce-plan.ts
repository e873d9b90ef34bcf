/**
 * Reduction planning shared by the backends: a view's dims split into the kept dims (one output each
 * combination, in order) and the reduced dims, each with its strides. The kernels then plan each part
 * on its own (planRows, coalesce): the kept part walks the outputs, the reduced part the elements of
 * one output.
 */

export interface AxisSplit {
  /** The dims not reduced, in order, with the view's strides: the output's row-major shape. */
  kept: { shape: number[]; strides: number[] };
  /** The reduced dims, in order, with the view's strides: the elements of one output. */
  reduced: { shape: number[]; strides: number[] };
}

/**
 * Splits `shape`/`strides` at `axes` (normalized, any order): reduced dims keep their relative order,
 * as do the kept ones, so the kept part is the output's row-major shape.
 */
export function splitReduceAxes(
  shape: readonly number[],
  strides: readonly number[],
  axes: readonly number[],
): AxisSplit {
  const kept = { shape: [] as number[], strides: [] as number[] };
  const reduced = { shape: [] as number[], strides: [] as number[] };
  for (let i = 0; i < shape.length; i++) {
    const t = axes.includes(i) ? reduced : kept;
    t.shape.push(shape[i]!);
    t.strides.push(strides[i]!);
  }
  return { kept, reduced };
}
