/**
 * Decoding of ONNX protobuf files with protobufjs: ModelProto (`model.onnx`) and TensorProto
 * (`input_N.pb`, `output_N.pb`), into plain objects. The schema (proto-schema.ts) is the subset of ONNX's
 * `onnx.proto` a model's graphs, their subgraphs (If, Loop, Scan bodies) and test data use, with ONNX's own
 * field numbers and names; fields outside it are skipped by the decoder, as protobuf requires.
 */
import { onnxType } from './proto-schema.js';
import {
  type ExternalDataLoader,
  type Int64,
  int64Clamped,
  int64ToNumber,
  type OnnxTensor,
  onnxDTypeName,
  type TensorContext,
  tensorFrom,
} from './proto-tensor.js';
import { decodeChecked, OnnxDecodeError } from './wire.js';

export {
  type ExternalDataLoader,
  int64ToBigInt,
  int64ToNumber,
  ONNX_DTYPES,
  type OnnxExternalData,
  type OnnxTensor,
  onnxDTypeName,
} from './proto-tensor.js';
export { OnnxDecodeError } from './wire.js';

/**
 * A decoded attribute: its name, ONNX attribute type code and value. INT and INTS values are numbers, clamped
 * to ±2^53 (int64Clamped: ONNX's INT64_MAX/MIN sentinels keep their meaning); GRAPH and GRAPHS are decoded
 * graphs (If's branches, Loop's and Scan's bodies); SPARSE_TENSOR(S) and TYPE_PROTO(S) are not decoded
 * (value undefined, type kept).
 */
export interface OnnxAttribute {
  /** The attribute's name (`axis`, `pads`, `then_branch`, ...). */
  name: string;
  /**
   * AttributeProto.AttributeType: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 5 GRAPH, 6 FLOATS, 7 INTS, 8 STRINGS,
   * 9 TENSORS, 10 GRAPHS, 11 SPARSE_TENSOR, 12 SPARSE_TENSORS, 13 TYPE_PROTO, 14 TYPE_PROTOS. An attribute
   * without one (IR version 1) gets the type of the field that holds its value.
   */
  type: number;
  /** The value, by type (see above); undefined for the types not decoded. */
  value: number | string | number[] | string[] | OnnxTensor | OnnxTensor[] | OnnxGraph | OnnxGraph[] | undefined;
}

/** A NodeProto: one operator application of a graph. */
export interface OnnxNode {
  /** NodeProto.name: decodeModel always sets it ('' where the producer gave none). */
  name?: string;
  /** The operator (`Conv`, `Add`, `If`, ...). */
  opType: string;
  /** The operator set's domain ('' is the default ONNX domain). */
  domain: string;
  /** Value names; '' marks an omitted optional input or output. */
  inputs: string[];
  /** The names of the values it produces, in order. */
  outputs: string[];
  /** Its attributes, in the model's order. */
  attributes: OnnxAttribute[];
}

/**
 * A value's declared type: name and, for tensors, element type and shape. A `null` dim is symbolic or
 * unknown; `dimParams[i]` is its name where the producer gave one (e.g. 'batch_size'). `shape` is undefined
 * where the rank is unknown.
 */
export interface OnnxValueInfo {
  /** The value's name. */
  name: string;
  /** 'tensor', 'sequence', 'map', 'optional', 'sparse_tensor' or 'unknown'. */
  kind: string;
  /** For a tensor: the element type's name (`float32`, `int64`, ...). */
  dtype?: string;
  /** For a tensor: the dims, null where symbolic or unknown; undefined where the rank is unknown. */
  shape?: (number | null)[];
  /** For each dim, its symbolic name where the producer gave one, else null. */
  dimParams?: (string | null)[];
}

/**
 * A GraphProto: the main graph, or a subgraph held by a GRAPH/GRAPHS attribute. A subgraph's nodes may read
 * values of the graphs around it by name (outer scope); its `inputs` are the values the op passes in (Loop:
 * iteration number, condition, loop-carried values; Scan: state and scan slices; If: none).
 */
export interface OnnxGraph {
  /** GraphProto.name. */
  name: string;
  /** The nodes, in the model's order (a topological order, as ONNX requires). */
  nodes: OnnxNode[];
  /** The constant tensors (weights), by name. */
  initializers: OnnxTensor[];
  /** The graph's inputs, in order. */
  inputs: OnnxValueInfo[];
  /** The graph's outputs. */
  outputs: OnnxValueInfo[];
  /** GraphProto.value_info: types and shapes of intermediate values, where the producer recorded them. */
  valueInfo: OnnxValueInfo[];
}

