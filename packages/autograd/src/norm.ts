/**
 * Normalization layers, composed from autograd ops (their gradients follow from the composition) —
 * except layerNorm, one op on the HAL's layerNorm and layerNormBackward (fused kernels where the backend
 * has them): LayerNorm (Ba et al. 2016), RMSNorm (Zhang & Sennrich 2019), BatchNorm (Ioffe & Szegedy
 * 2015) and GroupNorm (Wu & He 2018),
 * with PyTorch's definitions: biased variance in the normalization, unbiased in BatchNorm's running
 * variance, running statistics updated with `momentum` in training and used in eval.
 */
import { InvalidArgumentError, type NDArray, ShapeMismatchError } from '@polyhal/hal';
import { autocastFloat32 } from './autocast.js';
import { record } from './ops.js';
import { noGrad, Tensor } from './tensor.js';
import { type LayerConfig, type LayerOptions, Module } from './nn.js';
import { keep, scope } from './scope.js';

/** The last `n` axes of a rank-r tensor. */
const lastAxes = (rank: number, n: number): number[] => Array.from({ length: n }, (_, i) => rank - n + i);

function checkTrailing(op: string, x: Tensor, shape: readonly number[]): void {
  const tail = x.shape.slice(x.rank - shape.length);
  if (x.rank < shape.length || tail.some((d, i) => d !== shape[i]))
    throw new ShapeMismatchError(`${op}: input [${x.shape}] does not end in the normalized shape [${shape}]`, [
      x.shape,
      shape,
    ]);
}

/**
 * Layer normalization over the trailing dims `normalizedShape`: (x − mean) / √(var + eps) · weight + bias,
 * var biased (÷ n). x: [..., *normalizedShape] → same shape; weight and bias: normalizedShape or null.
 */
export function layerNorm(
  x: Tensor,
  normalizedShape: readonly number[],
  weight: Tensor | null = null,
  bias: Tensor | null = null,
  eps = 1e-5,
): Tensor {
  checkTrailing('layerNorm', x, normalizedShape);
  x = autocastFloat32(x); // float32 under autocast (PyTorch's list)
  const dims = normalizedShape.length;
  const fits = (p: Tensor | null): boolean =>
    p === null || (p.dtype === 'float32' && p.rank === dims && p.shape.every((d, i) => d === normalizedShape[i]));
  if (dims > 0 && x.dtype === 'float32' && fits(weight) && fits(bias))
    return fusedLayerNorm(x, dims, weight, bias, eps);
  const axes = lastAxes(x.rank, normalizedShape.length);
  const centered = x.sub(x.mean(axes, true));
  const variance = centered.mul(centered).mean(axes, true);
  let y = centered.div(variance.add(eps).sqrt());
  if (weight) y = y.mul(weight);
  if (bias) y = y.add(bias);
  return y;
}

/**
 * layerNorm as one recorded op: the HAL's layerNorm (a fused kernel where the backend has one) saves the
 * mean and rstd, and the gradient rule is its layerNormBackward (dweight and dbias only when needed).
 */
function fusedLayerNorm(x: Tensor, dims: number, weight: Tensor | null, bias: Tensor | null, eps: number): Tensor {
  let stats: Tensor[] = []; // mean and rstd from the forward pass, tracked like any tensor
  const release = (): void => {
    for (const s of stats) s.dispose();
    stats = [];
  };
  const t = record(
    'layerNorm',
    [x, ...(weight ? [weight] : []), ...(bias ? [bias] : [])],
    (be, xs) => {
      const r = be.layerNorm(xs[0]!, weight ? xs[1]! : null, bias ? xs[weight ? 2 : 1]! : null, { eps, dims });
      stats = [new Tensor(be, r.mean), new Tensor(be, r.rstd)];
      return r.y;
    },
    (be, g, xs, _out, needs) => {
      const paramGrads = needs.slice(1).some(Boolean);
      const [mean, rstd] = stats.map((s) => s.value) as [NDArray, NDArray];
      const r = be.layerNormBackward(g, xs[0]!, mean, rstd, weight ? xs[1]! : null, { dims, paramGrads });
      const grads: (NDArray | null)[] = [r.dx];
      if (weight) grads.push(r.dweight ?? null);
      if (bias) grads.push(r.dbias ?? null);
      if (r.dweight && !weight) be.free(r.dweight);
      if (r.dbias && !bias) be.free(r.dbias);
      return grads.map((gi, k) => {
        if (gi && !needs[k]) be.free(gi);
        return needs[k] ? gi : null;
      });
    },
    release,
  );
  if (!t.node) release();
  return t;
}

/**
 * RMS normalization over the trailing dims: x / √(mean(x²) + eps) · weight. eps default: float32's machine
 * epsilon, as PyTorch.
 */
