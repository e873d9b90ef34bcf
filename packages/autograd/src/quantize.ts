/**
 * Post-training static quantization of a model's Linear layers (as PyTorch's eager-mode
 * `torch.ao.quantization.quantize(model, run_fn)`): int8 weights, symmetric per output channel
 * (scale_o = max|W[o, :]| / 127), and int8 activations, symmetric per tensor (scale = max|x| / 127 over
 * the calibration run). A quantized Linear computes
 *   y = (matmulInteger(quantizeLinear(x, sx), Wq)) · (sx · sw) + bias
 * with the HAL's quantizeLinear (round half to even, saturating), its integer matmul (int32 sums of int8
 * products: packed dot4I8Packed or subgroup-matrix kernels on webgpu) and one float32 rescale. Inference
 * only: the result carries no gradient. Other layers (LayerNorm, attention products, convolutions)
 * stay float32.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Linear, Module } from './nn.js';
import { Tensor } from './tensor.js';

/** What `quantize` did: the quantized layers' names and their activation scales. */
export interface QuantizationReport {
  layers: { name: string; inputScale: number; weightScaleMax: number }[];
}

const isLinear = (m: Module): m is Linear => 'quantization' in m && 'observer' in m;

class Int8Linear {
  constructor(
    private readonly be: ComputeBackend,
    /** int8 [out, in]. */
    private readonly wq: NDArray,
    /** float32 [] and int8 []: the input's scale and zero point (0). */
    private readonly xScale: NDArray,
    private readonly xZero: NDArray,
    /** float32 [out]: sx · sw. */
    private readonly outScale: NDArray,
  ) {}

  forward(layer: Linear, x: Tensor): Tensor {
    const be = this.be;
    const temps: NDArray[] = [];
    const t = <A extends NDArray>(a: A): A => {
      temps.push(a);
      return a;
    };
    try {
      const shape = x.value.shape;
      const rows = shape.slice(0, -1).reduce((p, d) => p * d, 1);
      // quantizeLinear writes a fresh contiguous array, so its [rows, in] reshape is a view of it (one
      // product of 2-D operands, not one per leading index).
      const xq = t(be.quantizeLinear(x.value, this.xScale, this.xZero));
      const wT = be.permute(this.wq, [1, 0]);
      const acc = t(be.matmulInteger(be.reshape(xq, [rows, layer.inFeatures]), wT));
      let y = be.mul(t(be.cast(acc, 'float32')), this.outScale);
      const bias = layer.bias;
      if (bias) y = be.add(t(y), bias.value);
      return new Tensor(be, be.reshape(y, [...shape.slice(0, -1), layer.outFeatures]));
    } finally {
      for (const a of temps) be.free(a);
    }
  }

  dispose(): void {
    for (const a of [this.wq, this.xScale, this.xZero, this.outScale]) this.be.free(a);
  }
}

/**
 * Quantizes every Linear layer of `model` in place: runs `calibrate` (which should forward a few hundred
 * representative inputs, under noGrad) while recording each layer's largest input magnitude, then
 * replaces the layers' products by int8 ones. Layers that saw no input during calibration stay float32.
 * `dequantize` undoes it.
 */
export async function quantize(model: Module, calibrate: () => unknown): Promise<QuantizationReport> {
  const linears = model.namedModules().filter((e): e is [string, Linear] => isLinear(e[1]));
  const maxima = new Map<Linear, NDArray>();
  for (const [, layer] of linears) {
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
    for (const [, layer] of linears) layer.observer = null;
  }
  const report: QuantizationReport = { layers: [] };
  for (const [name, layer] of linears) {
    const seen = maxima.get(layer);
    if (!seen) continue;
    const be = layer.weight.backend;
    const absmax = (await be.read(seen))[0]!;
    be.free(seen);
    const sx = Math.max(absmax, 1e-12) / 127;
    const w = layer.weight.value;
    const wMax = be.max(be.unary('abs', w), [1]);
    const sw = be.maximum(be.div(wMax, 127), 1e-12);
    be.free(wMax);
    const zeros = be.full([layer.outFeatures], 0, 'int8');
    const wq = be.quantizeLinear(w, sw, zeros, 0);
    be.free(zeros);
    const outScale = be.mul(sw, sx);
    const swMax = Math.max(...(await be.read(sw)));
    be.free(sw);
    layer.quantization?.dispose();
    layer.quantization = new Int8Linear(be, wq, be.full([], sx), be.full([], 0, 'int8'), outScale);
    report.layers.push({ name, inputScale: sx, weightScaleMax: swMax });
  }
  return report;
}

/** Returns every quantized Linear of `model` to its float32 product and frees the int8 weights. */
export function dequantize(model: Module): void {
  for (const [, m] of model.namedModules())
    if (isLinear(m) && m.quantization) {
      m.quantization.dispose();
      m.quantization = null;
    }
}
