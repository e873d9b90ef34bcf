/**
 * The convolution, pooling and resize methods of every backend (BaseBackend's), composed in conv.ts,
 * pool.ts and resize.ts. Table entries: ops/conv-ops.ts.
 */
import type { ConvHost } from './conv-check.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { type ConvOptions, type ConvTransposeOptions, convComposite, convTransposeComposite } from './conv.js';
import type { NDArray } from '../../core/ndarray.js';
import { type AvgPoolOptions, avgPoolComposite, maxPoolComposite, type PoolOptions } from './pool.js';
import { type ResizeOptions, resizeComposite } from './resize.js';

/** conv, convTranspose, maxPool, avgPool and resize: the window ops every ComputeBackend has. */
export interface ConvMethods {
  /**
   * x [N, C, ...in] (1–3 spatial axes), w [O, C/groups, ...k] → [N, O, ...out], float32; cross-correlation
   * with stride, zero padding (incl. 'same'), dilation and groups (PyTorch convNd, ONNX Conv without bias).
   * ShapeMismatchError for disagreeing shapes, InvalidArgumentError for bad options, DTypeError for int32.
   */
  conv(x: NDArray, w: NDArray, options?: ConvOptions): NDArray;
  /**
   * x [N, C, ...in], w [C, O/groups, ...k] → [N, O, ...out], out = (in − 1)·s − before − after + d·(k − 1)
   * + outputPadding + 1: conv's adjoint in x (PyTorch conv_transposeNd, ONNX ConvTranspose without bias).
   */
  convTranspose(x: NDArray, w: NDArray, options?: ConvTransposeOptions): NDArray;
  /** x [N, C, ...in] → [N, C, ...out]: each window's maximum (PyTorch max_poolNd, ONNX MaxPool). */
  maxPool(x: NDArray, options: PoolOptions): NDArray;
  /** x [N, C, ...in] → [N, C, ...out]: each window's mean (PyTorch avg_poolNd, ONNX AveragePool). */
  avgPool(x: NDArray, options: AvgPoolOptions): NDArray;
  /**
   * x [...] → [...sizes] (or ⌊shape·scales⌋): nearest, linear or cubic interpolation per axis with ONNX
   * Resize's coordinate transformations and nearest modes (PyTorch interpolate, TensorFlow resize).
   */
  resize(x: NDArray, options: ResizeOptions): NDArray;
}

/** The conv methods (ConvMethods) as BaseBackend has them (FAMILIES, base.ts): the composites of this folder. */
export const CONV_METHODS: FamilyTable<ConvMethods> = {
  conv(x: NDArray, w: NDArray, o?: ConvOptions) {
    return convComposite(this, x, w, o);
  },
  convTranspose(x: NDArray, w: NDArray, o?: ConvTransposeOptions) {
    return convTransposeComposite(this, x, w, o);
  },
  maxPool(x: NDArray, o: PoolOptions) {
    return maxPoolComposite(this, x, o);
  },
  avgPool(x: NDArray, o: AvgPoolOptions) {
    return avgPoolComposite(this, x, o);
  },
  resize(x: NDArray, o: ResizeOptions) {
    return resizeComposite(this, x, o);
  },
} satisfies FamilyTable<ConvMethods, ConvHost>;
