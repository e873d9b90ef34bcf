import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ComputeBackend, mulberry32 } from '@polyhal/hal';
import { type Module, noGrad, Tensor } from '@polyhal/autograd';
import { buildModel, type ModelKind, toModelInput } from '@polyhal/models';
import { decodeModel, exportOnnx, InferenceSession } from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { runOrt } from '../support/onnx-ort.js';

// exportOnnx round trips: the main job's MLP, CNN and ViT (seeded, eval mode) traced on the cpu backend, written
// as ONNX (opset 17), then run by onnxruntime-node (CPU provider, in a child process: an independent peer that
// also checks the graph when it loads it) and by PolyHAL's own InferenceSession. Both must agree with the
// model's own eager output: max absolute error relative to the output's largest |value| ≤ 1e-5 (measured:
// see the figures in docs/guide/exporting-to-onnx.md).
const TOLERANCE = 1e-5;

let be: ComputeBackend;
let dir: string;
beforeAll(async () => {
  be = await REPO_BACKENDS.cpu!();
  dir = mkdtempSync(join(tmpdir(), 'polyhal-export-'));
});
afterAll(() => {
  be.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Seeded pixel-like values in [0, 1). */
function pixels(n: number, seed: number): Float32Array {
  const rng = mulberry32(seed);
  return Float32Array.from({ length: n }, () => rng());
}

/** max |a − b| / max |want|. */
function relError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  expect(got.length).toBe(want.length);
  let err = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    err = Math.max(err, Math.abs(Number(got[i]) - Number(want[i])));
    scale = Math.max(scale, Math.abs(Number(want[i])));
  }
  return err / scale;
}

interface Feed {
  name: string;
  dims: number[];
  data: Float32Array;
}

/** Runs `bytes` on onnxruntime-node: its outputs by name, or throws its error. */
function ort(bytes: Uint8Array, feeds: readonly Feed[], file: string): Record<string, number[]> {
  const path = join(dir, file);
  writeFileSync(path, bytes);
  const [r] = runOrt([
    {
      model: path,
      feeds: feeds.map((f) => ({ name: f.name, type: 'float32', dims: f.dims, data: Array.from(f.data, String) })),
    },
  ]);
  if (r!.error) throw new Error(r!.error);
  return Object.fromEntries(Object.entries(r!.outputs!).map(([k, v]) => [k, v.data as number[]]));
}

/** Runs `bytes` on PolyHAL's InferenceSession on `backend`. */
async function polyhal(bytes: Uint8Array, feeds: readonly Feed[], backend: ComputeBackend): Promise<Float32Array[]> {
  const s = await InferenceSession.create(bytes, { backend });
  const out = await s.run(
    Object.fromEntries(feeds.map((f) => [f.name, { type: 'float32', dims: f.dims, data: f.data }])),
  );
  await s.release();
  return s.outputNames.map((n) => out[n]!.data as Float32Array);
}

describe('exportOnnx: the main job models', () => {
  for (const kind of ['mlp', 'cnn', 'vit'] as ModelKind[]) {
    test(`${kind}: onnxruntime-node and InferenceSession agree with the eager forward`, async () => {
      const model: Module = buildModel(kind, be, 3).eval();
      const n = 2;
      const data = pixels(n * 784, 11);
      const x = Tensor.fromArray(be, data, [n, 784]);
      const input = toModelInput(kind, x);
      const eager = noGrad(() => model.forward(input) as Tensor);
      const want = be.readSync!(eager.value) as Float32Array;
      const bytes = await exportOnnx(model, [input]);
      const feeds = [{ name: 'input_0', dims: [...input.shape], data }];
      const fromOrt = ort(bytes, feeds, `${kind}.onnx`)['output_0']!;
      const [fromSession] = await polyhal(bytes, feeds, be);
      const errOrt = relError(fromOrt, want);
      const errSession = relError(fromSession!, want);
      const m = decodeModel(bytes);
      const ops: Record<string, number> = {};
      for (const nd of m.nodes) ops[nd.opType] = (ops[nd.opType] ?? 0) + 1;
      console.log(kind, errOrt, errSession, JSON.stringify(ops), m.initializers.map((t) => t.name).join(' '));
      expect(errOrt).toBeLessThanOrEqual(TOLERANCE);
      expect(errSession).toBeLessThanOrEqual(TOLERANCE);
      eager.dispose();
      x.dispose();
    });
  }
});
