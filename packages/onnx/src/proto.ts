/**
 * Decoding of ONNX protobuf files with protobufjs: ModelProto (`model.onnx`) and TensorProto
 * (`input_N.pb`, `output_N.pb`), into plain objects. The schema is the subset of ONNX's `onnx.proto`
 * (IR version 8, ONNX 1.12; proto2) that single-node models and their test data use, with ONNX's own
 * field numbers and names; fields outside it are skipped by the decoder, as protobuf requires.
 */
import protobuf from 'protobufjs/light.js';
import { decodeChecked, OnnxDecodeError } from './wire.js';

export { OnnxDecodeError } from './wire.js';

const f = (type: string, id: number, rule?: 'repeated') => (rule ? { type, id, rule } : { type, id });

/** ONNX's onnx.proto (subset), as a protobufjs JSON descriptor. */
const ONNX_SCHEMA = {
  nested: {
    onnx: {
      nested: {
        AttributeProto: {
          fields: {
            name: f('string', 1),
            ref_attr_name: f('string', 21),
            doc_string: f('string', 13),
            type: f('int32', 20),
            f: f('float', 2),
            i: f('int64', 3),
            s: f('bytes', 4),
            t: f('TensorProto', 5),
            g: f('GraphProto', 6),
            floats: f('float', 7, 'repeated'),
            ints: f('int64', 8, 'repeated'),
            strings: f('bytes', 9, 'repeated'),
            tensors: f('TensorProto', 10, 'repeated'),
            graphs: f('GraphProto', 11, 'repeated'),
          },
        },
        ValueInfoProto: { fields: { name: f('string', 1), type: f('TypeProto', 2), doc_string: f('string', 3) } },
        NodeProto: {
          fields: {
            input: f('string', 1, 'repeated'),
            output: f('string', 2, 'repeated'),
            name: f('string', 3),
            op_type: f('string', 4),
            domain: f('string', 7),
            attribute: f('AttributeProto', 5, 'repeated'),
            doc_string: f('string', 6),
          },
        },
        ModelProto: {
          fields: {
            ir_version: f('int64', 1),
            opset_import: f('OperatorSetIdProto', 8, 'repeated'),
            producer_name: f('string', 2),
            producer_version: f('string', 3),
            domain: f('string', 4),
            model_version: f('int64', 5),
            doc_string: f('string', 6),
            graph: f('GraphProto', 7),
          },
        },
        GraphProto: {
          fields: {
            node: f('NodeProto', 1, 'repeated'),
            name: f('string', 2),
            initializer: f('TensorProto', 5, 'repeated'),
            doc_string: f('string', 10),
            input: f('ValueInfoProto', 11, 'repeated'),
            output: f('ValueInfoProto', 12, 'repeated'),
            value_info: f('ValueInfoProto', 13, 'repeated'),
          },
        },
        TensorProto: {
          fields: {
            dims: f('int64', 1, 'repeated'),
            data_type: f('int32', 2),
            float_data: f('float', 4, 'repeated'),
            int32_data: f('int32', 5, 'repeated'),
            string_data: f('bytes', 6, 'repeated'),
            int64_data: f('int64', 7, 'repeated'),
            name: f('string', 8),
            doc_string: f('string', 12),
            raw_data: f('bytes', 9),
            data_location: f('int32', 14),
            double_data: f('double', 10, 'repeated'),
            uint64_data: f('uint64', 11, 'repeated'),
          },
        },
        TensorShapeProto: {
          fields: { dim: f('Dimension', 1, 'repeated') },
          nested: {
            Dimension: {
              oneofs: { value: { oneof: ['dim_value', 'dim_param'] } },
              fields: { dim_value: f('int64', 1), dim_param: f('string', 2), denotation: f('string', 3) },
            },
          },
        },
        TypeProto: {
          oneofs: {
            value: { oneof: ['tensor_type', 'sequence_type', 'map_type', 'optional_type', 'sparse_tensor_type'] },
          },
          fields: {
            tensor_type: f('Tensor', 1),
            sequence_type: f('Sequence', 4),
            map_type: f('Map', 5),
            optional_type: f('Optional', 9),
            sparse_tensor_type: f('SparseTensor', 8),
            denotation: f('string', 6),
          },
          nested: {
            Tensor: { fields: { elem_type: f('int32', 1), shape: f('TensorShapeProto', 2) } },
            Sequence: { fields: { elem_type: f('TypeProto', 1) } },
            Map: { fields: { key_type: f('int32', 1), value_type: f('TypeProto', 2) } },
            Optional: { fields: { elem_type: f('TypeProto', 1) } },
            SparseTensor: { fields: { elem_type: f('int32', 1), shape: f('TensorShapeProto', 2) } },
          },
        },
        OperatorSetIdProto: { fields: { domain: f('string', 1), version: f('int64', 2) } },
      },
    },
  },
};

