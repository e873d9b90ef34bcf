import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComputeBackend } from '@polyhal/hal';
import { InferenceSession } from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { type AttrSpec, attr, type DTypeName, encodeModel, type NodeSpec } from '../support/onnx-builder.js';
import { runOrt } from '../support/onnx-ort.js';

// Host evaluation of shape arithmetic (packages/onnx/src/host-eval.ts) against onnxruntime-node, exactly:
// small int64 and bool feeds stay on the host, so each model below runs without a single device node, and
// its outputs must equal onnxruntime's bit for bit (int64 division truncating, Slice's clamping and
// INT64_MAX sentinel, negative indices and axes, opset 11 attributes against opset 13 inputs, ...).

interface In {
  name: string;
  dtype: DTypeName;
  dims: number[];
  data: (number | bigint)[];
}
interface Case {
  name: string;
  nodes: NodeSpec[];
  inputs: In[];
  outputs: { name: string; dtype: DTypeName }[];
  opset?: number;
  /** Nodes expected on the device (default 0). */
  device?: number;
}

const i64 = (name: string, dims: number[], data: number[]): In => ({
  name,
  dtype: 'int64',
  dims,
  data: data.map((v) => BigInt(v)),
});
const bool = (name: string, dims: number[], data: number[]): In => ({ name, dtype: 'bool', dims, data });
const one = (
  name: string,
  op: string,
  inputs: In[],
  attrs: Record<string, AttrSpec> = {},
  out: DTypeName = 'int64',
  opset = 17,
): Case => ({
  name,
  nodes: [{ op, inputs: inputs.map((i) => i.name), outputs: ['y'], attrs }],
  inputs,
  outputs: [{ name: 'y', dtype: out }],
  opset,
});

const A = i64('a', [2, 3], [7, -7, 9, 0, -2, 5]);
const B = i64('b', [3], [2, 2, -4]);
const CASES: Case[] = [
  one('add', 'Add', [A, B]),
  one('sub', 'Sub', [A, B]),
  one('mul', 'Mul', [A, B]),
  one('div_truncates', 'Div', [A, B]),
  one('max3', 'Max', [A, B, i64('c', [1], [3])]),
  one('min', 'Min', [A, B]),
  one('neg', 'Neg', [A]),
  one('abs', 'Abs', [A]),
  one('sign', 'Sign', [A]),
  one('equal', 'Equal', [A, B], {}, 'bool'),
  one('less', 'Less', [A, B], {}, 'bool'),
  one('greater_or_equal', 'GreaterOrEqual', [A, B], {}, 'bool'),
  one('and', 'And', [bool('p', [4], [1, 1, 0, 0]), bool('q', [4], [1, 0, 1, 0])], {}, 'bool'),
  one('xor', 'Xor', [bool('p', [4], [1, 1, 0, 0]), bool('q', [4], [1, 0, 1, 0])], {}, 'bool'),
  one('not', 'Not', [bool('p', [4], [1, 1, 0, 0])], {}, 'bool'),
  one('where', 'Where', [bool('p', [3], [1, 0, 1]), A, B]),
  one('gather_axis1_negative', 'Gather', [A, i64('i', [2, 2], [-1, 0, 2, -3])], { axis: attr.int(1) }),
  one('gather_scalar', 'Gather', [B, i64('i', [], [-2])]),
  one('concat', 'Concat', [A, i64('c', [2, 1], [4, 8])], { axis: attr.int(-1) }),
  one('slice_steps', 'Slice', [
    i64('d', [6], [10, 11, 12, 13, 14, 15]),
    i64('starts', [1], [-1]),
    i64('ends', [1], [-100]),
    i64('axes', [1], [0]),
    i64('steps', [1], [-2]),
  ]),
  one('slice_int64_max', 'Slice', [
    A,
    i64('starts', [1], [1]),
    { name: 'ends', dtype: 'int64', dims: [1], data: [2n ** 63n - 1n] },
    i64('axes', [1], [-1]),
  ]),
  one('slice_opset9_attributes', 'Slice', [A], { starts: attr.ints([0, 1]), ends: attr.ints([1, 99]) }, 'int64', 9),
  one('reshape_zero_minus1', 'Reshape', [A, i64('s', [2], [0, -1])]),
  one('reshape_allowzero', 'Reshape', [i64('e', [0, 3], []), i64('s', [2], [3, 0])], { allowzero: attr.int(1) }),
  one('unsqueeze13', 'Unsqueeze', [B, i64('axes', [2], [0, -1])]),
  one('unsqueeze11', 'Unsqueeze', [B], { axes: attr.ints([1]) }, 'int64', 11),
  one('squeeze13', 'Squeeze', [i64('e', [1, 3, 1], [1, 2, 3]), i64('axes', [1], [-1])]),
  one('squeeze_all', 'Squeeze', [i64('e', [1, 3, 1], [1, 2, 3])]),
  one('flatten', 'Flatten', [i64('e', [2, 1, 2], [1, 2, 3, 4])], { axis: attr.int(2) }),
  one('transpose', 'Transpose', [A], { perm: attr.ints([1, 0]) }),
  one('expand', 'Expand', [i64('e', [3, 1], [1, 2, 3]), i64('s', [3], [2, 1, 2])]),
  one('constant_of_shape', 'ConstantOfShape', [i64('s', [2], [2, 2])], {
    value: attr.tensor({ dtype: 'int64', dims: [1], data: [7n] }),
  }),
  one('range', 'Range', [i64('s', [], [10]), i64('l', [], [-3]), i64('d', [], [-4])]),
  {
    name: 'shape_size_of_a_device_tensor',
    nodes: [
      { op: 'Shape', inputs: ['x'], outputs: ['s'], attrs: { start: attr.int(-2) } },
      { op: 'Size', inputs: ['x'], outputs: ['n'] },
    ],
    inputs: [{ name: 'x', dtype: 'float32', dims: [2, 3, 4], data: Array<number>(24).fill(1) }],
    outputs: [
      { name: 's', dtype: 'int64' },
      { name: 'n', dtype: 'int64' },
    ],
  },
  {
    // int64 → float32 → Div → Floor / Ceil / Sqrt → int64, as a Resize's output size is computed
    name: 'float_chain',
    nodes: [
      { op: 'Cast', inputs: ['a'], outputs: ['f'], attrs: { to: attr.int(1) } },
      { op: 'Div', inputs: ['f', 'three'], outputs: ['q'] },
      { op: 'Floor', inputs: ['q'], outputs: ['fl'] },
      { op: 'Ceil', inputs: ['q'], outputs: ['ce'] },
      { op: 'Abs', inputs: ['q'], outputs: ['ab'] },
      { op: 'Sqrt', inputs: ['ab'], outputs: ['sq'] },
      { op: 'Cast', inputs: ['ce'], outputs: ['back'], attrs: { to: attr.int(7) } },
    ],
    inputs: [A, { name: 'three', dtype: 'float32', dims: [], data: [3] }],
    outputs: [
      { name: 'q', dtype: 'float32' },
      { name: 'fl', dtype: 'float32' },
      { name: 'sq', dtype: 'float32' },
      { name: 'back', dtype: 'int64' },
    ],
    device: 0,
  },
];

