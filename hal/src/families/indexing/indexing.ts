/**
 * Index ops of BaseBackend on kernel hooks (hooks.ts): `gather` (NumPy take, ONNX Gather) on
 * `gatherKernel`, `scatterAdd` (its adjoint) on `scatterAddKernel`, `scatter` (replace, add or multiply
 * along one axis) on the optional `scatterKernel`, and `oneHot` composed from a gather of the identity.
 * The HAL brings every operand to three dims before a kernel sees it: x and the target as
 * [outer, dim, inner] (the axis in the middle), the indices as [K] (flattened) and the
 * gathered or scattered values as [outer, K, inner] — views where the strides allow, contiguous
 * copies otherwise. Every argument is checked before anything is allocated.
 *
 * The index rule (JAX's fill mode for gather and its adjoint): an index i into a dim of size n reads
 * position i + n when −n ≤ i < 0; any index outside [−n, n) reads nothing — gather writes NaN
 * (float32, float16), INT32_MIN (int32), −128 (int8), 255 (uint8) or true (bool) — GATHER_FILL, since a
 * kernel cannot throw on data it computes —, scatterAdd drops
 * its update; scatter applies the updates in index order (replace: the last one wins). Table entries:
 * ops/index-ops.ts; the N-dimensional forms (gatherND, scatterND, scatterElements): indexing-nd.ts.
 */

import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import type { FamilyTable } from '../../contract/family-table.js';
import type { LayoutHost } from '../layout/layout.js';
import { type DeviceBuffer, type NDArray, reshapeView, viewOf } from '../../core/ndarray.js';
import type { BinaryOp } from '../../ops/index.js';
import { normalizeAxis, sizeOf } from '../../core/shape.js';
import { checkAxis, describeValue } from '../../contract/validate.js';

/**
 * gather's fill for an index out of range: NaN (float32, float16, float64), INT32_MIN (int32), −128 (int8), 255
 * (uint8) and true (bool, stored as 1) — JAX's fill values. Kernels see int8, uint8 and float16 as their
 * storage dtype; narrow.ts replaces the int32 fill by the narrow one.
 */
export const GATHER_FILL = {
  float32: Number.NaN,
  int32: -2147483648,
  bool: 1,
  int8: -128,
  uint8: 255,
  float16: Number.NaN,
  float64: Number.NaN,
} as const;

/** How scatter combines an update with the value at its position: replace it, add to it, multiply it. */
export type ScatterReduction = 'none' | 'add' | 'mul';
/** Every ScatterReduction, as scatter and scatterElements check them. */
export const SCATTER_REDUCTIONS: readonly ScatterReduction[] = Object.freeze(['none', 'add', 'mul']);

/** The index methods of every backend (BaseBackend's). Semantics: ops/index-ops.ts. */
export interface IndexingMethods {
  /** x.shape[:axis] + indices.shape + x.shape[axis+1:]: x's slices at the (int32) indices along axis. */
  gather(x: NDArray, indices: NDArray, axis?: number): NDArray;
  /** A new array: target with updates[..., k, ...] added at indices[k] along axis, in index order. */
  scatterAdd(target: NDArray, indices: NDArray, updates: NDArray, axis?: number): NDArray;
  /**
   * A new array: target with updates[..., k, ...] written at indices[k] along axis, k = 0, 1, ... in
   * order (reduction 'none': the last one wins; 'add', 'mul': combined with the value there).
   */
  scatter(target: NDArray, indices: NDArray, updates: NDArray, axis?: number, reduction?: ScatterReduction): NDArray;
  /** float32 [...indices.shape, depth]: 1 at each (in-range) index, 0 elsewhere. */
  oneHot(indices: NDArray, depth: number): NDArray;
}

/** What the index ops use of a BaseBackend (its protected members included). */
export interface IndexingHost extends LayoutHost {
  /** {@inheritDoc ComputeBackend.contiguous} */
  contiguous(x: NDArray): NDArray;
  /** {@inheritDoc ComputeBackend.binary} */
  binary(op: BinaryOp, a: NDArray | number, b: NDArray | number): NDArray;
  /** The optional oneHot hook (hooks.ts); without it, oneHot gathers rows of an identity matrix. */
  oneHotKernel?(indices: NDArray, depth: number, out: DeviceBuffer): void;
}

const shp = (x: NDArray): string => `[${x.shape.join(', ')}]`;

function checkIndices(be: IndexingHost, indices: NDArray, op: string): void {
  be.check(indices, op, 'indices');
  if (indices.dtype !== 'int32') throw new DTypeError(`${op}: indices must be int32, got ${indices.dtype}`);
}

/** The axis of x (rank ≥ 1), normalized. */
function axisOf(x: NDArray, axis: unknown, op: string, arg: string): number {
  if (x.shape.length === 0) throw new InvalidArgumentError(`${op}: ${arg} must have rank ≥ 1, got a 0-d array`);
  checkAxis(axis, op, x);
  return normalizeAxis(axis as number, x.shape.length);
}

/** x viewed as `shape`: a view where the strides allow, else a contiguous copy (pushed on `temps`). */
function as(be: IndexingHost, x: NDArray, shape: number[], temps: NDArray[]): NDArray {
  const v = reshapeView(x, shape);
  if (v) return v;
  const c = be.contiguous(x);
  temps.push(c);
  return reshapeView(c, shape)!;
}

