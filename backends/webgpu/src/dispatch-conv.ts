/**
 * Conv dispatch of the WebGPU backend: float32 convolutions over 1 or 2 spatial axes in one kernel each,
 * instead of the HAL's composite (depthwise: a multiply and an add per kernel tap; otherwise im2col
 * materialized by copies, a matmul and a transpose back to channels first):
 * - depthwise (groups = C = O): kernels/conv-depthwise.ts, one invocation per output element;
 * - otherwise kernels/conv2d.ts, an implicit GEMM per batch item and group reading x through the window
 *   indices (a 1×1 window of stride 1 without padding as a plain GEMM over the channels); on a software
 *   adapter kernels/conv2d-blocks.ts, register blocks without workgroup memory.
 * convTranspose runs as kernels/conv-transpose.ts, one invocation per output element gathering its taps.
 * Nearest resize runs as kernels/conv-resize.ts, one gather over every axis.
 * 1-D convolutions run as 2-D ones of height 1. Operands are checked as the composite checks them (typed
 * errors); 3-D windows and empty shapes return null, and the backend falls back to the composite.
 */
import {
  type ConvOptions,
  type ConvTransposeOptions,
  type DeviceBuffer,
  type NDArray,
  type ResizeOptions,
  viewOf,
} from '@polyhal/hal';
import {
  axisTaps,
  type ConvHost,
  checkConvBias,
  checkConvOperands,
  convTransposeWindow2d,
  isDepthwise,
  window2d,
  windowGeometry,
} from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { CONV_TRANSPOSE_WORDS, convTransposeWgsl } from './kernels/conv-transpose.js';
import { DEPTHWISE_WORDS, depthwiseWgsl } from './kernels/conv-depthwise.js';
import { RESIZE_HEADER, RESIZE_RANK, resizeNearestWgsl } from './kernels/conv-resize.js';
import { CONV_BLOCK_THREADS, CONV2D_BLOCK_WORDS, conv2dBlocksWgsl } from './kernels/conv2d-blocks.js';
import { CONV2D_WORDS, type ConvTile, conv2dWgsl } from './kernels/conv2d.js';
import { flat } from './kernel-params.js';
import { floatBits, grid } from './layout.js';

/** What the conv dispatch needs of the backend. */
export interface ConvContext {
  readonly batch: CommandBatch;
  /** The GPU buffer of a HAL buffer. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
  allocate(size: number, dtype: 'float32'): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
  /** A software adapter: register blocks without workgroup memory (kernels/conv2d-blocks.ts). */
  readonly software?: boolean;
  /** A placeholder storage buffer, bound where a conv has no bias. */
  readonly dummy?: GPUBuffer;
}

/** Workgroups along z (batch items × groups) a dispatch may use. */
const MAX_Z = 65535;

/** Workgroups a conv's implicit GEMM should at least launch before bigger tiles per invocation pay off. */
const MIN_CONV_WORKGROUPS = 64;

/**
 * RM×RN per invocation: the smallest tile that covers Og (up to 64 rows) and P (up to 64 pixels), made smaller
 * again while the grid would launch fewer than MIN_CONV_WORKGROUPS workgroups (`planes`: batch items × groups).
 * A small output over a long K otherwise runs on one workgroup: PP-OCRv4 rec's 3×3 480→60 conv on 1×40 pixels
 * (K = 4320) took 0.72 ms of an H200 as one 4×4-tiled workgroup.
 */
export function chooseConvTile(Og: number, P: number, planes = 1): ConvTile {
  const fit = (d: number): number => (d <= 16 ? 1 : d <= 32 ? 2 : 4);
  let rm = fit(Og);
  let rn = fit(P);
  const count = (): number => Math.ceil(P / (16 * rn)) * Math.ceil(Og / (16 * rm)) * planes;
  while (count() < MIN_CONV_WORKGROUPS && (rm > 1 || rn > 1)) {
    if (rm >= rn) rm /= 2;
    else rn /= 2;
  }
  return { rm, rn };
}

