import type { DType } from './dtype.js';
import { InvalidArgumentError, ShapeMismatchError } from './errors.js';
import { assertShape, contiguousStrides, type Shape, shapesEqual, sizeOf } from './shape.js';
import { isContiguous, mergeable } from './strided.js';

/**
 * An opaque handle to memory owned by a backend. `size` is in elements; `byteLength` in bytes.
 * `owner` identifies the backend instance that allocated it (mixing owners is a DeviceMismatchError).
 */
export interface DeviceBuffer {
  /** Unique among the owner's buffers (for diagnostics and leak reports). */
  readonly id: number;
  /** The element type. */
  readonly dtype: DType;
  /** Length in elements. */
  readonly size: number;
  /** Length in bytes (size × bytesPerElement(dtype)). */
  readonly byteLength: number;
  /** The `id` of the backend instance that allocated it (`cpu#1`). */
  readonly owner: string;
}

/**
 * A strided view of a buffer, as in NumPy: element (i0, i1, ...) lives at
 * `offset + Σ ik·strides[k]` (in elements). Stride 0 repeats a dimension (broadcast), so movement
 * ops — reshape, permute, expand, shrink, stride — only build a new NDArray; no data moves until an op
 * reads it or `contiguous` materializes it.
 */
export interface NDArray {
  /** The buffer the view reads; several views may share one. */
  readonly buffer: DeviceBuffer;
  /** The element type (the buffer's). */
  readonly dtype: DType;
  /** Size of each dimension; `[]` is a scalar. */
  readonly shape: readonly number[];
  /** Elements to step per index of each dimension (0 repeats it; negative walks backwards). */
  readonly strides: readonly number[];
  /** Element index, in the buffer, of element (0, 0, ...). */
  readonly offset: number;
}

/** A contiguous, row-major view of a whole buffer with the given shape. */
export function viewOf(buffer: DeviceBuffer, shape: Shape = [buffer.size]): NDArray {
  assertShape(shape);
  if (sizeOf(shape) !== buffer.size) {
    throw new ShapeMismatchError(
      `shape [${shape.join(', ')}] has ${sizeOf(shape)} elements but the buffer holds ${buffer.size}`,
      [shape],
    );
  }
  return { buffer, dtype: buffer.dtype, shape: [...shape], strides: contiguousStrides(shape), offset: 0 };
}

/** True when the view covers its whole buffer contiguously (isContiguous from offset 0: it can be read back as is). */
export function isWholeBuffer(x: NDArray): boolean {
  return x.offset === 0 && sizeOf(x.shape) === x.buffer.size && isContiguous(x);
}

function derive(x: NDArray, shape: number[], strides: number[], offset: number): NDArray {
  return { buffer: x.buffer, dtype: x.dtype, shape, strides, offset };
}

/**
 * Reshape without a copy when the view allows it (contiguous, or splitting/merging compatible dims);
 * returns `null` when a copy is needed (use the backend's `reshape`, which materializes). One dimension
 * may be -1 (inferred). Throws ShapeMismatchError if the element counts differ.
 */
export function reshapeView(x: NDArray, shape: readonly number[]): NDArray | null {
  const target = inferShape(shape, sizeOf(x.shape));
  if (isContiguous(x) || sizeOf(target) === 0) return derive(x, target, contiguousStrides(target), x.offset);
  // Try to express the new shape with strides of the old one (NumPy's attempt_nocopy_reshape).
  const oldShape: number[] = [];
  const oldStrides: number[] = [];
  x.shape.forEach((d, i) => {
    if (d !== 1) {
      oldShape.push(d);
      oldStrides.push(x.strides[i]!);
    }
  });
  const newStrides = new Array<number>(target.length).fill(0);
  let oi = 0;
  let ni = 0;
  while (ni < target.length && oi < oldShape.length) {
    let np = target[ni]!;
    let op = oldShape[oi]!;
    let nj = ni + 1;
    let oj = oi + 1;
    while (np !== op) {
      if (np < op) np *= target[nj++]!;
      else op *= oldShape[oj++]!;
    }
    for (let k = oi; k < oj - 1; k++) if (!mergeable(oldStrides[k]!, oldStrides[k + 1]!, oldShape[k + 1]!)) return null;
    newStrides[nj - 1] = oldStrides[oj - 1]!;
    for (let k = nj - 1; k > ni; k--) newStrides[k - 1] = newStrides[k]! * target[k]!;
    ni = nj;
    oi = oj;
  }
  for (let k = 0; k < target.length; k++) if (target[k] === 1) newStrides[k] = 0;
  return derive(x, target, newStrides, x.offset);
}

/** Resolves a -1 in a reshape target; throws ShapeMismatchError if the element counts differ. */
export function inferShape(shape: readonly number[], size: number): number[] {
  const out = [...shape];
  const free = out.indexOf(-1);
  if (free !== -1) {
    if (out.indexOf(-1, free + 1) !== -1)
      throw new InvalidArgumentError(`reshape target [${shape.join(', ')}] has more than one -1`);
    const known = sizeOf(out.filter((_, i) => i !== free));
    if (known === 0 || size % known !== 0) {
      throw new ShapeMismatchError(`cannot reshape ${size} elements into [${shape.join(', ')}]`, [shape]);
    }
    out[free] = size / known;
  }
  assertShape(out, 'reshape target');
  if (sizeOf(out) !== size)
    throw new ShapeMismatchError(`cannot reshape ${size} elements into [${shape.join(', ')}]`, [shape]);
  return out;
}

