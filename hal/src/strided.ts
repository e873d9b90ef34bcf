/**
 * Strided iteration planning for kernels. `planRows` coalesces dimensions that are contiguous for every
 * operand (TensorIterator-style), then lists the start offset of each innermost row per operand, so a
 * kernel runs one tight loop per row with a constant inner stride.
 */
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
  // Drop size-1 dims, then merge neighbours that are contiguous for every operand.
  const dims: number[] = [];
  const st: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 1) continue;
    const last = dims.length - 1;
    if (last >= 0 && strides.every((s, o) => st[o]![last] === s[d]! * shape[d]!)) {
      dims[last] = dims[last]! * shape[d]!;
      for (let o = 0; o < k; o++) st[o]![last] = strides[o]![d]!;
    } else {
      dims.push(shape[d]!);
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
 * Merges neighbouring dims that are contiguous for every operand and drops size-1 dims, so most views
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
    if (last >= 0 && strides.every((s, o) => st[o]![last] === s[i]! * d)) {
      dims[last]! *= d;
      strides.forEach((s, o) => (st[o]![last] = s[i]!));
    } else {
      dims.push(d);
      strides.forEach((s, o) => st[o]!.push(s[i]!));
    }
  });
  return { shape: dims, strides: st };
}
