/**
 * Conv dispatch of the WASM backend: float32 convolutions over 1 or 2 spatial axes on the kernels of
 * assembly/conv.ts, instead of the HAL's composite (im2col materialized, then a [N·P, C·K] · [C·K, O]
 * matmul and a transpose back to channels first):
 * - depthwise (groups = C = O): depthwiseConv, one padded plane at a time, the planes split across the pool;
 * - otherwise one convGemm per batch item and group, y[O/g, P] = w[O/g, C/g·K] · im2col(x), the im2col
 *   columns packed straight from the image and the output written channels first; the pixels split across
 *   the pool (whole 8-column panels). A 1×1 window of stride 1 without padding reads x as one [C, H·W] row
 *   per channel.
 * 1-D convolutions run as 2-D ones of height 1. Operands are checked as the composite checks them (typed
 * errors); 3-D windows and empty shapes return null, and the backend falls back to the composite.
 */
import { type ConvOptions, contiguousStrides, type DeviceBuffer, type NDArray, viewOf } from '@polyhal/hal';
import {
  type ConvHost,
  checkConvBias,
  checkConvOperands,
  isDepthwise,
  type Window2d,
  window2d,
  windowGeometry,
} from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';

/** What the dispatch uses of the backend: the composite's checks and its allocator. */
export type ConvBackend = ConvHost & { allocate(size: number, dtype: 'float32'): DeviceBuffer };

// assembly/conv.ts's parameter block (GEO_*), in i32 words.
const GEO_WORDS = 18;
/** Multiply-adds per depthwise part below which the planes stay on one thread. */
const DEPTHWISE_SPLIT = 2 ** 18;

/** One group's window: the 2-D form of the conv's geometry and its input channels per group. */
type Geometry = Window2d & { C: number };

/** Writes the parameter block at `at`: the geometry, then M, x, A (or w), y and bias pointers. */
function writeBlock(ctx: WasmContext, at: number, g: Geometry, M: number, ptrs: readonly number[]): void {
  const words = [g.C, g.H, g.W, g.OH, g.OW, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, M, ...ptrs];
  ctx.heap.i32().set(words, at >>> 2); // pointers ≥ 2^31 keep their bits (ToInt32)
}

/**
 * `a` itself where its elements lie in row-major order from its offset (the kernels read it in place), else a
 * contiguous copy, pushed to `temps` for the caller to free.
 */
export function rowMajor(be: ConvBackend, a: NDArray, temps: NDArray[]): NDArray {
  const strides = contiguousStrides(a.shape);
  if (a.shape.every((d, i) => d === 1 || a.strides[i] === strides[i])) return a;
  const c = be.contiguous(a);
  temps.push(c);
  return c;
}

/** conv(x, w, o) on the wasm kernels, or null where the composite should run (3-D, empty). */
export function convOnWasm(be: ConvBackend, ctx: WasmContext, x: NDArray, w: NDArray, o: ConvOptions): NDArray | null {
  const { r, groups, N, C, O } = checkConvOperands(be, x, w, o.groups, 'conv');
  const bias = checkConvBias(be, o.bias, O, 'conv');
  if (r > 2) return null;
  const wg = windowGeometry(x.shape.slice(2), { kernel: w.shape.slice(2), ...o }, 'conv');
  const geo: Geometry = { C: C / groups, ...window2d(x.shape.slice(2), wg) };
  const P = geo.OH * geo.OW;
  if (N * C * O * P === 0) return null;
  const temps: NDArray[] = [];
  const dense = (a: NDArray): NDArray => rowMajor(be, a, temps);
  const xc = dense(x);
  const wc = dense(w);
  const bc = bias && dense(bias);
  const out = be.allocate(N * O * P, 'float32');
  try {
    const [px, pw, py] = [ctx.ptr(xc.buffer) + xc.offset * 4, ctx.ptr(wc.buffer) + wc.offset * 4, ctx.ptr(out)];
    // each output channel's bias, added to its finished sums by the kernels (0: none)
    const pb = bc ? ctx.ptr(bc.buffer) + bc.offset * 4 : 0;
    if (isDepthwise(groups, C, O)) depthwise(ctx, { ...geo, C }, N * C, px, pw, py, pb);
    else {
      const Og = O / groups;
      const plane = geo.H * geo.W;
      // a 1×1 window of stride 1 without padding: each channel one row of H·W pixels
      const flat = geo.kh === 1 && geo.kw === 1 && geo.sh === 1 && geo.sw === 1 && geo.pt === 0 && geo.pl === 0;
      const g: Geometry = flat && geo.OH === geo.H && geo.OW === geo.W ? { ...geo, H: 1, W: P, OH: 1, OW: P } : geo;
      const K = geo.C * geo.kh * geo.kw;
      const aBytes = ctx.k.convPackBytesA(Og, K) >>> 0;
      const packed = ctx.heap.alloc(aBytes * groups);
      try {
        for (let q = 0; q < groups; q++) ctx.k.convPackA(pw + q * Og * K * 4, Og, K, packed + q * aBytes);
        for (let n = 0; n < N; n++)
          for (let q = 0; q < groups; q++) {
            const xq = px + (n * C + q * geo.C) * plane * 4;
            const yq = py + (n * O + q * Og) * P * 4;
            gemm(ctx, g, Og, K, [xq, packed + q * aBytes, yq, pb && pb + q * Og * 4]);
          }
      } finally {
        ctx.heap.release(packed, aBytes * groups);
      }
    }
  } catch (e) {
    be.deallocate(out);
    throw e;
  } finally {
    for (const t of temps) be.free(t);
  }
  return viewOf(out, [N, O, ...wg.output]);
}