/** A feed of the session: int64 as a BigInt64Array, bool as a Uint8Array, float32 as a Float32Array. */
const feedOf = (i: In) => ({
  dtype: i.dtype,
  dims: i.dims,
  data:
    i.dtype === 'int64'
      ? BigInt64Array.from(i.data, (v) => BigInt(v))
      : i.dtype === 'bool'
        ? Uint8Array.from(i.data, Number)
        : Float32Array.from(i.data, Number),
});

const modelOf = (c: Case): Uint8Array =>
  encodeModel(
    {
      name: c.name,
      nodes: c.nodes,
      // 'three' of float_chain is an initializer: a float feed would go to the device
      inputs: c.inputs.filter((i) => i.name !== 'three').map((i) => ({ name: i.name, dtype: i.dtype, shape: i.dims })),
      outputs: c.outputs.map((o) => ({ ...o })),
      initializers: c.inputs
        .filter((i) => i.name === 'three')
        .map((i) => ({ name: i.name, dtype: i.dtype, dims: i.dims, data: i.data })),
    },
    { opset: c.opset ?? 17 },
  );

describe('host shape arithmetic against onnxruntime-node', () => {
  let dir: string;
  let be: ComputeBackend;
  const ort = new Map<string, Record<string, { dims: number[]; data: (number | string)[] }>>();
  beforeAll(async () => {
    be = await REPO_BACKENDS['cpu']!();
    dir = mkdtempSync(join(tmpdir(), 'polyhal-host-eval-'));
    const jobs = CASES.map((c) => {
      const model = join(dir, `${c.name}.onnx`);
      writeFileSync(model, modelOf(c));
      const feeds = c.inputs
        .filter((i) => i.name !== 'three')
        .map((i) => ({ name: i.name, type: i.dtype, dims: i.dims, data: i.data.map(String) }));
      return { model, feeds };
    });
    runOrt(jobs).forEach((r, k) => {
      if (!r.outputs) throw new Error(`${CASES[k]!.name}: onnxruntime: ${r.error}`);
      ort.set(CASES[k]!.name, r.outputs);
    });
  }, 60_000);
  afterAll(() => {
    be.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const s = await InferenceSession.create(modelOf(c), { backend: be });
    const feeds = Object.fromEntries(c.inputs.filter((i) => i.name !== 'three').map((i) => [i.name, feedOf(i)]));
    const out = await s.run(feeds as never);
    for (const o of c.outputs) {
      const want = ort.get(c.name)![o.name]!;
      expect(out[o.name]!.dtype).toBe(o.dtype);
      expect(out[o.name]!.dims).toEqual(want.dims);
      expect(Array.from(out[o.name]!.data as ArrayLike<number | bigint>, String)).toEqual(want.data.map(String));
    }
    expect(s.lastRun).toMatchObject({ deviceNodes: c.device ?? 0, deviceReads: 0 });
    await s.release();
  });
});
