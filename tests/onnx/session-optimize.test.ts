/**
 * InferenceSession's graph transforms (packages/onnx/src/optimize.ts): per-channel affine ops
 * (BatchNormalization, Mul/Add/Sub by a constant) folded into the Conv or ConvTranspose before them. Outputs
 * against onnxruntime-node with its graph optimizations off (an independent peer computing the unfolded
 * graph), on every backend of the repository; onNode shows which nodes went (the conv writes the last folded
 * link's output) and which stayed.
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
//  a: Conv 3×3 with bias → BN → ya                                          (folded)
//  b: grouped ConvTranspose 2×2/2 without bias → BN (ε 1e-3) → yb            (folded)
//  c: depthwise Conv 3×3/2 → BN → yc                                         (folded)
//  d: Conv 1×1 whose output is also a graph output → BN → yd                 (stays: its input is read elsewhere)
//  e: Conv → Mul(scalar, y) → Add([1, 5, 1, 1]) → Sub(c − y, [5, 1, 1]) → BN → Mul([1, 1, 6, 7]) → ye
//     (the first four links folded; the Mul by a per-pixel constant stays)
//  f: grouped ConvTranspose → Add([1, 6, 1, 1]) → Mul(y, y) → yf             (the Add folded, the square stays)
const conv = (p: string, inputs: string[], attrs: NodeSpec['attrs'] = {}, op = 'Conv'): NodeSpec => ({
  op,
  name: `${p}_conv`,
  inputs,
  outputs: [`${p}_y`],
  attrs,
});
const binary = (op: string, name: string, inputs: string[], y: string): NodeSpec => ({
  op,
  name,
  inputs,
  outputs: [y],
});
const MODEL = encodeModel({
  name: 'conv-affine-fold',
  nodes: [
    conv('a', ['x', 'a_w', 'a_b'], { pads: attr.ints([1, 1, 1, 1]) }),
    bn('a', 'a_y', 'ya'),
    conv('b', ['x', 'b_w'], { strides: attr.ints([2, 2]), group: attr.int(2) }, 'ConvTranspose'),
    bn('b', 'b_y', 'yb', 1e-3),
    conv('c', ['x', 'c_w'], { group: attr.int(4), strides: attr.ints([2, 2]), pads: attr.ints([1, 1, 1, 1]) }),
    bn('c', 'c_y', 'yc'),
    conv('d', ['x', 'd_w', 'd_b']),
    bn('d', 'd_y', 'yd'),
    conv('e', ['x', 'a_w'], { pads: attr.ints([1, 1, 1, 1]) }),
    binary('Mul', 'e_mul', ['e_factor', 'e_y'], 'e1'),
    binary('Add', 'e_add', ['e1', 'e_shift'], 'e2'),
    binary('Sub', 'e_sub', ['e_from', 'e2'], 'e3'),
    bn('e', 'e3', 'e4'),
    binary('Mul', 'e_pixels', ['e4', 'e_map'], 'ye'),
    conv('f', ['x', 'b_w'], { strides: attr.ints([2, 2]), group: attr.int(2) }, 'ConvTranspose'),
    binary('Add', 'f_add', ['f_y', 'f_bias'], 'f1'),
    binary('Mul', 'f_square', ['f1', 'f1'], 'yf'),
  ],
  inputs: [{ name: 'x', dtype: 'float32', shape: [2, 4, 6, 7] }],
  outputs: ['ya', 'yb', 'yc', 'yd', 'd_y', 'ye', 'yf'].map((name) => ({ name, dtype: 'float32' as const })),
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
    f32('e_factor', [1], 7, 0.5, 2),
    f32('e_shift', [1, 5, 1, 1], 8),
    f32('e_from', [5, 1, 1], 9),
    ...bnParams('e', 5, 50),
    f32('e_map', [1, 1, 6, 7], 11),
    f32('f_bias', [1, 6, 1, 1], 12),
  ],
});
const X = values(2 * 4 * 6 * 7, 99, -2, 2);

describe.each(Object.keys(REPO_BACKENDS))('conv affine folding on %s', (name) => {
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

  test('outputs match the unfolded graph; the folded links are gone, the others stay', async () => {
    const s = await InferenceSession.create(MODEL, { backend: name });
    const seen: { op: string; node: string; outputs: readonly string[] }[] = [];
    const out = await s.run(
      { x: { dtype: 'float32', dims: [2, 4, 6, 7], data: Float32Array.from(X) } },
      { onNode: (n) => void seen.push({ op: n.op, node: n.node, outputs: n.outputNames }) },
    );
    for (const y of ['ya', 'yb', 'yc', 'yd', 'd_y', 'ye', 'yf']) {
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
    expect(seen.map((n) => n.node).sort()).toEqual(
      ['a_conv', 'b_conv', 'c_conv', 'd_conv', 'd_bn', 'e_conv', 'e_pixels', 'f_conv', 'f_square'].sort(),
    );
    const writer = Object.fromEntries(seen.map((n) => [n.node, n.outputs]));
    expect(writer).toMatchObject({ a_conv: ['ya'], b_conv: ['yb'], c_conv: ['yc'], d_conv: ['d_y'] });
    expect(writer).toMatchObject({ e_conv: ['e4'], f_conv: ['f1'] });
    expect(seen.find((n) => n.node === 'b_conv')?.op).toBe('ConvTranspose');
    await s.release();
  });
});
