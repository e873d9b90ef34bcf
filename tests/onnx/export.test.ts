import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ComputeBackend, InvalidArgumentError, mulberry32 } from '@polyhal/hal';
import {
  avgPool,
  compile,
  concat,
  cumsum,
  Dropout,
  expand,
  Linear,
  logSoftmax,
  logsumexp,
  max,
  maxPool,
  maximum,
  mean,
  type Module,
  noGrad,
  padMode,
  scope,
  ReLU,
  Sequential,
  silu,
  softmax,
  stride,
  sum,
  Tensor,
  trunc,
  where,
} from '@polyhal/autograd';
import { buildModel, type ModelKind, toModelInput } from '@polyhal/models';
import {
  decodeModel,
  exportOnnx,
  InferenceSession,
  OnnxExportRandomError,
  OnnxExportUnmappedError,
} from '@polyhal/onnx';
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

/** Op type → count in the model `bytes`. */
/** Every output of the model from onnxruntime-node and from InferenceSession within 1e-6 of `wants` (relError). */
async function expectOutputs(
  bytes: Uint8Array,
  feeds: readonly Feed[],
  file: string,
  wants: readonly Float32Array[],
  backend: ComputeBackend,
): Promise<void> {
  const fromOrt = ort(bytes, feeds, file);
  const fromSession = await polyhal(bytes, feeds, backend);
  wants.forEach((want, i) => {
    expect(relError(fromOrt[`output_${i}`]!, want)).toBeLessThanOrEqual(1e-6);
    expect(relError(fromSession[i]!, want)).toBeLessThanOrEqual(1e-6);
  });
}

function opCounts(bytes: Uint8Array): Record<string, number> {
  const ops: Record<string, number> = {};
  for (const nd of decodeModel(bytes).nodes) ops[nd.opType] = (ops[nd.opType] ?? 0) + 1;
  return ops;
}

/** Exports `kind` built on `backend`, runs it on onnxruntime and InferenceSession; the two relative errors. */
async function roundTrip(kind: ModelKind, backend: ComputeBackend): Promise<{ ort: number; session: number }> {
  const model: Module = buildModel(kind, backend, 3).eval();
  const n = 2;
  const data = pixels(n * 784, 11);
  const x = Tensor.fromArray(backend, data, [n, 784]);
  const input = toModelInput(kind, x);
  const eager = noGrad(() => scope(() => model.forward(input) as Tensor));
  const want = (await backend.read(eager.value)) as Float32Array;
  const bytes = await exportOnnx(model, [input]);
  const feeds = [{ name: 'input_0', dims: [...input.shape], data }];
  const fromOrt = ort(bytes, feeds, `${kind}-${backend.name}.onnx`)['output_0']!;
  const [fromSession] = await polyhal(bytes, feeds, backend);
  eager.dispose();
  input.dispose();
  x.dispose();
  model.dispose();
  return { ort: relError(fromOrt, want), session: relError(fromSession!, want) };
}

describe('exportOnnx: the main job models', () => {
  for (const kind of ['mlp', 'cnn', 'vit'] as ModelKind[]) {
    test(`${kind} on cpu: onnxruntime-node and InferenceSession agree with the eager forward`, async () => {
      const err = await roundTrip(kind, be);
      expect(err.ort).toBeLessThanOrEqual(TOLERANCE);
      expect(err.session).toBeLessThanOrEqual(TOLERANCE);
    });
  }

  test('vit on wasm: the same agreement', async () => {
    const wasm = await REPO_BACKENDS.wasm!();
    try {
      const err = await roundTrip('vit', wasm);
      expect(err.ort).toBeLessThanOrEqual(TOLERANCE);
      expect(err.session).toBeLessThanOrEqual(TOLERANCE);
    } finally {
      wasm.dispose();
    }
  });

  test('the MLP graph: parameters as named initializers, standard ops only, no buffer left behind', async () => {
    const model = buildModel('mlp', be, 0).eval();
    const x = Tensor.fromArray(be, pixels(3 * 784, 1), [3, 784]);
    const live = be.liveBufferCount();
    const bytes = await exportOnnx(model, x, { inputNames: ['pixels'], outputNames: ['logits'] });
    expect(be.liveBufferCount()).toBe(live);
    const m = decodeModel(bytes);
    expect(m.irVersion).toBe(8);
    expect(m.opsets.get('')).toBe(17);
    expect(m.inputs.map((v) => v.name)).toEqual(['pixels']);
    expect(m.outputs.map((v) => v.name)).toEqual(['logits']);
    expect(m.initializers.map((t) => t.name).sort()).toEqual(['0.bias', '0.weight', '2.bias', '2.weight']);
    expect(opCounts(bytes)).toEqual({ Transpose: 2, MatMul: 2, Add: 2, Relu: 1, Identity: 1 });
    x.dispose();
    model.dispose();
  });
});