export function rmsNorm(
  x: Tensor,
  normalizedShape: readonly number[],
  weight: Tensor | null = null,
  eps = 2 ** -23,
): Tensor {
  checkTrailing('rmsNorm', x, normalizedShape);
  x = autocastFloat32(x);
  const axes = lastAxes(x.rank, normalizedShape.length);
  const y = x.div(x.mul(x).mean(axes, true).add(eps).sqrt());
  return weight ? y.mul(weight) : y;
}

const ones = (opts: LayerOptions, shape: readonly number[], value: number, requiresGrad: boolean): Tensor =>
  keep(Tensor.full(opts.backend, shape, value, { requiresGrad }));

/** y = layerNorm(x) over the trailing `normalizedShape`; weight 1 and bias 0 at start (elementwiseAffine). */
export class LayerNorm extends Module {
  /** The trailing shape normalized over (and the shape of weight and bias). */
  readonly normalizedShape: readonly number[];
  constructor(
    normalizedShape: number | readonly number[],
    /** eps (default 1e-5); elementwiseAffine (default true): a weight and bias; bias (default true). */
    readonly options: LayerOptions & { eps?: number; elementwiseAffine?: boolean; bias?: boolean },
  ) {
    super();
    this.normalizedShape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
    if (options.elementwiseAffine !== false) {
      this.params.set('weight', ones(options, this.normalizedShape, 1, true));
      if (options.bias !== false) this.params.set('bias', ones(options, this.normalizedShape, 0, true));
    }
  }
  /** { normalizedShape, eps, elementwiseAffine, bias }. */
  override getConfig(): LayerConfig {
    const { eps, elementwiseAffine, bias } = this.options;
    return { normalizedShape: this.normalizedShape, eps, elementwiseAffine, bias };
  }
  /** x [..., ...normalizedShape] → the same shape; ShapeMismatchError when x's trailing dims differ. */
  forward(x: Tensor): Tensor {
    return layerNorm(
      x,
      this.normalizedShape,
      this.params.get('weight') ?? null,
      this.params.get('bias') ?? null,
      this.options.eps ?? 1e-5,
    );
  }
}

/** y = rmsNorm(x) over the trailing `normalizedShape`; weight 1 at start. */
export class RMSNorm extends Module {
  /** The trailing shape normalized over (and the weight's shape). */
  readonly normalizedShape: readonly number[];
  constructor(
    normalizedShape: number | readonly number[],
    /** eps (rmsNorm's default when absent); elementwiseAffine (default true): a weight. */
    readonly options: LayerOptions & { eps?: number; elementwiseAffine?: boolean },
  ) {
    super();
    this.normalizedShape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
    if (options.elementwiseAffine !== false) this.params.set('weight', ones(options, this.normalizedShape, 1, true));
  }
  /** { normalizedShape, eps, elementwiseAffine }. */
  override getConfig(): LayerConfig {
    return {
      normalizedShape: this.normalizedShape,
      eps: this.options.eps,
      elementwiseAffine: this.options.elementwiseAffine,
    };
  }
  /** x [..., ...normalizedShape] → the same shape; ShapeMismatchError when x's trailing dims differ. */
  forward(x: Tensor): Tensor {
    return rmsNorm(x, this.normalizedShape, this.params.get('weight') ?? null, this.options.eps);
  }
}

/**
 * Batch normalization over the channel dim 1 of [N, C, ...] (BatchNorm1d/2d/3d in one): in training,
 * normalizes with the batch's mean and biased variance over every dim but 1 and updates the running
 * statistics (running = (1 − momentum)·running + momentum·batch, the variance unbiased); in eval, uses
 * the running statistics. weight 1, bias 0, running mean 0 and variance 1 at start; the running
 * statistics are buffers (in stateDict, not in parameters()).
 */
export class BatchNorm extends Module {
  constructor(
    /** Channels C (dim 1 of the input). */
    readonly numFeatures: number,
    /** eps (default 1e-5), momentum of the running statistics (default 0.1), affine (default true). */
    readonly options: LayerOptions & { eps?: number; momentum?: number; affine?: boolean },
  ) {
    super();
    if (options.affine !== false) {
      this.params.set('weight', ones(options, [numFeatures], 1, true));
      this.params.set('bias', ones(options, [numFeatures], 0, true));
    }
    this.buffers.set('runningMean', ones(options, [numFeatures], 0, false));
    this.buffers.set('runningVar', ones(options, [numFeatures], 1, false));
  }

  /** { numFeatures, eps, momentum, affine }. */
  override getConfig(): LayerConfig {
    const { eps, momentum, affine } = this.options;
    return { numFeatures: this.numFeatures, eps, momentum, affine };
  }

