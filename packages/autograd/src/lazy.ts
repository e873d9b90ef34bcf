/**
 * Lazy shapes (PyTorch `nn.LazyLinear`, tfjs's layers without `inputShape`): a layer built without its input
 * size (`new Linear(null, 10, ...)` or `new LazyLinear(10, ...)`) creates its parameters at its first forward,
 * from the input's last dim. Until then its parameters do not exist: `parameters()`, `namedParameters()` and
 * `stateDict()` of it (or of a model holding it) throw `UninitializedParameterError`, so an optimizer is
 * created after one forward — `materialize(model, inputShape)` runs that forward on zeros.
 */
import type { ComputeBackend } from '@polyhal/hal';
import { zeros } from './creation.js';
import type { WeightInitOptions } from './init.js';
import { type LayerOptions, Linear, type Module } from './nn.js';
import { scope } from './scope.js';
import { noGrad } from './tensor.js';

/** `new Linear(null, outFeatures, opts)` (PyTorch nn.LazyLinear): the input size comes from the first forward. */
export class LazyLinear extends Linear {
  constructor(outFeatures: number, opts: LayerOptions & WeightInitOptions & { bias?: boolean }) {
    super(null, outFeatures, opts);
  }
}

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