/** A ModelProto: its main graph's fields (an OnnxGraph), with the model's versions and metadata. */
export interface OnnxModel extends OnnxGraph {
  /** ModelProto.ir_version: the ONNX IR version the file was written with. */
  irVersion: number;
  /** Operator set versions by domain ('' is the default ONNX domain, also spelled 'ai.onnx'). */
  opsets: Map<string, number>;
  /** The tool that wrote the model (`pytorch`, `tf2onnx`, ...); '' when not given. */
  producerName: string;
  /** Its version; '' when not given. */
  producerVersion: string;
  /** ModelProto.metadata_props. */
  metadata: Map<string, string>;
}

/** Options of decodeModel. */
export interface DecodeModelOptions {
  /** Where the bytes came from (a path or URL): error messages start with it. */
  source?: string;
  /**
   * Reads the bytes of tensors stored outside the model (`data_location = EXTERNAL`); without it such a tensor
   * is an OnnxDecodeError naming it. Node.js: `externalDataFromDirectory(dirname(path), fs)`.
   */
  externalData?: ExternalDataLoader;
}

type Msg = Record<string, unknown>;
const str = (b: Uint8Array | undefined): string => (b ? new TextDecoder().decode(b) : '');
const list = <T>(v: unknown): T[] => (v as T[] | undefined) ?? [];

function valueInfoFrom(m: Msg): OnnxValueInfo {
  const name = (m['name'] as string | undefined) ?? '';
  const t = m['type'] as Msg | undefined;
  const tensor = t?.['tensor_type'] as Msg | undefined;
  if (!tensor) {
    const kind = ['sequence_type', 'map_type', 'optional_type', 'sparse_tensor_type'].find(
      (k) => t?.[k] !== undefined && t?.[k] !== null,
    );
    return { name, kind: kind ? kind.replace(/_type$/, '') : 'unknown' };
  }
  const dtype = onnxDTypeName((tensor['elem_type'] as number | undefined) ?? 0);
  const shapeMsg = tensor['shape'] as Msg | undefined;
  if (!shapeMsg) return { name, kind: 'tensor', dtype };
  const dims = list<Msg>(shapeMsg['dim']);
  const has = (d: Msg, k: string) => d[k] !== undefined && d[k] !== null;
  const shape = dims.map((d) => {
    if (!has(d, 'dim_value')) return null;
    const n = int64ToNumber(d['dim_value'] as Int64, `value '${name}' dimension`);
    if (n < 0) throw new OnnxDecodeError(`value '${name}' has dimension ${n}`);
    return n;
  });
  const info: OnnxValueInfo = { name, kind: 'tensor', dtype, shape };
  if (dims.some((d) => has(d, 'dim_param'))) info.dimParams = dims.map((d) => (d['dim_param'] as string) ?? null);
  return info;
}

/** The field that holds each attribute type's value (for attributes that carry no type: IR version 1). */
const ATTRIBUTE_FIELDS = ['', 'f', 'i', 's', 't', 'g', 'floats', 'ints', 'strings', 'tensors', 'graphs'];

function attributeFrom(m: Msg, where: string, ctx: TensorContext): OnnxAttribute {
  const name = (m['name'] as string | undefined) ?? '';
  let type = (m['type'] as number | undefined) ?? 0;
  if (type === 0) {
    const k = ATTRIBUTE_FIELDS.findIndex((f, i) => i > 0 && m[f] !== undefined && (i < 6 || list(m[f]).length));
    type = Math.max(k, 0);
  }
  const at = `${where} attribute '${name}'`;
  let value: OnnxAttribute['value'];
  switch (type) {
    case 1:
      value = (m['f'] as number | undefined) ?? 0;
      break;
    case 2:
      value = int64Clamped(m['i'] as Int64);
      break;
    case 3:
      value = str(m['s'] as Uint8Array | undefined);
      break;
    case 4:
      value = tensorIn(m['t'] as Msg | undefined, at, ctx);
      break;
    case 5:
      value = graphFrom((m['g'] as Msg | undefined) ?? {}, `${at}: graph`, ctx);
      break;
    case 6:
      value = [...list<number>(m['floats'])];
      break;
    case 7:
      value = list<Int64>(m['ints']).map(int64Clamped);
      break;
    case 8:
      value = list<Uint8Array>(m['strings']).map(str);
      break;
    case 9:
      value = list<Msg>(m['tensors']).map((t) => tensorIn(t, at, ctx));
      break;
    case 10:
      value = list<Msg>(m['graphs']).map((g, i) => graphFrom(g, `${at}: graph ${i}`, ctx));
      break;
    default:
      value = undefined; // sparse tensors, type protos: never mapped
  }
  return { name, type, value };
}

