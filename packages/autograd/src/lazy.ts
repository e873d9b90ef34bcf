/**
 * Lazy shapes (PyTorch `nn.LazyLinear`, tfjs's layers without `inputShape`): a layer built without its input
 * size (`new Linear(null, 10, ...)` or `new LazyLinear(10, ...)`; `new Conv2d(null, 8, 3, ...)` or
 * `LazyConv2d`) creates its parameters at its first forward, from the input's last dim (a conv: its channels,
 * dim 1). Until then its parameters do not exist: `parameters()`, `namedParameters()` and `stateDict()` of it
 * (or of a model holding it) throw `UninitializedParameterError`, so an optimizer is created after one
 * forward — `materialize(model, inputShape)` runs that forward on zeros.
 */
import type { ComputeBackend } from '@polyhal/hal';
import { zeros } from './creation.js';
import type { WeightInitOptions } from './init.js';
import { type LayerOptions, Linear, type Module } from './nn.js';
import { Conv1d, Conv2d } from './nn-conv.js';
import { scope } from './scope.js';
import { noGrad } from './tensor.js';

/** `new Linear(null, outFeatures, opts)` (PyTorch nn.LazyLinear): the input size comes from the first forward. */
export class LazyLinear extends Linear {
  constructor(outFeatures: number, opts: LayerOptions & WeightInitOptions & { bias?: boolean }) {
    super(null, outFeatures, opts);
  }
}

/** `new Conv1d(null, outChannels, kernelSize, opts)` (PyTorch nn.LazyConv1d): C from the first input's dim 1. */
export class LazyConv1d extends Conv1d {
  constructor(outChannels: number, kernelSize: ConstructorParameters<typeof Conv1d>[2], opts: LazyConvOptions) {
    super(null, outChannels, kernelSize, opts);
  }
}

/** `new Conv2d(null, outChannels, kernelSize, opts)` (PyTorch nn.LazyConv2d): C from the first input's dim 1. */
export class LazyConv2d extends Conv2d {
  constructor(outChannels: number, kernelSize: ConstructorParameters<typeof Conv2d>[2], opts: LazyConvOptions) {
    super(null, outChannels, kernelSize, opts);
  }
}

/** The options of a lazy conv layer: Conv2d's (backend, rng, stride, padding, ..., initializers). */
export type LazyConvOptions = ConstructorParameters<typeof Conv2d>[3];

/**
 * Creates the parameters of every lazy layer of `model` by one forward, without gradients, on zeros of
 * `inputShape` (with the batch dim: `[1, 28, 28]`) and dtype `dtype` (default float32) on `backend`; the
 * input and output are freed. Returns the model. Errors are the model's own (a ShapeMismatchError for an
 * input shape it does not take).
 */
export function materialize<M extends Module>(
  model: M,
  inputShape: readonly number[],
  backend: ComputeBackend,
  dtype: 'float32' | 'int32' = 'float32',
): M {
  scope(() => {
    noGrad(() => model.forward(zeros(backend, inputShape, { dtype })));
  });
  return model;
}
