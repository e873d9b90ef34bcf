/**
 * matmul's optional third operand: a @ b + bias (tfjs's fused.matMul bias, ONNX Gemm's C, PyTorch's
 * addmm), with bias of the product's dtype, broadcast (NumPy) to the product's shape [..., M, N] without
 * widening it. A backend with the optional hook `matmulBiasKernel` (hooks.ts) adds the bias in its float32
 * GEMM's store — one kernel where a Linear layer took two; otherwise, and for integer products, it is
 * matmul then add. Either way each element is the product rounded to float32, then the sum rounded once
 * more (int32: both wrap modulo 2^32). float16 operands: the hook gets storage views (float32, the router's
 * matmulBias) and its float32 result is rounded once to float16; without the hook, matmulBiasWide adds the
 * bias to the float32 product in float32 and rounds once — so on every backend each float16 element is
 * the float32 product plus bias, rounded to float32, then to float16.
 */
import type { ComputeBackend } from '../../backend.js';
import { DTypeError, ShapeMismatchError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';
import { broadcastShapes } from '../../core/shape.js';

/**
 * Checks bias (a live array of the backend, checked by the caller) against the product of a and b, of
 * shape `shape` and dtype `dtype`: that dtype (DTypeError), and a shape that broadcasts to `shape` without
 * widening it (ShapeMismatchError).
 */
export function checkMatmulBias(bias: NDArray, shape: readonly number[], dtype: string): void {
  if (bias.dtype !== dtype)
    throw new DTypeError(`matmul: bias has dtype ${bias.dtype}, the product ${dtype}; cast one explicitly`);
  let ok = bias.shape.length <= shape.length;
  if (ok) {
    try {
      const b = broadcastShapes(bias.shape, shape);
      ok = b.length === shape.length && b.every((d, i) => d === shape[i]);
    } catch {
      ok = false;
    }
  }
  if (!ok)
    throw new ShapeMismatchError(
      `matmul: bias [${bias.shape.join(', ')}] does not broadcast to the product's shape [${shape.join(', ')}]`,
      [bias.shape, shape],
    );
}

/** The composite: `product` + bias, freeing the product (matmul's result without bias). */
export function addBias(be: ComputeBackend, product: NDArray, bias: NDArray): NDArray {
  try {
    return be.add(product, bias);
  } finally {
    be.free(product);
  }
}

/**
 * float16 matmul with a bias, without the fused hook: `product` (float32 [..., M, N], the float32 product of
 * float16 operands; freed here) + bias (float16, checked) in float32, rounded once to bias's dtype.
 */
export function matmulBiasWide(be: ComputeBackend, product: NDArray, bias: NDArray): NDArray {
  let wide: NDArray | null = null;
  let sum: NDArray | null = null;
  try {
    wide = be.cast(bias, product.dtype);
    sum = be.add(product, wide);
    return be.cast(sum, bias.dtype);
  } finally {
    be.free(product);
    if (wide) be.free(wide);
    if (sum) be.free(sum);
  }
}
