/**
 * A small ONNX protobuf ENCODER for tests: builds ModelProto and TensorProto bytes in code (single-node
 * models, subgraphs, external data, hostile variants) with ONNX's field numbers written out here, so the
 * decoder under test (packages/onnx/src/proto.ts) is checked against an independent writer. Never used to
 * commit model files.
 */

/** ONNX TensorProto.DataType codes (onnx.proto). */
export const DTYPE_CODES = {
  float32: 1,
  uint8: 2,
  int8: 3,
  uint16: 4,
  int16: 5,
  int32: 6,
  int64: 7,
  string: 8,
  bool: 9,
  float16: 10,
  float64: 11,
  uint32: 12,
  uint64: 13,
} as const;
export type DTypeName = keyof typeof DTYPE_CODES;

/** Protobuf bytes under construction: fields appended in order. */
export class Writer {
  private readonly parts: number[] = [];
  private varint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.parts.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.parts.push(Number(x));
  }
  private tag(field: number, wire: number): void {
    this.varint(BigInt(field * 8 + wire));
  }
  /** A varint field (int32, int64, enum, bool); negative values as 10-byte two's complement. */
  int(field: number, v: number | bigint): this {
    this.tag(field, 0);
    this.varint(BigInt(v));
    return this;
  }
  float(field: number, v: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.parts.push(...b);
    return this;
  }
  double(field: number, v: number): this {
    this.tag(field, 1);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.parts.push(...b);
    return this;
  }
  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2);
    this.varint(BigInt(b.length));
    for (const x of b) this.parts.push(x);
    return this;
  }
  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  message(field: number, w: Writer): this {
    return this.bytes(field, w.finish());
  }
  /** A packed repeated varint field. */
  packedInts(field: number, vs: readonly (number | bigint)[]): this {
    const inner = new Writer();
    for (const v of vs) inner.varint(BigInt(v));
    return this.bytes(field, inner.finish());
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

export interface TensorSpec {
  name?: string;
  dtype: DTypeName;
  dims: readonly number[];
  /** Values (bigint or number for int64); omitted: no data at all (a claimed shape over nothing). */
  data?: ArrayLike<number | bigint>;
  /** Where the values go: raw_data (default) or the typed field (float_data, int32_data, int64_data, ...). */
  storage?: 'raw' | 'field';
  /** External data instead: the key/value pairs written as given (location, offset, length, ...). */
  external?: Record<string, string>;
}

/** Little-endian bytes of values in a dtype's raw_data layout. */
export function rawBytes(dtype: DTypeName, data: ArrayLike<number | bigint>): Uint8Array {
  const n = data.length;
  const num = (i: number) => Number(data[i]);
  switch (dtype) {
    case 'float32':
      return new Uint8Array(Float32Array.from({ length: n }, (_, i) => num(i)).buffer);
    case 'float64':
      return new Uint8Array(Float64Array.from({ length: n }, (_, i) => num(i)).buffer);
    case 'int64':
      return new Uint8Array(BigInt64Array.from({ length: n }, (_, i) => BigInt(data[i]!)).buffer);
    case 'int32':
      return new Uint8Array(Int32Array.from({ length: n }, (_, i) => num(i)).buffer);
    case 'int16':
    case 'uint16':
    case 'float16': // float16: the values are bit patterns here
      return new Uint8Array(Uint16Array.from({ length: n }, (_, i) => num(i) & 0xffff).buffer);
    default:
      return Uint8Array.from({ length: n }, (_, i) => num(i) & 0xff);
  }
}

export function tensorWriter(t: TensorSpec): Writer {
  const w = new Writer();
  for (const d of t.dims) w.int(1, d);
  w.int(2, DTYPE_CODES[t.dtype]);
  if (t.name !== undefined) w.string(8, t.name);
  if (t.external) {
    for (const [key, value] of Object.entries(t.external)) w.message(13, new Writer().string(1, key).string(2, value));
    w.int(14, 1);
  } else if (t.data && (t.storage ?? 'raw') === 'raw') w.bytes(9, rawBytes(t.dtype, t.data));
  else if (t.data) {
    const vs = Array.from(t.data);
    if (t.dtype === 'float32') for (const v of vs) w.float(4, Number(v));
    else if (t.dtype === 'float64') for (const v of vs) w.double(10, Number(v));
    else if (t.dtype === 'int64') w.packedInts(7, vs);
    else w.packedInts(5, vs);
  }
  return w;
}

/** A TensorProto's bytes (an `input_N.pb`). */
export const encodeTensor = (t: TensorSpec): Uint8Array => tensorWriter(t).finish();

/** An attribute value with its ONNX type: build with `attr.int(3)`, `attr.graph(g)`, ... */
export type AttrSpec =
  | { type: 'float'; value: number }
  | { type: 'int'; value: number | bigint }
  | { type: 'string'; value: string }
  | { type: 'tensor'; value: TensorSpec }
  | { type: 'graph'; value: GraphSpec }
  | { type: 'floats'; value: readonly number[] }
  | { type: 'ints'; value: readonly (number | bigint)[] }
  | { type: 'strings'; value: readonly string[] }
  | { type: 'tensors'; value: readonly TensorSpec[] }
  | { type: 'graphs'; value: readonly GraphSpec[] };

export const attr = {
  float: (value: number): AttrSpec => ({ type: 'float', value }),
  int: (value: number | bigint): AttrSpec => ({ type: 'int', value }),
  string: (value: string): AttrSpec => ({ type: 'string', value }),
  tensor: (value: TensorSpec): AttrSpec => ({ type: 'tensor', value }),
  graph: (value: GraphSpec): AttrSpec => ({ type: 'graph', value }),
  floats: (value: readonly number[]): AttrSpec => ({ type: 'floats', value }),
  ints: (value: readonly (number | bigint)[]): AttrSpec => ({ type: 'ints', value }),
  strings: (value: readonly string[]): AttrSpec => ({ type: 'strings', value }),
  tensors: (value: readonly TensorSpec[]): AttrSpec => ({ type: 'tensors', value }),
  graphs: (value: readonly GraphSpec[]): AttrSpec => ({ type: 'graphs', value }),
};

/** AttributeProto.AttributeType codes. */
const ATTR_CODES = { float: 1, int: 2, string: 3, tensor: 4, graph: 5 } as const;
const LIST_CODES = { floats: 6, ints: 7, strings: 8, tensors: 9, graphs: 10 } as const;

function attributeWriter(name: string, a: AttrSpec): Writer {
  const w = new Writer().string(1, name);
  switch (a.type) {
    case 'float':
      w.float(2, a.value);
      break;
    case 'int':
      w.int(3, a.value);
      break;
    case 'string':
      w.string(4, a.value);
      break;
    case 'tensor':
      w.message(5, tensorWriter(a.value));
      break;
    case 'graph':
      w.message(6, graphWriter(a.value));
      break;
    case 'floats':
      for (const v of a.value) w.float(7, v);
      break;
    case 'ints':
      for (const v of a.value) w.int(8, v);
      break;
    case 'strings':
      for (const v of a.value) w.string(9, v);
      break;
    case 'tensors':
      for (const v of a.value) w.message(10, tensorWriter(v));
      break;
    case 'graphs':
      for (const v of a.value) w.message(11, graphWriter(v));
      break;
  }
  const codes: Record<AttrSpec['type'], number> = { ...ATTR_CODES, ...LIST_CODES };
  return w.int(20, codes[a.type]);
}

export interface NodeSpec {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  name?: string;
  domain?: string;
  attrs?: Record<string, AttrSpec>;
}

/** A value's type: a tensor of `dtype`, `shape` of numbers (fixed), strings (symbolic) or null (unknown). */
export interface ValueSpec {
  name: string;
  dtype: DTypeName;
  /** Omitted: unknown rank. */
  shape?: readonly (number | string | null)[];
}

export interface GraphSpec {
  name?: string;
  nodes: readonly NodeSpec[];
  inputs: readonly ValueSpec[];
  outputs: readonly ValueSpec[];
  initializers?: readonly TensorSpec[];
  valueInfo?: readonly ValueSpec[];
}

function valueWriter(v: ValueSpec): Writer {
  const tensor = new Writer().int(1, DTYPE_CODES[v.dtype]);
  if (v.shape) {
    const shape = new Writer();
    for (const d of v.shape) {
      const dim = new Writer();
      if (typeof d === 'number') dim.int(1, d);
      else if (typeof d === 'string') dim.string(2, d);
      shape.message(1, dim);
    }
    tensor.message(2, shape);
  }
  return new Writer().string(1, v.name).message(2, new Writer().message(1, tensor));
}

function nodeWriter(n: NodeSpec): Writer {
  const w = new Writer();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name !== undefined) w.string(3, n.name);
  w.string(4, n.op);
  for (const [k, a] of Object.entries(n.attrs ?? {})) w.message(5, attributeWriter(k, a));
  if (n.domain !== undefined) w.string(7, n.domain);
  return w;
}

