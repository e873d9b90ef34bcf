/**
 * ONNX Conv, ConvTranspose, MaxPool, AveragePool, Resize and Upsample on the HAL's conv, convTranspose,
 * maxPool, avgPool and resize (hal/src/families/conv/: conv.ts, pool.ts, resize.ts). The attributes map
 * one to one: pads [b1.., e1..] → [before, after] pairs, auto_pad SAME_UPPER/SAME_LOWER/VALID →
 * 'same'/'same-lower'/'valid', group → groups, ceil_mode, count_include_pad; Conv's and ConvTranspose's
 * bias B is added per channel.
 * ConvTranspose's output_shape and auto_pad become explicit pads (ONNX's formula: total padding
 * s·(in − 1) + output_padding + d·(k − 1) + 1 − output_shape, the odd one at the end for SAME_UPPER,
 * at the start otherwise).
 */
import type { ConvPadding, NDArray } from '@polyhal/hal';
import { type NodeContext, NotExpressible, normAxis, type OpMapping } from './table.js';

interface Window {
  sp: number;
  kernel: number[];
  stride: number[];
  dilation: number[];
  padding: ConvPadding;
}

/** Reads kernel_shape (or the weight's spatial shape), strides, dilations, pads and auto_pad. */
function windowAttrs(ctx: NodeContext, op: string, kernelFrom?: readonly number[]): Window {
  const sp = ctx.inputShapes[0]!.length - 2;
  const kernel = ctx.attrs.ints('kernel_shape') ?? (kernelFrom ? [...kernelFrom] : undefined);
  if (sp < 1 || sp > 3 || !kernel || kernel.length !== sp)
    throw new NotExpressible('attribute', `${op} kernel_shape missing or of the wrong rank`);
  const stride = ctx.attrs.ints('strides') ?? kernel.map(() => 1);
  const dilation = ctx.attrs.ints('dilations') ?? kernel.map(() => 1);
  const autoPad = ctx.attrs.string('auto_pad', 'NOTSET');
  const pads = ctx.attrs.ints('pads') ?? Array<number>(2 * sp).fill(0);
  if (
    ![stride, dilation].every((a) => a.length === sp && a.every((v) => Number.isInteger(v) && v >= 1)) ||
    pads.length !== 2 * sp ||
    pads.some((p) => p < 0)
  ) {
    throw new NotExpressible('attribute', `${op} strides, dilations or pads of the wrong length or sign`);
  }
  const modes: Record<string, ConvPadding> = { SAME_UPPER: 'same', SAME_LOWER: 'same-lower', VALID: 'valid' };
  let padding: ConvPadding;
  if (autoPad === 'NOTSET') padding = kernel.map((_, i) => [pads[i]!, pads[i + sp]!] as [number, number]);
  else if (autoPad in modes) padding = modes[autoPad]!;
  else throw new NotExpressible('attribute', `${op} auto_pad '${autoPad}'`);
  return { sp, kernel, stride, dilation, padding };
}

/** y + b reshaped to [1, O, 1, ...] (the per-channel bias), or y. */
function addBias(be: Parameters<ReturnType<OpMapping['plan']>>[0], y: NDArray, b: NDArray | undefined): NDArray {
  if (!b) return y;
  return be.add(y, be.reshape(b, [1, b.shape[0]!, ...y.shape.slice(2).map(() => 1)]));
}

const hasInput = (ctx: NodeContext, i: number): boolean => ctx.node.inputs.length > i && ctx.node.inputs[i] !== '';

const conv: OpMapping = {
  contract: { kind: 'hal', op: 'conv' },
  plan: (ctx) => {
    const w = windowAttrs(ctx, 'Conv', ctx.inputShapes[1]!.slice(2));
    const groups = ctx.attrs.int('group', 1);
    const bias = hasInput(ctx, 2);
    // B [M] is the HAL conv's bias: added in the conv kernel, no second pass over y
    return (be, [x, wt, b]) => [
      be.conv(x!, wt!, {
        stride: w.stride,
        dilation: w.dilation,
        padding: w.padding,
        groups,
        bias: bias ? b : undefined,
      }),
    ];
  },
};

/** ConvInteger: the HAL's convInteger (x's zero point a scalar, w's a scalar or per output channel). */
const convInteger: OpMapping = {
  dtypes: ['uint8', 'int8', 'int32'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const w = windowAttrs(ctx, 'ConvInteger', ctx.inputShapes[1]!.slice(2));
    const groups = ctx.attrs.int('group', 1);
    const [hx, hw] = [hasInput(ctx, 2), hasInput(ctx, 3)];
    return (be, [x, wt, xz, wz]) => [
      be.convInteger(x!, wt!, hx ? xz : undefined, hw ? wz : undefined, {
        stride: w.stride,
        dilation: w.dilation,
        padding: w.padding,
        groups,
      }),
    ];
  },
};

