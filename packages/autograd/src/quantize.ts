/**
 * Post-training static quantization of a model's Linear and convolution layers (as PyTorch's eager-mode
 * `torch.ao.quantization.quantize(model, run_fn)`): int8 weights, symmetric per output channel
 * (scale_o = max|W[o, ...]| / 127), and int8 activations, symmetric per tensor (scale = max|x| / 127 over
 * the calibration run). A quantized layer computes
 *   Linear:       y = matmulIntegerToFloat(quantizeLinear(x, sx), Wqᵀ, sx, sw, bias)
 *                   = matmulInteger(quantizeLinear(x, sx), Wqᵀ) · (sx · sw) + bias
 *   Conv1d/2d:    y = convInteger(quantizeLinear(x, sx), Wq) · (sx · sw) + bias   (per output channel)
 * with the HAL's quantizeLinear (round half to even, saturating), its integer products (int32 sums of
 * int8 products: packed dot4I8Packed or subgroup-matrix kernels on webgpu; convInteger is im2col and the
 * same integer matmul) and one float32 rescale (on webgpu, in the Linear product's stores). Inference
 * only: the result carries no gradient. Other layers (LayerNorm, attention products, transposed
 * convolutions, pooling) stay float32.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { Linear, type Module } from './nn.js';
import { ConvNd, ConvTranspose2d } from './nn-conv.js';
import { Tensor } from './tensor.js';

/** What `quantize` did: the quantized layers' names and their activation scales. */
export interface QuantizationReport {
  /**
   * One entry per quantized layer, in model order: its dotted name, the int8 scale of its input
   * (from calibration: max |x| / 127) and the largest of its per-output-channel weight scales.
   */
  layers: { name: string; inputScale: number; weightScaleMax: number }[];
}

type Quantizable = Linear | ConvNd;

/** Linear, Conv1d and Conv2d layers (a transposed convolution's product is not quantized). */
const isQuantizable = (m: Module): m is Quantizable =>
  m instanceof Linear || (m instanceof ConvNd && !(m instanceof ConvTranspose2d));

/** The int8 product of one layer: its weights, the input's scale and zero point, and the rescale. */
class Int8Layer {
  constructor(
    private readonly be: ComputeBackend,
    /** int8 [out, in] (Linear) or [O, C/groups, ...k] (conv). */
    private readonly wq: NDArray,
    /** float32 [] and int8 []: the input's scale and zero point (0). */
    private readonly xScale: NDArray,
    private readonly xZero: NDArray,
    /** float32 [out]: the weights' scales sw per output channel. */
    private readonly wScale: NDArray,
    /** float32 [1, O, 1, ...] (conv): sx · sw; null for Linear (matmulIntegerToFloat multiplies). */
    private readonly outScale: NDArray | null,
  ) {}

  forward(layer: Quantizable, x: Tensor): Tensor {
    const be = this.be;
    const temps: NDArray[] = [];
    const t = <A extends NDArray>(a: A): A => {
      temps.push(a);
      return a;
    };
    try {
      const xq = t(be.quantizeLinear(x.value, this.xScale, this.xZero));
      const bias = layer.bias?.value;
      if (layer instanceof ConvNd) {
        const scale = this.outScale!;
        const acc = t(be.convInteger(xq, this.wq, undefined, undefined, layer.options));
        const y = be.mul(t(be.cast(acc, 'float32')), scale);
        if (!bias) return new Tensor(be, y);
        return new Tensor(be, be.add(t(y), be.reshape(bias, scale.shape)));
      }
      const shape = x.value.shape;
      const rows = shape.slice(0, -1).reduce((p, d) => p * d, 1);
      // quantizeLinear writes a fresh contiguous array, so its [rows, in] reshape is a view of it (one
      // product of 2-D operands, not one per leading index).
      const wT = be.permute(this.wq, [1, 0]);
      const a = be.reshape(xq, [rows, layer.inFeatures]);
      const y = be.matmulIntegerToFloat(a, wT, this.xScale, this.wScale, undefined, undefined, bias);
      return new Tensor(be, be.reshape(y, [...shape.slice(0, -1), layer.outFeatures]));
    } finally {
      for (const a of temps) be.free(a);
    }
  }

  dispose(): void {
    for (const a of [this.wq, this.xScale, this.xZero, this.wScale, this.outScale]) if (a) this.be.free(a);
  }
}

/**
 * Quantizes every Linear, Conv1d and Conv2d layer of `model` in place: runs `calibrate` (which should
 * forward a few hundred representative inputs, under noGrad) while recording each layer's largest input
 * magnitude, then replaces the layers' products by int8 ones. Layers that saw no input during
 * calibration stay float32. `dequantize` undoes it.
 */
export async function quantize(model: Module, calibrate: () => unknown): Promise<QuantizationReport> {
  const layers = model.namedModules().filter((e): e is [string, Quantizable] => isQuantizable(e[1]));
  const maxima = new Map<Quantizable, NDArray>();
  for (const [, layer] of layers) {
    layer.observer = (x: Tensor) => {
      const be = x.backend;
      const m = be.max(be.unary('abs', x.value));
      const prev = maxima.get(layer);
      if (prev) {
        maxima.set(layer, be.maximum(prev, m));
        be.free(prev);
        be.free(m);
      } else maxima.set(layer, m);
    };
  }
  try {
    await calibrate();
  } finally {
    for (const [, layer] of layers) layer.observer = null;
  }
  const report: QuantizationReport = { layers: [] };
  for (const [name, layer] of layers) {
    const seen = maxima.get(layer);
    if (!seen) continue;
    const be = layer.weight.backend;
    const absmax = (await be.read(seen))[0]!;
    be.free(seen);
    const sx = Math.max(absmax, 1e-12) / 127;
    const w = layer.weight.value;
    const out = w.shape[0]!;
    const absW = be.unary('abs', w);
    const wMax = be.max(absW, w.shape.map((_, a) => a).slice(1));
    be.free(absW);
    const sw = be.maximum(be.div(wMax, 127), 1e-12);
    be.free(wMax);
    const zeros = be.full([out], 0, 'int8');
    const wq = be.quantizeLinear(w, sw, zeros, 0);
    be.free(zeros);
    // conv: sx · sw, [O] → [1, O, 1, ...] to broadcast over [N, O, ...out]
    let outScale: NDArray | null = null;
    if (layer instanceof ConvNd) {
      const scale = be.mul(sw, sx);
      outScale = be.reshape(scale, [1, out, ...layer.kernelSize.map(() => 1)]);
      if (outScale.buffer !== scale.buffer) be.free(scale);
    }
    const swMax = Math.max(...(await be.read(sw)));
    layer.quantization?.dispose();
    layer.quantization = new Int8Layer(be, wq, be.full([], sx), be.full([], 0, 'int8'), sw, outScale);
    report.layers.push({ name, inputScale: sx, weightScaleMax: swMax });
  }
  return report;
}

/** Returns every quantized layer of `model` to its float32 product and frees the int8 weights. */
export function dequantize(model: Module): void {
  for (const [, m] of model.namedModules())
    if (isQuantizable(m) && m.quantization) {
      m.quantization.dispose();
      m.quantization = null;
    }
}
