/**
 * Convolution and pooling layers (PyTorch nn.Conv1d, nn.Conv2d, nn.ConvTranspose2d, nn.MaxPool1d/2d,
 * nn.AvgPool1d/2d) on autograd's conv.ts. Weights are initialized as PyTorch does: U(±1/√fan_in) with
 * fan_in = (C/groups)·∏k (for ConvTranspose2d, (O/groups)·∏k: PyTorch computes it from the weight's
 * second dim), the bias from the same bound.
 */
import { type ConvOptions, type ConvTransposeOptions, InvalidArgumentError, type PerAxis, perAxis } from '@polyhal/hal';
import { avgPool, conv as convFn, convTranspose as convTransposeFn, maxPool } from './conv.js';
import { reshape } from './movement.js';
import { type LayerOptions, Module, parameter, toRng } from './nn.js';
import { add } from './ops.js';
import type { Tensor } from './tensor.js';

type ConvLayerOptions = LayerOptions & ConvOptions & { bias?: boolean };

/** An N-d convolution layer; Conv1d and Conv2d fix the spatial rank. */
export class ConvNd extends Module {
  readonly kernelSize: number[];
  readonly options: ConvOptions;
  /**
   * Set by `quantize` (quantize.ts) on Conv1d/Conv2d: an int8 product (convInteger) in place of the float32
   * one; `observer` sees every input while a model is calibrated.
   */
  quantization: { forward(layer: ConvNd, x: Tensor): Tensor; dispose(): void } | null = null;
  observer: ((x: Tensor) => void) | null = null;
  constructor(
    readonly rank: number,
    readonly inChannels: number,
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
    const { backend, rng: seed, bias, ...options } = opts;
    this.options = options;
    const rng = toRng(seed);
    const k = this.kernelSize.reduce((p, d) => p * d, 1);
    const shape = transposed
      ? [inChannels, outChannels / groups, ...this.kernelSize]
      : [outChannels, inChannels / groups, ...this.kernelSize];
    const bound = 1 / Math.sqrt(shape[1]! * k);
    this.params.set('weight', parameter(backend, shape, bound, rng));
    if (bias !== false) this.params.set('bias', parameter(backend, [outChannels], bound, rng));
  }

  /** The weight [O, C/groups, ...k] ([C, O/groups, ...k] transposed) and bias [O] (absent with bias: false). */
  get weight(): Tensor {
    return this.param('weight');
  }
  get bias(): Tensor | null {
    return this.params.get('bias') ?? null;
  }

  protected addBias(y: Tensor): Tensor {
    if (!this.params.has('bias')) return y;
    return add(y, reshape(this.param('bias'), [1, this.outChannels, ...this.kernelSize.map(() => 1)]));
  }

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
    opts: LayerOptions & ConvTransposeOptions & { bias?: boolean },
  ) {
    const { outputPadding, padding, ...rest } = opts;
    super(2, inChannels, outChannels, kernelSize, rest, true);
    this.tOptions = { ...this.options, padding, outputPadding };
  }
  override forward(x: Tensor): Tensor {
    return this.addBias(convTransposeFn(x, this.param('weight'), this.tOptions, 'ConvTranspose2d'));
  }
}

/** A pooling layer: x [N, C, ...] → [N, C, ...out] (options as maxPool/avgPool; stride defaults to kernelSize). */
class Pool extends Module {
  constructor(
    private readonly rank: number,
    private readonly kind: 'max' | 'avg',
    readonly options: { kernelSize: PerAxis } & Omit<ConvOptions, 'groups'> & {
        ceilMode?: boolean;
        countIncludePad?: boolean;
      },
  ) {
    super();
    perAxis(options.kernelSize, rank, 1, this.constructor.name, 'kernelSize');
  }
  forward(x: Tensor): Tensor {
    const name = `${this.kind === 'max' ? 'MaxPool' : 'AvgPool'}${this.rank}d`;
    return this.kind === 'max' ? maxPool(x, this.options, name) : avgPool(x, this.options, name);
  }
}

type PoolLayerOptions = Omit<ConvOptions, 'groups'> & { ceilMode?: boolean };

export class MaxPool1d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions = {}) {
    super(1, 'max', { kernelSize, ...options });
  }
}
export class MaxPool2d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions = {}) {
    super(2, 'max', { kernelSize, ...options });
  }
}
export class AvgPool1d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions & { countIncludePad?: boolean } = {}) {
    super(1, 'avg', { kernelSize, ...options });
  }
}
export class AvgPool2d extends Pool {
  constructor(kernelSize: PerAxis, options: PoolLayerOptions & { countIncludePad?: boolean } = {}) {
    super(2, 'avg', { kernelSize, ...options });
  }
}
