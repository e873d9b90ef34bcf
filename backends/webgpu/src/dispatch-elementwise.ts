/**
 * Elementwise, reduction, copy and fill dispatches of the WebGPU backend (its unaryKernel, binaryKernel,
 * reduceKernel, copyKernel, copyIntoKernel and fillKernel hooks): 4-wide kernels where the layout allows
 * (kernels/elementwise-vec4.ts), strided ones otherwise, and the float16-storage forms (dispatch-half.ts).
 */
import {
  type BinaryOp,
  type DeviceBuffer,
  type DType,
  type ElementwiseStep,
  float16Bits,
  type NDArray,
  REDUCE_OP_DEFS,
  type ReduceOp,
  type UnaryOp,
  UnsupportedOpError,
} from '@polyhal/hal';
import { isContiguous, splitReduceAxes } from '@polyhal/hal/internal';
import {
  dispatchBinaryHalf,
  dispatchCopyHalf,
  dispatchUnaryHalf,
  type HalfContext,
  narrowedInto,
  widened,
} from './dispatch-half.js';
import type { CommandBatch } from './encoder.js';
import { flat, packDims, stridedParams } from './kernel-params.js';
import { copyWgsl, copyWords, fillWgsl } from './kernels/copy.js';
import {
  binaryExpr,
  binaryScalarWgsl,
  binaryWgsl,
  elementwiseWords,
  unaryExpr,
  unaryWgsl,
} from './kernels/elementwise.js';
import {
  binaryScalarVec4Wgsl,
  binaryVec4Wgsl,
  unaryVec4Wgsl,
  type Vec4Plan,
  vec4Key,
  vec4Plan,
} from './kernels/elementwise-vec4.js';
import { nativeReduceWgsl } from './kernels/half-native.js';
import { reduceLevels, reduceWgsl, reduceWords } from './kernels/reduce.js';
import { coalesce, floatBits, grid, rankSlots } from './layout.js';