/** conv(x, w, o) in one WebGPU kernel, or null where the composite should run (3-D, empty, huge batch). */
export function convOnWebGpu(be: ConvHost, ctx: ConvContext, x: NDArray, w: NDArray, o: ConvOptions): NDArray | null {
  const { r, groups, N, C, O } = checkConvOperands(be, x, w, o.groups, 'conv');
  const bias = checkConvBias(be, o.bias, O, 'conv');
  if (r > 2 || !ctx.dummy) return null;
  const g = windowGeometry(x.shape.slice(2), { kernel: w.shape.slice(2), ...o }, 'conv');
  const two = r === 2;
  // [N, C, H, W] geometry; a 1-D conv has H = 1 and a zero H stride
  const { H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl } = window2d(x.shape.slice(2), g);
  const P = OH * OW;
  if (N * C * O * P === 0 || N * groups > MAX_Z || Math.ceil(P / 16) > MAX_Z) return null;
  const [xsn, xsc] = x.strides as [number, number];
  const xsh = two ? x.strides[2]! : 0;
  const xsw = x.strides[r + 1]!;
  const [wso, wsc] = w.strides as [number, number];
  const wsh = two ? w.strides[2]! : 0;
  const wsw = w.strides[r + 1]!;
  const out = ctx.allocate(N * O * P, 'float32');
  // bias offset, stride and presence (the kernels add it to the finished sums)
  const biasWords = bias ? [bias.offset, bias.strides[0]!, 1] : [0, 0, 0];
  const encode = (): void => {
    const buffers = [ctx.gpu(x.buffer), ctx.gpu(w.buffer), ctx.gpu(out), bias ? ctx.gpu(bias.buffer) : ctx.dummy!];
    if (isDepthwise(groups, C, O)) {
      const params = [N * C * P, C, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl, x.offset, xsn, xsc, xsh, xsw];
      params.push(w.offset, wso, wsh, wsw, ...biasWords);
      ctx.batch.dispatch(
        'conv',
        'conv/depthwise',
        () => depthwiseWgsl,
        DEPTHWISE_WORDS,
        params,
        buffers,
        flat(N * C * P),
      );
    } else {
      const Og = O / groups;
      const Cg = C / groups;
      const K = Cg * kh * kw;
      const pointwise = kh === 1 && kw === 1 && sh === 1 && sw === 1 && pt === 0 && pl === 0 && OH === H && OW === W;
      const params = [Og, P, K, groups, Cg, H, W, OW, kh, kw, sh, sw, dh, dw, pt, pl, x.offset, xsn, xsc, xsh, xsw];
      params.push(w.offset, wso, wsc, wsh, wsw, ...biasWords);
      const flops = 2 * N * O * P * K;
      if (ctx.software) {
        const tm = Og <= 4 ? 4 : 8;
        const blocks = N * groups * Math.ceil(Og / tm) * Math.ceil(P / 8);
        const [gx, gy] = grid(Math.ceil(blocks / CONV_BLOCK_THREADS));
        params.push(N * groups);
        const key = `conv/blocks${tm}x8/${pointwise}`;
        const source = (): string => conv2dBlocksWgsl(tm, 8, pointwise);
        ctx.batch.dispatch('conv', key, source, CONV2D_BLOCK_WORDS, params, buffers, [gx, gy, 1], flops);
        return;
      }
      const tile = chooseConvTile(Og, P, N * groups);
      const wg: [number, number, number] = [Math.ceil(P / (16 * tile.rn)), Math.ceil(Og / (16 * tile.rm)), N * groups];
      const key = `conv/gemm/${tile.rm}x${tile.rn}/${pointwise}`;
      ctx.batch.dispatch('conv', key, () => conv2dWgsl(tile, pointwise), CONV2D_WORDS, params, buffers, wg, flops);
    }
  };
  try {
    encode();
  } catch (e) {
    ctx.deallocate(out);
    throw e;
  }
  return viewOf(out, [N, O, ...g.output]);
}

/**
 * convTranspose(x, w, o) in one WebGPU kernel, or null where the composite should run (3-D, empty, and the
 * padding forms the composite rejects, so that it throws its typed errors).
 */
export function convTransposeOnWebGpu(
  be: ConvHost,
  ctx: ConvContext,
  x: NDArray,
  w: NDArray,
  o: ConvTransposeOptions,
): NDArray | null {
  const g = convTransposeWindow2d(be, x, w, o);
  if (!g) return null;
  const { N, C, O, groups, r, output: out, P, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl } = g;
  if (N * C * O * P === 0) return null;
  const at = (v: readonly number[], fill: number): [number, number] => (r === 2 ? [v[0]!, v[1]!] : [fill, v[0]!]);
  const [xsh, xsw] = at(x.strides.slice(2), 0);
  const [wsh, wsw] = at(w.strides.slice(2), 0);
  const params = [N * O * P, C / groups, O / groups, O, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl];
  params.push(x.offset, x.strides[0]!, x.strides[1]!, xsh, xsw, w.offset, w.strides[0]!, w.strides[1]!, wsh, wsw);
  const y = ctx.allocate(N * O * P, 'float32');
  try {
    const buffers = [ctx.gpu(x.buffer), ctx.gpu(w.buffer), ctx.gpu(y)];
    const groupsXyz = flat(N * O * P);
    ctx.batch.dispatch(
      'convTranspose',
      'convTranspose',
      () => convTransposeWgsl,
      CONV_TRANSPOSE_WORDS,
      params,
      buffers,
      groupsXyz,
    );
  } catch (e) {
    ctx.deallocate(y);
    throw e;
  }
  return viewOf(y, [N, O, ...out]);
}

