// Runs ONNX models on onnxruntime-node (CPU provider, graph optimizations off) in its own process, for
// tests/support/onnx-ort.ts: jest's module realm gives typed arrays that onnxruntime's checks reject.
// stdin: JSON [{ model: path, feeds: [{ name, type, dims, data }] }] (int64 values as strings);
// stdout: JSON, per job, { outputs: { name: { type, dims, data } } } or { error: message }.
import { readFileSync } from 'node:fs';
import ort from 'onnxruntime-node';

const ARRAYS = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

const jobs = JSON.parse(readFileSync(0, 'utf8'));
const results = [];
for (const job of jobs) {
  try {
    const session = await ort.InferenceSession.create(job.model, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'disabled',
    });
    const feeds = {};
    for (const f of job.feeds) {
      const data =
        f.type === 'int64' ? BigInt64Array.from(f.data, (v) => BigInt(v)) : ARRAYS[f.type].from(f.data, Number);
      feeds[f.name] = new ort.Tensor(f.type, data, f.dims);
    }
    const out = await session.run(feeds);
    const outputs = {};
    for (const [name, t] of Object.entries(out))
      outputs[name] = {
        type: t.type,
        dims: [...t.dims],
        data: Array.from(t.data, (v) => (typeof v === 'bigint' ? String(v) : Number(v))),
      };
    await session.release();
    results.push({ outputs });
  } catch (e) {
    results.push({ error: e.message });
  }
}
process.stdout.write(JSON.stringify(results));