/** Reorders dimensions: `perm` must be a permutation of 0..rank-1 (else InvalidArgumentError). */
export function permuteView(x: NDArray, perm: readonly number[]): NDArray {
  const rank = x.shape.length;
  const sorted = [...perm].sort((a, b) => a - b);
  if (perm.length !== rank || sorted.some((p, i) => p !== i)) {
    throw new InvalidArgumentError(
      `[${perm.join(', ')}] is not a permutation of the ${rank} axes of shape [${x.shape.join(', ')}]`,
    );
  }
  return derive(
    x,
    perm.map((p) => x.shape[p]!),
    perm.map((p) => x.strides[p]!),
    x.offset,
  );
}

/** Swaps the last two dimensions (matrix transpose of each batch item) without a copy. */
export function transposeView(x: NDArray): NDArray {
  const r = x.shape.length;
  if (r < 2) throw new InvalidArgumentError(`transpose needs rank ≥ 2, got shape [${x.shape.join(', ')}]`);
  const perm = Array.from({ length: r }, (_, i) => i);
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return permuteView(x, perm);
}

/**
 * Broadcasts to `shape` (NumPy rules: new leading dims, size-1 dims repeated with stride 0).
 * Throws ShapeMismatchError when a dimension is neither equal nor 1.
 */
export function expandView(x: NDArray, shape: readonly number[]): NDArray {
  assertShape(shape, 'expand target');
  const rank = shape.length;
  if (rank < x.shape.length) {
    throw new ShapeMismatchError(
      `cannot expand shape [${x.shape.join(', ')}] to the lower rank [${shape.join(', ')}]`,
      [x.shape, shape],
    );
  }
  const strides = new Array<number>(rank);
  const lead = rank - x.shape.length;
  for (let i = 0; i < rank; i++) {
    if (i < lead) {
      strides[i] = 0;
      continue;
    }
    const d = x.shape[i - lead]!;
    if (d === shape[i]) strides[i] = d === 1 ? 0 : x.strides[i - lead]!;
    else if (d === 1) strides[i] = 0;
    else {
      throw new ShapeMismatchError(
        `cannot expand shape [${x.shape.join(', ')}] to [${shape.join(', ')}]: dimension ${i} is ${d}`,
        [x.shape, shape],
      );
    }
  }
  return derive(x, [...shape], strides, x.offset);
}

/** Keeps `[start, end)` of each dimension (`bounds[i] = [start, end]`), without a copy. */
export function shrinkView(x: NDArray, bounds: readonly (readonly [number, number])[]): NDArray {
  if (bounds.length !== x.shape.length) {
    throw new InvalidArgumentError(
      `shrink needs one [start, end] per dimension of [${x.shape.join(', ')}], got ${bounds.length}`,
    );
  }
  let offset = x.offset;
  const shape = bounds.map(([s, e], i) => {
    const d = x.shape[i]!;
    if (!Number.isInteger(s) || !Number.isInteger(e) || s < 0 || e > d || s > e) {
      throw new InvalidArgumentError(`shrink bounds [${s}, ${e}] are invalid for dimension ${i} of size ${d}`);
    }
    offset += s * x.strides[i]!;
    return e - s;
  });
  return derive(x, shape, [...x.strides], shape.some((d) => d === 0) ? x.offset : offset);
}

/**
 * Takes every `steps[i]`-th element of each dimension (a slice with step, like `x[::2]`); a negative
 * step walks the dimension backwards (`x[::-1]`). A step of 0 throws InvalidArgumentError.
 */
export function strideView(x: NDArray, steps: readonly number[]): NDArray {
  if (steps.length !== x.shape.length) {
    throw new InvalidArgumentError(
      `stride needs one step per dimension of [${x.shape.join(', ')}], got ${steps.length}`,
    );
  }
  let offset = x.offset;
  const shape: number[] = [];
  const strides: number[] = [];
  steps.forEach((step, i) => {
    const d = x.shape[i]!;
    if (!Number.isInteger(step) || step === 0)
      throw new InvalidArgumentError(`stride step ${step} must be a non-zero integer`);
    const n = Math.ceil(d / Math.abs(step));
    if (step < 0 && d > 0) offset += (d - 1) * x.strides[i]!;
    shape.push(n);
    strides.push(x.strides[i]! * step);
  });
  return derive(x, shape, strides, offset);
}

/** Same dims and strides (the same view of the same buffer). */
export function sameView(a: NDArray, b: NDArray): boolean {
  return (
    a.buffer === b.buffer && a.offset === b.offset && shapesEqual(a.shape, b.shape) && shapesEqual(a.strides, b.strides)
  );
}

/**
 * NumPy's `as_strided`: any shape/strides/offset over the same buffer, checked to stay inside it
 * (throws InvalidArgumentError otherwise). Overlapping windows are allowed — im2col is one such view.
 */
export function asStridedView(
  x: NDArray,
  shape: readonly number[],
  strides: readonly number[],
  offset: number,
): NDArray {
  assertShape(shape);
  if (strides.length !== shape.length || !strides.every(Number.isInteger) || !Number.isInteger(offset)) {
    throw new InvalidArgumentError(`asStrided needs one integer stride per dimension of [${shape.join(', ')}]`);
  }
  if (sizeOf(shape) > 0) {
    let lo = offset;
    let hi = offset;
    shape.forEach((d, i) => {
      const span = (d - 1) * strides[i]!;
      if (span < 0) lo += span;
      else hi += span;
    });
    if (lo < 0 || hi >= x.buffer.size) {
      throw new InvalidArgumentError(
        `asStrided view reaches elements ${lo}..${hi}, outside the buffer of ${x.buffer.size}`,
      );
    }
  }
  return derive(x, [...shape], [...strides], offset);
}