let root: protobuf.Root | undefined;
function type(name: string): protobuf.Type {
  root ??= protobuf.Root.fromJSON(ONNX_SCHEMA).resolveAll() as protobuf.Root; // resolvedType, for checkWire
  return root.lookupType(`onnx.${name}`);
}

/** An int64 as protobufjs returns it: a number, or a Long where the `long` package is loaded. */
type Int64 = number | { low: number; high: number; unsigned?: boolean } | string;

/** A protobufjs int64 as a JS number; throws RangeError past ±2^53 (a value a JS number cannot hold). */
export function int64ToNumber(v: Int64 | null | undefined): number {
  if (v === null || v === undefined) return 0;
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') n = Number(v);
  else n = v.unsigned ? (v.high >>> 0) * 2 ** 32 + (v.low >>> 0) : v.high * 2 ** 32 + (v.low >>> 0);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int64 value ${String(n)} is outside the safe integer range`);
  return n;
}

/** ONNX TensorProto.DataType codes (onnx.proto) → names. */
export const ONNX_DTYPES: Record<number, string> = {
  0: 'undefined',
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  8: 'string',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  12: 'uint32',
  13: 'uint64',
  14: 'complex64',
  15: 'complex128',
  16: 'bfloat16',
};
export const onnxDTypeName = (code: number): string => ONNX_DTYPES[code] ?? `data type ${code}`;

/**
 * A decoded tensor. `data`: float32 and float16 (its exact values) → Float32Array,
 * int32/int16/int8/uint8/uint16/bool → Int32Array, int64 → BigInt64Array, float64 → Float64Array;
 * undefined for types whose values are not decoded (string, bfloat16, complex, uint32/uint64) — `dtype`
 * still names them.
 */
export interface OnnxTensor {
  name: string;
  dtype: string;
  dims: number[];
  data?: Float32Array | Int32Array | BigInt64Array | Float64Array;
}

/** A decoded attribute: its name, ONNX attribute type code and value (numbers for int64). */
export interface OnnxAttribute {
  name: string;
  /** AttributeProto.AttributeType: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 5 GRAPH, 6 FLOATS, 7 INTS, 8 STRINGS, ... */
  type: number;
  value: number | string | number[] | string[] | OnnxTensor | unknown;
}

export interface OnnxNode {
  opType: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  attributes: OnnxAttribute[];
}

/** A graph input or output: name and, for tensors, element type and shape (null dims are symbolic). */
export interface OnnxValueInfo {
  name: string;
  /** 'tensor', 'sequence', 'map', 'optional', 'sparse_tensor' or 'unknown'. */
  kind: string;
  dtype?: string;
  shape?: (number | null)[];
}

export interface OnnxModel {
  irVersion: number;
  /** Operator set versions by domain ('' is the default ONNX domain, also spelled 'ai.onnx'). */
  opsets: Map<string, number>;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

type Msg = Record<string, unknown>;
const str = (b: Uint8Array): string => new TextDecoder().decode(b);

function littleEndian<T>(raw: Uint8Array, bytes: number, make: (buf: ArrayBuffer, n: number) => T): T {
  const copy = new Uint8Array(raw.length);
  copy.set(raw); // aligned copy; ONNX raw_data is little-endian, as are the hosts we run on
  return make(copy.buffer, raw.length / bytes);
}

/** The value of IEEE 754 binary16 bits `h`. */
function half(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const f = h & 1023;
  if (e === 31) return f ? Number.NaN : sign * Infinity;
  return sign * (e === 0 ? f * 2 ** -24 : (1024 + f) * 2 ** (e - 25));
}

/** Bytes per element of raw_data, for the dtypes whose data is decoded. */
const RAW_BYTES: Record<string, number> = {
  float32: 4,
  float16: 2,
  float64: 8,
  int64: 8,
  int32: 4,
  int16: 2,
  uint16: 2,
  int8: 1,
  uint8: 1,
  bool: 1,
};

function tensorFrom(m: Msg): OnnxTensor {
  const code = (m['data_type'] as number | undefined) ?? 0;
  const name = (m['name'] as string | undefined) ?? '';
  if (code === 0) throw new OnnxDecodeError(`tensor '${name}' has no data_type`);
  const dtype = onnxDTypeName(code);
  const dims = ((m['dims'] as Int64[] | undefined) ?? []).map(int64ToNumber);
  const negative = dims.find((d) => d < 0);
  if (negative !== undefined) throw new OnnxDecodeError(`tensor '${name}' has dimension ${negative}`);
  const raw = m['raw_data'] as Uint8Array | undefined;
  const hasRaw = raw !== undefined && raw.length > 0;
  const size = dims.reduce((p, d) => p * d, 1);
  const bytes = RAW_BYTES[dtype];
  if (hasRaw && bytes !== undefined && raw.length % bytes !== 0)
    throw new OnnxDecodeError(`tensor '${name}': raw_data of ${raw.length} bytes is no whole number of ${dtype}`);
  let data: OnnxTensor['data'];
  switch (dtype) {
    case 'float32':
      data = hasRaw
        ? littleEndian(raw, 4, (b, n) => new Float32Array(b, 0, n))
        : Float32Array.from((m['float_data'] as number[] | undefined) ?? []);
      break;
    case 'float16': // raw_data: 2 bytes each; int32_data: one uint16 bit pattern per element
      data = Float32Array.from(
        hasRaw
          ? littleEndian(raw, 2, (b, n) => new Uint16Array(b, 0, n))
          : ((m['int32_data'] as number[] | undefined) ?? []),
        half,
      );
      break;
    case 'float64':
      data = hasRaw
        ? littleEndian(raw, 8, (b, n) => new Float64Array(b, 0, n))
        : Float64Array.from((m['double_data'] as number[] | undefined) ?? []);
      break;
    case 'int64':
      data = hasRaw
        ? littleEndian(raw, 8, (b, n) => new BigInt64Array(b, 0, n))
        : BigInt64Array.from(((m['int64_data'] as Int64[] | undefined) ?? []).map((v) => BigInt(int64ToNumber(v))));
      break;
    case 'int32':
    case 'int16':
    case 'int8':
    case 'uint16':
    case 'uint8':
    case 'bool': {
      if (!hasRaw) data = Int32Array.from((m['int32_data'] as number[] | undefined) ?? []);
      else if (dtype === 'int32') data = littleEndian(raw, 4, (b, n) => new Int32Array(b, 0, n));
      else {
        const src = littleEndian(raw, 1, (b) => b);
        const view =
          dtype === 'int16'
            ? new Int16Array(src)
            : dtype === 'uint16'
              ? new Uint16Array(src)
              : dtype === 'int8'
                ? new Int8Array(src)
                : new Uint8Array(src);
        data = Int32Array.from(view);
      }
      break;
    }
    default:
      data = undefined;
  }
  if (data && data.length !== size)
    throw new OnnxDecodeError(
      `tensor '${name}' of shape [${dims.join(', ')}] holds ${data.length} values, not ${size}`,
    );
  return { name, dtype, dims, data };
}

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
  const dims = ((tensor['shape'] as Msg | undefined)?.['dim'] as Msg[] | undefined) ?? [];
  const shape = tensor['shape']
    ? dims.map((d) =>
        d['dim_value'] !== undefined && d['dim_value'] !== null ? int64ToNumber(d['dim_value'] as Int64) : null,
      )
    : undefined;
  return { name, kind: 'tensor', dtype: onnxDTypeName((tensor['elem_type'] as number | undefined) ?? 0), shape };
}

function attributeFrom(m: Msg): OnnxAttribute {
  const type = (m['type'] as number | undefined) ?? 0;
  const name = (m['name'] as string | undefined) ?? '';
  let value: OnnxAttribute['value'];
  switch (type) {
    case 1:
      value = m['f'] as number;
      break;
    case 2:
      value = int64ToNumber(m['i'] as Int64);
      break;
    case 3:
      value = str(m['s'] as Uint8Array);
      break;
    case 4:
      value = tensorFrom(m['t'] as Msg);
      break;
    case 6:
      value = [...((m['floats'] as number[] | undefined) ?? [])];
      break;
    case 7:
      value = ((m['ints'] as Int64[] | undefined) ?? []).map(int64ToNumber);
      break;
    case 8:
      value = ((m['strings'] as Uint8Array[] | undefined) ?? []).map(str);
      break;
    default:
      value = undefined; // graphs, sparse tensors, type protos: never mapped
  }
  return { name, type, value };
}

/**
 * Decodes a ModelProto (the bytes of a `model.onnx`). Throws OnnxDecodeError on bytes that are not one:
 * empty, malformed protobuf (a varint or length past the end, a bad wire type), or a model without
 * ir_version, opset_import (from IR version 3) or graph, or with a node without op_type.
 */
export function decodeModel(bytes: Uint8Array): OnnxModel {
  return decodeChecked(bytes, type('ModelProto'), (m) => {
    if (m['ir_version'] === undefined) throw new OnnxDecodeError('no ir_version');
    const irVersion = int64ToNumber(m['ir_version'] as Int64);
    const g = m['graph'] as Msg | undefined;
    if (!g) throw new OnnxDecodeError('no graph');
    const opsets = new Map<string, number>();
    for (const o of m['opset_import'] as Msg[]) {
      const d = (o['domain'] as string | undefined) ?? '';
      opsets.set(d === 'ai.onnx' ? '' : d, int64ToNumber(o['version'] as Int64));
    }
    if (irVersion >= 3 && !opsets.size) throw new OnnxDecodeError(`no opset_import (IR version ${irVersion})`);
    const nodes = ((g['node'] as Msg[] | undefined) ?? []).map((n, i) => {
      if (!n['op_type']) throw new OnnxDecodeError(`node ${i} of the graph has no op_type`);
      return {
        opType: n['op_type'] as string,
        domain: (n['domain'] as string | undefined) ?? '',
        inputs: [...((n['input'] as string[] | undefined) ?? [])],
        outputs: [...((n['output'] as string[] | undefined) ?? [])],
        attributes: ((n['attribute'] as Msg[] | undefined) ?? []).map(attributeFrom),
      };
    });
    return {
      irVersion,
      opsets,
      nodes,
      initializers: ((g['initializer'] as Msg[] | undefined) ?? []).map(tensorFrom),
      inputs: ((g['input'] as Msg[] | undefined) ?? []).map(valueInfoFrom),
      outputs: ((g['output'] as Msg[] | undefined) ?? []).map(valueInfoFrom),
    };
  });
}

/**
 * Decodes a TensorProto (the bytes of an `input_N.pb`/`output_N.pb`). Throws OnnxDecodeError on bytes that
 * are not one: empty, malformed protobuf, no data_type, a negative dimension, or data that does not fill
 * the shape.
 */
export function decodeTensor(bytes: Uint8Array): OnnxTensor {
  return decodeChecked(bytes, type('TensorProto'), tensorFrom);
}
