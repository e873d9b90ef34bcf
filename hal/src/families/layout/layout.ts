/**
 * Layout ops of BaseBackend built on one kernel, `copyIntoKernel` (a strided view written into a buffer
 * at given strides and offset; hooks.ts): pad in every mode, concat, stack, tile and trilu copy with
 * it (concat and stack with the optional copyIntoManyKernel, all inputs in one call, where the backend has
 * it); split and flip are views. Every argument is checked before anything is allocated. The methods
 * are defined on BaseBackend's prototype from FAMILIES (base.ts) and typed by LayoutMethods.
 */
import type { KernelRouter } from '../../contract/kernel-router.js';
import type { FamilyTable } from '../../contract/family-table.js';
import type { DType } from '../../core/dtype.js';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { type DeviceBuffer, type NDArray, shrinkView, strideView, viewOf } from '../../core/ndarray.js';
import { contiguousStrides, normalizeAxes, normalizeAxis, sizeOf } from '../../core/shape.js';
import {
  checkAxesArg,
  checkAxis,
  checkBoolean,
  checkIntList,
  checkNumber,
  checkPadWidths,
  checkPairs,
  describeValue,
} from '../../contract/validate.js';

/**
 * NumPy's pad modes: `constant` (value), `edge` (repeat the edge), `reflect` (mirror without the edge), `wrap`
 * (periodic).
 */
export type PadMode = 'constant' | 'edge' | 'reflect' | 'wrap';
/** Every PadMode, as pad checks its mode. */
export const PAD_MODES: readonly PadMode[] = ['constant', 'edge', 'reflect', 'wrap'];

/** The layout methods of every backend (BaseBackend's, through copyIntoKernel). Semantics: ops/layout-ops.ts. */
export interface LayoutMethods {
  /** Joins arrays of one dtype and rank along an existing axis; the other dims must match. */
  concat(xs: readonly NDArray[], axis?: number): NDArray;
  /** Joins arrays of one shape along a new axis (in [−rank − 1, rank]). */
  stack(xs: readonly NDArray[], axis?: number): NDArray;
  /** Views of x: `n` equal parts (n must divide the dim) or parts of the given sizes (summing to the dim). */
  split(x: NDArray, sizesOrSections: number | readonly number[], axis?: number): NDArray[];
  /** x repeated reps[i] times along each dim (NumPy tile: a shorter reps is padded with leading 1s). */
  tile(x: NDArray, reps: readonly number[]): NDArray;
  /** A view with the given axes (default all) reversed. */
  flip(x: NDArray, axes?: number | readonly number[]): NDArray;
  /** ONNX Trilu: the upper (j − i ≥ k) or lower (j − i ≤ k) triangle of the last two dims, 0 elsewhere. */
  trilu(x: NDArray, k?: number, upper?: boolean): NDArray;
}

/** What the layout ops use of a BaseBackend (its protected members included). */
export interface LayoutHost {
  /** {@inheritDoc ComputeBackend.name} */
  readonly name: string;
  /** Throws unless x is a live, well-formed array of this backend (StorageBackend.check), naming op and arg. */
  check(x: NDArray, op: string, arg?: string): void;
  /** {@inheritDoc ComputeBackend.allocate} */
  allocate(size: number, dtype: DType): DeviceBuffer;
  /** {@inheritDoc ComputeBackend.deallocate} */
  deallocate(b: DeviceBuffer): void;
  /** {@inheritDoc ComputeBackend.free} */
  free(x: NDArray): void;
  /** Runs a kernel into the fresh buffer `out`; frees `out` if the kernel throws, so nothing leaks. */
  guard(out: DeviceBuffer, run: () => void): void;
  /** The kernels, routed by dtype (kernel-router.ts): fill, copyInto and copyIntoMany here. */
  readonly route: KernelRouter;
}

/** One run of a padded dim: output positions out..out+len−1 read input positions src, src+step, ... */
export interface PadRun {
  /** The first output position of the run. */
  out: number;
  /** The input position the first output reads. */
  src: number;
  /** Input positions advance by this per output (−1 for a mirrored run, 0 for a repeated edge). */
  step: -1 | 0 | 1;
  /** Number of output positions in the run. */
  len: number;
}

const mod = (a: number, n: number): number => ((a % n) + n) % n;

/**
 * Where each output position of one padded dim (size n, `before` and `after` added) reads from, as
 * runs of constant step. constant: the interior only (the rest is the fill value). edge: clamp;
 * reflect: mirror about the first and last element, repeatedly (NumPy; a dim of 1 repeats it); wrap:
 * periodic. The modes other than constant need n ≥ 1 where a pad is non-zero (checked by `pad`).
 */
