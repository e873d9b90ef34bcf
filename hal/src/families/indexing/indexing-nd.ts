/**
 * The N-dimensional index ops, composed over gather and scatter (indexing.ts) on a flattened operand:
 * `gatherND` (ONNX GatherND, tf.gatherND), `scatterND` (ONNX ScatterND, tf.tensorScatterUpdate and
 * tf.scatterND's replace form) and `scatterElements` (ONNX ScatterElements, PyTorch scatter). Each
 * turns its index tuples into flat int32 positions on the device — Σ position(i_m)·stride_m, with the
 * rule of indexing.ts per component (i + n for −n ≤ i < 0) and a position past the end (total) when
 * any component is out of range, so that the gather reads its fill and the scatter drops the update —
 * then gathers or scatters along axis 0 of the operand reshaped to [total, ...slice]. Duplicates are
 * applied in index order (row-major over the index tuples): replace keeps the last. Every argument is
 * checked before anything is allocated. Table entries: ops/index-ops.ts.
 */
import type { ComputeBackend } from '../../backend.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { SCATTER_REDUCTIONS, type ScatterReduction } from './indexing.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import { normalizeAxis, sizeOf } from '../../core/shape.js';
import { describeValue } from '../../contract/validate.js';

/** The N-dimensional index methods of every backend (BaseBackend's). Semantics: ops/index-ops.ts. */
export interface IndexingNDMethods {
  /** x.shape[:b] + indices.shape[b:−1] + x.shape[b+q:] (q = indices.shape[−1]): x's slices at index tuples. */
  gatherND(x: NDArray, indices: NDArray, batchDims?: number): NDArray;
  /** target with updates [...indices.shape[:−1], ...target.shape[q:]] written at the index tuples, in order. */
  scatterND(target: NDArray, indices: NDArray, updates: NDArray, reduction?: ScatterReduction): NDArray;
  /** target with updates[p] written at p with its axis coordinate replaced by indices[p], in row-major order. */
  scatterElements(
    target: NDArray,
    indices: NDArray,
    updates: NDArray,
    axis?: number,
    reduction?: ScatterReduction,
  ): NDArray;
}

/** How an N-dimensional op runs on a flat operand: its shape and the int32 positions into its axis 0. */
export interface FlatIndexPlan {
  /** The operand (x or target) reshaped so that axis 0 is the one the positions index. */
  readonly flatShape: number[];
  /** The flat positions (int32; out of range ≥ flatShape[0]); a view of the indices when `owned` is false. */
  readonly index: NDArray;
  /** Whether `index` is a new array the caller frees (true) or a view of the caller's indices (false). */
  readonly owned: boolean;
}

const shp = (s: readonly number[]): string => `[${s.join(', ')}]`;
const same = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((d, i) => d === b[i]);

function checkIndexDType(op: string, indices: NDArray): void {
  if (indices.dtype !== 'int32') throw new DTypeError(`${op}: indices must be int32, got ${indices.dtype}`);
}

function checkReduction(op: string, reduction: unknown): void {
  if (!SCATTER_REDUCTIONS.includes(reduction as ScatterReduction))
    throw new InvalidArgumentError(
      `${op}: reduction must be one of ${SCATTER_REDUCTIONS.join(', ')}, got ${describeValue(reduction)}`,
    );
}

function checkUpdates(op: string, target: NDArray, updates: NDArray, want: readonly number[]): void {
  if (updates.dtype !== target.dtype)
    throw new DTypeError(`${op}: updates are ${updates.dtype}, the target is ${target.dtype}`);
  if (!same(updates.shape, want))
    throw new ShapeMismatchError(`${op}: updates have shape ${shp(updates.shape)}; they must have ${shp(want)}`, [
      target.shape,
      updates.shape,
    ]);
}

function checkTotal(op: string, total: number): void {
  if (total > 2 ** 31 - 1)
    throw new InvalidArgumentError(`${op}: ${total} flat positions do not fit int32 (at most 2^31 − 1)`);
}