describe('exportOnnx: functions, views and errors', () => {
  test('views of an input (permute, shrink, stride, expand) and several outputs', async () => {
    const data = pixels(3 * 4 * 5, 5);
    const x = Tensor.fromArray(be, data, [3, 4, 5]);
    const y = Tensor.fromArray(be, pixels(5, 6), [5]);
    const fn = (a: Tensor, b: Tensor): Tensor[] => [
      a.permute([2, 0, 1]),
      a.shrink([
        [1, 3],
        [0, 4],
        [2, 5],
      ]),
      stride(a, [1, 1, 2]),
      expand(
        a.shrink([
          [0, 1],
          [1, 2],
          [0, 5],
        ]),
        [3, 4, 5],
      ).add(cumsum(a, 2)),
      a
        .reshape([12, 5])
        .permute([1, 0])
        .shrink([
          [1, 4],
          [2, 10],
        ])
        .mul(b.shrink([[1, 4]]).reshape([3, 1])),
    ];
    const eager = noGrad(() => scope(() => fn(x, y)));
    const wants = eager.map((t) => be.readSync!(t.value) as Float32Array);
    const bytes = await exportOnnx(fn, [x, y], { inputNames: ['x', 'y'], dynamicAxes: { x: { 0: 'batch' } } });
    const m = decodeModel(bytes);
    expect(m.inputs[0]!.name).toBe('x');
    // strides [20, 5, 2] do not nest (5 is no multiple of 2): a Gather; the others are Slice/Transpose/Expand
    expect(opCounts(bytes)['Gather']).toBe(1);
    const feeds = [
      { name: 'x', dims: [3, 4, 5], data },
      { name: 'y', dims: [5], data: be.readSync!(y.value) as Float32Array },
    ];
    await expectOutputs(bytes, feeds, 'views.onnx', wants, be);
    for (const t of eager) t.dispose();
    x.dispose();
    y.dispose();
  });

  test('pools, reductions, softmax, concat, where and composite unary ops agree with onnxruntime', async () => {
    const data = pixels(2 * 3 * 6 * 6, 8).map((v) => 4 * v - 2);
    const x = Tensor.fromArray(be, data, [2, 3, 6, 6]);
    const fn = (a: Tensor): Tensor[] => {
      const m = maxPool(a, { kernelSize: 3, stride: 2, padding: 1 });
      const p = avgPool(a, { kernelSize: 2, padding: 1, countIncludePad: false });
      return [
        m,
        p,
        softmax(a, 1),
        logSoftmax(a, -1),
        mean(a, [2, 3], true),
        sum(a, 1),
        max(a, [0, 3]),
        logsumexp(a, 2),
        concat([silu(a), a.gelu(), maximum(a, 0.25)], 1),
        where(a.greater(0), a, a.mul(0.1)),
      ];
    };
    const eager = noGrad(() => scope(() => fn(x)));
    const wants = eager.map((t) => be.readSync!(t.value) as Float32Array);
    const bytes = await exportOnnx(fn, [x]);
    const ops = ['MaxPool', 'AveragePool', 'Softmax', 'LogSoftmax', 'ReduceMean', 'ReduceSum', 'ReduceMax'];
    ops.push('ReduceLogSumExp', 'Concat', 'Where', 'Greater', 'Erf', 'Sigmoid', 'Max');
    expect(Object.keys(opCounts(bytes))).toEqual(expect.arrayContaining(ops));
    const feeds = [{ name: 'input_0', dims: [2, 3, 6, 6], data }];
    await expectOutputs(bytes, feeds, 'misc.onnx', wants, be);
    for (const t of eager) t.dispose();
    x.dispose();
  });

  test('a compiled function exports its own function', async () => {
    const model = new Sequential(new Linear(4, 3, { backend: be, rng: 1 }), new ReLU()).eval();
    const forward = compile((t: Tensor) => model.forward(t) as Tensor);
    const data = pixels(8, 2);
    const x = Tensor.fromArray(be, data, [2, 4]);
    const bytes = await exportOnnx(forward, [x]);
    const want = noGrad(() => scope(() => model.forward(x) as Tensor));
    const fromOrt = ort(bytes, [{ name: 'input_0', dims: [2, 4], data }], 'compiled.onnx');
    expect(relError(fromOrt['output_0']!, be.readSync!(want.value) as Float32Array)).toBeLessThanOrEqual(1e-6);
    want.dispose();
    x.dispose();
    model.dispose();
  });

  test('calls with no ONNX form: one typed error listing every one, nothing left allocated', async () => {
    const x = Tensor.fromArray(be, pixels(6, 3), [6]);
    const live = be.liveBufferCount();
    const fn = (t: Tensor): Tensor => padMode(trunc(t), [[1, 1]], 'wrap');
    const e = await exportOnnx(fn, [x]).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(OnnxExportUnmappedError);
    const ops = (e as OnnxExportUnmappedError).ops;
    expect(ops).toHaveLength(2);
    expect(ops[0]).toMatch(/trunc/);
    expect(ops[1]).toMatch(/wrap/);
    expect(be.liveBufferCount()).toBe(live);
    x.dispose();
  });

  test('random numbers (dropout in training mode): a typed error; eval() exports', async () => {
    const model = new Sequential(new Linear(4, 4, { backend: be, rng: 1 }), new Dropout(0.5));
    const x = Tensor.fromArray(be, pixels(8, 4), [2, 4]);
    await expect(exportOnnx(model, [x])).rejects.toBeInstanceOf(OnnxExportRandomError);
    model.eval();
    const bytes = await exportOnnx(model, [x]);
    expect(Object.keys(opCounts(bytes)).sort()).toEqual(['Add', 'Identity', 'MatMul', 'Transpose']);
    x.dispose();
    model.dispose();
  });

  test('inputs that are not whole buffers, a bad target: InvalidArgumentError', async () => {
    const x = Tensor.fromArray(be, pixels(8, 4), [2, 4]);
    await expect(exportOnnx((t: Tensor) => t.relu(), [x.permute([1, 0])])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(exportOnnx(42 as never, [x])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(exportOnnx((t: Tensor) => t.relu(), [x], { inputNames: ['a', 'b'] })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    x.dispose();
  });
});
