/**
 * The graph an export builds: nodes, initializers, inputs and outputs, as plain objects in onnx.proto's field
 * names (encode.ts writes them with the decoder's schema). Names are unique; constants (int64 shape and index
 * lists, scalars) are made once per content.
 */
import { type DType, UnsupportedOpError } from '@polyhal/hal';

/** TensorProto.DataType of each HAL dtype (float16 is not exported: no host conversion here). */
const ELEM_TYPE: Partial<Record<DType, number>> = {
  float32: 1,
  uint8: 2,
  int8: 3,
  int32: 6,
  bool: 9,
  float64: 11,
};
/** TensorProto.DataType INT64. */
export const INT64 = 7;

/** The ONNX element type of `dtype`; UnsupportedOpError for one export does not write (float16). */
export function elemType(dtype: DType): number {
  const t = ELEM_TYPE[dtype];
  if (t === undefined) throw new UnsupportedOpError('exportOnnx', dtype, 'onnx', 'no ONNX element type is written');
  return t;
}

/** An AttributeProto (type: 1 FLOAT, 2 INT, 3 STRING, 6 FLOATS, 7 INTS). */
export interface AttributeObject {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  floats?: number[];
  ints?: number[];
}

/** A NodeProto. */
export interface NodeObject {
  name: string;
  op_type: string;
  input: string[];
  output: string[];
  attribute: AttributeObject[];
}

/** A TensorProto with its data little-endian in raw_data. */
export interface TensorObject {
  name: string;
  dims: number[];
  data_type: number;
  raw_data: Uint8Array;
}

/** A graph input or output: name, element type, dims (a string names a symbolic dim). */
export interface ValueObject {
  name: string;
  elemType: number;
  dims: (number | string)[];
}

/** An attribute value: an int, a float (`{ f }`), an int list, a float list (`{ floats }`) or a string. */
export type AttrValue = number | { f: number } | readonly number[] | { floats: readonly number[] } | string;

function attribute(name: string, v: AttrValue): AttributeObject {
  if (typeof v === 'number') return { name, type: 2, i: v };
  if (typeof v === 'string') return { name, type: 3, s: new TextEncoder().encode(v) };
  if (Array.isArray(v)) return { name, type: 7, ints: [...(v as number[])] };
  if ('f' in (v as object)) return { name, type: 1, f: (v as { f: number }).f };
  return { name, type: 6, floats: [...(v as { floats: readonly number[] }).floats] };
}

/** Little-endian bytes of `data` as ONNX element type `elem`. */
function rawBytes(elem: number, data: ArrayLike<number> | BigInt64Array): Uint8Array {
  const n = data.length;
  let typed: ArrayBufferView;
  if (elem === INT64)
    typed = data instanceof BigInt64Array ? data : BigInt64Array.from(data as ArrayLike<number>, BigInt);
  else {
    const values = data as ArrayLike<number>;
    if (elem === 1) typed = Float32Array.from(values);
    else if (elem === 11) typed = Float64Array.from(values);
    else if (elem === 6) typed = Int32Array.from(values);
    else if (elem === 3) typed = Int8Array.from(values);
    else typed = Uint8Array.from(values, (x) => (elem === 9 ? (x ? 1 : 0) : x)); // uint8, bool
  }
  if (typed.byteLength === 0 && n === 0) return new Uint8Array(0);
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength).slice();
}

/** Builds an ONNX graph: unique names, nodes in order, initializers with constants made once. */
export class GraphBuilder {
  readonly nodes: NodeObject[] = [];
  readonly initializers: TensorObject[] = [];
  readonly inputs: ValueObject[] = [];
  readonly outputs: ValueObject[] = [];
  private readonly names = new Set<string>();
  private readonly constants = new Map<string, string>();
  private count = 0;

  /** A name not used yet: `base`, else `base_1`, `base_2`, ... */
  fresh(base: string): string {
    let name = base;
    while (this.names.has(name)) name = `${base}_${++this.count}`;
    this.names.add(name);
    return name;
  }

  /** Reserves `name` exactly (a graph input or output); false when it is taken. */
  reserve(name: string): boolean {
    if (this.names.has(name)) return false;
    this.names.add(name);
    return true;
  }

  /** Adds node `op` on `inputs` ('' for an omitted optional input); returns its `outputs` output names. */
  node(op: string, inputs: readonly string[], attrs: Record<string, AttrValue> = {}, outputs = 1): string[] {
    const out = Array.from({ length: outputs }, () => this.fresh(`${op.toLowerCase()}_out`));
    const attribute_ = Object.entries(attrs).map(([k, v]) => attribute(k, v));
    this.nodes.push({ name: this.fresh(op), op_type: op, input: [...inputs], output: out, attribute: attribute_ });
    return out;
  }

  /** `node` with one output: its name. */
  op(op: string, inputs: readonly string[], attrs: Record<string, AttrValue> = {}): string {
    return this.node(op, inputs, attrs, 1)[0]!;
  }

  /** Adds an initializer named (a fresh form of) `name`; returns its name. */
  initializer(name: string, elem: number, dims: readonly number[], data: ArrayLike<number> | BigInt64Array): string {
    const unique = this.fresh(name);
    this.initializers.push({ name: unique, dims: [...dims], data_type: elem, raw_data: rawBytes(elem, data) });
    return unique;
  }

  /** Little-endian bytes of `data` as ONNX element type `elem` (a TensorProto's raw_data). */
  bytes(elem: number, data: ArrayLike<number> | BigInt64Array): Uint8Array {
    return rawBytes(elem, data);
  }

  /** A constant int64 tensor of `values` (1-D, or `dims`), made once per content. */
  int64(values: readonly number[], dims: readonly number[] = [values.length]): string {
    return this.constant(INT64, dims, values);
  }

  /** A constant scalar (dims []) of ONNX element type `elem`, made once per value. */
  scalar(value: number, elem: number): string {
    return this.constant(elem, [], [value]);
  }

  private constant(elem: number, dims: readonly number[], values: readonly number[]): string {
    const key = `${elem}|${dims.join(',')}|${values.join(',')}`;
    let name = this.constants.get(key);
    if (!name) {
      name = this.initializer('const', elem, dims, values);
      this.constants.set(key, name);
    }
    return name;
  }
}