/** What these dispatches need of the backend. */
export interface ElementwiseContext {
  readonly batch: CommandBatch;
  /** float16 storage: its buffer ids, GPU buffers and conversions. */
  readonly half: HalfContext;
  /** A software adapter: reductions run one per invocation (workgroup barriers cost more than they save). */
  readonly software: boolean;
  /** The backend's name, for errors. */
  readonly name: string;
  /** The GPU buffer of a HAL buffer that is not in float16 storage. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
}

/**
 * Tells a running capture what the kernel just encoded computes (capture.ts KernelDesc): `steps` from `root` into
 * the whole of `out`, where every operand and out are float32.
 */
export function describeChain(
  ctx: ElementwiseContext,
  root: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
): void {
  const rec = ctx.batch.recorder;
  if (!rec?.describe || out.size === 0) return;
  const arrays = [root, ...steps.flatMap((s) => ('array' in s ? [s.array] : []))];
  if (out.dtype !== 'float32' || arrays.some((x) => x.dtype !== 'float32')) return;
  if (root.shape.reduce((p, d) => p * d, 1) !== out.size) return;
  const gpus = new Map(arrays.map((x) => [x.buffer.id, ctx.gpu(x.buffer)]));
  gpus.set(out.id, ctx.gpu(out));
  rec.describe({ kind: 'elementwise', root, steps, out, shape: root.shape, gpus });
}

/** Whether any of `buffers` holds float16 in 2-byte storage. */
const anyHalf = (ctx: ElementwiseContext, ...buffers: DeviceBuffer[]): boolean =>
  ctx.half.half.size > 0 && buffers.some((b) => ctx.half.half.has(b.id));

/** How `dispatchOneOperand` names and builds a kernel of one operand. */
export interface OneOperandKernel {
  /** Pipeline key prefixes: of the four-wide kernel, and of the one-element kernel. */
  readonly keys: readonly [string, string];
  /** The dtypes the vec4 plan must store as one word (the operand's and the output's). */
  readonly dtypes: readonly DType[];
  /** Param word 3 (a number's bits, or 0). */
  readonly word3: number;
  /** Params after the dims (a fused chain's numbers). */
  readonly tail?: readonly number[];
  readonly vec4: (v: Vec4Plan) => string;
  readonly flat: (contig: boolean, R: number) => string;
}

/**
 * A kernel of one operand x → out (unary, with a number, a fused chain): four elements per invocation where the
 * view allows, else one. Params: n, 0, x's offset, word 3, x's dims and strides (to elementwiseWords), the tail.
 */
export function dispatchOneOperand(
  ctx: ElementwiseContext,
  op: string,
  x: NDArray,
  out: DeviceBuffer,
  k: OneOperandKernel,
): void {
  const n = out.size;
  if (n === 0) return;
  const params = (R: number, dims: number[]): number[] => {
    const head = [n, 0, x.offset, k.word3, ...dims];
    while (head.length < elementwiseWords(R)) head.push(0);
    return k.tail ? [...head, ...k.tail] : head;
  };
  const words = (R: number): number => elementwiseWords(R) + (k.tail?.length ?? 0);
  const buffers = [ctx.gpu(x.buffer), ctx.gpu(out)];
  const v = vec4Plan(x.shape, [x], k.dtypes);
  if (v) {
    const key = `${k.keys[0]}/${vec4Key(v)}`;
    ctx.batch.dispatch(op, key, () => k.vec4(v), words(v.R), params(v.R, v.words), buffers, flat(n / 4));
    return;
  }
  const contig = isContiguous(x);
  const { R, words: dims } = stridedParams(x.shape, [x]);
  const key = `${k.keys[1]}/${contig}/${R}`;
  ctx.batch.dispatch(op, key, () => k.flat(contig, R), words(R), params(R, dims), buffers, flat(n));
}

/** unaryKernel: out = op(x), 4 elements per invocation where the layout allows. */
export function dispatchUnary(ctx: ElementwiseContext, op: UnaryOp, x: NDArray, out: DeviceBuffer): void {
  unaryExpr(op, x.dtype); // throws UnsupportedOpError before anything is encoded
  if (anyHalf(ctx, x.buffer, out)) {
    dispatchUnaryHalf(ctx.half, op, x, out);
    return;
  }
  dispatchOneOperand(ctx, op, x, out, {
    keys: [`unary4/${op}/${x.dtype}`, `unary/${op}/${x.dtype}`],
    dtypes: [x.dtype],
    word3: 0,
    vec4: (v) => unaryVec4Wgsl(op, x.dtype, v),
    flat: (contig, R) => unaryWgsl(op, x.dtype, contig, R),
  });
  describeChain(ctx, x, [{ op } as ElementwiseStep], out);
}

/** binaryKernel: a and b of one dtype (bool: i32 0/1); out's dtype is the op's result (bool for the comparisons). */
export function dispatchBinary(ctx: ElementwiseContext, op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer): void {
  binaryExpr(op, a.dtype); // throws UnsupportedOpError before anything is encoded
  if (anyHalf(ctx, a.buffer, b.buffer, out)) {
    dispatchBinaryHalf(ctx.half, op, a, b, out);
    return;
  }
  const n = out.size;
  if (n === 0) return;
  const v = vec4Plan(a.shape, [a, b], [a.dtype, out.dtype]);
  if (v) {
    ctx.batch.dispatch(
      op,
      `binary4/${op}/${a.dtype}/${out.dtype}/${vec4Key(v)}`,
      () => binaryVec4Wgsl(op, a.dtype, out.dtype, v),
      elementwiseWords(v.R),
      [n, 0, a.offset, b.offset, ...v.words],
      [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out)],
      flat(n / 4),
    );
    describeChain(ctx, a, [{ op, array: b }], out);
    return;
  }
  const contig = isContiguous(a) && isContiguous(b);
  const { R, words } = stridedParams(a.shape, [a, b]);
  ctx.batch.dispatch(
    op,
    `binary/${op}/${a.dtype}/${out.dtype}/${contig}/${R}`,
    () => binaryWgsl(op, a.dtype, out.dtype, contig, R),
    elementwiseWords(R),
    [n, 0, a.offset, b.offset, ...words],
    [ctx.gpu(a.buffer), ctx.gpu(b.buffer), ctx.gpu(out)],
    flat(n),
  );
  describeChain(ctx, a, [{ op, array: b }], out);
}

/**
 * binaryScalarKernel: out = op(x, value) (op(value, x) where `scalarFirst`) for a float32 x, the number a
 * kernel parameter (its float32 bits) instead of a filled 0-d array: one kernel, no allocation.
 */
export function dispatchBinaryScalar(
  ctx: ElementwiseContext,
  op: BinaryOp,
  x: NDArray,
  value: number,
  scalarFirst: boolean,
  out: DeviceBuffer,
): void {
  binaryExpr(op, x.dtype); // throws UnsupportedOpError before anything is encoded
  const first = scalarFirst ? 'sx' : 'xs';
  const types = `${x.dtype}/${out.dtype}`;
  dispatchOneOperand(ctx, op, x, out, {
    keys: [`binary4s/${op}/${first}/${types}`, `binarys/${op}/${first}/${types}`],
    dtypes: [x.dtype, out.dtype],
    word3: floatBits(value),
    vec4: (v) => binaryScalarVec4Wgsl(op, x.dtype, out.dtype, v, scalarFirst),
    flat: (contig, R) => binaryScalarWgsl(op, x.dtype, out.dtype, contig, R, scalarFirst),
  });
  describeChain(ctx, x, [{ op, scalar: value, scalarFirst }], out);
}

/**
 * reduceKernel: out = op over `axes` of x (per thread for short or software reductions, else per workgroup).
 * `halfIn`: x is float16 storage read as f16 by the float32 kernel (float16Arithmetic 'native': half-native.ts).
 */