export function graphWriter(g: GraphSpec): Writer {
  const w = new Writer();
  for (const n of g.nodes) w.message(1, nodeWriter(n));
  w.string(2, g.name ?? 'g');
  for (const t of g.initializers ?? []) w.message(5, tensorWriter(t));
  for (const v of g.inputs) w.message(11, valueWriter(v));
  for (const v of g.outputs) w.message(12, valueWriter(v));
  for (const v of g.valueInfo ?? []) w.message(13, valueWriter(v));
  return w;
}

export interface ModelOptions {
  /** Default-domain opset (default 17). */
  opset?: number;
  /** Other domains' opsets. */
  opsets?: Record<string, number>;
  irVersion?: number;
  producer?: string;
  metadata?: Record<string, string>;
}

/** A ModelProto's bytes (a `model.onnx`). */
export function encodeModel(g: GraphSpec, o: ModelOptions = {}): Uint8Array {
  const opset = o.opset ?? 17;
  // IR version by opset, as onnx.helper picks it (onnx/helper.py VERSION_TABLE)
  const ir = o.irVersion ?? (opset <= 8 ? 3 : opset <= 9 ? 4 : opset <= 10 ? 5 : opset <= 11 ? 6 : opset <= 14 ? 7 : 8);
  const w = new Writer().int(1, ir);
  if (o.producer !== undefined) w.string(2, o.producer);
  w.message(7, graphWriter(g));
  w.message(8, new Writer().string(1, '').int(2, opset));
  for (const [d, v] of Object.entries(o.opsets ?? {})) w.message(8, new Writer().string(1, d).int(2, v));
  for (const [key, value] of Object.entries(o.metadata ?? {}))
    w.message(14, new Writer().string(1, key).string(2, value));
  return w.finish();
}

/** A one-node model: its inputs and outputs are the graph's (in order), with the given attributes. */
export function singleNodeModel(
  op: string,
  inputs: readonly ValueSpec[],
  outputs: readonly ValueSpec[],
  attrs: Record<string, AttrSpec> = {},
  o: ModelOptions & { initializers?: readonly TensorSpec[]; nodeInputs?: readonly string[] } = {},
): Uint8Array {
  const node: NodeSpec = {
    op,
    name: `${op}_0`,
    inputs: o.nodeInputs ?? inputs.map((v) => v.name),
    outputs: outputs.map((v) => v.name),
    attrs,
  };
  return encodeModel({ name: op, nodes: [node], inputs, outputs, initializers: o.initializers ?? [] }, o);
}