export function padRuns(n: number, before: number, after: number, mode: PadMode): PadRun[] {
  if (mode === 'constant') return n > 0 ? [{ out: before, src: 0, step: 1, len: n }] : [];
  const source =
    mode === 'edge'
      ? (o: number) => Math.min(n - 1, Math.max(0, o - before))
      : mode === 'wrap'
        ? (o: number) => mod(o - before, n)
        : (o: number) => {
            if (n === 1) return 0;
            const p = mod(o - before, 2 * n - 2);
            return p < n ? p : 2 * n - 2 - p;
          };
  const total = before + n + after;
  const runs: PadRun[] = [];
  for (let o = 0; o < total; ) {
    const s = source(o);
    const d = o + 1 < total ? source(o + 1) - s : 1;
    const step = (d === -1 || d === 0 || d === 1 ? d : 1) as -1 | 0 | 1;
    let len = 1;
    while (o + len < total && source(o + len) === s + len * step) len++;
    runs.push({ out: o, src: s, step, len });
    o += len;
  }
  return runs;
}

/** Every combination of one run per dim (the boxes a multi-dim pad copies). */
export function padBoxes(runs: readonly PadRun[][]): PadRun[][] {
  let boxes: PadRun[][] = [[]];
  for (const dim of runs) boxes = boxes.flatMap((b) => dim.map((r) => [...b, r]));
  return runs.some((r) => r.length === 0) ? [] : boxes;
}

/** `pad` in any mode (BaseBackend.pad): fill for constant, then one copyIntoKernel per box of runs. */
export function padArray(
  be: LayoutHost,
  x: NDArray,
  pads: readonly (readonly [number, number])[],
  value: number,
  mode: PadMode,
): NDArray {
  be.check(x, 'pad');
  checkPairs(pads, 'pad', 'pads', x, '[before, after]');
  checkNumber(value, 'pad', 'value');
  checkPadWidths(pads);
  if (!PAD_MODES.includes(mode))
    throw new InvalidArgumentError(`pad: mode must be one of ${PAD_MODES.join(', ')}, got ${describeValue(mode)}`);
  if (mode !== 'constant') {
    x.shape.forEach((d, i) => {
      if (d === 0 && pads[i]![0] + pads[i]![1] > 0)
        throw new InvalidArgumentError(`pad: mode '${mode}' cannot pad dimension ${i} of size 0 (x ${shp(x)})`);
    });
  }
  const shape = x.shape.map((d, i) => d + pads[i]![0] + pads[i]![1]);
  const strides = contiguousStrides(shape);
  const out = be.allocate(sizeOf(shape), x.dtype);
  be.guard(out, () => {
    if (mode === 'constant' && sizeOf(shape) > sizeOf(x.shape))
      be.route.fill(out, x.dtype === 'bool' ? (value !== 0 ? 1 : 0) : value);
    if (sizeOf(x.shape) === 0) return;
    const boxes = padBoxes(x.shape.map((d, i) => padRuns(d, pads[i]![0], pads[i]![1], mode)));
    for (const box of boxes) {
      let src = x.offset;
      let dst = 0;
      for (let i = 0; i < box.length; i++) {
        src += box[i]!.src * x.strides[i]!;
        dst += box[i]!.out * strides[i]!;
      }
      const view: NDArray = {
        ...x,
        shape: box.map((r) => r.len),
        strides: box.map((r, i) => r.step * x.strides[i]!),
        offset: src,
      };
      be.route.copyInto(view, out, strides, dst);
    }
  });
  return viewOf(out, shape);
}

const shp = (x: { shape: readonly number[] }): string => `[${x.shape.join(', ')}]`;

function checkList(be: LayoutHost, xs: readonly NDArray[], op: string): void {
  if (!Array.isArray(xs) || xs.length === 0)
    throw new InvalidArgumentError(`${op}: xs must be a non-empty array of NDArrays, got ${describeValue(xs)}`);
  xs.forEach((x, i) => be.check(x, op, `xs[${i}]`));
  const x0 = xs[0]!;
  xs.forEach((x, i) => {
    if (x.dtype !== x0.dtype) throw new DTypeError(`${op}: xs[${i}] is ${x.dtype}, xs[0] is ${x0.dtype}`);
  });
}

