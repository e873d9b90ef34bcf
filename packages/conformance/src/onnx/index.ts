export {
  runOnnxNodeTests,
  type OnnxNodeTestsOptions,
  type OnnxNodeTestsResult,
  type OnnxTestResult,
} from './runner.js';
export { onnxReasonKinds, onnxReasons, onnxTextReport, type OnnxReasonCount } from './report.js';
export { ONNX_OPS, onnxOpsMapped } from '@polyhal/onnx';
export {
  Attrs,
  NotExpressible,
  type Contract,
  type Lowered,
  type NodeContext,
  type OpMapping,
  type ReasonKind,
} from '@polyhal/onnx';
export { compareOnnx, ONNX_ATOL, ONNX_RTOL, type OnnxComparison } from './compare.js';
export {
  decodeModel,
  decodeTensor,
  type OnnxAttribute,
  type OnnxModel,
  type OnnxNode,
  type OnnxTensor,
  type OnnxValueInfo,
} from '@polyhal/onnx';
export { OnnxDecodeError } from '@polyhal/onnx';
