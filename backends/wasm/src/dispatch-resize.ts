/**
 * Resize dispatch of the WASM backend: nearest resize as one gather kernel (assembly/resize.ts) instead of
 * the HAL's composite (a gather per resized axis, each into a temporary). The host computes each axis' input
 * index per output position with the composite's own axisTaps (float64 coordinate transformations, the same
 * rounding), so the result is the composite's, bit for bit; the kernel copies rows. An integer upscale along
 * a last axis of stride 1 is flagged so that the kernel stores each input element f times.
 * Returns null, so that the composite runs (and throws its typed errors), for: other modes, tf_crop_and_resize
 * (extrapolation), options outside their domains, non-float32 x, rank 0, empty inputs or outputs.
 */
import type { NDArray, ResizeOptions } from '@polyhal/hal';
import { viewOf } from '@polyhal/hal';
import { axisTaps } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';
import type { ConvBackend } from './dispatch-conv.js';

/** Coordinate transformations the kernel takes (tf_crop_and_resize's extrapolation stays on the composite). */
const TRANSFORMS = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'tf_half_pixel_for_nn'];
const NEAREST = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'];
// assembly/resize.ts's parameter block: rank, x, y, factor, then sizes, strides, table starts, tables
const HEADER = 4;

/** A list of `r` numbers each `ok`, or undefined. */
const listOf = (v: unknown, r: number, ok: (d: number) => boolean): number[] | undefined =>
  Array.isArray(v) && v.length === r && v.every((d) => typeof d === 'number' && ok(d)) ? (v as number[]) : undefined;

/** The input index of each output position along one axis (nearest: the tap of weight 1). */
function axisIndex(nIn: number, nOut: number, scale: number, axis: number, r: number, o: ResizeOptions): Int32Array {
  if (nOut === nIn && scale === 1) return Int32Array.from({ length: nIn }, (_, i) => i);
  const t = axisTaps(nIn, nOut, scale, axis, r, o);
  return Int32Array.from(t.index[0]!, (i0, j) => (t.weight[0]![j] === 1 ? i0 : t.index[1]![j]!));
}

/** f where table[j] = ⌊j / f⌋ over the whole axis (an integer upscale), else 0. */
function upscaleFactor(table: Int32Array, nIn: number): number {
  const f = table.length / nIn;
  if (!Number.isInteger(f) || f < 2) return 0;
  return table.every((i, j) => i === Math.floor(j / f)) ? f : 0;
}

/**
 * resize(x, o) in mode 'nearest' on the wasm kernel: x [...] float32 (any strides) → [...sizes] (or
 * ⌊shape·scales⌋), ONNX Resize's nearest semantics as the composite's; null where the composite should run.
 */
export function resizeOnWasm(be: ConvBackend, ctx: WasmContext, x: NDArray, o: ResizeOptions): NDArray | null {
  be.check(x, 'resize', 'x');
  if (!o || typeof o !== 'object') return null;
  const r = x.shape.length;
  if (x.dtype !== 'float32' || r === 0 || (o.mode ?? 'nearest') !== 'nearest') return null;
  if (!TRANSFORMS.includes(o.coordinateTransformationMode ?? 'half_pixel')) return null;
  if (!NEAREST.includes(o.nearestMode ?? 'round_prefer_floor')) return null;
  const sizesArg = listOf(o.sizes, r, (d) => Number.isInteger(d) && d >= 0);
  const scalesArg = listOf(o.scales, r, (d) => Number.isFinite(d) && d > 0);
  if ((o.sizes !== undefined && !sizesArg) || (o.scales !== undefined && !scalesArg)) return null;
  if (!sizesArg && !scalesArg) return null;
  const sizes = sizesArg ?? x.shape.map((n, i) => Math.floor(n * scalesArg![i]!));
  const scales = scalesArg ?? sizes.map((d, i) => d / x.shape[i]!);
  const total = sizes.reduce((p, d) => p * d, 1);
  if (total === 0 || x.shape.includes(0) || total >= 2 ** 31) return null;
  const tables = sizes.map((d, a) => axisIndex(x.shape[a]!, d, scales[a]!, a, r, o));
  const last = tables[r - 1]!;
  const factor = x.strides[r - 1] === 1 ? upscaleFactor(last, x.shape[r - 1]!) : 0;
  const starts: number[] = [];
  let at = HEADER + 3 * r;
  for (const t of tables) {
    starts.push(at);
    at += t.length;
  }
  const words = at;
  const y = be.allocate(total, 'float32');
  const rows = total / sizes[r - 1]!;
  const parts = ctx.pool && total >= ctx.elementwiseThreadThreshold ? Math.min(ctx.pool.size, rows) : 1;
  const scratch: number[] = [];
  let block = 0; // (0: not allocated; the heap starts past 0)
  try {
    block = ctx.heap.alloc(words * 4);
    for (let p = 0; p < parts; p++) scratch.push(ctx.heap.alloc(r * 4));
    const heap = ctx.heap.i32();
    const b = block >>> 2;
    heap.set([r, ctx.ptr(x.buffer) + x.offset * 4, ctx.ptr(y), factor, ...sizes, ...x.strides, ...starts], b);
    tables.forEach((t, a) => heap.set(t, b + starts[a]!));
    if (parts === 1) ctx.k.resizeNearest(block, 0, rows, scratch[0]!);
    else {
      const each = Math.ceil(rows / parts);
      const jobs = scratch
        .map((s, p) => [block, Math.min(rows, p * each), Math.min(rows, (p + 1) * each), s])
        .filter((j) => j[1]! < j[2]!);
      ctx.pool!.run('resizeNearest', jobs, (j) => ctx.k.resizeNearest(j[0]!, j[1]!, j[2]!, j[3]!));
    }
  } catch (e) {
    be.deallocate(y);
    throw e;
  } finally {
    for (const s of scratch) ctx.heap.release(s, r * 4);
    if (block) ctx.heap.release(block, words * 4);
  }
  return viewOf(y, sizes);
}