function concat(be: LayoutHost, xs: readonly NDArray[], axis = 0, op = 'concat'): NDArray {
  checkList(be, xs, op);
  const x0 = xs[0]!;
  checkAxis(axis, op, x0);
  const ax = normalizeAxis(axis, x0.shape.length);
  xs.forEach((x, i) => {
    if (x.shape.length !== x0.shape.length || x.shape.some((d, j) => j !== ax && d !== x0.shape[j]))
      throw new ShapeMismatchError(
        `${op}: xs[${i}] has shape ${shp(x)}, xs[0] ${shp(x0)}; all dims but axis ${ax} must match`,
        xs.map((v) => v.shape),
      );
  });
  const shape = [...x0.shape];
  shape[ax] = xs.reduce((s, x) => s + x.shape[ax]!, 0);
  const strides = contiguousStrides(shape);
  const out = be.allocate(sizeOf(shape), x0.dtype);
  be.guard(out, () => {
    // the non-empty inputs and where each starts in out: one copyIntoManyKernel for them all, where the
    // backend has it and takes them, else one copyInto each
    const parts: NDArray[] = [];
    const offsets: number[] = [];
    let offset = 0;
    for (const x of xs) {
      if (sizeOf(x.shape) > 0) {
        parts.push(x);
        offsets.push(offset);
      }
      offset += x.shape[ax]! * strides[ax]!;
    }
    if (parts.length > 1 && be.route.copyIntoMany(parts, out, strides, offsets)) return;
    parts.forEach((x, i) => be.route.copyInto(x, out, strides, offsets[i]!));
  });
  return viewOf(out, shape);
}

function stack(be: LayoutHost, xs: readonly NDArray[], axis = 0): NDArray {
  checkList(be, xs, 'stack');
  const x0 = xs[0]!;
  if (!Number.isInteger(axis))
    throw new InvalidArgumentError(`stack: axis must be an integer, got ${describeValue(axis)}`);
  const ax = normalizeAxis(axis, x0.shape.length + 1);
  xs.forEach((x, i) => {
    if (x.shape.length !== x0.shape.length || x.shape.some((d, j) => d !== x0.shape[j]))
      throw new ShapeMismatchError(
        `stack: xs[${i}] has shape ${shp(x)}, xs[0] ${shp(x0)}; all must match`,
        xs.map((v) => v.shape),
      );
  });
  const lifted = xs.map((x) => ({
    ...x,
    shape: [...x.shape.slice(0, ax), 1, ...x.shape.slice(ax)],
    strides: [...x.strides.slice(0, ax), 0, ...x.strides.slice(ax)],
  }));
  return concat(be, lifted, ax, 'stack');
}

function split(be: LayoutHost, x: NDArray, sizesOrSections: number | readonly number[], axis = 0): NDArray[] {
  be.check(x, 'split');
  checkAxis(axis, 'split', x);
  const ax = normalizeAxis(axis, x.shape.length);
  const dim = x.shape[ax]!;
  let sizes: number[];
  if (typeof sizesOrSections === 'number') {
    const n = sizesOrSections;
    if (!Number.isInteger(n) || n < 1 || dim % n !== 0)
      throw new InvalidArgumentError(
        `split: ${describeValue(n)} sections must be a positive integer dividing dimension ${ax} of size ${dim}`,
      );
    sizes = new Array<number>(n).fill(dim / n);
  } else {
    checkIntList(sizesOrSections, 'split', 'sizes', x);
    sizes = [...sizesOrSections];
    if (sizes.length === 0 || sizes.some((s) => s < 0) || sizes.reduce((a, b) => a + b, 0) !== dim)
      throw new InvalidArgumentError(
        `split: sizes ${describeValue(sizesOrSections)} must be non-negative and sum to dimension ${ax} of size ${dim}`,
      );
  }
  let start = 0;
  return sizes.map((s) => {
    const bounds = x.shape.map((d, i) => (i === ax ? [start, start + s] : [0, d]) as [number, number]);
    start += s;
    return shrinkView(x, bounds);
  });
}

