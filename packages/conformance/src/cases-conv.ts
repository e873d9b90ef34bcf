/**
 * The conformance runners and cases of convolution and pooling (hal/src/ops/conv-ops.ts): 1-, 2- and
 * 3-D, strides, dilations, groups (depthwise included), explicit, asymmetric and 'same' padding, ceil
 * mode, count-include-pad, output padding, and strided views as inputs. The options are `params.window`.
 */
import type { Case, InputSpec } from './cases.js';
import type { OpRunner } from './op-runners.js';
import { oConv, oConvTranspose, oPool, oResize, type ResizeParams, type WindowParams } from './oracle-conv.js';

type HalPadding = number | number[] | [number, number][] | 'valid' | 'same' | 'same-lower';

export const CONV_OP_RUNNERS = {
  conv: {
    // a third input is the bias
    device: (be, [x, w, b], p) => [be.conv(x!, w!, { ...(p.window as { padding?: HalPadding }), bias: b })],
    oracle: ([x, w, b], p) => [oConv(x!, w!, p.window ?? {}, b)],
  },
  convTranspose: {
    device: (be, [x, w], p) => [be.convTranspose(x!, w!, p.window as { padding?: number[] })],
    oracle: ([x, w], p) => [oConvTranspose(x!, w!, p.window ?? {})],
  },
  maxPool: {
    device: (be, [x], p) => [be.maxPool(x!, p.window as { kernelSize: number[] })],
    oracle: ([x], p) => [oPool(x!, p.window!, 'max')],
  },
  avgPool: {
    device: (be, [x], p) => [be.avgPool(x!, p.window as { kernelSize: number[] })],
    oracle: ([x], p) => [oPool(x!, p.window!, 'avg')],
  },
  resize: {
    device: (be, [x], p) => [be.resize(x!, p.resize as Parameters<typeof be.resize>[1])],
    oracle: ([x], p) => [oResize(x!, p.resize!)],
  },
} satisfies Record<string, OpRunner>;

const U = { kind: 'uniform', lo: -1, hi: 1 } as const;
export const fmt = (s: number[]): string => `[${s.join(',')}]`;
/** A case id's window part: key=value pairs joined by '/'. */
export const tag = (w: WindowParams): string =>
  Object.entries(w)
    .map(([k, v]) => `${k}=${JSON.stringify(v).replace(/"/g, '')}`)
    .join('/');