const convTranspose: OpMapping = {
  contract: { kind: 'hal', op: 'convTranspose' },
  plan: (ctx) => {
    const xs = ctx.inputShapes[0]!;
    const w = windowAttrs(ctx, 'ConvTranspose', ctx.inputShapes[1]!.slice(2));
    const groups = ctx.attrs.int('group', 1);
    const outputPadding = ctx.attrs.ints('output_padding') ?? w.kernel.map(() => 0);
    const outputShape = ctx.attrs.ints('output_shape');
    const autoPad = ctx.attrs.string('auto_pad', 'NOTSET');
    let pads: [number, number][];
    const extra = w.kernel.map(() => 0); // a negative end pad: zeros appended (output padding)
    if (outputShape || autoPad === 'SAME_UPPER' || autoPad === 'SAME_LOWER') {
      const target = outputShape ? outputShape.slice(-w.sp) : xs.slice(2).map((n, i) => n * w.stride[i]!);
      pads = target.map((o, i) => {
        const e = w.dilation[i]! * (w.kernel[i]! - 1) + 1;
        const total = w.stride[i]! * (xs[2 + i]! - 1) + outputPadding[i]! + e - o;
        const half = Math.floor(total / 2); // ONNX's reference: Python's floor division
        const [b, a] = autoPad === 'SAME_UPPER' ? [half, total - half] : [total - half, half];
        if (b < 0) throw new NotExpressible('attribute', 'ConvTranspose output_shape needing a negative start pad');
        if (a < 0) extra[i] = -a;
        return [b, Math.max(a, 0)] as [number, number];
      });
    } else if (autoPad === 'VALID') pads = w.kernel.map(() => [0, 0]);
    else pads = w.padding as [number, number][];
    const bias = hasInput(ctx, 2);
    const o = {
      stride: w.stride,
      dilation: w.dilation,
      padding: pads,
      outputPadding: outputPadding.map((p, i) => p + extra[i]!),
      groups,
    };
    return (be, [x, wt, b]) => [addBias(be, be.convTranspose(x!, wt!, o), bias ? b : undefined)];
  },
};

/**
 * MaxPool; int8 and uint8 inputs are pooled as their exact float32 values and cast back (a max of
 * int8/uint8 values is one of them: exact).
 */
const maxPool: OpMapping = {
  dtypes: ['float32', 'int8', 'uint8'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const w = windowAttrs(ctx, 'MaxPool');
    const ceilMode = ctx.attrs.int('ceil_mode', 0) !== 0;
    ctx.attrs.int('storage_order', 0); // orders the Indices output only (int64: not expressible anyway)
    if (ctx.node.outputs.length > 1 && ctx.node.outputs[1] !== '') throw new NotExpressible('dtype', 'dtype int64');
    const o = { kernelSize: w.kernel, stride: w.stride, dilation: w.dilation, padding: w.padding, ceilMode };
    if (ctx.inputTypes[0] === 'float32') return (be, [x]) => [be.maxPool(x!, o)];
    return (be, [x]) => [be.cast(be.maxPool(be.cast(x!, 'float32'), o), x!.dtype)];
  },
};

// ONNX's tolerance only: the HAL's avgPool bound is relative to Σ|terms| (the sum's error scale), which
// a stored expected value does not carry; a window whose terms cancel would fail a value-relative bound.
const averagePool: OpMapping = {
  contract: { kind: 'onnx' },
  plan: (ctx) => {
    const w = windowAttrs(ctx, 'AveragePool');
    const ceilMode = ctx.attrs.int('ceil_mode', 0) !== 0;
    const countIncludePad = ctx.attrs.int('count_include_pad', 0) !== 0;
    const o = {
      kernelSize: w.kernel,
      stride: w.stride,
      dilation: w.dilation,
      padding: w.padding,
      ceilMode,
      countIncludePad,
    };
    return (be, [x]) => [be.avgPool(x!, o)];
  },
};

const TRANSFORM_MODES = [
  'half_pixel',
  'pytorch_half_pixel',
  'align_corners',
  'asymmetric',
  'tf_half_pixel_for_nn',
  'tf_crop_and_resize',
] as const;

