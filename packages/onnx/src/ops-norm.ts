/**
 * ONNX normalizations as HAL composites, in the order of ONNX's reference implementations
 * (onnx/backend/test/case/node/{layernormalization,batchnorm,instancenorm}.py); compared with ONNX's
 * tolerance. Means are the HAL's mean (sum × 1/n), where the references divide by n.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { NotExpressible, normAxis, type OpMapping } from './table.js';

const prod = (xs: readonly number[]): number => xs.reduce((p, d) => p * d, 1);

/**
 * LayerNormalization (opset 17): X as [∏ dims before axis, ∏ dims from axis]; mean and
 * variance over the second; Y = (X − mean)·(1/√(var + ε))·Scale + B; outputs Y, Mean, InvStdDev.
 */
const layerNorm: OpMapping = {
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axis = normAxis(ctx.attrs.int('axis', -1), shape.length, 'LayerNormalization');
    const eps = ctx.attrs.float('epsilon', 1e-5);
    const stash = ctx.attrs.int('stash_type', 1);
    if (stash !== 1)
      throw new NotExpressible('attribute', `LayerNormalization stash_type=${stash} (computes in float32 only)`);
    const rows = prod(shape.slice(0, axis));
    const cols = prod(shape.slice(axis));
    const reduced = [...shape.slice(0, axis), ...shape.slice(axis).map(() => 1)];
    return (be, [x, scale, bias]) => {
      const x2 = be.reshape(x!, [rows, cols]);
      const mean = be.mean(x2, 1, true);
      const diff = be.sub(x2, mean);
      const variance = be.mean(be.mul(diff, diff), 1, true);
      const inv = be.recip(be.sqrt(be.add(variance, eps)));
      let y = be.mul(be.reshape(be.mul(diff, inv), shape), scale!);
      if (bias) y = be.add(y, bias);
      return [y, be.reshape(mean, reduced), be.reshape(inv, reduced)];
    };
  },
};

/** Per-channel parameters [C] as [C, 1, ..., 1] against an input of rank `rank` ([N, C, ...]). */
const channel = (be: ComputeBackend, p: NDArray, rank: number): NDArray =>
  be.reshape(p, [p.shape[0]!, ...Array<number>(rank - 2).fill(1)]);

/** scale·(x − mean)/√(var + ε) + bias, as the references write it. */
const normalize = (
  be: ComputeBackend,
  x: NDArray,
  mean: NDArray,
  variance: NDArray,
  scale: NDArray,
  bias: NDArray,
  eps: number,
): NDArray => be.add(be.div(be.mul(scale, be.sub(x, mean)), be.sqrt(be.add(variance, eps))), bias);

/**
 * BatchNormalization in inference: the given mean and variance; momentum has no effect there. Opset 6 needs
 * is_test = 1 and opsets 6–8 spatial = 1 (per-channel statistics, what opset 9 made the only form); from
 * opset 14 training_mode = 0. The running-statistics outputs exist in training only: a node that asks for
 * them is not expressible.
 */
const batchNorm: OpMapping = {
  plan: (ctx) => {
    const op = 'BatchNormalization';
    if (ctx.opset < 6) throw new NotExpressible('attribute', `${op} of opset ${ctx.opset} (consumed_inputs)`);
    if (ctx.opset === 6 && ctx.attrs.int('is_test', 0) !== 1)
      throw new NotExpressible('attribute', `${op} is_test=0 (training)`);
    if (ctx.opset < 9 && ctx.attrs.int('spatial', 1) !== 1)
      throw new NotExpressible('attribute', `${op} spatial=0 (per-element statistics)`);
    const eps = ctx.attrs.float('epsilon', 1e-5);
    ctx.attrs.float('momentum', 0.9);
    if (ctx.attrs.int('training_mode', 0) !== 0) throw new NotExpressible('attribute', `${op} training_mode=1`);
    if (ctx.node.outputs.slice(1).some((o) => o !== ''))
      throw new NotExpressible('input', `${op}: the running-statistics outputs (training only)`);
    const rank = ctx.inputShapes[0]!.length;
    if (rank < 2) throw new NotExpressible('input', `BatchNormalization of rank ${rank}`);
    return (be, [x, s, b, mean, variance]) => [
      normalize(
        be,
        x!,
        channel(be, mean!, rank),
        channel(be, variance!, rank),
        channel(be, s!, rank),
        channel(be, b!, rank),
        eps,
      ),
    ];
  },
};

/** InstanceNormalization: mean and variance (np.var: the mean of squared deviations) over the spatial axes. */
const instanceNorm: OpMapping = {
  plan: (ctx) => {
    const eps = ctx.attrs.float('epsilon', 1e-5);
    const rank = ctx.inputShapes[0]!.length;
    if (rank < 3) throw new NotExpressible('input', `InstanceNormalization of rank ${rank}`);
    const axes = Array.from({ length: rank - 2 }, (_, i) => i + 2);
    return (be, [x, s, b]) => {
      const mean = be.mean(x!, axes, true);
      const diff = be.sub(x!, mean);
      const variance = be.mean(be.mul(diff, diff), axes, true);
      return [normalize(be, x!, mean, variance, channel(be, s!, rank), channel(be, b!, rank), eps)];
    };
  },
};

export const NORM_OPS: Record<string, OpMapping> = {
  LayerNormalization: layerNorm,
  BatchNormalization: batchNorm,
  InstanceNormalization: instanceNorm,
};