/** `f()`, its errors prefixed with where it is. */
function within<T>(where: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new OnnxDecodeError(`${where}: ${(e as Error).message}`);
  }
}

/** A tensor of an attribute or initializer, its errors prefixed with where it is. */
const tensorIn = (m: Msg | undefined, where: string, ctx: TensorContext): OnnxTensor =>
  within(where, () => tensorFrom(m ?? {}, ctx));

function nodeFrom(n: Msg, i: number, where: string, ctx: TensorContext): OnnxNode {
  const name = (n['name'] as string | undefined) ?? '';
  const opType = (n['op_type'] as string | undefined) ?? '';
  const at = `${where} node ${i}${name ? ` '${name}'` : ''}${opType ? ` (${opType})` : ''}`;
  if (!opType) throw new OnnxDecodeError(`${at} has no op_type`);
  return {
    name,
    opType,
    domain: (n['domain'] as string | undefined) ?? '',
    inputs: [...list<string>(n['input'])],
    outputs: [...list<string>(n['output'])],
    attributes: list<Msg>(n['attribute']).map((a) => attributeFrom(a, at, ctx)),
  };
}

/** A GraphProto; `where` names it in errors ("the graph", "... attribute 'then_branch': graph"). */
function graphFrom(g: Msg, where: string, ctx: TensorContext): OnnxGraph {
  const name = (g['name'] as string | undefined) ?? '';
  const at = name ? `${where} '${name}'` : where;
  return {
    name,
    nodes: list<Msg>(g['node']).map((n, i) => nodeFrom(n, i, `${at}`, ctx)),
    initializers: list<Msg>(g['initializer']).map((t, i) => tensorIn(t, `${at} initializer ${i}`, ctx)),
    inputs: list<Msg>(g['input']).map((v, i) => within(`${at} input ${i}`, () => valueInfoFrom(v))),
    outputs: list<Msg>(g['output']).map((v, i) => within(`${at} output ${i}`, () => valueInfoFrom(v))),
    valueInfo: list<Msg>(g['value_info']).map((v, i) => within(`${at} value_info ${i}`, () => valueInfoFrom(v))),
  };
}

/**
 * Decodes a ModelProto (the bytes of a `model.onnx`), with every subgraph of its GRAPH and GRAPHS attributes.
 * Throws OnnxDecodeError (its message starts with `options.source` where given, then "not an ONNX
 * ModelProto", then where: the node, attribute or tensor) on bytes that are not one: empty, malformed
 * protobuf (a varint or length past the end, a bad wire type, messages nested deeper than 64), a model
 * without ir_version, opset_import (from IR version 3) or graph, a node without op_type, a tensor whose
 * values do not fill its shape, an int64 dimension beyond 2^53, or external data that cannot be read.
 */
export function decodeModel(bytes: Uint8Array, options: DecodeModelOptions = {}): OnnxModel {
  const ctx: TensorContext = options.externalData ? { externalData: options.externalData } : {};
  return decodeChecked(
    bytes,
    onnxType('ModelProto'),
    (m) => {
      if (m['ir_version'] === undefined) throw new OnnxDecodeError('no ir_version');
      const irVersion = int64ToNumber(m['ir_version'] as Int64, 'ir_version');
      const g = m['graph'] as Msg | undefined;
      if (!g) throw new OnnxDecodeError('no graph');
      const opsets = new Map<string, number>();
      for (const o of list<Msg>(m['opset_import'])) {
        const d = (o['domain'] as string | undefined) ?? '';
        opsets.set(d === 'ai.onnx' ? '' : d, int64ToNumber(o['version'] as Int64, `opset of domain '${d}'`));
      }
      if (irVersion >= 3 && !opsets.size) throw new OnnxDecodeError(`no opset_import (IR version ${irVersion})`);
      const metadata = new Map(list<Msg>(m['metadata_props']).map((e) => [e['key'] as string, e['value'] as string]));
      return {
        irVersion,
        opsets,
        producerName: (m['producer_name'] as string | undefined) ?? '',
        producerVersion: (m['producer_version'] as string | undefined) ?? '',
        metadata,
        ...graphFrom(g, 'the graph', ctx),
      };
    },
    options.source,
  );
}

/**
 * Decodes a TensorProto (the bytes of an `input_N.pb`/`output_N.pb`). Throws OnnxDecodeError on bytes that
 * are not one: empty, malformed protobuf, no data_type, a negative dimension, data that does not fill the
 * shape, or external data (a lone tensor file has no directory to read it from).
 */
export function decodeTensor(bytes: Uint8Array, options: { source?: string } = {}): OnnxTensor {
  return decodeChecked(bytes, onnxType('TensorProto'), (m) => tensorFrom(m), options.source);
}