/** gatherND's operands (dtypes, batchDims, shapes): the tuple length q. */
export function checkGatherND(x: NDArray, indices: NDArray, batchDims: unknown): number {
  checkIndexDType('gatherND', indices);
  const r = indices.shape.length;
  if (r === 0) throw new InvalidArgumentError('gatherND: indices must have rank ≥ 1, got a 0-d array');
  if (!Number.isInteger(batchDims) || (batchDims as number) < 0 || (batchDims as number) >= r)
    throw new InvalidArgumentError(
      `gatherND: batchDims must be an integer in [0, ${r}) for indices of rank ${r}, got ${describeValue(batchDims)}`,
    );
  const b = batchDims as number;
  const q = indices.shape[r - 1]!;
  if (b + q > x.shape.length)
    throw new ShapeMismatchError(
      `gatherND: tuples of ${q} after ${b} batch dims index x ${shp(x.shape)} of rank ${x.shape.length}`,
      [x.shape, indices.shape],
    );
  if (!same(x.shape.slice(0, b), indices.shape.slice(0, b)))
    throw new ShapeMismatchError(
      `gatherND: the ${b} batch dims of x ${shp(x.shape)} and indices ${shp(indices.shape)} differ`,
      [x.shape, indices.shape],
    );
  checkTotal('gatherND', sizeOf(x.shape.slice(0, b + q)));
  return q;
}

/** scatterND's operands: the tuple length q. */
export function checkScatterND(target: NDArray, indices: NDArray, updates: NDArray, reduction: unknown): number {
  checkIndexDType('scatterND', indices);
  checkReduction('scatterND', reduction);
  const r = indices.shape.length;
  if (r === 0) throw new InvalidArgumentError('scatterND: indices must have rank ≥ 1, got a 0-d array');
  const q = indices.shape[r - 1]!;
  if (q > target.shape.length)
    throw new ShapeMismatchError(`scatterND: tuples of ${q} index a target ${shp(target.shape)}`, [
      target.shape,
      indices.shape,
    ]);
  checkUpdates('scatterND', target, updates, [...indices.shape.slice(0, -1), ...target.shape.slice(q)]);
  checkTotal('scatterND', sizeOf(target.shape.slice(0, q)));
  return q;
}

/** scatterElements' operands: the normalized axis. */
export function checkScatterElements(
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  axis: unknown,
  reduction: unknown,
): number {
  checkIndexDType('scatterElements', indices);
  checkReduction('scatterElements', reduction);
  const r = target.shape.length;
  if (r === 0) throw new InvalidArgumentError('scatterElements: target must have rank ≥ 1, got a 0-d array');
  if (!Number.isInteger(axis) || (axis as number) < -r || (axis as number) >= r)
    throw new InvalidArgumentError(
      `scatterElements: axis must be an integer in [${-r}, ${r}), got ${describeValue(axis)}`,
    );
  const ax = normalizeAxis(axis as number, r);
  if (indices.shape.length !== r || indices.shape.some((d, i) => i !== ax && d > target.shape[i]!))
    throw new ShapeMismatchError(
      `scatterElements: indices ${shp(indices.shape)} must have the target's rank and, off axis ${ax}, ` +
        `dims no larger than the target's ${shp(target.shape)}`,
      [target.shape, indices.shape],
    );
  checkUpdates('scatterElements', target, updates, indices.shape);
  checkTotal('scatterElements', sizeOf(target.shape));
  return ax;
}

/**
 * Flat int32 positions, on the device: base + Σ_m position(c_m, n_m)·stride_m when every component c_m
 * lies in [−n_m, n_m), else `total`. `base` (broadcast to `shape`) carries the coordinates that need no
 * check (batch dims, scatterElements' other dims).
 */
function flatPositions(
  be: ComputeBackend,
  comps: readonly { c: NDArray; n: number; stride: number }[],
  base: NDArray | null,
  total: number,
  shape: readonly number[],
): NDArray {
  const temps: NDArray[] = [];
  const t = (a: NDArray): NDArray => {
    temps.push(a);
    return a;
  };
  const op = (o: 'add' | 'sub' | 'mul' | 'cmplt', a: NDArray | number, b: NDArray | number): NDArray =>
    t(be.binary(o, a, b));
  try {
    let lin = t(be.full(shape, 0, 'int32'));
    let valid: NDArray | null = null;
    for (const { c, n, stride } of comps) {
      const inRange = op('sub', op('cmplt', c, n), op('cmplt', c, -n));
      valid = valid ? op('mul', valid, inRange) : inRange;
      const pos = op('add', c, op('mul', op('cmplt', c, 0), n));
      lin = op('add', lin, stride === 1 ? pos : op('mul', pos, stride));
    }
    if (base) lin = op('add', lin, base);
    if (!valid) return be.binary('add', lin, 0);
    return be.binary('add', op('mul', lin, valid), op('mul', op('sub', 1, valid), total));
  } finally {
    for (const a of temps) be.free(a);
  }
}