const TRANSFORMS = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'tf_half_pixel_for_nn'];
const NEAREST = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'];
/** Index-table words a resize dispatch may carry in its params (16 KiB). */
const MAX_TABLE = 4096;

/** A list of `r` numbers each `ok`, or undefined. */
const listOf = (v: unknown, r: number, ok: (d: number) => boolean): number[] | undefined =>
  Array.isArray(v) && v.length === r && v.every((d) => typeof d === 'number' && ok(d)) ? v : undefined;

/**
 * resize(x, o) in nearest mode as one gather kernel over every axis (kernels/conv-resize.ts), the indices the
 * composite's (axisTaps); null where the composite should run: other modes, tf_crop_and_resize, options outside
 * their domains (so that it throws its typed errors), rank > 6, empty outputs, tables past MAX_TABLE words.
 */
export function resizeOnWebGpu(be: ConvHost, ctx: ConvContext, x: NDArray, o: ResizeOptions): NDArray | null {
  be.check(x, 'resize', 'x');
  if (!o) return null;
  const r = x.shape.length;
  if (x.dtype !== 'float32' || r > RESIZE_RANK || (o.mode ?? 'nearest') !== 'nearest') return null;
  const mode = o.coordinateTransformationMode ?? 'half_pixel';
  if (!TRANSFORMS.includes(mode) || !NEAREST.includes(o.nearestMode ?? 'floor')) return null;
  const sizesArg = listOf(o.sizes, r, (d) => Number.isInteger(d) && d >= 0);
  const scalesArg = listOf(o.scales, r, (d) => Number.isFinite(d) && d > 0);
  if ((o.sizes !== undefined && !sizesArg) || (o.scales !== undefined && !scalesArg)) return null;
  if (!sizesArg && !scalesArg) return null;
  const sizes = sizesArg ?? x.shape.map((n, i) => Math.floor(n * scalesArg![i]!));
  const scales = scalesArg ?? sizes.map((d, i) => d / x.shape[i]!);
  const total = sizes.reduce((p, d) => p * d, 1);
  const tableLength = sizes.reduce((s, d) => s + d, 0) + (RESIZE_RANK - r);
  if (total === 0 || x.shape.includes(0) || tableLength > MAX_TABLE) return null;
  const table: number[] = [];
  const starts: number[] = new Array(RESIZE_RANK - r).fill(0);
  table.push(...starts.map(() => 0)); // padded axes: size 1, index 0
  for (let a = 0; a < r; a++) {
    starts.push(table.length);
    const nIn = x.shape[a]!;
    if (sizes[a] === nIn && scales[a] === 1) {
      for (let i = 0; i < nIn; i++) table.push(i);
      continue;
    }
    const t = axisTaps(nIn, sizes[a]!, scales[a]!, a, r, o);
    for (let i = 0; i < sizes[a]!; i++) table.push(t.weight[0]![i] === 1 ? t.index[0]![i]! : t.index[1]![i]!);
  }
  const cap = Math.max(64, 2 ** Math.ceil(Math.log2(table.length)));
  const pad = (v: readonly number[], fill: number): number[] => [...new Array(RESIZE_RANK - r).fill(fill), ...v];
  const params = [total, x.offset, floatBits(o.extrapolationValue ?? 0), ...pad(sizes, 1), ...pad(x.strides, 0)];
  params.push(...starts, ...table);
  const y = ctx.allocate(total, 'float32');
  try {
    const buffers = [ctx.gpu(x.buffer), ctx.gpu(y)];
    const words = RESIZE_HEADER + cap;
    ctx.batch.dispatch(
      'resize',
      `resize/nearest/${cap}`,
      () => resizeNearestWgsl(cap),
      words,
      params,
      buffers,
      flat(total),
    );
  } catch (e) {
    ctx.deallocate(y);
    throw e;
  }
  return viewOf(y, sizes);
}