export function dispatchReduce(
  ctx: ElementwiseContext,
  op: ReduceOp,
  x: NDArray,
  axes: readonly number[],
  out: DeviceBuffer,
  halfIn = false,
): void {
  if (!Object.hasOwn(REDUCE_OP_DEFS, op)) throw new UnsupportedOpError(String(op), x.dtype, ctx.name);
  if (!halfIn && anyHalf(ctx, x.buffer, out)) {
    const native = ctx.half.arithmetic() === 'native' && ctx.half.half.has(x.buffer.id);
    if (native) narrowedInto(ctx.half, out, (o) => dispatchReduce(ctx, op, { ...x, dtype: 'float32' }, axes, o, true));
    else widened(ctx.half, [x], ([w]) => narrowedInto(ctx.half, out, (o) => dispatchReduce(ctx, op, w!, axes, o)));
    return;
  }
  const outputs = out.size;
  if (outputs === 0) return;
  const { kept, reduced: red } = splitReduceAxes(x.shape, x.strides, axes);
  const count = red.shape.reduce((p, d) => p * d, 1);
  // The kernels count reduced elements and unravel their indices in 32-bit integers (i32 params):
  // 2^31 or more (a broadcast view can be that large) would wrap and give a wrong number.
  if (count >= 2 ** 31) {
    throw new UnsupportedOpError(
      op,
      x.dtype,
      ctx.name,
      `reductions over 2^31 or more elements per output (here ${count}); reduce over fewer axes first`,
    );
  }
  const perThread = count <= 64 || ctx.software;
  const ck = coalesce(kept.shape, [kept.strides]);
  const cr = coalesce(red.shape, [red.strides]);
  const [kr, rr] = [Math.min(ck.shape.length, 2), Math.min(cr.shape.length, 2)];
  const R = rankSlots(Math.max(ck.shape.length, cr.shape.length));
  const identity = floatBits(REDUCE_OP_DEFS[op].identity.float32);
  const params = [outputs, count, x.offset, identity, ...packDims(ck, R), ...packDims(cr, R)];
  const groups: [number, number, number] = perThread ? flat(outputs) : [...grid(outputs), 1];
  const levels = reduceLevels(op, x.dtype, count, perThread);
  const kernel = (): string => reduceWgsl(op, x.dtype, perThread, R, kr === 2 ? R : kr, rr === 2 ? R : rr, levels);
  ctx.batch.dispatch(
    op,
    `reduce/${op}/${x.dtype}/${perThread}/${R}/${kr}${rr}/${levels}${halfIn ? '/f16' : ''}`,
    halfIn ? () => nativeReduceWgsl(kernel()) : kernel,
    reduceWords(R),
    params,
    [halfIn ? ctx.half.gpu(x.buffer) : ctx.gpu(x.buffer), ctx.gpu(out)],
    groups,
  );
}

/** copyKernel and copyIntoKernel: x written into out through `strides` from `offset`, converting dtypes. */
export function dispatchCopy(
  ctx: ElementwiseContext,
  x: NDArray,
  out: DeviceBuffer,
  strides: readonly number[],
  offset: number,
): void {
  const n = x.shape.reduce((p, d) => p * d, 1);
  if (n === 0) return;
  if (anyHalf(ctx, x.buffer, out)) {
    const outDtype = ctx.half.half.has(out.id) ? 'float16' : out.dtype;
    dispatchCopyHalf(ctx.half, x, out, outDtype, strides, offset);
    return;
  }
  const { R, words } = stridedParams(x.shape, [x, { strides }]);
  ctx.batch.dispatch(
    'copy',
    `copy/${x.dtype}/${out.dtype}/${R}`,
    () => copyWgsl(x.dtype, out.dtype, R),
    copyWords(R),
    [n, 0, x.offset, offset, ...words],
    [ctx.gpu(x.buffer), ctx.gpu(out)],
    flat(n),
  );
}

/** fillKernel: every element of out set to `value` (float16 storage: two binary16 halves per word). */
export function dispatchFill(ctx: ElementwiseContext, out: DeviceBuffer, value: number): void {
  if (out.size === 0) return;
  if (ctx.half.half.has(out.id)) {
    // both halves of every word hold the value's binary16 bits (the value is a float16: narrow.ts)
    const h = float16Bits(value);
    const words = Math.ceil(out.size / 2);
    const args = [words, h | (h << 16)];
    ctx.batch.dispatch('fill', 'fill/int32', () => fillWgsl('int32'), 4, args, [ctx.half.gpu(out)], flat(words));
    return;
  }
  const bits = out.dtype === 'float32' ? floatBits(value) : value | 0;
  ctx.batch.dispatch(
    'fill',
    `fill/${out.dtype}`,
    () => fillWgsl(out.dtype),
    4,
    [out.size, bits],
    [ctx.gpu(out)],
    flat(out.size),
  );
}