/** Component m of index tuples [..., q]: a view of shape [...]. */
function component(indices: NDArray, m: number): NDArray {
  const r = indices.shape.length;
  return {
    ...indices,
    shape: indices.shape.slice(0, r - 1),
    strides: indices.strides.slice(0, r - 1),
    offset: indices.offset + m * indices.strides[r - 1]!,
  };
}

/** int32 [0, n)·scale in `shape` (n elements). */
function iota(be: ComputeBackend, n: number, scale: number, shape: readonly number[]): NDArray {
  return be.fromArray(
    Int32Array.from({ length: n }, (_, i) => i * scale),
    shape,
    'int32',
  );
}

/** What the tuple positions use beyond ComputeBackend: BaseBackend's protected allocation and the optional hook. */
interface PositionsHost {
  allocate(size: number, dtype: 'int32'): DeviceBuffer;
  guard(out: DeviceBuffer, run: () => void): void;
  tuplePositionsKernel?(indices: NDArray, dims: readonly number[], batch: number, out: DeviceBuffer): void;
}

/**
 * The tuples [B..., M..., q] of gatherND (batch dims b) or scatterND (b = 0) into dims [B..., Q...]:
 * flat positions [B..., M...] into [B·Q..., ...]. q = 1 without batch dims: the indices' own view.
 * One tuplePositionsKernel where the backend has it, else the composite of flatPositions.
 */
function tuplePositions(be: ComputeBackend, indices: NDArray, dims: readonly number[], b: number): FlatIndexPlan {
  const r = indices.shape.length;
  const q = indices.shape[r - 1]!;
  const inner = dims.slice(b);
  const total = sizeOf(dims);
  if (b === 0 && q === 1) return { flatShape: [total], index: component(indices, 0), owned: false };
  const lead = indices.shape.slice(0, r - 1);
  const host = be as unknown as PositionsHost;
  if (typeof host.tuplePositionsKernel === 'function') {
    const L = sizeOf(lead);
    const out = host.allocate(L, 'int32');
    host.guard(out, () => {
      if (L === 0) return;
      const flat = be.reshape(indices, [L, q]);
      try {
        host.tuplePositionsKernel!(flat, inner, sizeOf(dims.slice(0, b)), out);
      } finally {
        if (flat.buffer !== indices.buffer) be.free(flat);
      }
    });
    return { flatShape: [total], index: viewOf(out, lead), owned: true };
  }
  const strides = inner.map((_, m) => sizeOf(inner.slice(m + 1)));
  const comps = inner.map((n, m) => ({ c: component(indices, m), n, stride: strides[m]! }));
  // the batch coordinate: an offset of B·Q per batch, always in range
  const shape = [...dims.slice(0, b), ...lead.slice(b).map(() => 1)];
  const base = b > 0 ? iota(be, sizeOf(dims.slice(0, b)), sizeOf(inner), shape) : null;
  try {
    return { flatShape: [total], index: flatPositions(be, comps, base, total, lead), owned: true };
  } finally {
    if (base) be.free(base);
  }
}

/** gatherND as a gather along axis 0 of x reshaped to [B·Q..., ...x.shape[b+q:]]; operands checked. */
export function gatherNDPlan(be: ComputeBackend, x: NDArray, indices: NDArray, batchDims = 0): FlatIndexPlan {
  const q = checkGatherND(x, indices, batchDims);
  const p = tuplePositions(be, indices, x.shape.slice(0, batchDims + q), batchDims);
  return { ...p, flatShape: [...p.flatShape, ...x.shape.slice(batchDims + q)] };
}

/** scatterND as a scatter along axis 0 of the target reshaped to [Q..., ...target.shape[q:]]; operands checked. */
export function scatterNDPlan(
  be: ComputeBackend,
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  reduction: ScatterReduction = 'none',
): FlatIndexPlan {
  const q = checkScatterND(target, indices, updates, reduction);
  const p = tuplePositions(be, indices, target.shape.slice(0, q), 0);
  return { ...p, flatShape: [...p.flatShape, ...target.shape.slice(q)] };
}

