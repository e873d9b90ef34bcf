/**
 * The main job's small convolutional network: [N, 1, 28, 28] pixels → Conv2d 1→16 (5×5, stride 2,
 * padding 2) → ReLU → Conv2d 16→32 (5×5, stride 2, padding 2) → ReLU → Flatten → Linear 1568→10 →
 * [N, 10] logits. Weights are drawn from `seed`, `seed + 1` and `seed + 2`, one per layer.
 */
import { Conv2d, Flatten, Linear, ReLU, Sequential } from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';

/** The CNN on `backend`, initialised from `seed` (default 0). Input [N, 1, 28, 28], output [N, 10] logits. */
export function cnn(backend: ComputeBackend, seed = 0): Sequential {
  return new Sequential(
    new Conv2d(1, 16, 5, { backend, rng: seed, stride: 2, padding: 2 }), // → [16, 14, 14]
    new ReLU(),
    new Conv2d(16, 32, 5, { backend, rng: seed + 1, stride: 2, padding: 2 }), // → [32, 7, 7]
    new ReLU(),
    new Flatten(),
    new Linear(32 * 7 * 7, 10, { backend, rng: seed + 2 }),
  );
}
