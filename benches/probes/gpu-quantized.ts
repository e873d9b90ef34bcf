/**
 * The main job's quantized inference on a real GPU (for the GPU machine, bundled with esbuild): trains the
 * MLP, the CNN and the ViT on real MNIST digits on @polyhal/backend-webgpu exactly as `polyhal --quantize`
 * does (same split, seed, batch 64, learning rates and epochs), then runs its int8 report: test accuracy of
 * float32 and int8, inference digits/s at batch 256 and batch 1 of both. The digits come from the file
 * `scripts/mnist-bytes.mjs` writes, gzipped or not (the GPU machine has no `mnist` package).
 *   node gpu-quantized.mjs --data mnist.bin.gz [--models mlp,cnn,vit] [--epochs mlp:12,cnn:8,vit:30]
 *     [--dawn-flags enable-dawn-features=allow_unsafe_apis] [--json out.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import type { ModelKind } from '@polyhal/models';
import { splitMnist } from '../../packages/cli/src/mnist.js';
import { formatQuantized, type QuantizedResult, quantizedReport } from '../../packages/cli/src/quantized.js';
import { train } from '../../packages/cli/src/train.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const file = arg('data', 'mnist.bin.gz');
const bytes = file.endsWith('.gz') ? gunzipSync(readFileSync(file)) : readFileSync(file);
const counts = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 40));
const images: Float32Array[] = [];
const labels: number[] = [];
const value = Float32Array.from({ length: 256 }, (_, k) => Number((k / 255).toFixed(3)));
let at = 40;
counts.forEach((c, d) => {
  for (let n = 0; n < c; n++, at += 784) {
    images.push(Float32Array.from(bytes.subarray(at, at + 784), (k) => value[k]!));
    labels.push(d);
  }
});
const data = splitMnist(images, labels, 8000, 2000, 0);
const epochs = Object.fromEntries(
  arg('epochs', 'mlp:12,cnn:8,vit:30')
    .split(',')
    .map((e) => e.split(':') as [string, string]),
);
const lr: Record<ModelKind, number> = { mlp: 0.001, cnn: 0.003, vit: 0.001 };
const flags = arg('dawn-flags', 'enable-dawn-features=allow_unsafe_apis').split(' ').filter(Boolean);
const out: Record<string, QuantizedResult & { device: string; epochs: number; trainSeconds: number }> = {};
for (const model of arg('models', 'mlp,cnn,vit').split(',') as ModelKind[]) {
  const backend = await createWebGpuBackend({ dawnFlags: flags });
  try {
    let report: QuantizedResult | undefined;
    let accuracy = 0;
    const n = Number(epochs[model] ?? 1);
    const r = await train(backend, data, {
      model,
      epochs: n,
      batchSize: 64,
      seed: 0,
      lr: lr[model],
      onEpoch: (_, acc) => {
        accuracy = acc;
      },
      afterTraining: async (m) => {
        report = await quantizedReport(m, model, backend, data, accuracy);
      },
    });
    console.log(`${model} on ${backend.deviceName}: ${n} epochs in ${r.seconds.toFixed(1)} s`);
    for (const line of formatQuantized(report!, 'webgpu')) console.log(`  ${line}`);
    out[model] = { ...report!, device: backend.deviceName, epochs: n, trainSeconds: r.seconds };
  } finally {
    backend.dispose();
  }
}
const j = process.argv.indexOf('--json');
if (j > 0) writeFileSync(process.argv[j + 1]!, JSON.stringify(out, null, 2));
