/**
 * Convolution and pooling layers (PyTorch nn.Conv1d, nn.Conv2d, nn.ConvTranspose2d, nn.MaxPool1d/2d,
 * nn.AvgPool1d/2d) on autograd's conv.ts. Weights are initialized as PyTorch does: U(±1/√fan_in) with
 * fan_in = (C/groups)·∏k (for ConvTranspose2d, (O/groups)·∏k: PyTorch computes it from the weight's
 * second dim), the bias from the same bound. `kernelInitializer`/`biasInitializer` choose others (tfjs's Conv
 * default: 'glorotUniform' and 'zeros'; fans from the weight's shape, so a conv's include its receptive field).
 */
import { type ConvOptions, type ConvTransposeOptions, InvalidArgumentError, type PerAxis, perAxis } from '@polyhal/hal';
import { avgPool, conv as convFn, convTranspose as convTransposeFn, maxPool } from './conv.js';
import { reshape } from './movement.js';
import type { WeightInitOptions } from './init.js';
import { type LayerOptions, layerParameter, Module, toRng } from './nn.js';
import { add } from './ops.js';
import type { Tensor } from './tensor.js';

type ConvLayerOptions = LayerOptions & ConvOptions & WeightInitOptions & { bias?: boolean };

/** An N-d convolution layer; Conv1d and Conv2d fix the spatial rank. */
export class ConvNd extends Module {
  /** Kernel size per spatial axis (resolved from a number or a list). */
  readonly kernelSize: number[];
  /** stride, padding, dilation and groups, as passed to `conv`. */
  readonly options: ConvOptions;
  /**
   * Set by `quantize` (quantize.ts) on Conv1d/Conv2d: an int8 product (convInteger) in place of the float32
   * one; `observer` sees every input while a model is calibrated.
   */
  quantization: { forward(layer: ConvNd, x: Tensor): Tensor; dispose(): void } | null = null;
  /** Called with every input while `calibrate` (quantize.ts) records activation ranges; null otherwise. */
  observer: ((x: Tensor) => void) | null = null;
  constructor(
    /** Number of spatial axes (1 for Conv1d, 2 for Conv2d and ConvTranspose2d). */
    readonly rank: number,
    /** Input channels C. */
    readonly inChannels: number,
    /** Output channels O. */
    readonly outChannels: number,
    kernelSize: PerAxis,
    opts: ConvLayerOptions,
    transposed = false,
  ) {
    super();
    const name = transposed ? `ConvTranspose${rank}d` : `Conv${rank}d`;
    this.kernelSize = perAxis(kernelSize, rank, 1, name, 'kernelSize');
    const groups = opts.groups ?? 1;
    for (const [what, v] of [
      ['inChannels', inChannels],
      ['outChannels', outChannels],
    ] as const)
      if (!Number.isInteger(v) || v < 1 || v % groups !== 0)
        throw new InvalidArgumentError(`${name}: ${what} must be a positive multiple of groups (${groups}), got ${v}`);
    const { backend, rng: seed, bias, kernelInitializer, biasInitializer, ...options } = opts;
    this.options = options;
    const rng = toRng(seed);
    const k = this.kernelSize.reduce((p, d) => p * d, 1);
    const shape = transposed
      ? [inChannels, outChannels / groups, ...this.kernelSize]
      : [outChannels, inChannels / groups, ...this.kernelSize];
    const bound = 1 / Math.sqrt(shape[1]! * k);
    this.params.set('weight', layerParameter(backend, shape, kernelInitializer, bound, rng));
    if (bias !== false) this.params.set('bias', layerParameter(backend, [outChannels], biasInitializer, bound, rng));
  }

  /** The weight [O, C/groups, ...k] ([C, O/groups, ...k] transposed). */
  get weight(): Tensor {
    return this.param('weight');
  }
  /** The bias [O], or null when built with `bias: false`. */
  get bias(): Tensor | null {
    return this.params.get('bias') ?? null;
  }

  /** y [N, O, ...] plus the bias broadcast over N and the spatial axes (y itself without a bias). */
  protected addBias(y: Tensor): Tensor {
    if (!this.params.has('bias')) return y;
    return add(y, reshape(this.param('bias'), [1, this.outChannels, ...this.kernelSize.map(() => 1)]));
  }

