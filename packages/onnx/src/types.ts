/**
 * ONNX element types on the HAL, and the output types of a node inferred from its inputs and attributes
 * (ONNX's type constraints), so that a graph's intermediate values have a dtype before anything runs.
 */
import type { DType } from '@polyhal/hal';
import { type OnnxNode, type OnnxTensor, onnxDTypeName } from './proto.js';

/**
 * The HAL dtype that holds an ONNX element type on a device: int64 runs as int32 (values checked, never
 * wrapped); undefined for the types the HAL has no storage for (string, int16, uint16, uint32, uint64,
 * bfloat16, complex).
 */
export function deviceDType(onnxType: string): DType | undefined {
  switch (onnxType) {
    case 'float32':
    case 'float16':
    case 'float64':
    case 'int32':
    case 'int8':
    case 'uint8':
    case 'bool':
      return onnxType;
    case 'int64':
      return 'int32';
    default:
      return undefined;
  }
}

/** The ONNX types whose values the session can hold (on the host or on a device). */
export const isSupportedType = (t: string): boolean => deviceDType(t) !== undefined;

const BOOL_OUT = new Set([
  'Equal',
  'Less',
  'LessOrEqual',
  'Greater',
  'GreaterOrEqual',
  'And',
  'Or',
  'Xor',
  'Not',
  'IsNaN',
  'IsInf',
]);
const INT64_OUT = new Set(['Shape', 'Size', 'ArgMax', 'ArgMin', 'NonZero']);

const attr = (node: OnnxNode, name: string) => node.attributes.find((a) => a.name === name);

/** The dtype of a Constant node's value ('' when it has none the session reads). */
export function constantType(node: OnnxNode): string {
  for (const a of node.attributes) {
    if (a.name === 'value') return (a.value as OnnxTensor).dtype;
    if (a.name === 'value_float' || a.name === 'value_floats') return 'float32';
    if (a.name === 'value_int' || a.name === 'value_ints') return 'int64';
    if (a.name === 'value_string' || a.name === 'value_strings') return 'string';
  }
  return '';
}

/**
 * The ONNX types of a node's outputs, from its input types (`''` for an omitted input) and attributes.
 * `subgraphOutputs` gives If/Loop/Scan's body output types. An output whose type the rules do not fix
 * takes the first input's type (the common `T → T` constraint); '' where even that is unknown.
 */
export function inferOutputTypes(node: OnnxNode, inputs: readonly string[], subgraphOutputs?: string[]): string[] {
  return outputTypes(node, inputs, subgraphOutputs).slice(0, node.outputs.length);
}

function outputTypes(node: OnnxNode, inputs: readonly string[], subgraphOutputs?: string[]): string[] {
  const n = node.outputs.length;
  const first = inputs.find((t) => t !== '') ?? '';
  const all = (t: string): string[] => Array<string>(n).fill(t);
  const op = node.opType;
  if (BOOL_OUT.has(op)) return all('bool');
  if (INT64_OUT.has(op)) return all('int64');
  switch (op) {
    case 'Cast': {
      const to = attr(node, 'to')?.value;
      return all(typeof to === 'number' ? onnxDTypeName(to) : '');
    }
    case 'CastLike':
      return all(inputs[1] ?? '');
    case 'Constant':
      return all(constantType(node));
    case 'ConstantOfShape': {
      const v = attr(node, 'value')?.value as OnnxTensor | undefined;
      return all(v?.dtype ?? 'float32');
    }
    case 'EyeLike':
    case 'RandomUniformLike':
    case 'RandomNormalLike': {
      const d = attr(node, 'dtype')?.value;
      return all(typeof d === 'number' ? onnxDTypeName(d) : first);
    }
    case 'RandomUniform':
    case 'RandomNormal': {
      const d = attr(node, 'dtype')?.value;
      return all(typeof d === 'number' ? onnxDTypeName(d) : 'float32');
    }
    case 'Where':
      return all(inputs[1] ?? '');
    case 'OneHot':
      return all(inputs[2] ?? '');
    case 'TopK':
    case 'MaxPool':
      return [first, 'int64'];
    case 'Dropout':
      return [first, 'bool'];
    case 'QuantizeLinear':
      return all(inputs[2] || 'uint8');
    case 'DequantizeLinear':
      return all('float32');
    case 'DynamicQuantizeLinear':
      return ['uint8', 'float32', 'uint8'];
    case 'MatMulInteger':
    case 'ConvInteger':
      return all('int32');
    case 'QLinearMatMul':
      return all(inputs[7] ?? '');
    case 'If':
    case 'Loop':
    case 'Scan':
      return Array.from({ length: n }, (_, i) => subgraphOutputs?.[i] ?? '');
    default:
      return all(first);
  }
}
