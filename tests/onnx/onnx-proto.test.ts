import { describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeModel, decodeTensor, OnnxDecodeError } from '@polyhal/conformance';
import { PolyHalError } from '@polyhal/hal';
import type { OnnxGraph, OnnxTensor } from '@polyhal/onnx';
import { attr, encodeModel, encodeTensor, type GraphSpec, Writer } from '../support/onnx-builder.js';

// The ONNX protobuf decoder on bytes that are not a valid message: a typed error (OnnxDecodeError, a
// PolyHalError) that says what is wrong, never a message read from bytes past the end or an empty one.
const DIR = process.env['POLYHAL_ONNX_NODE_TESTS'] ?? '/usr/share/libonnx-testdata/data/node';

const decodeError = (f: () => unknown): PolyHalError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PolyHalError);
    expect(e).toBeInstanceOf(OnnxDecodeError);
    return e as PolyHalError;
  }
  throw new Error('decoded without an error');
};

describe('decodeTensor and decodeModel on malformed bytes', () => {
  test.each([
    ['an empty file', [], /empty file \(0 bytes\)/],
    ['a varint cut short (dims: 0x80, then the end)', [0x08, 0x80], /past the end/],
    ['a varint cut short inside a packed field', [0x0a, 0x02, 0x80, 0x80], /past the end/],
    ['a length past the end (raw_data: 16 bytes, 2 there)', [0x4a, 0x10, 1, 2], /past the end/],
    ['a float past the end', [0x10, 0x01, 0x25, 0, 0], /past the end/],
    ['an invalid wire type', [0x0f], /wire type 7/],
    ['field number 0', [0x00, 0x00], /field number 0/],
    ['no data_type (dims [2] only)', [0x08, 0x02], /no data_type/],
    ['raw_data of 3 bytes for float32', [0x08, 0x01, 0x10, 0x01, 0x4a, 0x03, 0, 0, 0], /3 bytes.*float32/],
    [
      'a negative dimension',
      [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x10, 0x01],
      /dimension -1/,
    ],
  ])('a TensorProto: %s', (_, bytes, message) => {
    expect(decodeError(() => decodeTensor(Uint8Array.from(bytes))).message).toMatch(message);
  });

  test.each([
    ['an empty file', [], /empty file \(0 bytes\)/],
    ['a graph whose length runs past the end', [0x08, 0x07, 0x3a, 0x32, 0x0a, 0x00], /past the end/],
    ['no graph (ir_version 7 only)', [0x08, 0x07], /no graph/],
    ['no ir_version (an empty graph only)', [0x3a, 0x00], /no ir_version/],
    ['no opset_import (ir_version 7, an empty graph)', [0x08, 0x07, 0x3a, 0x00], /no opset_import/],
    // ir_version 7, graph { node { input "x" } }, opset_import { version 17 }
    [
      'a node without op_type',
      [0x08, 0x07, 0x3a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x78, 0x42, 0x02, 0x10, 0x11],
      /the graph node 0 has no op_type/,
    ],
    ['a string field as a varint (ir_version 7, producer_name 5)', [0x08, 0x07, 0x10, 0x05], /wire type 0/],
  ])('a ModelProto: %s', (_, bytes, message) => {
    expect(decodeError(() => decodeModel(Uint8Array.from(bytes))).message).toMatch(message);
  });

  test("ONNX's own test_add decodes; every cut of its files is an OnnxDecodeError", () => {
    const add = join(DIR, 'test_add');
    if (!existsSync(join(add, 'model.onnx'))) {
      console.warn(`ONNX node tests not found at ${DIR}: skipped`);
      return;
    }
    const model = readFileSync(join(add, 'model.onnx'));
    const input = readFileSync(join(add, 'test_data_set_0/input_0.pb'));
    expect(decodeModel(model).nodes.map((n) => n.opType)).toEqual(['Add']);
    expect(decodeTensor(input)).toMatchObject({ dtype: 'float32', dims: [3, 4, 5] });
    for (let n = 0; n < model.length; n++) decodeError(() => decodeModel(model.subarray(0, n)));
    // a cut between fields still decodes as a shorter message: only cuts that leave it invalid must throw
    for (let n = 0; n < input.length; n++) {
      let t: ReturnType<typeof decodeTensor> | undefined;
      try {
        t = decodeTensor(input.subarray(0, n));
      } catch (e) {
        expect((e as Error).name).toBe('OnnxDecodeError');
        continue;
      }
      throw new Error(`a cut at byte ${n} of ${input.length} decoded: ${JSON.stringify(t).slice(0, 200)}`);
    }
  });
});