/** scatterElements as a scatter along the flattened target; positions of the indices' shape; operands checked. */
export function scatterElementsPlan(
  be: ComputeBackend,
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  axis = 0,
  reduction: ScatterReduction = 'none',
): FlatIndexPlan {
  const ax = checkScatterElements(target, indices, updates, axis, reduction);
  const r = target.shape.length;
  const total = sizeOf(target.shape);
  const strides = target.shape.map((_, d) => sizeOf(target.shape.slice(d + 1)));
  const temps: NDArray[] = [];
  try {
    let base: NDArray | null = null;
    for (let d = 0; d < r; d++) {
      if (d === ax || indices.shape[d]! <= 1) continue;
      const n = indices.shape[d]!;
      const term = iota(
        be,
        n,
        strides[d]!,
        target.shape.map((_, i) => (i === d ? n : 1)),
      );
      temps.push(term);
      base = base ? be.binary('add', base, term) : term;
      if (base !== term) temps.push(base);
    }
    const comp = { c: indices, n: target.shape[ax]!, stride: strides[ax]! };
    return { flatShape: [total], index: flatPositions(be, [comp], base, total, indices.shape), owned: true };
  } finally {
    for (const a of temps) be.free(a);
  }
}

/** Runs `fn` on `x` reshaped (a view, or a copy freed after), then frees the plan's own index. */
function onFlat(be: ComputeBackend, x: NDArray, plan: FlatIndexPlan, fn: (flat: NDArray) => NDArray): NDArray {
  try {
    const flat = be.reshape(x, plan.flatShape);
    try {
      return fn(flat);
    } finally {
      if (flat.buffer !== x.buffer) be.free(flat);
    }
  } finally {
    if (plan.owned) be.free(plan.index);
  }
}

type Host = ComputeBackend & { check(x: NDArray, op: string, arg?: string): void };

function gatherND(be: Host, x: NDArray, indices: NDArray, batchDims = 0): NDArray {
  be.check(x, 'gatherND', 'x');
  be.check(indices, 'gatherND', 'indices');
  const plan = gatherNDPlan(be, x, indices, batchDims);
  return onFlat(be, x, plan, (flat) => be.gather(flat, plan.index, 0));
}

/** The scatter of a plan, reshaped back to the target's shape (a view of the fresh result). */
function scatterFlat(
  be: ComputeBackend,
  target: NDArray,
  updates: NDArray,
  plan: FlatIndexPlan,
  reduction: ScatterReduction,
): NDArray {
  return onFlat(be, target, plan, (flat) =>
    be.reshape(be.scatter(flat, plan.index, updates, 0, reduction), target.shape),
  );
}

function scatterND(be: Host, target: NDArray, indices: NDArray, updates: NDArray, reduction = 'none'): NDArray {
  for (const [a, arg] of [
    [target, 'target'],
    [indices, 'indices'],
    [updates, 'updates'],
  ] as const)
    be.check(a, 'scatterND', arg);
  const red = reduction as ScatterReduction;
  return scatterFlat(be, target, updates, scatterNDPlan(be, target, indices, updates, red), red);
}

function scatterElements(
  be: Host,
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  axis = 0,
  reduction = 'none',
): NDArray {
  for (const [a, arg] of [
    [target, 'target'],
    [indices, 'indices'],
    [updates, 'updates'],
  ] as const)
    be.check(a, 'scatterElements', arg);
  const red = reduction as ScatterReduction;
  return scatterFlat(be, target, updates, scatterElementsPlan(be, target, indices, updates, axis, red), red);
}

/** gatherND, scatterND and scatterElements (IndexingNDMethods) as BaseBackend has them (FAMILIES, base.ts). */
export const INDEXING_ND_METHODS: FamilyTable<IndexingNDMethods> = {
  gatherND(x: NDArray, indices: NDArray, batchDims?: number) {
    return gatherND(this, x, indices, batchDims);
  },
  scatterND(target: NDArray, indices: NDArray, updates: NDArray, reduction?: ScatterReduction) {
    return scatterND(this, target, indices, updates, reduction);
  },
  scatterElements(target: NDArray, indices: NDArray, updates: NDArray, axis?: number, reduction?: ScatterReduction) {
    return scatterElements(this, target, indices, updates, axis, reduction);
  },
} satisfies FamilyTable<IndexingNDMethods, Host>;
