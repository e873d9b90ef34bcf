/**
 * cumsum and topk of every backend (BaseBackend's), composed once from HAL ops. Table entries:
 * ops/scan-ops.ts.
 *
 * cumsum is a blocked scan (Blelloch, "Prefix sums and their applications", 1990, §1.4: scan the
 * blocks, scan the block totals, add them back): the axis is cut into blocks of BLOCK; each block's
 * running sums are one sum reduction over a strided window view of the zero-padded block (output j
 * sums the BLOCK elements ending at j — Hillis and Steele's data-parallel prefix as one reduction);
 * the block totals are scanned the same way (recursively), shifted by one and added back.
 *
 * topk is a tournament of rank-by-comparison rounds: the axis is cut into blocks of b elements; each
 * element's rank in its block is i + #{j > i beating it} − #{j < i it beats} (a beat is a strictly
 * better value, NaN above every number), which puts equal values in position order; the first k of
 * each block are gathered, and the candidates — still in position order among equal values, since
 * blocks keep their order — go through the next round until one block remains.
 */
import type { KernelRouter } from '../../contract/kernel-router.js';
import type { FamilyTable } from '../../contract/family-table.js';
import type { ConvHost } from '../conv/conv-check.js';
import { DTypeError, InvalidArgumentError } from '../../core/errors.js';
import type { DType } from '../../core/dtype.js';
import { asStridedView, type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import { normalizeAxis, sizeOf } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { describeValue } from '../../contract/validate.js';

/** Options of cumsum (ONNX CumSum's attributes). */
export interface CumsumOptions {
  /** Sum the elements before j only (ONNX exclusive): y_0 = 0. */
  exclusive?: boolean;
  /** Sum from the end of the axis (ONNX reverse). */
  reverse?: boolean;
}

/** Options of topk (ONNX TopK's attributes). */
export interface TopKOptions {
  /** The largest elements (default); false: the smallest. */
  largest?: boolean;
  /** Accepted for ONNX; the result is always sorted, best first. */
  sorted?: boolean;
}

/** cumsum and topk: the scan and selection methods every ComputeBackend has (BaseBackend's). */
export interface ScanMethods {
  /**
   * Running sums of x (float32, float64 or int32, int32 wrapping) along `axis` → x.shape (NumPy cumsum, ONNX
   * CumSum). InvalidArgumentError for an axis out of range (a 0-d x takes 0 or −1) or non-boolean options.
   */
  cumsum(x: NDArray, axis: number, options?: CumsumOptions): NDArray;
  /**
   * The k largest (or smallest) elements along `axis` (default −1) → {values [.., k, ..] of x's dtype,
   * indices int32}, best first, the lower index first among equal values, NaN above every number
   * (ONNX TopK, PyTorch topk). InvalidArgumentError for a 0-d x, a bad axis or k outside [0, n].
   */
  topk(x: NDArray, k: number, axis?: number, options?: TopKOptions): { values: NDArray; indices: NDArray };
}

/** Elements summed by one window reduction of cumsum. */
export const CUMSUM_BLOCK = 16;
/** Smallest block of a topk round (b = max(TOPK_BLOCK, 4k)). */
export const TOPK_BLOCK = 16;
const FLT_MAX = 3.4028234663852886e38;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

type Temp = <A extends NDArray>(a: A) => A;

/** The optional fused hooks (hooks.ts OPTIONAL_HOOKS) and what running them needs of a BaseBackend. */
interface ScanKernelHost {
  allocate(size: number, dtype: DType): DeviceBuffer;
  deallocate(b: DeviceBuffer): void;
  guard(out: DeviceBuffer, run: () => void): void;
  cumsumKernel?(x: NDArray, out: DeviceBuffer, exclusive: boolean, reverse: boolean): void;
  topkKernel?(x: NDArray, k: number, largest: boolean, values: DeviceBuffer, indices: DeviceBuffer): boolean | void;
  /** The kernels, routed by dtype (kernel-router.ts): cumsum and topk here, where the hooks exist. */
  readonly route: KernelRouter;
}

function checkOperand(be: ConvHost, x: NDArray, op: string): void {
  be.check(x, op, 'x');
  if (x.dtype !== 'float32' && x.dtype !== 'int32' && x.dtype !== 'float64')
    throw new DTypeError(`${op}: float32, float64 or int32, got ${x.dtype}`);
}

function checkFlag(v: unknown, op: string, name: string): boolean {
  if (typeof v !== 'boolean')
    throw new InvalidArgumentError(`${op}: ${name} must be a boolean, got ${describeValue(v)}`);
  return v;
}

/** The axis normalized against a rank of at least 1 (`rank` 0 behaves as 1, PyTorch's rule for cumsum). */
function checkAxisOf(axis: unknown, rank: number, op: string): number {
  const r = Math.max(rank, 1);
  if (!Number.isInteger(axis) || (axis as number) < -r || (axis as number) >= r)
    throw new InvalidArgumentError(
      `${op}: axis ${describeValue(axis)} is out of range for rank ${rank} (valid: ${-r}..${r - 1})`,
    );
  return normalizeAxis(axis as number, r);
}

/** x as [outer, n, inner] (a view when the strides allow, else a copy kept by `t`). */
function asThreeDims(be: ConvHost, x: NDArray, ax: number, t: Temp): NDArray {
  const outer = sizeOf(x.shape.slice(0, ax));
  const inner = sizeOf(x.shape.slice(ax + 1));
  const v = be.reshape(x, [outer, x.shape[ax] ?? 1, inner]);
  return v.buffer === x.buffer ? v : t(v);
}

/**
 * Inclusive running sums of x [O, n, I] along axis 1 (from the end when `reverse`): a new contiguous
 * [O, n, I]. Blocks of b = min(n, CUMSUM_BLOCK): padded with b − 1 zeros on the side the sums come
 * from, output j of a block is the sum of the window [j, j + b) of the padded block.
 */
function inclusiveScan(be: ConvHost, x: NDArray, reverse: boolean): NDArray {
  return withTemps(be, (t) => {
    const [O, n, I] = x.shape as [number, number, number];
    const b = Math.min(n, CUMSUM_BLOCK);
    const m = Math.ceil(n / b);
    const L = m * b;
    const full =
      L === n
        ? x
        : t(
            be.pad(x, [
              [0, 0],
              [0, L - n],
              [0, 0],
            ]),
          );
    const blocks = be.reshape(full, [O, m, b, I]);
    if (blocks.buffer !== full.buffer && blocks.buffer !== x.buffer) t(blocks);
    const padded = t(be.pad(blocks, [[0, 0], [0, 0], reverse ? [0, b - 1] : [b - 1, 0], [0, 0]]));
    const w = 2 * b - 1;
    const windows = asStridedView(padded, [O, m, b, b, I], [m * w * I, w * I, I, I, 1], 0);
    if (m === 1 && L === n) return be.reshape(be.sum(windows, 3), [O, n, I]);
    const local = t(be.sum(windows, 3));
    const totals = be.reshape(be.shrink(local, [[0, O], [0, m], reverse ? [0, 1] : [b - 1, b], [0, I]]), [O, m, I]);
    if (totals.buffer !== local.buffer) t(totals);
    const running = t(inclusiveScan(be, totals, reverse));
    // offsets: the totals of the blocks before (after, reversed) each block
    const kept = be.shrink(running, [[0, O], reverse ? [1, m] : [0, m - 1], [0, I]]);
    const offsets = t(be.pad(kept, [[0, 0], reverse ? [0, 1] : [1, 0], [0, 0]]));
    const summed = be.add(local, be.reshape(offsets, [O, m, 1, I]));
    if (L === n) return be.reshape(summed, [O, n, I]);
    t(summed);
    return be.contiguous(
      be.shrink(be.reshape(summed, [O, L, I]), [
        [0, O],
        [0, n],
        [0, I],
      ]),
    );
  });
}

/** cumsum composed from HAL ops (the blocked scan above), for backends without the cumsumKernel hook. */
export function cumsumComposite(be: ConvHost, x: NDArray, axis: number, options: CumsumOptions = {}): NDArray {
  checkOperand(be, x, 'cumsum');
  const ax = checkAxisOf(axis, x.shape.length, 'cumsum');
  const exclusive = checkFlag(options?.exclusive ?? false, 'cumsum', 'exclusive');
  const reverse = checkFlag(options?.reverse ?? false, 'cumsum', 'reverse');
  if (sizeOf(x.shape) === 0) return be.full(x.shape, 0, x.dtype);
  const host = be as unknown as ScanKernelHost;
  if (typeof host.cumsumKernel === 'function')
    return withTemps(be, (t) => {
      const x3 = asThreeDims(be, x, ax, t);
      const out = host.allocate(sizeOf(x.shape), x.dtype);
      host.guard(out, () => host.route.cumsum(x3, out, exclusive, reverse));
      return viewOf(out, x.shape);
    });
  return withTemps(be, (t) => {
    const x3 = asThreeDims(be, x, ax, t);
    const [O, n, I] = x3.shape as [number, number, number];
    let src = x3;
    if (exclusive) {
      // shift by one toward the end (the start, reversed), a zero entering
      const kept = be.shrink(x3, [[0, O], reverse ? [1, n] : [0, n - 1], [0, I]]);
      src = t(be.pad(kept, [[0, 0], reverse ? [0, 1] : [1, 0], [0, 0]]));
    }
    const out = inclusiveScan(be, src, reverse);
    const shaped = be.reshape(out, x.shape);
    if (shaped.buffer !== out.buffer) be.free(out);
    return shaped;
  });
}

/** 1 where x is NaN, in x's dtype (float32: without x != x, which WGSL compilers may fold; float64: x != x). */
function isNaNMask(be: ConvHost, x: NDArray, t: Temp): NDArray {
  if (x.dtype === 'float64') return t(be.cast(t(be.notEqual(x, x)), 'float64'));
  const abs = t(be.abs(x));
  return t(be.sub(t(be.sub(1, t(be.cmplt(abs, Infinity)))), t(be.cmplt(FLT_MAX, abs))));
}

/** int32 array of `shape` holding step × its row-major position. */
function ramp(be: ConvHost, shape: number[], t: Temp, step = 1): NDArray {
  return t(
    be.fromArray(
      Int32Array.from({ length: sizeOf(shape) }, (_, i) => i * step),
      shape,
      'int32',
    ),
  );
}

/** int32 0, 1, ..., n − 1 laid along dim `at` of a rank-`rank` shape of ones. */
function iota(be: ConvHost, n: number, rank: number, at: number, t: Temp): NDArray {
  return ramp(
    be,
    Array.from({ length: rank }, (_, i) => (i === at ? n : 1)),
    t,
  );
}

interface Round {
  /** Candidate values [R, L] (contiguous). */
  values: NDArray;
  /** Their positions on the axis [R, L] int32; null in the first round (the position itself). */
  indices: NDArray | null;
}

/** One tournament round over [R, L] candidates: blocks of b, the first kk = min(k, b) of each kept. */
function topkRound(be: ConvHost, c: Round, k: number, largest: boolean, b: number, t: Temp): Round {
  const [R, L] = c.values.shape as [number, number];
  const blocks = Math.ceil(L / b);
  const kk = Math.min(k, b);
  const float = c.values.dtype !== 'int32';
  // padding at the end loses to every candidate, and ties go to the lower position
  const loser = float ? (largest ? -Infinity : Number.NaN) : largest ? INT32_MIN : INT32_MAX;
  const pad = blocks * b - L;
  const vals = pad
    ? t(
        be.pad(
          c.values,
          [
            [0, 0],
            [0, pad],
          ],
          loser,
        ),
      )
    : c.values;
  const v = be.reshape(vals, [R, blocks, b]);
  const vj = be.reshape(vals, [R, blocks, b, 1]);
  const vi = be.reshape(vals, [R, blocks, 1, b]);
  // beats[j, i]: element j is strictly better than element i
  let beats = t(largest ? be.cmplt(vi, vj) : be.cmplt(vj, vi));
  if (float) {
    const nan = isNaNMask(be, v, t);
    const nj = be.reshape(nan, [R, blocks, b, 1]);
    const ni = be.reshape(nan, [R, blocks, 1, b]);
    const nanWins = largest ? t(be.mul(nj, t(be.sub(1, ni)))) : t(be.mul(ni, t(be.sub(1, nj))));
    beats = t(be.add(beats, nanWins));
  }
  const below = Float64Array.from({ length: b * b }, (_, e) => (Math.floor(e / b) > e % b ? 1 : 0));
  const later = t(be.mul(beats, t(be.fromArray(below, [b, b], c.values.dtype)))); // j > i
  const up = t(be.sum(later, 2)); // #{j > i beating i}
  const down = t(be.sum(later, 3)); // #{i' < j that j beats}, indexed by j
  const rank = t(be.cast(t(be.sub(up, down)), 'int32'));
  const rankOf = t(be.add(rank, iota(be, b, 3, 2, t))); // [R, blocks, b]
  // position in the block of the element of rank p, p < kk: Σ_i [rank_i = p]·i
  const r4 = be.reshape(rankOf, [R, blocks, 1, b]);
  const p = iota(be, kk, 4, 2, t);
  const hit = t(be.sub(t(be.sub(1, t(be.cmplt(r4, p)))), t(be.cmplt(p, r4))));
  const pos = t(be.sum(t(be.mul(hit, iota(be, b, 4, 3, t))), 3)); // [R, blocks, kk]
  const flat = t(be.add(pos, ramp(be, [R, blocks, 1], t, b)));
  const at = be.reshape(flat, [R * blocks * kk]);
  const values = t(be.reshape(be.gather(be.reshape(vals, [R * blocks * b]), at, 0), [R, blocks * kk]));
  if (c.indices === null) {
    const start = ramp(be, [blocks, 1], t, b);
    return { values, indices: be.reshape(t(be.add(pos, start)), [R, blocks * kk]) };
  }
  const idx = pad
    ? t(
        be.pad(c.indices, [
          [0, 0],
          [0, pad],
        ]),
      )
    : c.indices;
  const indices = t(be.reshape(be.gather(be.reshape(idx, [R * blocks * b]), at, 0), [R, blocks * kk]));
  return { values, indices };
}

/** topk composed from HAL ops (the tournament above), for backends without the topkKernel hook. */
export function topkComposite(
  be: ConvHost,
  x: NDArray,
  k: number,
  axis = -1,
  options: TopKOptions = {},
): { values: NDArray; indices: NDArray } {
  checkOperand(be, x, 'topk');
  if (x.shape.length === 0) throw new InvalidArgumentError('topk: a 0-d array has no axis');
  const ax = checkAxisOf(axis, x.shape.length, 'topk');
  const n = x.shape[ax]!;
  if (!Number.isInteger(k) || k < 0 || k > n)
    throw new InvalidArgumentError(`topk: k must be an integer in [0, ${n}], got ${describeValue(k)}`);
  const largest = checkFlag(options?.largest ?? true, 'topk', 'largest');
  checkFlag(options?.sorted ?? true, 'topk', 'sorted');
  const outShape = x.shape.map((d, i) => (i === ax ? k : d));
  if (sizeOf(outShape) === 0) return { values: be.full(outShape, 0, x.dtype), indices: be.full(outShape, 0, 'int32') };
  const host = be as unknown as ScanKernelHost;
  if (typeof host.topkKernel === 'function') {
    const r = withTemps(be, (t) => {
      const x3 = asThreeDims(be, x, ax, t);
      const values = host.allocate(sizeOf(outShape), x.dtype);
      let indices: DeviceBuffer | undefined;
      let done: boolean | void;
      try {
        indices = host.allocate(sizeOf(outShape), 'int32');
        done = host.route.topk(x3, k, largest, values, indices);
      } catch (e) {
        host.deallocate(values);
        if (indices) host.deallocate(indices);
        throw e;
      }
      if (done !== false) return { values: viewOf(values, outShape), indices: viewOf(indices, outShape) };
      host.deallocate(values); // declined (e.g. a k the backend's kernel does not serve): the composite runs
      host.deallocate(indices);
      return null;
    });
    if (r) return r;
  }
  return withTemps(be, (t) => {
    const r = x.shape.length;
    const perm = [...Array.from({ length: r }, (_, i) => i).filter((i) => i !== ax), ax];
    const moved = be.permute(x, perm);
    const R = sizeOf(moved.shape) / n;
    let round: Round = { values: be.reshape(t(be.contiguous(moved)), [R, n]), indices: null };
    for (;;) {
      const L = round.values.shape[1]!;
      const b = Math.max(TOPK_BLOCK, 4 * k);
      round = topkRound(be, round, k, largest, Math.min(L, b), t);
      if (L <= b) break;
    }
    const lead = moved.shape.slice(0, -1);
    const inverse = perm.map((_, i) => perm.indexOf(i));
    const back = (a: NDArray): NDArray => be.contiguous(be.permute(be.reshape(a, [...lead, k]), inverse));
    return { values: back(round.values), indices: back(round.indices!) };
  });
}

/** The scan methods (ScanMethods) as BaseBackend has them (FAMILIES, base.ts): the fused hooks, else composites. */
export const SCAN_METHODS: FamilyTable<ScanMethods> = {
  cumsum(x: NDArray, axis: number, o?: CumsumOptions) {
    return cumsumComposite(this, x, axis, o);
  },
  topk(x: NDArray, k: number, axis?: number, o?: TopKOptions) {
    return topkComposite(this, x, k, axis, o);
  },
} satisfies FamilyTable<ScanMethods, ConvHost>;