// GRAPH (5) and GRAPHS (10) attributes: If's branches, Loop's and Scan's bodies, decoded into nested graphs
// with their nodes, initializers, inputs, outputs and value_info; models written by tests/support/onnx-builder.
describe('decodeModel: subgraphs, value_info, names', () => {
  const x = { name: 'x', dtype: 'float32', shape: ['batch', 3] } as const;
  const branch = (name: string, op: string): GraphSpec => ({
    name,
    // reads 'x' from the outer scope and its own initializer 'k'
    nodes: [{ op, name: `${name}_op`, inputs: ['x', 'k'], outputs: [`${name}_y`] }],
    initializers: [{ name: 'k', dtype: 'float32', dims: [1], data: [2] }],
    inputs: [],
    outputs: [{ name: `${name}_y`, dtype: 'float32', shape: ['batch', 3] }],
    valueInfo: [{ name: 'unused', dtype: 'int64', shape: [] }],
  });
  const ifModel = encodeModel(
    {
      name: 'main',
      nodes: [
        {
          op: 'If',
          name: 'if0',
          inputs: ['cond'],
          outputs: ['y'],
          attrs: { then_branch: attr.graph(branch('then', 'Add')), else_branch: attr.graph(branch('else', 'Mul')) },
        },
      ],
      inputs: [{ name: 'cond', dtype: 'bool', shape: [] }, x],
      outputs: [{ name: 'y', dtype: 'float32', shape: ['batch', 3] }],
      valueInfo: [{ name: 'y', dtype: 'float32', shape: [null, 3] }],
    },
    { opset: 16, producer: 'onnx-builder', metadata: { author: 'tests' } },
  );

  test('If: then_branch and else_branch are graphs with nodes, initializers, outputs and value_info', () => {
    const m = decodeModel(ifModel);
    expect(m).toMatchObject({ irVersion: 8, name: 'main', producerName: 'onnx-builder' });
    expect(m.opsets.get('')).toBe(16);
    expect(m.metadata.get('author')).toBe('tests');
    expect(m.inputs[1]).toEqual({
      name: 'x',
      kind: 'tensor',
      dtype: 'float32',
      shape: [null, 3],
      dimParams: ['batch', null],
    });
    expect(m.valueInfo).toEqual([{ name: 'y', kind: 'tensor', dtype: 'float32', shape: [null, 3] }]);
    const node = m.nodes[0]!;
    expect(node).toMatchObject({ name: 'if0', opType: 'If', inputs: ['cond'], outputs: ['y'] });
    expect(node.attributes.map((a) => [a.name, a.type])).toEqual([
      ['then_branch', 5],
      ['else_branch', 5],
    ]);
    const then = node.attributes[0]!.value as OnnxGraph;
    expect(then.name).toBe('then');
    expect(then.nodes).toEqual([
      { name: 'then_op', opType: 'Add', domain: '', inputs: ['x', 'k'], outputs: ['then_y'], attributes: [] },
    ]);
    expect(then.initializers).toEqual([{ name: 'k', dtype: 'float32', dims: [1], data: Float32Array.of(2) }]);
    expect(then.inputs).toEqual([]);
    expect(then.outputs.map((o) => o.name)).toEqual(['then_y']);
    expect(then.valueInfo).toEqual([{ name: 'unused', kind: 'tensor', dtype: 'int64', shape: [] }]);
    expect((node.attributes[1]!.value as OnnxGraph).nodes[0]!.opType).toBe('Mul');
  });

  test('GRAPHS and TENSORS attributes, and graphs nested three deep (a Loop body holding an If)', () => {
    const leaf = (n: number): GraphSpec => ({
      name: `leaf${n}`,
      nodes: [{ op: 'Identity', inputs: ['x'], outputs: [`l${n}`] }],
      inputs: [],
      outputs: [{ name: `l${n}`, dtype: 'float32' }],
    });
    const body: GraphSpec = {
      name: 'body',
      nodes: [
        {
          op: 'If',
          inputs: ['c'],
          outputs: ['o'],
          attrs: { then_branch: attr.graph(leaf(1)), else_branch: attr.graph(leaf(2)) },
        },
      ],
      inputs: [
        { name: 'i', dtype: 'int64', shape: [] },
        { name: 'c', dtype: 'bool', shape: [] },
      ],
      outputs: [
        { name: 'c', dtype: 'bool', shape: [] },
        { name: 'o', dtype: 'float32' },
      ],
    };
    const m = decodeModel(
      encodeModel({
        nodes: [
          { op: 'Loop', inputs: ['n', 'c0'], outputs: ['ys'], attrs: { body: attr.graph(body) } },
          {
            op: 'Custom',
            domain: 'test.domain',
            inputs: [],
            outputs: ['z'],
            attrs: {
              branches: attr.graphs([leaf(3), leaf(4)]),
              tables: attr.tensors([
                { name: 't0', dtype: 'int64', dims: [2], data: [1n, -2n] },
                { name: 't1', dtype: 'int32', dims: [], data: [7], storage: 'field' },
              ]),
            },
          },
        ],
        inputs: [],
        outputs: [],
      }),
    );
    const loopBody = m.nodes[0]!.attributes[0]!.value as OnnxGraph;
    expect(loopBody.inputs.map((v) => [v.name, v.dtype])).toEqual([
      ['i', 'int64'],
      ['c', 'bool'],
    ]);
    const inner = loopBody.nodes[0]!.attributes.map((a) => (a.value as OnnxGraph).nodes[0]!.outputs[0]);
    expect(inner).toEqual(['l1', 'l2']);
    const [branches, tables] = m.nodes[1]!.attributes;
    expect(m.nodes[1]!.domain).toBe('test.domain');
    expect(branches!.type).toBe(10);
    expect((branches!.value as OnnxGraph[]).map((g) => g.name)).toEqual(['leaf3', 'leaf4']);
    expect(tables!.type).toBe(9);
    expect(tables!.value as OnnxTensor[]).toEqual([
      { name: 't0', dtype: 'int64', dims: [2], data: BigInt64Array.of(1n, -2n) },
      { name: 't1', dtype: 'int32', dims: [], data: Int32Array.of(7) },
    ]);
  });

  test("an error inside a subgraph names the node, the attribute and the graph's path", () => {
    const bad: GraphSpec = {
      name: 'inner',
      nodes: [
        {
          op: 'Constant',
          name: 'c',
          inputs: [],
          outputs: ['k'],
          attrs: { value: attr.tensor({ name: 'v', dtype: 'float32', dims: [4], data: [1, 2] }) },
        },
      ],
      inputs: [],
      outputs: [{ name: 'k', dtype: 'float32' }],
    };
    const bytes = encodeModel({
      name: 'main',
      nodes: [{ op: 'If', name: 'if0', inputs: ['c'], outputs: ['k'], attrs: { then_branch: attr.graph(bad) } }],
      inputs: [],
      outputs: [],
    });
    const e = decodeError(() => decodeModel(bytes, { source: 'models/bad.onnx' }));
    expect(e.message).toBe(
      "models/bad.onnx: not an ONNX ModelProto: the graph 'main' node 0 'if0' (If) attribute 'then_branch': " +
        "graph 'inner' node 0 'c' (Constant) attribute 'value': tensor 'v' of shape [4] holds 2 values, not 4",
    );
  });

  test('int64: INT/INTS attributes clamp to ±2^53 (the INT64_MAX sentinel); tensors decode exactly', () => {
    const max = 2n ** 63n - 1n;
    const m = decodeModel(
      encodeModel({
        nodes: [
          {
            op: 'Slice',
            inputs: ['x'],
            outputs: ['y'],
            attrs: { ends: attr.ints([max, -max - 1n, 5]), starts: attr.ints([0, 0, 0]), axis: attr.int(-1) },
          },
        ],
        initializers: [
          { name: 'big', dtype: 'int64', dims: [3], data: [max, -max - 1n, 2n ** 40n], storage: 'field' },
          { name: 'bigRaw', dtype: 'int64', dims: [1], data: [max] },
        ],
        inputs: [],
        outputs: [],
      }),
    );
    const attrs = Object.fromEntries(m.nodes[0]!.attributes.map((a) => [a.name, a.value]));
    expect(attrs).toEqual({ ends: [2 ** 53, -(2 ** 53), 5], starts: [0, 0, 0], axis: -1 });
    expect(m.initializers.map((t) => t.data)).toEqual([
      BigInt64Array.of(max, -max - 1n, 2n ** 40n),
      BigInt64Array.of(max),
    ]);
  });

  test('an attribute without a type (IR version 1) gets the type of the field that holds its value', () => {
    const node = new Writer()
      .string(1, 'x')
      .string(2, 'y')
      .string(4, 'LeakyRelu')
      .message(5, new Writer().string(1, 'alpha').float(2, 0.5))
      .message(5, new Writer().string(1, 'perm').int(8, 1).int(8, 0));
    const model = new Writer().int(1, 1).message(7, new Writer().message(1, node)).finish();
    expect(decodeModel(model).nodes[0]!.attributes).toEqual([
      { name: 'alpha', type: 1, value: 0.5 },
      { name: 'perm', type: 7, value: [1, 0] },
    ]);
  });

  test('Silero VAD v5 (opset 16): its If branches hold the network, LSTMs two levels down', () => {
    const file = join(process.cwd(), 'node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx');
    const m = decodeModel(readFileSync(file), { source: file });
    const ops = new Map<string, number>();
    const walk = (g: OnnxGraph, depth: number): number => {
      let deepest = depth;
      for (const n of g.nodes) {
        ops.set(n.opType, (ops.get(n.opType) ?? 0) + 1);
        for (const a of n.attributes)
          if (a.type === 5) deepest = Math.max(deepest, walk(a.value as OnnxGraph, depth + 1));
      }
      return deepest;
    };
    expect(walk(m, 0)).toBe(4);
    expect(m.nodes.map((n) => n.opType)).toEqual(['Constant', 'Equal', 'If', 'Identity', 'Identity']);
    expect(ops.get('LSTM')).toBe(4);
    expect(ops.get('Conv')).toBe(12);
    expect(ops.get('If')).toBe(25);
  });
});

test('decodeTensor: typed fields and raw_data give the same values; the source names the file', () => {
  const data = [1.5, -2, 3.25, 0];
  const raw = decodeTensor(encodeTensor({ name: 'a', dtype: 'float32', dims: [2, 2], data }));
  const field = decodeTensor(encodeTensor({ name: 'a', dtype: 'float32', dims: [2, 2], data, storage: 'field' }));
  expect(raw).toEqual({ name: 'a', dtype: 'float32', dims: [2, 2], data: Float32Array.from(data) });
  expect(field).toEqual(raw);
  const e = decodeError(() => decodeTensor(Uint8Array.of(0x0f), { source: 'input_0.pb' }));
  expect(e.message).toMatch(/^input_0\.pb: not an ONNX TensorProto: .*wire type 7/);
});
