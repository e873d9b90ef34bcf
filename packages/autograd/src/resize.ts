/**
 * resize (ONNX Resize, PyTorch interpolate) with its gradient: x [...] float32 → [...sizes] by the HAL's
 * resize (nearest, linear or cubic, every coordinate transformation); backward is the transposed
 * interpolation (hal/src/families/conv/resize.ts resizeBackward: each output's gradient scatter-added, with its weight,
 * into the input positions it read).
 */
import { type ResizeOptions, resizeBackward } from '@polyhal/hal';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/**
 * x [...] float32 → [...sizes] (or ⌊shape·scales⌋): the HAL's resize, differentiable in x. InvalidArgumentError
 * for bad options, DTypeError for a non-float32 x (as the HAL's resize).
 */
export function resize(x: Tensor, options: ResizeOptions): Tensor {
  const shape = [...x.shape];
  return record(
    'resize',
    [x],
    (be, [v]) => be.resize(v!, options),
    (be, g, _xs, _out, needs) => [needs[0] ? resizeBackward(be, g, shape, options) : null],
  );
}
