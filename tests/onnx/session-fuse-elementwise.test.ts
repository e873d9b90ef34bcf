/**
 * InferenceSession's elementwise chain fusion (packages/onnx/src/fuse-elementwise.ts): chains of unary nodes,
 * nodes with a single-element constant and Add/Sub/Mul/Div with a second tensor become one FusedElementwise node.
 * Outputs against onnxruntime-node (an independent peer computing the unfused nodes) on every backend of the
 * repository; onNode shows which chains went and which stayed; graphOptimizationLevel 'basic' keeps the model's
 * nodes with the same outputs.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from '@polyhal/hal';
import { InferenceSession } from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { attr, encodeModel, type NodeSpec, type TensorSpec } from '../support/onnx-builder.js';
import { runOrt } from '../support/onnx-ort.js';

const c = (name: string, v: number, dims: number[] = []): TensorSpec => ({ name, dtype: 'float32', dims, data: [v] });
const n = (op: string, name: string, inputs: string[], y: string, attrs: NodeSpec['attrs'] = {}): NodeSpec => ({
  op,
  name,
  inputs,
  outputs: [y],
  attrs,
});

// x [2, 3, 40] in [−5, 5), v [40]:
//  y1 = HardSwish(x) · 0.7 + 0.25                  one FusedElementwise 'a1' (3 steps)
//  y2 = HardSigmoid(x; 0.3, 0.4)                   one FusedElementwise 'hs' (4 steps)
//  y3 = sqrt(relu(1 − x))                          one FusedElementwise 'q3' (a constant first)
//  t = exp(−x) is a graph output: the chain splits  Neg → Exp 'e4' fused; Add 'a4' alone (one step) stays
//  y5 = relu(v) · c[1, 1]: the constant's rank 2 broadcasts [40] to [1, 40]   FusedElementwise 'm5'
//  y6 = Clip(x, −1, 1), then read twice: Clip 'k6' fused alone (2 steps), its readers stay
//  y7 = x − relu(x + v) · k[3, 1]: tensor operands (v a row broadcast, k a constant column, x first)  's7'
//  y8 = relu(v + x): the chain runs through v [40], x [2, 3, 40] grows it: the separate ops at run time  'r8'
const MODEL = encodeModel({
  name: 'elementwise-fusion',
  nodes: [
    n('HardSwish', 'hw1', ['x'], 'h1'),
    n('Mul', 'm1', ['h1', 'k07'], 'p1'),
    n('Add', 'a1', ['p1', 'k025'], 'y1'),
    n('HardSigmoid', 'hs', ['x'], 'y2', { alpha: attr.float(0.3), beta: attr.float(0.4) }),
    n('Sub', 's3', ['one', 'x'], 'd3'),
    n('Relu', 'r3', ['d3'], 'u3'),
    n('Sqrt', 'q3', ['u3'], 'y3'),
    n('Neg', 'n4', ['x'], 'g4'),
    n('Exp', 'e4', ['g4'], 't'),
    n('Add', 'a4', ['t', 'one'], 'y4'),
    n('Relu', 'r5', ['v'], 'u5'),
    n('Mul', 'm5', ['u5', 'k11'], 'y5'),
    n('Clip', 'k6', ['x', 'mone', 'one'], 'w6'),
    n('Mul', 'sq6', ['w6', 'w6'], 'y6'),
    n('Add', 'b7', ['x', 'v'], 'z7'),
    n('Relu', 'r7', ['z7'], 'u7'),
    n('Mul', 'm7', ['u7', 'k31'], 'p7'),
    n('Sub', 's7', ['x', 'p7'], 'y7'),
    n('Add', 'a8', ['v', 'x'], 'z8'),
    n('Relu', 'r8', ['z8'], 'y8'),
  ],
  inputs: [
    { name: 'x', dtype: 'float32', shape: [2, 3, 40] },
    { name: 'v', dtype: 'float32', shape: [40] },
  ],
  outputs: ['y1', 'y2', 'y3', 't', 'y4', 'y5', 'y6', 'y7', 'y8'].map((name) => ({ name, dtype: 'float32' as const })),
  initializers: [
    c('k07', 0.7),
    c('k025', 0.25),
    c('one', 1),
    c('mone', -1),
    c('k11', 1.5, [1, 1]),
    { name: 'k31', dtype: 'float32', dims: [3, 1], data: [0.5, -1.25, 2] },
  ],
});
const X = Array.from({ length: 240 }, (_, i) => Math.fround(-5 + (10 * ((i * 37) % 240)) / 240));
const V = Array.from({ length: 40 }, (_, i) => Math.fround(Math.sin(i) * 2));
const FEEDS = {
  x: { dtype: 'float32', dims: [2, 3, 40], data: Float32Array.from(X) },
  v: { dtype: 'float32', dims: [40], data: Float32Array.from(V) },
};

describe.each(Object.keys(REPO_BACKENDS))('elementwise chain fusion on %s', (name) => {
  let dir: string;
  let want: Record<string, { dims: number[]; data: (number | string)[] }>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'polyhal-fuse-ew-'));
    const model = join(dir, 'model.onnx');
    writeFileSync(model, MODEL);
    const feeds = [
      { name: 'x', type: 'float32', dims: [2, 3, 40], data: X.map(String) },
      { name: 'v', type: 'float32', dims: [40], data: V.map(String) },
    ];
    const [r] = runOrt([{ model, feeds }]);
    if (!r?.outputs) throw new Error(`onnxruntime: ${r?.error}`);
    want = r.outputs;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each(['all', 'basic'] as const)('graphOptimizationLevel %s: the outputs of onnxruntime', async (level) => {
    const s = await InferenceSession.create(MODEL, { backend: name, graphOptimizationLevel: level });
    const seen: [string, string][] = [];
    const out = await s.run(FEEDS, { onNode: (x) => void seen.push([x.node, x.op]) });
    for (const [y, w] of Object.entries(want)) {
      expect(out[y]!.dims).toEqual(w.dims);
      const ref = w.data.map(Number);
      Array.from(out[y]!.data as Float32Array).forEach((v, i) =>
        expect(Math.abs(v - ref[i]!)).toBeLessThanOrEqual(2e-6 * Math.max(1, Math.abs(ref[i]!))),
      );
    }
    const fused = seen.filter(([, op]) => op === 'FusedElementwise').map(([node]) => node);
    if (level === 'all') {
      expect(fused.sort()).toEqual(['a1', 'e4', 'hs', 'k6', 'm5', 'q3', 'r8', 's7']);
      const names = new Set(seen.map(([node]) => node));
      for (const gone of ['hw1', 'm1', 's3', 'r3', 'n4', 'r5', 'b7', 'r7', 'm7', 'a8'])
        expect(names.has(gone)).toBe(false);
      for (const stays of ['a4', 'sq6']) expect(names.has(stays)).toBe(true);
    } else {
      expect(fused).toEqual([]);
      expect(seen.length).toBe(20);
    }
    await s.release();
  });

  test('another graphOptimizationLevel is an InvalidArgumentError', async () => {
    await expect(
      InferenceSession.create(MODEL, { backend: name, graphOptimizationLevel: 'most' as unknown as 'all' }),
    ).rejects.toThrow(InvalidArgumentError);
  });
});
