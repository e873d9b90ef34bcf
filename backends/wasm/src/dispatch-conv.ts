/**
 * Conv dispatch of the WASM backend: float32 convolutions over 1 or 2 spatial axes on the kernels of
 * assembly/conv.ts, instead of the HAL's composite (im2col materialized, then a [N·P, C·K] · [C·K, O]
 * matmul and a transpose back to channels first):
 * - depthwise (groups = C = O): depthwiseConv, one padded plane at a time, the planes queued for the pool's
 *   threads;
 * - otherwise one GEMM per batch item and group, y[O/g, P] = w[O/g, C/g·K] · im2col(x), the output written
 *   channels first and the pixels split across the pool (whole 8-column panels): stride 1 on convDirect, whose
 *   B is the (zero-padded) image itself over a grid of rows as wide as the padded image; other strides on
 *   convGemm, the im2col columns packed straight from the image.
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
import { QUEUE_PARTS } from './threads.js';

/** What the dispatch uses of the backend: the composite's checks and its allocator. */
export type ConvBackend = ConvHost & { allocate(size: number, dtype: 'float32'): DeviceBuffer };

// assembly/conv.ts's parameter block (GEO_*), in i32 words.
const GEO_WORDS = 18;
/** Queued parts per thread of a conv's GEMM or depthwise planes. */
const PARTS_PER_THREAD = 3;
/** Weights from which convPackA's panels are split across the pool. */
const PACK_SPLIT = 2 ** 15;
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
      const K = geo.C * geo.kh * geo.kw;
      const aBytes = ctx.k.convPackBytesA(Og, K) >>> 0;
      const packed = ctx.heap.alloc(aBytes * groups);
      try {
        for (let q = 0; q < groups; q++) packWeights(ctx, pw + q * Og * K * 4, Og, K, packed + q * aBytes);
        for (let n = 0; n < N; n++)
          for (let q = 0; q < groups; q++) {
            const xq = px + (n * C + q * geo.C) * plane * 4;
            const yq = py + (n * O + q * Og) * P * 4;
            gemm(ctx, geo, Og, K, [xq, packed + q * aBytes, yq, pb && pb + q * Og * 4]);
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

/**
 * convPackA of one group's weights [M, K] at w into dst, its MR-row panels split across the pool when there are
 * enough of them (16 bytes written per weight: 0.16 ms for 480 × 480 on one thread).
 */
function packWeights(ctx: WasmContext, w: number, M: number, K: number, dst: number): void {
  const panels = Math.ceil(M / ctx.k.gemmRowBlock());
  const parts = ctx.pool && M * K >= PACK_SPLIT ? Math.min(ctx.pool.size, panels) : 1;
  if (parts === 1) {
    ctx.k.convPackA(w, M, K, dst, 0, panels);
    return;
  }
  const each = Math.ceil(panels / parts);
  const jobs = Array.from({ length: parts }, (_, p) => [w, M, K, dst, p * each, Math.min(panels, (p + 1) * each)]);
  ctx.pool!.run(
    'convPackA',
    jobs.filter((j) => j[4]! < j[5]!),
    (j) => ctx.k.convPackA(j[0]!, j[1]!, j[2]!, j[3]!, j[4]!, j[5]!),
  );
}

/**
 * Where a stride-1 conv runs on convDirect (assembly/conv-direct.ts), the pixels per row of its wide output grid
 * (OW plus the window's reach: the padded image's width); else null (convGemm): other strides, and grids whose
 * extra columns would add more than 5% of the panels (a 1×3 window over 40 pixels). A conv without padding reads x
 * in place, up to a window's reach and a panel past the group's planes: it stays on convGemm where that would
 * pass the end of the memory.
 */
function directWidth(ctx: WasmContext, g: Geometry, x: number): number | null {
  if (g.sh !== 1 || g.sw !== 1 || g.pt < 0 || g.pl < 0) return null;
  const wp = Math.max(g.W + g.pl, g.OW + (g.kw - 1) * g.dw);
  // the wide grid's extra pixels (wp − OW a row) cost their multiply-adds: at most 5% more panels
  if (Math.ceil((g.OH * wp) / 8) > 1.05 * Math.ceil((g.OH * g.OW) / 8)) return null;
  const unpadded = g.pt === 0 && g.pl === 0 && wp === g.W && g.OH + (g.kh - 1) * g.dh <= g.H;
  const reach = x + (g.C * g.H * g.W + (g.kw - 1) * g.dw + 8) * 4;
  return unpadded && reach > ctx.k.memory.buffer.byteLength ? null : wp;
}

/**
 * One group's conv over all its output pixels, split across the pool in whole 8-pixel panels when large: stride 1
 * on convDirect over the wide grid (OH rows of the padded width), other strides on convGemm over OH·OW pixels.
 */
function gemm(ctx: WasmContext, g: Geometry, M: number, K: number, ptrs: readonly number[]): void {
  const wp = directWidth(ctx, g, ptrs[0]!);
  const P = g.OH * (wp ?? g.OW);
  const threads = ctx.pool && M * K * P >= ctx.threadThreshold ? Math.min(ctx.pool.size, Math.ceil(P / 64)) : 1;
  // parts that the threads claim in turn: a few per thread, so that one the system holds back takes fewer
  const parts = threads === 1 ? 1 : Math.min(QUEUE_PARTS, Math.ceil(P / 64), threads * PARTS_PER_THREAD);
  const cols = Math.ceil(P / parts / 8) * 8;
  const ranges = Array.from(
    { length: parts },
    (_, p) => [Math.min(P, p * cols), Math.min(P, (p + 1) * cols)] as const,
  ).filter(([q0, q1]) => q0 < q1);
  const block = ctx.heap.alloc(GEO_WORDS * 4);
  const scratch: number[] = [];
  let bytes = 0;
  try {
    writeBlock(ctx, block, g, M, ptrs);
    for (const [q0, q1] of ranges)
      bytes = Math.max(
        bytes,
        (wp === null ? ctx.k.convScratchBytes(M) : ctx.k.convDirectScratchBytes(block, q0, q1)) >>> 0,
      );
    for (let t = 0; t < threads; t++) scratch.push(ctx.heap.alloc(bytes));
    const kernel = wp === null ? 'convGemm' : 'convDirect';
    if (ranges.length === 1) ctx.k[kernel](block, 0, P, scratch[0]!);
    else
      ctx.pool!.runQueued(
        kernel,
        ranges.map(([q0, q1]) => [block, q0, q1, 0]),
        (j) => ctx.k[kernel](j[0]!, j[1]!, j[2]!, j[3]!),
        { index: 3, values: scratch },
      );
  } finally {
    for (const s of scratch) ctx.heap.release(s, bytes);
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
    const threads = ctx.pool && work >= DEPTHWISE_SPLIT ? Math.min(ctx.pool.size, planes) : 1;
    const scratch = Array.from({ length: threads }, () => ctx.heap.alloc(scratchBytes));
    try {
      if (threads === 1) {
        ctx.k.depthwiseConv(block, 0, planes, scratch[0]!);
        return;
      }
      // parts that the threads claim in turn (runQueued), each on the claiming thread's scratch plane
      const parts = Math.min(QUEUE_PARTS, planes, threads * PARTS_PER_THREAD);
      const each = Math.ceil(planes / parts);
      const jobs = Array.from({ length: parts }, (_, p) => [block, p * each, Math.min(planes, (p + 1) * each), 0]);
      ctx.pool!.runQueued(
        'depthwiseConv',
        jobs.filter((j) => j[1]! < j[2]!),
        (j) => ctx.k.depthwiseConv(j[0]!, j[1]!, j[2]!, j[3]!),
        { index: 3, values: scratch },
      );
    } finally {
      for (const s of scratch) ctx.heap.release(s, scratchBytes);
    }
  } finally {
    ctx.heap.release(block, GEO_WORDS * 4);
  }
}