  /** x [N, C, ...in] → [N, O, ...out] (conv's shape rule); ShapeMismatchError when C differs from inChannels. */
  forward(x: Tensor): Tensor {
    this.observer?.(x);
    if (this.quantization) return this.quantization.forward(this, x);
    return this.addBias(convFn(x, this.param('weight'), this.options, `Conv${this.rank}d`));
  }
}

/** x [N, C, L] → [N, O, Lo]; weight [O, C/groups, k], bias [O]. */
export class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: PerAxis, opts: ConvLayerOptions) {
    super(1, inChannels, outChannels, kernelSize, opts);
  }
}

/** x [N, C, H, W] → [N, O, Ho, Wo]; weight [O, C/groups, kh, kw], bias [O]. */
export class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: PerAxis, opts: ConvLayerOptions) {
    super(2, inChannels, outChannels, kernelSize, opts);
  }
}

/** x [N, C, H, W] → [N, O, Ho, Wo] (upsampling); weight [C, O/groups, kh, kw], bias [O]. */
export class ConvTranspose2d extends ConvNd {
  private readonly tOptions: ConvTransposeOptions;
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: PerAxis,
    opts: LayerOptions & ConvTransposeOptions & WeightInitOptions & { bias?: boolean },
  ) {
    const { outputPadding, padding, ...rest } = opts;
    super(2, inChannels, outChannels, kernelSize, rest, true);
    this.tOptions = { ...this.options, padding, outputPadding };
  }
  /** x [N, C, H, W] → [N, O, Ho, Wo] with Ho = (H − 1)·s − pads + d·(kh − 1) + outputPadding + 1 (as convTranspose). */
  override forward(x: Tensor): Tensor {
    return this.addBias(convTransposeFn(x, this.param('weight'), this.tOptions, 'ConvTranspose2d'));
  }
}

/** A pooling layer: x [N, C, ...] → [N, C, ...out] (options as maxPool/avgPool; stride defaults to kernelSize). */
class Pool extends Module {
  constructor(
    private readonly rank: number,
    private readonly kind: 'max' | 'avg',
    /** The window: kernelSize, stride (default kernelSize), padding, dilation, ceilMode, countIncludePad. */
    readonly options: { kernelSize: PerAxis } & Omit<ConvOptions, 'groups'> & {
        ceilMode?: boolean;
        countIncludePad?: boolean;
      },
  ) {
    super();
    perAxis(options.kernelSize, rank, 1, this.constructor.name, 'kernelSize');
  }
  /** x [N, C, ...in] → [N, C, ...out]: each window's maximum (MaxPool) or mean (AvgPool). */
  forward(x: Tensor): Tensor {
    const name = `${this.kind === 'max' ? 'MaxPool' : 'AvgPool'}${this.rank}d`;
    return this.kind === 'max' ? maxPool(x, this.options, name) : avgPool(x, this.options, name);
  }
}

type PoolLayerOptions = Omit<ConvOptions, 'groups'> & { ceilMode?: boolean };

/** x [N, C, L] → [N, C, Lo]: each window's maximum (PyTorch nn.MaxPool1d). */
export class MaxPool1d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions = {}) {
    super(1, 'max', { kernelSize, ...options });
  }
}
/** x [N, C, H, W] → [N, C, Ho, Wo]: each window's maximum (PyTorch nn.MaxPool2d). */
export class MaxPool2d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions = {}) {
    super(2, 'max', { kernelSize, ...options });
  }
}
/** x [N, C, L] → [N, C, Lo]: each window's mean (PyTorch nn.AvgPool1d; countIncludePad default true). */
export class AvgPool1d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions & { countIncludePad?: boolean } = {}) {
    super(1, 'avg', { kernelSize, ...options });
  }
}
/** x [N, C, H, W] → [N, C, Ho, Wo]: each window's mean (PyTorch nn.AvgPool2d; countIncludePad default true). */
export class AvgPool2d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions & { countIncludePad?: boolean } = {}) {
    super(2, 'avg', { kernelSize, ...options });
  }
}
