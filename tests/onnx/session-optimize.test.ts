/**
 * InferenceSession's graph transforms (packages/onnx/src/optimize.ts): BatchNormalization folded into the
 * Conv or ConvTranspose before it. Outputs against onnxruntime-node with its graph optimizations off (an
 * independent peer computing the unfolded graph), on every backend of the repository; onNode shows which
 * BatchNormalization nodes went (the conv writes the BN's output) and which stayed.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceSession, type OutputTensor } from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { attr, encodeModel, type NodeSpec, type TensorSpec } from '../support/onnx-builder.js';
import { runOrt } from '../support/onnx-ort.js';

/** Seeded values in [lo, hi). */
function values(n: number, seed: number, lo = -1, hi = 1): number[] {
  let a = seed >>> 0;
  return Array.from({ length: n }, () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return Math.fround(lo + ((hi - lo) * a) / 2 ** 32);
  });
}

const f32 = (name: string, dims: number[], seed: number, lo = -1, hi = 1): TensorSpec => ({
  name,
  dtype: 'float32',
  dims,
  data: values(
    dims.reduce((p, d) => p * d, 1),
    seed,
    lo,
    hi,
  ),
});

/** The four BatchNormalization inputs of `c` channels (variance positive), named `p`_scale, … */
const bnParams = (p: string, c: number, seed: number): TensorSpec[] => [
  f32(`${p}_scale`, [c], seed, 0.5, 2),
  f32(`${p}_beta`, [c], seed + 1),
  f32(`${p}_mean`, [c], seed + 2),
  f32(`${p}_var`, [c], seed + 3, 0.1, 3),
];
const bn = (p: string, x: string, y: string, eps?: number): NodeSpec => ({
  op: 'BatchNormalization',
  name: `${p}_bn`,
  inputs: [x, `${p}_scale`, `${p}_beta`, `${p}_mean`, `${p}_var`],
  outputs: [y],
  attrs: eps === undefined ? {} : { epsilon: attr.float(eps) },
});

// x [2, 4, 6, 7]:
//  a: Conv 3×3 with bias → BN → ya                                   (folded)
//  b: grouped ConvTranspose 2×2/2 without bias → BN (ε 1e-3) → yb     (folded)
//  c: depthwise Conv 3×3/2 → BN → yc                                  (folded)
//  d: Conv 1×1 whose output is also a graph output → BN → yd          (stays: its input is read elsewhere)
const MODEL = encodeModel({
  name: 'bn-fold',
  nodes: [
    {
      op: 'Conv',
      name: 'a_conv',
      inputs: ['x', 'a_w', 'a_b'],
      outputs: ['a_y'],
      attrs: { pads: attr.ints([1, 1, 1, 1]) },
    },
    bn('a', 'a_y', 'ya'),
    {
      op: 'ConvTranspose',
      name: 'b_conv',
      inputs: ['x', 'b_w'],
      outputs: ['b_y'],
      attrs: { strides: attr.ints([2, 2]), group: attr.int(2) },
    },
    bn('b', 'b_y', 'yb', 1e-3),
    {
      op: 'Conv',
      name: 'c_conv',
      inputs: ['x', 'c_w'],
      outputs: ['c_y'],
      attrs: { group: attr.int(4), strides: attr.ints([2, 2]), pads: attr.ints([1, 1, 1, 1]) },
    },
    bn('c', 'c_y', 'yc'),
    { op: 'Conv', name: 'd_conv', inputs: ['x', 'd_w', 'd_b'], outputs: ['d_y'] },
    bn('d', 'd_y', 'yd'),
  ],
  inputs: [{ name: 'x', dtype: 'float32', shape: [2, 4, 6, 7] }],
  outputs: ['ya', 'yb', 'yc', 'yd', 'd_y'].map((name) => ({ name, dtype: 'float32' as const })),
  initializers: [
    f32('a_w', [5, 4, 3, 3], 1),
    f32('a_b', [5], 2),
    ...bnParams('a', 5, 10),
    f32('b_w', [4, 3, 2, 2], 3), // C 4, O/g 3, groups 2: 6 output channels
    ...bnParams('b', 6, 20),
    f32('c_w', [4, 1, 3, 3], 4),
    ...bnParams('c', 4, 30),
    f32('d_w', [3, 4, 1, 1], 5),
    f32('d_b', [3], 6),
    ...bnParams('d', 3, 40),
  ],
});
const X = values(2 * 4 * 6 * 7, 99, -2, 2);

describe.each(Object.keys(REPO_BACKENDS))('BatchNormalization folding on %s', (name) => {
  let dir: string;
  let want: Record<string, { dims: number[]; data: (number | string)[] }>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'polyhal-optimize-'));
    const model = join(dir, 'model.onnx');
    writeFileSync(model, MODEL);
    const [r] = runOrt([{ model, feeds: [{ name: 'x', type: 'float32', dims: [2, 4, 6, 7], data: X.map(String) }] }]);
    if (!r?.outputs) throw new Error(`onnxruntime: ${r?.error}`);
    want = r.outputs;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('outputs match the unfolded graph; the folded BNs are gone, the other stays', async () => {
    const s = await InferenceSession.create(MODEL, { backend: name });
    const seen: { op: string; node: string; outputs: readonly string[] }[] = [];
    const out = await s.run(
      { x: { dtype: 'float32', dims: [2, 4, 6, 7], data: Float32Array.from(X) } },
      { onNode: (n) => void seen.push({ op: n.op, node: n.node, outputs: n.outputNames }) },
    );
    for (const y of ['ya', 'yb', 'yc', 'yd', 'd_y']) {
      const got: OutputTensor = out[y]!;
      const ref = want[y]!;
      expect(got.dims).toEqual(ref.dims);
      const scale = Math.max(1, ...ref.data.map((v) => Math.abs(Number(v))));
      let err = 0;
      Array.from(got.data as Float32Array).forEach((v, i) => {
        err = Math.max(err, Math.abs(v - Number(ref.data[i])));
      });
      expect(err / scale).toBeLessThan(1e-5);
    }
    expect(seen.filter((n) => n.op === 'BatchNormalization').map((n) => n.node)).toEqual(['d_bn']);
    expect(seen.find((n) => n.node === 'a_conv')?.outputs).toEqual(['ya']);
    expect(seen.find((n) => n.node === 'b_conv')).toMatchObject({ op: 'ConvTranspose', outputs: ['yb'] });
    expect(seen.find((n) => n.node === 'c_conv')?.outputs).toEqual(['yc']);
    expect(seen.find((n) => n.node === 'd_conv')?.outputs).toEqual(['d_y']);
    await s.release();
  });
});
