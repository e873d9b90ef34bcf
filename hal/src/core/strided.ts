/**
 * View planning shared by the backends: whether a strided layout is contiguous (`isContiguous`) and
 * whether two neighbouring dims can merge (`mergeable`); `coalesce` merges the dims that are mergeable
 * for every operand (TensorIterator-style), `planRows` then lists the start offset of each innermost
 * row per operand, so a kernel runs one tight loop per row with a constant inner stride, and
 * `planMatmulBatch` does so for the batch dims of a matmul.
 */

/** A strided view's layout: element (i0, i1, ...) lies `Σ ik·strides[k]` elements past its offset. */
export interface StridedLayout {
  /** Size of each dimension. */
  readonly shape: readonly number[];
  /** Elements to step per index of each dimension. */
  readonly strides: readonly number[];
}

/**
 * Whether an outer dim (stride `outer`) and the dim inside it (size `innerSize`, stride `inner`) read
 * as one dim of stride `inner`: one outer step spans exactly the inner dim. The merge rule of coalesce,
 * planRows and reshapeView.
 */
export function mergeable(outer: number, inner: number, innerSize: number): boolean {
  return outer === inner * innerSize;
}

/**
 * True when the layout is row-major (C order) and dense from its offset, so its elements are the
 * sizeOf(shape) consecutive elements there: each dim of size > 1 has as stride the number of elements
 * the dims inside it span (it merges with them, the innermost having stride 1). Size-1 dims may have
 * any stride (they never move). The backends' fast paths (a read-back without a copy, a kernel on
 * contiguous operands) take this test.
 */
export function isContiguous(x: StridedLayout): boolean {
  let span = 1; // elements spanned by the dims inside dim i: the stride dim i needs
  for (let i = x.shape.length - 1; i >= 0; i--) {
    const d = x.shape[i]!;
    if (d === 1) continue;
    if (x.strides[i] !== span) return false;
    span *= d;
  }
  return true;
}

/** Rows of a strided iteration (planRows): `rows` runs of `n` elements, a constant step within each. */
export interface RowPlan {
  /** Elements per row. */
  n: number;
  /** Number of rows. */
  rows: number;
  /** Inner stride per operand. */
  step: number[];
  /** Start offset of every row, per operand. */
  starts: Int32Array[];
}

/** Plans rows over `shape` for operands given by their strides and offsets (all viewing that shape). */
export function planRows(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
  offsets: readonly number[],
): RowPlan {
  const k = strides.length;
  // coalesce's loop, kept inline: calling coalesce here left V8 with code that ran the cpu backend's
  // small strided copies (a 32×32 transpose) at half speed in the benchmark sequence.
  const dims: number[] = [];
  const st: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    const size = shape[d]!;
    if (size === 1) continue;
    const last = dims.length - 1;
    if (last >= 0 && strides.every((s, o) => mergeable(st[o]![last]!, s[d]!, size))) {
      dims[last] = dims[last]! * size;
      for (let o = 0; o < k; o++) st[o]![last] = strides[o]![d]!;
    } else {
      dims.push(size);
      for (let o = 0; o < k; o++) st[o]!.push(strides[o]![d]!);
    }
  }
  const size = shape.reduce((p, d) => p * d, 1);
  if (size === 0) return { n: 0, rows: 0, step: offsets.map(() => 0), starts: offsets.map(() => new Int32Array(0)) };
  if (dims.length === 0)
    return { n: 1, rows: 1, step: offsets.map(() => 0), starts: offsets.map((o) => Int32Array.of(o)) };
  const r = dims.length - 1;
  const n = dims[r]!;
  const rows = size / n;
  const starts = offsets.map(() => new Int32Array(rows));
  const idx = new Array<number>(r).fill(0);
  const cur = [...offsets];
  for (let row = 0; row < rows; row++) {
    for (let o = 0; o < k; o++) starts[o]![row] = cur[o]!;
    // Increment the outer multi-index (odometer) and the running offsets.
    for (let d = r - 1; d >= 0; d--) {
      if (++idx[d]! < dims[d]!) {
        for (let o = 0; o < k; o++) cur[o] = cur[o]! + st[o]![d]!;
        break;
      }
      idx[d] = 0;
      for (let o = 0; o < k; o++) cur[o] = cur[o]! - st[o]![d]! * (dims[d]! - 1);
    }
  }
  return { n, rows, step: st.map((s) => s[r]!), starts };
}

/**
 * Merges neighbouring dims that are mergeable for every operand and drops size-1 dims, so most views
 * reach a kernel as rank 1 or 2. Returns the merged shape and each operand's strides.
 */
export function coalesce(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  const dims: number[] = [];
  const st: number[][] = strides.map(() => []);
  shape.forEach((d, i) => {
    if (d === 1) return;
    const last = dims.length - 1;
    if (last >= 0 && strides.every((s, o) => mergeable(st[o]![last]!, s[i]!, d))) {
      dims[last]! *= d;
      strides.forEach((s, o) => (st[o]![last] = s[i]!));
    } else {
      dims.push(d);
      strides.forEach((s, o) => st[o]!.push(s[i]!));
    }
  });
  return { shape: dims, strides: st };
}

/**
 * Rows over the batch dims (all but the last two) of matmul operands `a` [..., M, K] and `b`
 * [..., K, N], which view one batch shape (broadcast batch dims have stride 0): batch item t, counted
 * row-major, starts at `starts[o][t / n] + (t % n) · step[o]` in operand o (0: a, 1: b).
 */
export function planMatmulBatch(
  a: StridedLayout & { readonly offset: number },
  b: StridedLayout & { readonly offset: number },
): RowPlan {
  return planRows(a.shape.slice(0, -2), [a.strides.slice(0, -2), b.strides.slice(0, -2)], [a.offset, b.offset]);
}
