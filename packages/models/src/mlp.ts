/**
 * The main job's multilayer perceptron: [N, 784] pixels → Linear 784→256 → ReLU → Linear 256→10 →
 * [N, 10] logits. Weights are drawn from `seed` (first layer) and `seed + 1` (second), so a seed gives the
 * same initial weights on every backend.
 */
import { Linear, ReLU, Sequential } from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';

/** MLP 784-256-10 on `backend`, initialised from `seed` (default 0). Input [N, 784], output [N, 10] logits. */
export function mlp(backend: ComputeBackend, seed = 0): Sequential {
  return new Sequential(
    new Linear(784, 256, { backend, rng: seed }),
    new ReLU(),
    new Linear(256, 10, { backend, rng: seed + 1 }),
  );
}
