/**
 * @polyhal/onnx: ONNX models on any PolyHAL backend. `InferenceSession` runs a whole model (the API of
 * onnxruntime-web's session); underneath, the protobuf decoder (`decodeModel`, `decodeTensor`) and the op
 * table (`ONNX_OPS`: ONNX op type → its lowering onto the HAL).
 */
export { InferenceSession, type NodeRun, type RunOptions, type SessionOptions } from './session.js';
export type { RunStats } from './executor.js';
export type { BackendTensor, Feeds, FeedValue, OutputTensor, TensorData, TensorDataArray } from './feeds.js';
export {
  type FeedProblem,
  OnnxFeedError,
  OnnxGraphError,
  OnnxInt64RangeError,
  OnnxNodeError,
  OnnxUnsupportedError,
  type UnsupportedNode,
} from './errors.js';
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
export { externalDataFromDirectory, type SyncFileSystem } from './proto-external.js';
export { OnnxDecodeError } from './wire.js';
export {
  EXPORT_OPSET,
  type Exportable,
  type ExportOptions,
  exportOnnx,
  OnnxExportRandomError,
  OnnxExportUnmappedError,
} from './export/index.js';
