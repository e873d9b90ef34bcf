/**
 * Convolution and pooling layers (PyTorch nn.Conv1d, nn.Conv2d, nn.ConvTranspose2d, nn.MaxPool1d/2d,
 * nn.AvgPool1d/2d) on autograd's conv.ts. Weights are initialized as PyTorch does: U(±1/√fan_in) with
 * fan_in = (C/groups)·∏k (for ConvTranspose2d, (O/groups)·∏k: PyTorch computes it from the weight's
 * second dim), the bias from the same bound. `kernelInitializer`/`biasInitializer` choose others (tfjs's Conv
 * default: 'glorotUniform' and 'zeros'; fans from the weight's shape, so a conv's include its receptive field).
 */
import {
  type ComputeBackend,
  type ConvOptions,
  type ConvTransposeOptions,
  InvalidArgumentError,
  type PerAxis,
  perAxis,
  type Rng,
  ShapeMismatchError,
} from '@polyhal/hal';
import { avgPool, conv as convFn, convTranspose as convTransposeFn, maxPool } from './conv.js';
import { reshape } from './movement.js';
import type { WeightInitOptions } from './init.js';
import { type LayerConfig, type LayerOptions, layerParameter, Module, toRng } from './nn.js';
import { add } from './ops.js';
import type { Tensor } from './tensor.js';
import { UninitializedParameterError } from './uninitialized.js';

type ConvLayerOptions = LayerOptions & Omit<ConvOptions, 'bias'> & WeightInitOptions & { bias?: boolean };

/**
 * An N-d convolution layer; Conv1d and Conv2d fix the spatial rank. `inChannels` null makes it lazy (PyTorch
 * LazyConv2d, tfjs's conv2d without `inputShape`): the weight and bias are created at the first forward from
 * the input's dim 1, drawn as an eager layer with those channels and the same seed would draw them.
 */
export class ConvNd extends Module {
  /** Kernel size per spatial axis (resolved from a number or a list). */
  readonly kernelSize: number[];
  /** stride, padding, dilation and groups, as passed to `conv` (the bias is the layer's own parameter). */
  readonly options: Omit<ConvOptions, 'bias'>;
  /**
   * Set by `quantize` (quantize.ts) on Conv1d/Conv2d: an int8 product (convInteger) in place of the float32
   * one; `observer` sees every input while a model is calibrated.
   */
  quantization: { forward(layer: ConvNd, x: Tensor): Tensor; dispose(): void } | null = null;
  /** Called with every input while `calibrate` (quantize.ts) records activation ranges; null otherwise. */
  observer: ((x: Tensor) => void) | null = null;
  private pending: { opts: ConvLayerOptions; transposed: boolean; rng: Rng } | null = null;
  private _inChannels = 0;
  constructor(
    /** Number of spatial axes (1 for Conv1d, 2 for Conv2d and ConvTranspose2d). */
    readonly rank: number,
    /** Input channels C, or null to take them from the first input's dim 1 (a lazy layer, lazy.ts). */
    inChannels: number | null,
    /** Output channels O. */
    readonly outChannels: number,
    kernelSize: PerAxis,
    opts: ConvLayerOptions,
    transposed = false,
  ) {
    super();
    this.kernelSize = perAxis(kernelSize, rank, 1, this.layerName(transposed), 'kernelSize');
    this.checkChannels('outChannels', outChannels, opts, transposed);
    const { backend: _b, rng: _r, bias: _bias, kernelInitializer: _k, biasInitializer: _bi, ...options } = opts;
    this.options = options;
    const rng = toRng(opts.rng);
    if (inChannels === null) this.pending = { opts, transposed, rng };
    else this.build(inChannels, opts, transposed, rng);
  }

  private layerName(transposed: boolean): string {
    return transposed ? `ConvTranspose${this.rank}d` : `Conv${this.rank}d`;
  }

  private checkChannels(what: string, v: number, opts: ConvLayerOptions, transposed: boolean): void {
    const groups = opts.groups ?? 1;
    if (!Number.isInteger(v) || v < 1 || v % groups !== 0)
      throw new InvalidArgumentError(
        `${this.layerName(transposed)}: ${what} must be a positive multiple of groups (${groups}), got ${v}`,
      );
  }

  private build(inChannels: number, opts: ConvLayerOptions, transposed: boolean, rng: Rng): void {
    this.checkChannels('inChannels', inChannels, opts, transposed);
    this._inChannels = inChannels;
    const { backend, bias, kernelInitializer, biasInitializer } = opts;
    const groups = opts.groups ?? 1;
    const outChannels = this.outChannels;
    const k = this.kernelSize.reduce((p, d) => p * d, 1);
    const shape = transposed
      ? [inChannels, outChannels / groups, ...this.kernelSize]
      : [outChannels, inChannels / groups, ...this.kernelSize];
    const bound = 1 / Math.sqrt(shape[1]! * k);
    this.params.set('weight', layerParameter(backend, shape, kernelInitializer, bound, rng));
    if (bias !== false) this.params.set('bias', layerParameter(backend, [outChannels], biasInitializer, bound, rng));
  }

