/**
 * --quantize: int8 post-training quantization of the trained model (@polyhal/autograd `quantize`: int8
 * weights per output channel, int8 activations per tensor calibrated on 256 training digits) — test
 * accuracy against float32, and inference throughput (digits/s, batch 256 and batch 1) of both, on the
 * backend that trained it. Linear and convolution layers are quantized (the ViT's attention products and
 * LayerNorms stay float32); the output names the quantized layers' count.
 */
import { DataLoader, dequantize, type Module, noGrad, quantize, scope, Tensor } from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';
import { type ModelKind, toModelInput } from '@polyhal/models';
import type { MnistSplit } from './mnist.js';
import { evaluate } from './train.js';

export interface QuantizedResult {
  layers: number;
  /** Training digits the activations were calibrated on, and the large batch's size (256, or fewer digits). */
  calibrationDigits: number;
  batchSize: number;
  floatAccuracy: number;
  int8Accuracy: number;
  /** digits/s: [float32, int8] at batch 256 and at batch 1. */
  batch256: [number, number];
  batch1: [number, number];
}

/** Digits per second of forward passes (logits read back each time) over `x`, repeated for ≥ 300 ms. */
async function throughput(model: Module, kind: ModelKind, x: Tensor): Promise<number> {
  const once = () => scope(() => noGrad(() => model.forward(toModelInput(kind, x))).data());
  await once(); // warm-up: pipelines, packed buffers
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 300 || n < 3) {
    await once();
    n++;
  }
  return (n * x.shape[0]!) / ((performance.now() - t0) / 1000);
}

export async function quantizedReport(
  model: Module,
  kind: ModelKind,
  backend: ComputeBackend,
  data: MnistSplit,
  floatAccuracy: number,
): Promise<QuantizedResult> {
  const batch = (n: number, from: Float32Array) => Tensor.fromArray(backend, from.subarray(0, n * 784), [n, 784]);
  // 256 digits a batch, or all of them when --test or --train is smaller.
  const [big, calibrate] = [Math.min(256, data.testSize), Math.min(256, data.trainSize)];
  const [x256, x1] = [batch(big, data.testX), batch(1, data.testX)];
  try {
    const float256 = await throughput(model, kind, x256);
    const float1 = await throughput(model, kind, x1);
    const calibration = new DataLoader({
      inputs: data.trainX.subarray(0, calibrate * 784),
      labels: data.trainY.subarray(0, calibrate * 10),
      inputShape: [784],
      labelShape: [10],
      batchSize: calibrate,
      backend,
    });
    const report = await quantize(model, async () => {
      for await (const { x } of calibration)
        await scope(() => noGrad(() => model.forward(toModelInput(kind, x))).data());
    });
    try {
      const int8Accuracy = await evaluate(model, kind, backend, data);
      const int8256 = await throughput(model, kind, x256);
      const int81 = await throughput(model, kind, x1);
      return {
        layers: report.layers.length,
        calibrationDigits: calibrate,
        batchSize: big,
        floatAccuracy,
        int8Accuracy,
        batch256: [float256, int8256],
        batch1: [float1, int81],
      };
    } finally {
      dequantize(model);
    }
  } finally {
    x256.dispose();
    x1.dispose();
  }
}

/** The report's lines. */
export function formatQuantized(r: QuantizedResult, backend: string): string[] {
  const d = (r.int8Accuracy - r.floatAccuracy) * 100;
  const rate = ([f, q]: [number, number]) => `float32 ${f.toFixed(0)}, int8 ${q.toFixed(0)} (${(q / f).toFixed(2)}×)`;
  return [
    `int8 (${r.layers} Linear/conv layers quantized; weights per output channel, activations per tensor from ` +
      `${r.calibrationDigits} training digits): test accuracy ${r.int8Accuracy.toFixed(4)} ` +
      `(float32 ${r.floatAccuracy.toFixed(4)}, ` +
      `${d >= 0 ? '+' : ''}${d.toFixed(2)} points) on ${backend}`,
    `inference digits/s, batch ${r.batchSize}: ${rate(r.batch256)}; batch 1: ${rate(r.batch1)}`,
  ];
}