function gather(be: IndexingHost, x: NDArray, indices: NDArray, axis = 0): NDArray {
  be.check(x, 'gather');
  checkIndices(be, indices, 'gather');
  const ax = axisOf(x, axis, 'gather', 'x');
  const outer = sizeOf(x.shape.slice(0, ax));
  const inner = sizeOf(x.shape.slice(ax + 1));
  const k = sizeOf(indices.shape);
  const shape = [...x.shape.slice(0, ax), ...indices.shape, ...x.shape.slice(ax + 1)];
  const out = be.allocate(sizeOf(shape), x.dtype);
  be.guard(out, () => {
    if (out.size === 0) return;
    const temps: NDArray[] = [];
    try {
      be.route.gather(as(be, x, [outer, x.shape[ax]!, inner], temps), as(be, indices, [k], temps), out);
    } finally {
      for (const t of temps) be.free(t);
    }
  });
  return viewOf(out, shape);
}

/** scatterAdd (reduction 'add' on scatterAddKernel) and scatter (on scatterKernel): checks, then [O, D, I] views. */
function scatterAlong(
  be: IndexingHost,
  op: 'scatter' | 'scatterAdd',
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  axis: number,
  reduction: ScatterReduction,
): NDArray {
  be.check(target, op, 'target');
  checkIndices(be, indices, op);
  be.check(updates, op, 'updates');
  if (updates.dtype !== target.dtype)
    throw new DTypeError(`${op}: updates are ${updates.dtype}, the target is ${target.dtype}`);
  if (!SCATTER_REDUCTIONS.includes(reduction))
    throw new InvalidArgumentError(
      `${op}: reduction must be one of ${SCATTER_REDUCTIONS.join(', ')}, got ${describeValue(reduction)}`,
    );
  if (target.dtype === 'bool' && reduction !== 'none')
    throw new DTypeError(`${op}: bool does not ${reduction}; cast to int32 first (reduction 'none' moves bool)`);
  const ax = axisOf(target, axis, op, 'target');
  const want = [...target.shape.slice(0, ax), ...indices.shape, ...target.shape.slice(ax + 1)];
  if (want.length !== updates.shape.length || want.some((d, i) => d !== updates.shape[i]))
    throw new ShapeMismatchError(
      `${op}: updates have shape ${shp(updates)}; along axis ${ax} of a target ${shp(target)} ` +
        `with indices ${shp(indices)} they must have [${want.join(', ')}]`,
      [target.shape, indices.shape, updates.shape],
    );
  const outer = sizeOf(target.shape.slice(0, ax));
  const inner = sizeOf(target.shape.slice(ax + 1));
  const k = sizeOf(indices.shape);
  const out = be.allocate(sizeOf(target.shape), target.dtype);
  be.guard(out, () => {
    if (out.size === 0) return;
    const temps: NDArray[] = [];
    try {
      const t = as(be, target, [outer, target.shape[ax]!, inner], temps);
      const i = as(be, indices, [k], temps);
      const u = as(be, updates, [outer, k, inner], temps);
      if (op === 'scatterAdd') be.route.scatterAdd(t, i, u, out);
      else be.route.scatter(t, i, u, out, reduction);
    } finally {
      for (const t of temps) be.free(t);
    }
  });
  return viewOf(out, target.shape);
}

/**
 * oneHot: the backend's oneHotKernel on the indices flattened to [N] where it has one; else the rows of the
 * identity gathered (NaN rows for indices out of range), then 0.5 < row (NaN → 0).
 */
function oneHot(be: IndexingHost, indices: NDArray, depth: number): NDArray {
  checkIndices(be, indices, 'oneHot');
  if (!Number.isInteger(depth) || depth < 0)
    throw new InvalidArgumentError(`oneHot: depth must be a non-negative integer, got ${describeValue(depth)}`);
  if (typeof be.oneHotKernel === 'function') {
    const n = sizeOf(indices.shape);
    const out = be.allocate(n * depth, 'float32');
    be.guard(out, () => {
      if (out.size === 0) return;
      const temps: NDArray[] = [];
      try {
        be.oneHotKernel!(as(be, indices, [n], temps), depth, out);
      } finally {
        for (const t of temps) be.free(t);
      }
    });
    return viewOf(out, [...indices.shape, depth]);
  }
  const eye = be.allocate(depth * depth, 'float32');
  const one = be.allocate(1, 'float32');
  let rows: NDArray | null = null;
  try {
    be.route.fill(eye, 0);
    be.route.fill(one, 1);
    if (depth > 0) be.route.copyInto({ ...viewOf(one, []), shape: [depth], strides: [0] }, eye, [depth + 1], 0);
    rows = gather(be, viewOf(eye, [depth, depth]), indices, 0);
    return be.binary('cmplt', 0.5, rows);
  } finally {
    be.deallocate(eye);
    be.deallocate(one);
    if (rows) be.free(rows);
  }
}

/** gather, scatterAdd, scatter and oneHot (IndexingMethods) as BaseBackend has them (FAMILIES, base.ts). */
export const INDEXING_METHODS: FamilyTable<IndexingMethods> = {
  gather(x: NDArray, indices: NDArray, axis?: number) {
    return gather(this, x, indices, axis);
  },
  scatterAdd(target: NDArray, indices: NDArray, updates: NDArray, axis?: number) {
    return scatterAlong(this, 'scatterAdd', target, indices, updates, axis === undefined ? 0 : axis, 'add');
  },
  scatter(target: NDArray, indices: NDArray, updates: NDArray, axis?: number, reduction?: ScatterReduction) {
    return scatterAlong(this, 'scatter', target, indices, updates, axis === undefined ? 0 : axis, reduction ?? 'none');
  },
  oneHot(indices: NDArray, depth: number) {
    return oneHot(this, indices, depth);
  },
} satisfies FamilyTable<IndexingMethods, IndexingHost>;
