/**
 * @polyhal/models: the models of PolyHAL's main job, for 28×28 digits (MNIST) — `mlp` (784-256-10),
 * `cnn` (two strided convolutions and a linear head) and `VisionTransformer` (7×7 patches, 4 pre-norm
 * encoder blocks) with its augmentation `randomShift` — and `MODELS`, the name → builder registry the
 * command line, the demo and the benchmarks build them from. Written with @polyhal/autograd's public
 * API only; every model runs on any PolyHAL backend and gives [N, 10] logits.
 */
import { type ComputeBackend, describeValue, InvalidArgumentError } from '@polyhal/hal';
import { type Module, reshape, type Tensor } from '@polyhal/autograd';
import { cnn } from './cnn.js';
import { mlp } from './mlp.js';
import { VisionTransformer } from './vit.js';

export { cnn } from './cnn.js';
export { mlp } from './mlp.js';
export { EncoderBlock, randomShift, VisionTransformer, type VitOptions } from './vit.js';

/** The registered model names. */
export type ModelKind = 'mlp' | 'cnn' | 'vit';

/** Builds a model on `backend` with initial weights drawn from `seed` (the same weights on every backend). */
export type ModelBuilder = (backend: ComputeBackend, seed: number) => Module;

/** Name → builder: `MODELS.cnn(backend, 0)`. The ViT is built with its default sizes. */
export const MODELS: Readonly<Record<ModelKind, ModelBuilder>> = Object.freeze({
  mlp,
  cnn,
  vit: (backend: ComputeBackend, seed: number) => new VisionTransformer({ backend, seed }),
});

/**
 * The model registered as `kind`, built on `backend` from `seed`. Throws `InvalidArgumentError` naming
 * `kind` and the registered names when `kind` is not one of them.
 */
export function buildModel(kind: ModelKind, backend: ComputeBackend, seed: number): Module {
  if (typeof kind !== 'string' || !Object.hasOwn(MODELS, kind))
    throw new InvalidArgumentError(`kind must be one of ${Object.keys(MODELS).join(', ')}, got ${describeValue(kind)}`);
  return MODELS[kind](backend, seed);
}

/**
 * A batch of digits [N, 784] as `kind` takes it: [N, 1, 28, 28] for the CNN (a view, no copy), unchanged
 * for the MLP and the ViT.
 */
export function toModelInput(kind: ModelKind, x: Tensor): Tensor {
  return kind === 'cnn' ? reshape(x, [x.shape[0]!, 1, 28, 28]) : x;
}
