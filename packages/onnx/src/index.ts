/**
 * @polyhal/onnx: ONNX models on any PolyHAL backend. The protobuf decoder (`decodeModel`,
 * `decodeTensor`) and the op table (`ONNX_OPS`: ONNX op type → its lowering onto the HAL).
 */
export { ONNX_OPS, onnxOpsMapped } from './ops.js';
export {
  Attrs,
  type Contract,
  INT_TYPES,
  isIntType,
  type Lowered,
  missing,
  type NodeContext,
  NotExpressible,
  NUMERIC_TYPES,
  normAxis,
  type OpMapping,
  type ReasonKind,
} from './table.js';
export {
  type DecodeModelOptions,
  decodeModel,
  decodeTensor,
  type ExternalDataLoader,
  type OnnxAttribute,
  type OnnxExternalData,
  type OnnxGraph,
  type OnnxModel,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValueInfo,
} from './proto.js';
export { OnnxDecodeError } from './wire.js';