/** Resize (opset 11+: X, roi, scales, sizes) onto the HAL's resize; opset 10 is Upsample's semantics. */
const resize: OpMapping = {
  host: [1, 2, 3],
  contract: { kind: 'onnx' },
  plan: (ctx) => {
    const mode = ctx.attrs.string('mode', 'nearest');
    if (mode !== 'nearest' && mode !== 'linear' && mode !== 'cubic')
      throw new NotExpressible('attribute', `Resize mode '${mode}'`);
    if (ctx.opset < 11) return upsamplePlan(ctx, mode, 1);
    const transform = ctx.attrs.string('coordinate_transformation_mode', 'half_pixel');
    if (!(TRANSFORM_MODES as readonly string[]).includes(transform))
      throw new NotExpressible('attribute', `Resize coordinate_transformation_mode '${transform}'`);
    const nearestMode = ctx.attrs.string('nearest_mode', 'round_prefer_floor');
    if (!['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'].includes(nearestMode))
      throw new NotExpressible('attribute', `Resize nearest_mode '${nearestMode}'`);
    const nonEmpty = (i: number): number[] | undefined => {
      const v = ctx.node.inputs[i] ? ctx.numbers(i) : undefined;
      return v && v.length > 0 ? v : undefined;
    };
    let [roi, scales, sizes] = [nonEmpty(1), nonEmpty(2), nonEmpty(3)];
    if (!scales && !sizes) throw new NotExpressible('input', 'Resize without scales or sizes');
    // opset 18: no antialiasing, the 'stretch' policy, and `axes` (the others keep their size: scale 1)
    if (ctx.attrs.int('antialias', 0) !== 0) throw new NotExpressible('attribute', 'Resize antialias=1');
    const policy = ctx.attrs.string('keep_aspect_ratio_policy', 'stretch');
    if (policy !== 'stretch') throw new NotExpressible('attribute', `Resize keep_aspect_ratio_policy '${policy}'`);
    const axes = ctx.attrs.ints('axes');
    if (axes) {
      const shape = ctx.inputShapes[0]!;
      const r = shape.length;
      const ax = axes.map((a) => normAxis(a, r, 'Resize'));
      const full = (v: number[] | undefined, other: (i: number) => number): number[] | undefined =>
        v && shape.map((_, i) => (ax.includes(i) ? v[ax.indexOf(i)]! : other(i)));
      if ([scales, sizes].some((v) => v && v.length !== ax.length) || (roi && roi.length !== 2 * ax.length))
        throw new NotExpressible('input', `Resize: scales, sizes or roi not of ${ax.length} axes`);
      scales = full(scales, () => 1);
      sizes = full(sizes, (i) => shape[i]!);
      roi = roi && [...full(roi.slice(0, ax.length), () => 0)!, ...full(roi.slice(ax.length), () => 1)!];
    }
    const o = {
      sizes,
      scales: sizes ? undefined : scales,
      mode: mode as 'nearest' | 'linear' | 'cubic',
      coordinateTransformationMode: transform as (typeof TRANSFORM_MODES)[number],
      nearestMode: nearestMode as 'round_prefer_floor',
      cubicCoeffA: ctx.attrs.float('cubic_coeff_a', -0.75),
      excludeOutside: ctx.attrs.int('exclude_outside', 0) !== 0,
      roi,
      extrapolationValue: ctx.attrs.float('extrapolation_value', 0),
    };
    return (be, [x]) => [be.resize(x!, o)];
  },
};

/**
 * Upsample (and Resize-10): x_ori = x / scale (asymmetric), nearest rounds down; the scales from input 1
 * (Upsample from opset 9, Resize-10) or the `scales` attribute (Upsample 7 and 8).
 */
function upsamplePlan(ctx: NodeContext, mode: string, scalesInput: number): ReturnType<OpMapping['plan']> {
  if (mode !== 'nearest' && mode !== 'linear') throw new NotExpressible('attribute', `Upsample mode '${mode}'`);
  const fromAttr = ctx.node.opType === 'Upsample' && ctx.opset < 9;
  if (fromAttr && ctx.opset < 7) throw new NotExpressible('attribute', `Upsample of opset ${ctx.opset}`);
  const scales = fromAttr ? ctx.attrs.floats('scales') : ctx.numbers(scalesInput);
  if (!scales) throw new NotExpressible('input', 'Upsample without scales');
  const o = {
    scales,
    mode: mode as 'nearest' | 'linear',
    coordinateTransformationMode: 'asymmetric' as const,
    nearestMode: 'floor' as const,
  };
  return (be, [x]) => [be.resize(x!, o)];
}

const upsample: OpMapping = {
  host: [1],
  contract: { kind: 'onnx' },
  plan: (ctx) => upsamplePlan(ctx, ctx.attrs.string('mode', 'nearest'), 1),
};

export const POOL_OPS: Record<string, OpMapping> = {
  Conv: conv,
  ConvInteger: convInteger,
  ConvTranspose: convTranspose,
  MaxPool: maxPool,
  AveragePool: averagePool,
  Resize: resize,
  Upsample: upsample,
};
