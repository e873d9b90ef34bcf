/**
 * Frames of fused kernels that BaseBackend hands to backends (base.ts): they allocate the outputs,
 * call the kernel and free temporaries, so that a fused override writes only its arithmetic.
 */
import type { ComputeBackend } from '../../backend.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';

/** A view as a kernel takes it, and whether it is a temporary to free after the kernel. */
export type KernelOperand = { view: NDArray; temp: boolean };

/**
 * The body of BaseBackend.fusedSoftmaxCrossEntropy on validated [N, C] float32 operands: `whole`
 * (the backend's `whole`, or null to pass the views as they are) makes logits and labels contiguous;
 * `kernel` gets them with fresh loss [N] and grad [N, C] (null without `withGrad`) buffers. Frees the
 * temporaries, and the outputs if the kernel throws. Returns loss [N] and, with `withGrad`, grad [N, C].
 */
export function softmaxCrossEntropyFrame(
  be: ComputeBackend,
  logits: NDArray,
  labels: NDArray,
  withGrad: boolean,
  kernel: (z: NDArray, y: NDArray, loss: DeviceBuffer, grad: DeviceBuffer | null) => void,
  whole: ((x: NDArray) => KernelOperand) | null,
): { loss: NDArray; grad?: NDArray } {
  const [n, c] = logits.shape as [number, number];
  const z = whole ? whole(logits) : { view: logits, temp: false };
  const y = whole ? whole(labels) : { view: labels, temp: false };
  const outs: DeviceBuffer[] = [];
  try {
    const loss = be.allocate(n);
    outs.push(loss);
    const grad = withGrad ? be.allocate(n * c) : null;
    if (grad) outs.push(grad);
    kernel(z.view, y.view, loss, grad);
    outs.length = 0;
    return grad ? { loss: viewOf(loss, [n]), grad: viewOf(grad, [n, c]) } : { loss: viewOf(loss, [n]) };
  } finally {
    for (const b of outs) be.deallocate(b);
    if (z.temp) be.free(z.view);
    if (y.temp) be.free(y.view);
  }
}
