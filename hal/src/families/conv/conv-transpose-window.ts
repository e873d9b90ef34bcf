/**
 * The geometry of a 1-D or 2-D convTranspose in its 2-D form (a 1-D one as height 1), for the backends' direct
 * convTranspose kernels (wasm, webgpu): operands checked as the composite checks them (typed errors), then the
 * output size per axis (in − 1)·s + d·(k − 1) + 1 − before − after + outputPadding. Null where a kernel should
 * leave the call to the composite: 3-D windows, a string padding (the composite rejects it), or a padding that
 * crops more than the full output (the composite throws its typed error).
 */
import { type ConvHost, checkConvOperands } from './conv-check.js';
import type { ConvTransposeOptions } from './conv.js';
import { perAxis, type Window2d, windowGeometry } from './conv-geometry.js';
import type { NDArray } from '../../core/ndarray.js';

/**
 * A convTranspose window in 2-D form: batch, channels and groups beside conv's Window2d fields (H × W the input,
 * OH × OW the output, pt and pl the padding cropped at the start).
 */
export interface TransposeWindow2d extends Window2d {
  /** Batch items. */
  N: number;
  /** Input channels. */
  C: number;
  /** Output channels. */
  O: number;
  /** Channel groups. */
  groups: number;
  /** Spatial axes of the call (1 or 2). */
  r: number;
  /** The output's spatial sizes as the call has them (r of them). */
  output: number[];
  /** The zeros appended at the end of each spatial axis (r of them). */
  outputPadding: number[];
  /** Output elements per batch item and channel (OH·OW). */
  P: number;
}

/** convTranspose(x, w, o)'s window in 2-D form, or null where the composite should run (see the file's comment). */
export function convTransposeWindow2d(
  be: ConvHost,
  x: NDArray,
  w: NDArray,
  o: ConvTransposeOptions,
): TransposeWindow2d | null {
  const { r, groups, N, C, O } = checkConvOperands(be, x, w, o.groups, 'convTranspose', true);
  if (r > 2 || typeof o.padding === 'string') return null;
  const kernel = w.shape.slice(2);
  const stride = perAxis(o.stride, r, 1, 'convTranspose', 'stride');
  const dilation = perAxis(o.dilation, r, 1, 'convTranspose', 'dilation');
  const outputPadding = perAxis(o.outputPadding, r, 0, 'convTranspose', 'outputPadding', 0);
  const pads = windowGeometry(Array(r).fill(1 << 20), { kernel, padding: o.padding }, 'convTranspose').userPads;
  const input = x.shape.slice(2);
  const output = input.map(
    (n, a) =>
      (n - 1) * stride[a]! + dilation[a]! * (kernel[a]! - 1) + 1 - pads[a]![0] - pads[a]![1] + outputPadding[a]!,
  );
  if (output.some((d) => d < 0)) return null;
  const at = (v: readonly number[], fill: number): [number, number] => (r === 2 ? [v[0]!, v[1]!] : [fill, v[0]!]);
  const [H, W] = at(input, 1);
  const [OH, OW] = at(output, 1);
  const [kh, kw] = at(kernel, 1);
  const [sh, sw] = at(stride, 1);
  const [dh, dw] = at(dilation, 1);
  const [pt, pl] = at(
    pads.map((p) => p[0]),
    0,
  );
  const P = OH * OW;
  return { N, C, O, groups, r, output, outputPadding, P, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl };
}