/** One group's convGemm over all P pixels, split across the pool in whole 8-column panels when large. */
function gemm(ctx: WasmContext, g: Geometry, M: number, K: number, ptrs: readonly number[]): void {
  const P = g.OH * g.OW;
  const parts = ctx.pool && M * K * P >= ctx.threadThreshold ? Math.min(ctx.pool.size, Math.ceil(P / 64)) : 1;
  const scratchBytes = ctx.k.convScratchBytes(M) >>> 0;
  const block = ctx.heap.alloc(GEO_WORDS * 4);
  const scratch = Array.from({ length: parts }, () => ctx.heap.alloc(scratchBytes));
  try {
    writeBlock(ctx, block, g, M, ptrs);
    if (parts === 1) {
      ctx.k.convGemm(block, 0, P, scratch[0]!);
      return;
    }
    const cols = Math.ceil(P / parts / 8) * 8;
    const jobs = scratch
      .map((s, p) => [block, Math.min(P, p * cols), Math.min(P, (p + 1) * cols), s])
      .filter((j) => j[1]! < j[2]!);
    ctx.pool!.run('convGemm', jobs, (j) => ctx.k.convGemm(j[0]!, j[1]!, j[2]!, j[3]!));
  } finally {
    for (const s of scratch) ctx.heap.release(s, scratchBytes);
    ctx.heap.release(block, GEO_WORDS * 4);
  }
}

/** depthwiseConv over `planes` (N·C) planes, split across the pool by planes when large. */
function depthwise(
  ctx: WasmContext,
  g: Geometry,
  planes: number,
  px: number,
  pw: number,
  py: number,
  pb: number,
): void {
  const block = ctx.heap.alloc(GEO_WORDS * 4);
  try {
    writeBlock(ctx, block, g, g.C, [px, pw, py, pb]);
    const scratchBytes = ctx.k.depthwiseScratchBytes(block) >>> 0;
    const work = planes * g.OH * g.OW * g.kh * g.kw;
    const parts = ctx.pool && work >= DEPTHWISE_SPLIT ? Math.min(ctx.pool.size, planes) : 1;
    const scratch = Array.from({ length: parts }, () => ctx.heap.alloc(scratchBytes));
    try {
      if (parts === 1) {
        ctx.k.depthwiseConv(block, 0, planes, scratch[0]!);
        return;
      }
      const each = Math.ceil(planes / parts);
      const jobs = scratch
        .map((s, p) => [block, Math.min(planes, p * each), Math.min(planes, (p + 1) * each), s])
        .filter((j) => j[1]! < j[2]!);
      ctx.pool!.run('depthwiseConv', jobs, (j) => ctx.k.depthwiseConv(j[0]!, j[1]!, j[2]!, j[3]!));
    } finally {
      for (const s of scratch) ctx.heap.release(s, scratchBytes);
    }
  } finally {
    ctx.heap.release(block, GEO_WORDS * 4);
  }
}
