export {
  runOnnxNodeTests,
  type OnnxNodeTestsOptions,
  type OnnxNodeTestsResult,
  type OnnxTestResult,
} from './runner.js';
export { onnxReasonKinds, onnxReasons, onnxTextReport, type OnnxReasonCount } from './report.js';
export { ONNX_OPS, onnxOpsMapped } from './ops.js';
export {
  Attrs,
  NotExpressible,
  type Contract,
  type Lowered,
  type NodeContext,
  type OpMapping,
  type ReasonKind,
} from './table.js';
export { compareOnnx, ONNX_ATOL, ONNX_RTOL, type OnnxComparison } from './compare.js';
export {
  decodeModel,
  decodeTensor,
  type OnnxAttribute,
  type OnnxModel,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValueInfo,
} from './proto.js';
export { OnnxDecodeError } from './wire.js';