function tile(be: LayoutHost, x: NDArray, reps: readonly number[]): NDArray {
  be.check(x, 'tile');
  checkIntList(reps, 'tile', 'reps', x);
  if (reps.some((r) => r < 0))
    throw new InvalidArgumentError(`tile: reps must be non-negative integers, got ${describeValue(reps)}`);
  const rank = Math.max(reps.length, x.shape.length);
  const r = [...new Array<number>(rank - reps.length).fill(1), ...reps];
  const lead = rank - x.shape.length;
  const dims = [...new Array<number>(lead).fill(1), ...x.shape];
  const xs = [...new Array<number>(lead).fill(0), ...x.strides];
  const shape = dims.map((d, i) => d * r[i]!);
  const strides = contiguousStrides(shape);
  const out = be.allocate(sizeOf(shape), x.dtype);
  be.guard(out, () => {
    if (sizeOf(shape) === 0) return;
    // x as [r0, d0, r1, d1, ...] (the reps broadcast), written where out viewed the same way puts them.
    const view: NDArray = {
      ...x,
      shape: dims.flatMap((d, i) => [r[i]!, d]),
      strides: xs.flatMap((s) => [0, s]),
    };
    be.route.copyInto(
      view,
      out,
      dims.flatMap((d, i) => [d * strides[i]!, strides[i]!]),
      0,
    );
  });
  return viewOf(out, shape);
}

function flip(be: LayoutHost, x: NDArray, axes?: number | readonly number[]): NDArray {
  be.check(x, 'flip');
  checkAxesArg(axes, 'flip', x);
  const ax = normalizeAxes(axes, x.shape.length);
  return strideView(
    x,
    x.shape.map((_, i) => (ax.includes(i) ? -1 : 1)),
  );
}

/**
 * trilu through a skewed layout: element (i, j) of each [M, N] matrix goes to column j − i + M − 1 of
 * a row of S [.., M, M + N − 1], so each diagonal is a column; the dropped diagonals are a column
 * range, overwritten with zeros; reading S back through the same skew gives the result.
 */
function trilu(be: LayoutHost, x: NDArray, k = 0, upper = true): NDArray {
  be.check(x, 'trilu');
  if (!Number.isInteger(k)) throw new InvalidArgumentError(`trilu: k must be an integer, got ${describeValue(k)}`);
  checkBoolean(upper, 'trilu', 'upper');
  const r = x.shape.length;
  if (r < 2) throw new InvalidArgumentError(`trilu: x must have rank ≥ 2, got shape ${shp(x)}`);
  const [m, n] = [x.shape[r - 2]!, x.shape[r - 1]!];
  const out = be.allocate(sizeOf(x.shape), x.dtype);
  const outStrides = contiguousStrides(x.shape);
  be.guard(out, () => {
    if (sizeOf(x.shape) === 0) return;
    const batch = x.shape.slice(0, r - 2);
    const l = m + n - 1;
    // The dropped diagonals t = j − i as columns c = t + m − 1 of S: [lo, hi).
    const [lo, hi] = upper ? [0, Math.min(l, Math.max(0, k + m - 1))] : [Math.min(l, Math.max(0, k + m)), l];
    if (hi <= lo) {
      be.route.copyInto(x, out, outStrides, 0);
      return;
    }
    if (lo === 0 && hi === l) {
      be.route.fill(out, 0);
      return;
    }
    const s = be.allocate(sizeOf(batch) * m * l, x.dtype);
    const zero = be.allocate(1, x.dtype);
    try {
      const sStrides = [...contiguousStrides([...batch, m * l]).slice(0, r - 2), l - 1, 1];
      be.route.copyInto(x, s, sStrides, m - 1);
      be.route.fill(zero, 0);
      const zeros: NDArray = { ...viewOf(zero, []), shape: [...batch, m, hi - lo], strides: new Array(r).fill(0) };
      be.route.copyInto(zeros, s, [...sStrides.slice(0, r - 2), l, 1], lo);
      const skewed: NDArray = { ...viewOf(s), shape: [...x.shape], strides: sStrides, offset: m - 1 };
      be.route.copyInto(skewed, out, outStrides, 0);
    } finally {
      be.deallocate(s);
      be.deallocate(zero);
    }
  });
  return viewOf(out, x.shape);
}

/** The layout methods (LayoutMethods) as BaseBackend has them (FAMILIES, base.ts): built on copyIntoKernel. */
export const LAYOUT_METHODS: FamilyTable<LayoutMethods> = {
  concat(xs: readonly NDArray[], axis?: number) {
    return concat(this, xs, axis);
  },
  stack(xs: readonly NDArray[], axis?: number) {
    return stack(this, xs, axis);
  },
  split(x: NDArray, s: number | readonly number[], axis?: number) {
    return split(this, x, s, axis);
  },
  tile(x: NDArray, reps: readonly number[]) {
    return tile(this, x, reps);
  },
  flip(x: NDArray, axes?: number | readonly number[]) {
    return flip(this, x, axes);
  },
  trilu(x: NDArray, k?: number, upper?: boolean) {
    return trilu(this, x, k, upper);
  },
} satisfies FamilyTable<LayoutMethods, LayoutHost>;
