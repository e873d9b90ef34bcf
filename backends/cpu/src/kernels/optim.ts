/**
 * Fused optimizer updates: one pass over each parameter, in place (no temporaries).
 * Adam/AdamW after Kingma & Ba (2015) and Loshchilov & Hutter (2019); SGD with momentum as in PyTorch.
 */
import type { AdamStepParams, SgdStepParams } from '@polyhal/hal';
import { planRows, type Strided } from './strided.js';

/** Calls `fn(i, gi)` for every element i of a contiguous parameter, gi being the gradient's index. */
function forEachGrad(grad: Strided, fn: (i: number, gi: number) => void): void {
  const { n, rows, step, starts } = planRows(grad.shape, [grad.strides], [grad.offset]);
  let i = 0;
  for (let r = 0; r < rows; r++) {
    let gi = starts[0]![r]!;
    for (let k = 0; k < n; k++, i++, gi += step[0]!) fn(i, gi);
  }
}

export function adamKernel(
  p: Float32Array,
  grad: Strided<Float32Array>,
  m: Float32Array,
  v: Float32Array,
  h: AdamStepParams,
): void {
  const g = grad.data;
  const b1 = h.beta1;
  const b2 = h.beta2;
  const c1 = 1 / (1 - b1 ** h.step);
  const c2 = 1 / (1 - b2 ** h.step);
  const decay = 1 - h.lr * h.weightDecay;
  const lr = h.lr;
  const eps = h.eps;
  forEachGrad(grad, (i, gi) => {
    const gv = g[gi]!;
    const mi = b1 * m[i]! + (1 - b1) * gv;
    const vi = b2 * v[i]! + (1 - b2) * gv * gv;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i]! * decay - (lr * (mi * c1)) / (Math.sqrt(vi * c2) + eps);
  });
}

export function sgdKernel(
  p: Float32Array,
  grad: Strided<Float32Array>,
  vel: Float32Array | null,
  h: SgdStepParams,
): void {
  const g = grad.data;
  const useMomentum = vel !== null && h.momentum > 0;
  forEachGrad(grad, (i, gi) => {
    let d = g[gi]! + h.weightDecay * p[i]!;
    if (useMomentum) {
      d = h.momentum * vel![i]! + d;
      vel![i] = d;
    }
    p[i] = p[i]! - h.lr * d;
  });
}