export function convCases(): Case[] {
  const cases: Case[] = [];
  const conv = (
    op: 'conv' | 'convTranspose',
    x: InputSpec,
    w: number[],
    window: WindowParams,
    bias?: InputSpec,
  ): void => {
    cases.push({
      id: `${op}/float32/${fmt(x.shape)}${x.view ? '.view' : ''}*${fmt(w)}${bias ? '+bias' : ''}/${tag(window)}`,
      kind: 'composite',
      op,
      dtype: 'float32',
      inputs: bias ? [x, { shape: w, gen: U }, bias] : [x, { shape: w, gen: U }],
      params: { window },
    });
  };
  const X = (shape: number[], view?: InputSpec['view']): InputSpec =>
    view ? { shape, gen: U, view } : { shape, gen: U };
  // conv: 1-D, 2-D, 3-D; stride, padding forms, dilation, groups, views
  conv('conv', X([2, 3, 17]), [4, 3, 3], {});
  conv('conv', X([2, 3, 17]), [4, 3, 5], { stride: 2, padding: 2 });
  conv('conv', X([1, 4, 16]), [4, 1, 3], { groups: 4, padding: 'same', dilation: 2 });
  conv('conv', X([2, 3, 9, 11]), [5, 3, 3, 3], { padding: 1 });
  conv('conv', X([2, 3, 9, 11]), [4, 3, 3, 2], {
    stride: [2, 3],
    padding: [
      [1, 0],
      [0, 2],
    ],
  });
  conv('conv', X([1, 4, 10, 10]), [6, 2, 3, 3], { groups: 2, dilation: [2, 1], padding: 'same' });
  conv('conv', X([1, 3, 7, 8]), [3, 1, 3, 3], { groups: 3, stride: 2, padding: 'same-lower' });
  conv('conv', X([2, 2, 12, 12]), [3, 2, 1, 1], { stride: 2 });
  conv('conv', X([1, 2, 5, 6, 7]), [3, 2, 2, 3, 2], { padding: [1, 0, 1], stride: [1, 2, 1] });
  conv('conv', X([3, 2, 8, 8], { permute: [0, 1, 3, 2] }), [4, 2, 3, 3], { padding: 'valid' });
  conv('conv', X([2, 16, 6, 6]), [32, 16, 3, 3], { padding: 1 });
  // with a bias [O]: dense, grouped, depthwise, 1-D, pointwise; one bias a strided view
  conv('conv', X([2, 3, 9, 11]), [5, 3, 3, 3], { padding: 1 }, X([5]));
  conv('conv', X([1, 4, 10, 10]), [6, 2, 3, 3], { groups: 2, stride: 2 }, X([6]));
  conv('conv', X([1, 3, 7, 8]), [3, 1, 3, 3], { groups: 3, padding: 'same' }, X([3]));
  conv('conv', X([2, 3, 17]), [4, 3, 5], { stride: 2, padding: 2 }, X([4]));
  conv('conv', X([2, 8, 5, 5]), [12, 8, 1, 1], {}, X([12]));
  conv('conv', X([1, 2, 6, 6]), [4, 2, 3, 3], {}, X([8], { stride: [2] }));
  // convTranspose: the adjoint geometry
  conv('convTranspose', X([2, 3, 9]), [3, 4, 3], {});
  conv('convTranspose', X([2, 3, 9]), [3, 2, 4], { stride: 2, padding: 1, outputPadding: 1 });
  conv('convTranspose', X([1, 4, 5, 6]), [4, 3, 3, 3], { stride: 2, padding: 1 });
  conv('convTranspose', X([1, 4, 5, 5]), [4, 1, 3, 2], { groups: 2, stride: [3, 2], dilation: [1, 2] });
  conv('convTranspose', X([2, 2, 4, 4]), [2, 3, 3, 3], {
    padding: [
      [0, 2],
      [1, 1],
    ],
    outputPadding: [0, 3],
  });
  conv('convTranspose', X([1, 2, 3, 3, 3]), [2, 2, 2, 2, 2], { stride: 2 });
  // pooling
  const pool = (op: 'maxPool' | 'avgPool', x: InputSpec, window: WindowParams): void => {
    cases.push({
      id: `${op}/float32/${fmt(x.shape)}${x.view ? '.view' : ''}/${tag(window)}`,
      kind: 'composite',
      op,
      dtype: 'float32',
      inputs: [x],
      params: { window },
    });
  };
  for (const op of ['maxPool', 'avgPool'] as const) {
    pool(op, X([2, 3, 16]), { kernelSize: 2 });
    pool(op, X([2, 3, 17]), { kernelSize: 3, stride: 2, padding: 1, ceilMode: true });
    pool(op, X([2, 3, 8, 9]), { kernelSize: 2 });
    pool(op, X([1, 2, 9, 10]), { kernelSize: [3, 2], stride: [2, 1], padding: [1, 0] });
    pool(op, X([1, 2, 7, 7]), { kernelSize: 3, stride: 2, ceilMode: true, padding: 1 });
    pool(op, X([1, 2, 7, 8]), { kernelSize: 3, stride: 2, padding: 'same' });
    pool(op, X([1, 3, 5, 6, 7]), { kernelSize: 2, stride: 1 });
    pool(op, X([2, 2, 8, 8], { permute: [0, 1, 3, 2] }), { kernelSize: 3, stride: 2 });
  }
  pool('maxPool', X([1, 2, 11, 11]), { kernelSize: 3, stride: 2, dilation: 2, padding: 2 });
  pool('maxPool', { shape: [1, 2, 6, 6], gen: { kind: 'special' } }, { kernelSize: 2 });
  pool('avgPool', X([1, 2, 9, 10]), { kernelSize: [3, 2], stride: [2, 1], padding: [1, 1], countIncludePad: false });
  pool('avgPool', X([1, 2, 7, 7]), { kernelSize: 3, stride: 2, ceilMode: true, padding: 1, countIncludePad: false });
  // resize: every mode and coordinate transformation, up and down, one axis or several, a view
  const resize = (x: InputSpec, r: ResizeParams): void => {
    cases.push({
      id: `resize/float32/${fmt(x.shape)}${x.view ? '.view' : ''}/${tag(r as WindowParams)}`,
      kind: 'composite',
      op: 'resize',
      dtype: 'float32',
      inputs: [x],
      params: { resize: r },
    });
  };
  resize(X([1, 2, 4, 4]), { sizes: [1, 2, 8, 7] });
  resize(X([1, 2, 5, 5]), { scales: [1, 1, 0.6, 0.8], mode: 'nearest', nearestMode: 'round_prefer_ceil' });
  resize(X([1, 1, 4, 5]), { sizes: [1, 1, 7, 9], mode: 'nearest', coordinateTransformationMode: 'asymmetric' });
  resize(X([1, 1, 4, 4]), {
    sizes: [1, 1, 6, 3],
    mode: 'nearest',
    nearestMode: 'floor',
    coordinateTransformationMode: 'align_corners',
  });
  resize(X([1, 1, 4, 4]), {
    sizes: [1, 1, 3, 6],
    mode: 'nearest',
    nearestMode: 'ceil',
    coordinateTransformationMode: 'tf_half_pixel_for_nn',
  });
  resize(X([1, 2, 4, 5]), { scales: [1, 1, 2, 1.5], mode: 'linear' });
  resize(X([1, 1, 6, 6]), { scales: [1, 1, 0.5, 0.7], mode: 'linear', coordinateTransformationMode: 'align_corners' });
  resize(X([2, 1, 5, 4]), { sizes: [2, 1, 3, 1], mode: 'linear', coordinateTransformationMode: 'pytorch_half_pixel' });
  resize(X([3, 10]), { sizes: [3, 23], mode: 'linear', coordinateTransformationMode: 'asymmetric' });
  resize(X([1, 1, 4, 4]), { scales: [1, 1, 2, 2], mode: 'cubic' });
  resize(X([1, 1, 4, 4]), { scales: [1, 1, 1.5, 2], mode: 'cubic', coordinateTransformationMode: 'align_corners' });
  resize(X([1, 1, 6, 5]), { scales: [1, 1, 0.8, 0.8], mode: 'cubic', cubicCoeffA: -0.5, excludeOutside: true });
  resize(X([1, 1, 5, 5]), {
    sizes: [1, 1, 3, 3],
    mode: 'linear',
    coordinateTransformationMode: 'tf_crop_and_resize',
    roi: [0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7],
    extrapolationValue: 10,
  });
  resize(X([1, 2, 5, 4], { permute: [0, 1, 3, 2] }), { sizes: [1, 2, 7, 9], mode: 'linear' });
  return cases;
}