  /**
   * x [N, C, ...] → the same shape. ShapeMismatchError unless dim 1 is numFeatures; in training,
   * InvalidArgumentError when a channel has a single value.
   */
  forward(x: Tensor): Tensor {
    if (x.rank < 2 || x.shape[1] !== this.numFeatures)
      throw new ShapeMismatchError(`BatchNorm: input [${x.shape}] has no channel dim 1 of ${this.numFeatures}`, [
        x.shape,
      ]);
    const axes = x.shape.flatMap((_, i) => (i === 1 ? [] : [i]));
    const count = axes.reduce((p, a) => p * x.shape[a]!, 1);
    const bshape = x.shape.map((d, i) => (i === 1 ? d : 1));
    const eps = this.options.eps ?? 1e-5;
    let mean: Tensor;
    let variance: Tensor;
    if (this.training) {
      if (count < 2)
        throw new InvalidArgumentError(`BatchNorm: training needs more than one value per channel, got [${x.shape}]`);
      mean = x.mean(axes, true);
      const centered = x.sub(mean);
      variance = centered.mul(centered).mean(axes, true);
      const m = this.options.momentum ?? 0.1;
      // The running statistics are updated in place (stateDict() references stay valid), without a graph.
      noGrad(() =>
        scope(() => {
          for (const [name, batch, scale] of [
            ['runningMean', mean, 1],
            ['runningVar', variance, count / (count - 1)],
          ] as const) {
            const old = this.buffers.get(name)!;
            const next = old.mul(1 - m).add(batch.reshape([this.numFeatures]).mul(m * scale));
            old.backend.assign(old.value.buffer, next.value);
          }
        }),
      );
    } else {
      mean = this.buffers.get('runningMean')!.reshape(bshape);
      variance = this.buffers.get('runningVar')!.reshape(bshape);
    }
    let y = x.sub(mean).div(variance.add(eps).sqrt());
    const w = this.params.get('weight');
    const b = this.params.get('bias');
    if (w) y = y.mul(w.reshape(bshape));
    if (b) y = y.add(b.reshape(bshape));
    return y;
  }
}

/**
 * Group normalization (Wu & He 2018, PyTorch group_norm): x [N, C, ...] with C divisible by `numGroups`;
 * each sample's channels are split into numGroups groups of C/numGroups and normalized over each group
 * and every spatial position, (x − mean) / √(var + eps) with var biased; then · weight + bias per
 * channel ([C], or null). ShapeMismatchError for rank < 2, InvalidArgumentError when C % numGroups ≠ 0.
 * numGroups = 1 is layer norm over [C, ...], numGroups = C instance norm.
 */
export function groupNorm(
  x: Tensor,
  numGroups: number,
  weight: Tensor | null = null,
  bias: Tensor | null = null,
  eps = 1e-5,
): Tensor {
  if (x.rank < 2) throw new ShapeMismatchError(`groupNorm: input [${x.shape}] has no channel dim 1`, [x.shape]);
  const [n, c] = x.shape as [number, number];
  if (!Number.isInteger(numGroups) || numGroups < 1 || c % numGroups !== 0)
    throw new InvalidArgumentError(`groupNorm: ${c} channels do not split into ${numGroups} groups`);
  x = autocastFloat32(x);
  const grouped = x.reshape([n, numGroups, -1]);
  const centered = grouped.sub(grouped.mean(2, true));
  const variance = centered.mul(centered).mean(2, true);
  let y = centered.div(variance.add(eps).sqrt()).reshape(x.shape);
  const bshape = x.shape.map((d, i) => (i === 1 ? d : 1));
  if (weight) y = y.mul(weight.reshape(bshape));
  if (bias) y = y.add(bias.reshape(bshape));
  return y;
}

/** y = groupNorm(x, numGroups) with a per-channel weight (1) and bias (0) when `affine` (default). */
export class GroupNorm extends Module {
  constructor(
    /** Groups the channels are split into; numChannels must be a multiple (InvalidArgumentError). */
    readonly numGroups: number,
    /** Channels C (dim 1 of the input). */
    readonly numChannels: number,
    /** eps (default 1e-5), affine (default true): a per-channel weight and bias. */
    readonly options: LayerOptions & { eps?: number; affine?: boolean },
  ) {
    super();
    if (!Number.isInteger(numGroups) || numGroups < 1 || numChannels % numGroups !== 0)
      throw new InvalidArgumentError(`GroupNorm: ${numChannels} channels do not split into ${numGroups} groups`);
    if (options.affine !== false) {
      this.params.set('weight', ones(options, [numChannels], 1, true));
      this.params.set('bias', ones(options, [numChannels], 0, true));
    }
  }
  /** { numGroups, numChannels, eps, affine }. */
  override getConfig(): LayerConfig {
    const { eps, affine } = this.options;
    return { numGroups: this.numGroups, numChannels: this.numChannels, eps, affine };
  }
  /** x [N, C, ...] → the same shape; ShapeMismatchError unless dim 1 is numChannels. */
  forward(x: Tensor): Tensor {
    if (x.rank < 2 || x.shape[1] !== this.numChannels)
      throw new ShapeMismatchError(`GroupNorm: input [${x.shape}] has no channel dim 1 of ${this.numChannels}`, [
        x.shape,
      ]);
    const w = this.params.get('weight') ?? null;
    return groupNorm(x, this.numGroups, w, this.params.get('bias') ?? null, this.options.eps);
  }
}