  /** Input channels C; UninitializedParameterError for a lazy layer before its first forward. */
  get inChannels(): number {
    if (this.pending) throw new UninitializedParameterError(this.uninitialized()!);
    return this._inChannels;
  }

  /** Whether the layer still waits for its first forward to create its weight and bias (inChannels null). */
  get isLazy(): boolean {
    return this.pending !== null;
  }

  protected override uninitialized(): string | null {
    if (!this.pending) return null;
    const name = this.layerName(this.pending.transposed);
    return `${name}(null → ${this.outChannels}) infers its input channels at its first forward`;
  }

  /** Moves the parameters; a lazy layer will create them on `backend` at its first forward. */
  override async to(backend: ComputeBackend): Promise<this> {
    if (this.pending) this.pending.opts = { ...this.pending.opts, backend };
    return super.to(backend);
  }

  /** Creates a lazy layer's parameters from x [N, C, ...] (C = x's dim 1); nothing for a built layer. */
  protected materializeFrom(x: Tensor): void {
    if (!this.pending) return;
    x.assertLive(this.layerName(this.pending.transposed));
    const c = x.shape[1];
    if (x.shape.length !== this.rank + 2 || c === undefined)
      throw new ShapeMismatchError(
        `${this.layerName(this.pending.transposed)}: input must be [N, C, ...${this.rank} spatial dims], ` +
          `got [${x.shape.join(', ')}]`,
        [x.shape],
      );
    const { opts, transposed, rng } = this.pending;
    this.build(c, opts, transposed, rng);
    this.pending = null;
  }

  /** { rank, inChannels (null while lazy), outChannels, kernelSize, stride, padding, dilation, groups, bias }. */
  override getConfig(): LayerConfig {
    const bias = this.pending ? this.pending.opts.bias !== false : this.params.has('bias');
    const inChannels = this.pending ? null : this._inChannels;
    return {
      rank: this.rank,
      inChannels,
      outChannels: this.outChannels,
      kernelSize: this.kernelSize,
      ...this.options,
      bias,
    };
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
    this.materializeFrom(x);
    this.observer?.(x);
    if (this.quantization) return this.quantization.forward(this, x);
    return this.addBias(convFn(x, this.param('weight'), this.options, `Conv${this.rank}d`));
  }
}

/** x [N, C, L] → [N, O, Lo]; weight [O, C/groups, k], bias [O]. */
export class Conv1d extends ConvNd {
  constructor(inChannels: number | null, outChannels: number, kernelSize: PerAxis, opts: ConvLayerOptions) {
    super(1, inChannels, outChannels, kernelSize, opts);
  }
}

/** x [N, C, H, W] → [N, O, Ho, Wo]; weight [O, C/groups, kh, kw], bias [O]. */
export class Conv2d extends ConvNd {
  constructor(inChannels: number | null, outChannels: number, kernelSize: PerAxis, opts: ConvLayerOptions) {
    super(2, inChannels, outChannels, kernelSize, opts);
  }
}

/** x [N, C, H, W] → [N, O, Ho, Wo] (upsampling); weight [C, O/groups, kh, kw], bias [O]. */
export class ConvTranspose2d extends ConvNd {
  private readonly tOptions: ConvTransposeOptions;
  constructor(
    inChannels: number | null,
    outChannels: number,
    kernelSize: PerAxis,
    opts: LayerOptions & ConvTransposeOptions & WeightInitOptions & { bias?: boolean },
  ) {
    const { outputPadding, padding, ...rest } = opts;
    super(2, inChannels, outChannels, kernelSize, rest, true);
    this.tOptions = { ...this.options, padding, outputPadding };
  }
  /** ConvNd's config with convTranspose's padding and outputPadding. */
  override getConfig(): LayerConfig {
    return { ...super.getConfig(), padding: this.tOptions.padding, outputPadding: this.tOptions.outputPadding };
  }
  /** x [N, C, H, W] → [N, O, Ho, Wo] with Ho = (H − 1)·s − pads + d·(kh − 1) + outputPadding + 1 (as convTranspose). */
  override forward(x: Tensor): Tensor {
    this.materializeFrom(x);
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
  /** The window options: { kernelSize, stride, padding, dilation, ceilMode, countIncludePad } as given. */
  override getConfig(): LayerConfig {
    return { ...this.options };
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
