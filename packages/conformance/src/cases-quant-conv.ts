/**
 * The conformance runner, oracle and cases of convInteger (hal/src/ops/quant-ops.ts): uint8 and int8,
 * with and without zero points, a per-output-channel weight zero point, strides, padding (padded
 * positions hold x's zero point), dilation, groups (depthwise included), 1-D to 3-D, and enough taps
 * per output (64 channels × 3×3) that float32 sums would no longer be exact. Options: `params.window`;
 * the zero points are inputs 3 and 4.
 */
import type { Case, InputSpec } from './cases.js';
import { fmt, tag } from './cases-conv.js';
import type { OpRunner } from './op-runners.js';
import { oConv, type WindowParams } from './oracle-conv.js';
import { numel, type Ref } from './oracle.js';

type HalPadding = number | number[] | [number, number][] | 'valid' | 'same' | 'same-lower';

/** v less its zero point z (a scalar, or per index of axis 0 when `perFirst`), as a float64 reference. */
function shifted(v: Ref, z: Ref | undefined): Ref {
  if (!z) return { ...v, dtype: 'float32' };
  const inner = numel(v.shape) / v.shape[0]!;
  const per = numel(z.shape) > 1;
  const data = v.data.map((a, i) => a - z.data[per ? Math.floor(i / inner) : 0]!);
  return { shape: v.shape, data: Float64Array.from(data), dtype: 'float32' };
}

/** The float64 conv of the shifted integers (exact: every sum stays far below 2^53), wrapped to int32. */
export function oConvInteger(x: Ref, w: Ref, zx: Ref | undefined, zw: Ref | undefined, p: WindowParams): Ref {
  const y = oConv(shifted(x, zx), shifted(w, zw), p);
  return { shape: y.shape, data: y.data.map((v) => v | 0), dtype: 'int32' };
}

export const QUANT_CONV_OP_RUNNERS = {
  convInteger: {
    device: (be, [x, w, zx, zw], p) => [be.convInteger(x!, w!, zx, zw, p.window as { padding?: HalPadding })],
    oracle: ([x, w, zx, zw], p) => [oConvInteger(x!, w!, zx, zw, p.window ?? {})],
  },
} satisfies Record<string, OpRunner>;

const RANGE = { int8: [-128, 127], uint8: [0, 255] } as const;
const I = (shape: number[], dtype: 'int8' | 'uint8'): InputSpec => ({
  shape,
  gen: { kind: 'int', lo: RANGE[dtype][0], hi: RANGE[dtype][1] },
  dtype,
});

export function quantConvCases(): Case[] {
  const cases: Case[] = [];
  const c = (name: string, inputs: InputSpec[], window: WindowParams): void => {
    cases.push({
      id: `convInteger/${inputs[0]!.dtype}/${fmt(inputs[0]!.shape)}*${fmt(inputs[1]!.shape)}/${name}/${tag(window)}`,
      kind: 'composite',
      op: 'convInteger',
      dtype: inputs[0]!.dtype!,
      inputs,
      params: { window },
    });
  };
  c('plain', [I([2, 3, 17], 'int8'), I([4, 3, 3], 'int8')], {});
  c('zero-points', [I([2, 3, 9, 11], 'uint8'), I([5, 3, 3, 3], 'uint8'), I([], 'uint8'), I([], 'uint8')], {
    padding: 1,
  });
  c('per-channel', [I([1, 4, 10, 10], 'uint8'), I([6, 2, 3, 3], 'int8'), I([], 'uint8'), I([6], 'int8')], {
    groups: 2,
    dilation: [2, 1],
    padding: 'same',
  });
  c('depthwise', [I([1, 3, 7, 8], 'int8'), I([3, 1, 3, 3], 'int8'), I([], 'int8')], {
    groups: 3,
    stride: 2,
    padding: 'same-lower',
  });
  c('3-D', [I([1, 2, 5, 6, 7], 'uint8'), I([3, 2, 2, 3, 2], 'uint8'), I([], 'uint8')], {
    padding: [1, 0, 1],
    stride: [1, 2, 1],
  });
  // without zero points the int8 and uint8 operands go to the integer matmul as they are (grouped, padded,
  // 2-D: a CNN's quantized layer); a depthwise one is multiplied in int32 all the same
  c('no-zero-points', [I([2, 4, 9, 10], 'int8'), I([6, 2, 3, 3], 'int8')], { groups: 2, padding: 1, stride: [1, 2] });
  c('no-zero-points', [I([1, 5, 12, 12], 'uint8'), I([20, 5, 5, 5], 'uint8')], {});
  c('depthwise-no-zero-points', [I([1, 3, 7, 8], 'int8'), I([3, 1, 3, 3], 'int8')], { groups: 3, padding: 1 });
  // 576 taps per output: sums of up to 576·255² pass 2^24, where float32 accumulation stops being exact
  c('many-taps', [I([1, 64, 5, 5], 'uint8'), I([4, 64, 3, 3], 'uint8'), I([], 'uint8'), I([], 'uint8')], {
    stride: [2, 1],
  });
  return cases;
}
