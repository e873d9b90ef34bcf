/**
 * The public surface of @polyhal/hal, name by name: what users and backend authors import. Each
 * statement lists what one module contributes (a name that a module re-exports is listed once, at its
 * first module). Keep the statements' order: it sets the order the modules are evaluated in (biome.json
 * leaves imports and exports unsorted for that reason).
 */
export {
  boolToStorage,
  bytesPerElement,
  type DType,
  DTYPE_DESCRIPTORS,
  DTYPE_LIST,
  type DTypeDescriptor,
  dtypeDescriptor,
  dtypeOfArray,
  type DTypeRoute,
  DTYPES,
  float16Bits,
  float16FromBits,
  type HostArray,
  hostToStorage,
  hostValue,
  inferDType,
  intRange,
  isDType,
  isFloatDType,
  isIntDType,
  isNarrow,
  NARROW_DTYPES,
  narrowCast,
  type NarrowDType,
  newHostArray,
  newStorageArray,
  roundFloat16,
  type StorageArray,
  storageDType,
  type StorageDType,
  storageToBool,
  storageToHost,
  type TypedArrayFor,
  wrapInt8,
  wrapUint8,
} from './core/dtype.js';
export {
  BackendHookError,
  BackendUnavailableError,
  describeValue,
  DeviceMismatchError,
  DTypeError,
  InvalidArgumentError,
  OutOfMemoryError,
  PolyHalError,
  ShapeMismatchError,
  UnknownBackendError,
  UnsupportedOpError,
  UseAfterFreeError,
} from './core/errors.js';
export {
  assertShape,
  broadcastShapes,
  contiguousStrides,
  normalizeAxes,
  normalizeAxis,
  padPlacement,
  type Shape,
  shapesEqual,
  sizeOf,
} from './core/shape.js';
export {
  type Accuracy,
  ARRAY_OP_DEFS,
  type ArrayOp,
  type ArrayOpDef,
  BINARY_OP_DEFS,
  BINARY_OPS,
  type BinaryOp,
  type BinaryOpDef,
  binaryResult,
  binaryTakes,
  type Domain,
  dtypeTaken,
  EXACT,
  type GradOps,
  type GradRule,
  INT32_BINARY_OPS,
  INT32_REDUCE_OPS,
  INT32_UNARY_OPS,
  type MovementOp,
  OP_METHODS,
  REDUCE_OP_DEFS,
  REDUCE_OPS,
  type ReduceGradRule,
  type ReduceOp,
  type ReduceOpDef,
  reduceTakes,
  TRANSCENDENTAL,
  ULP1,
  ULP2,
  ULP4,
  UNARY_OP_DEFS,
  UNARY_OPS,
  type UnaryOp,
  type UnaryOpDef,
  unaryTakes,
  type WgslAccuracy,
} from './ops/index.js';
export {
  asStridedView,
  type DeviceBuffer,
  expandView,
  inferShape,
  isWholeBuffer,
  type NDArray,
  permuteView,
  reshapeView,
  sameView,
  shrinkView,
  strideView,
  transposeView,
  viewOf,
} from './core/ndarray.js';
export {
  type AdamStepParams,
  ARITHMETIC_CLASSES,
  type ArithmeticClass,
  type BackendCapabilities,
  capabilitiesOf,
  type ComputeBackend,
  type DeviceType,
  type ElementwiseMethods,
  type Operand,
  type ReadHandle,
  type ReduceMethods,
  type SgdStepParams,
  STRICT_CAPABILITIES,
} from './backend.js';
export {
  type BackendHooks,
  BaseBackend,
  type BaseBackendOptions,
  type HookSpec,
  missingHooks,
  OPTIONAL_HOOKS,
  type OptionalBackendHooks,
  REQUIRED_HOOKS,
} from './base.js';
export type { AnyHooks, HookArgs, HookResult } from './contract/hooks.js';
export { KernelRouter, type RoutedBackend, routeOf } from './contract/kernel-router.js';
export {
  installLayoutOps,
  type LayoutHost,
  type LayoutMethods,
  PAD_MODES,
  padArray,
  padBoxes,
  type PadMode,
  type PadRun,
  padRuns,
} from './families/layout/layout.js';
export {
  GATHER_FILL,
  type IndexingHost,
  type IndexingMethods,
  installIndexingOps,
  SCATTER_REDUCTIONS,
  type ScatterReduction,
} from './families/indexing/indexing.js';
export {
  checkGatherND,
  checkScatterElements,
  checkScatterND,
  type FlatIndexPlan,
  gatherNDPlan,
  type IndexingNDMethods,
  installIndexingNDOps,
  scatterElementsPlan,
  scatterNDPlan,
} from './families/indexing/indexing-nd.js';
export { type ArgReduceMethods, type ArgReduceOptions, installArgReduceOps } from './families/indexing/argreduce.js';
export {
  type BinaryCrossEntropyOptions,
  type CrossEntropyOptions,
  installLossOps,
  type LossMethods,
  type LossReduction,
  type NllLossOptions,
} from './families/loss/losses.js';
export {
  installNormOps,
  type LayerNormBackwardOptions,
  type LayerNormOptions,
  type NormMethods,
} from './families/norm/norm.js';
export {
  type ConvPadding,
  type ConvPaddingMode,
  type PerAxis,
  perAxis,
  spatialRank,
  type WindowGeometry,
  windowGeometry,
  type WindowOptions,
} from './families/conv/conv-geometry.js';
export { checkConvOperands, convGradDims, type ConvHost } from './families/conv/conv-check.js';
export {
  col2im,
  convComposite,
  type ConvOptions,
  convTransposeComposite,
  type ConvTransposeOptions,
  convWeightGrad,
  cropTo,
  isDepthwise,
  padSpatial,
  windowsView,
} from './families/conv/conv.js';
export {
  avgPoolComposite,
  avgPoolGrad,
  type AvgPoolOptions,
  maxPoolComposite,
  maxPoolGrad,
  poolGeometry,
  type PoolOptions,
} from './families/conv/pool.js';
export {
  type AxisTaps,
  axisTaps,
  type CoordinateTransformationMode,
  type NearestMode,
  resizeBackward,
  resizeComposite,
  type ResizeMode,
  type ResizeOptions,
} from './families/conv/resize.js';
export { type ConvMethods, installConvOps } from './families/conv/conv-methods.js';
export { installLogicOps, type LogicMethods } from './families/logic/logic.js';
export { installQuantOps, type QuantMethods } from './families/quant/quantize.js';
export {
  CUMSUM_BLOCK,
  cumsumComposite,
  type CumsumOptions,
  installScanOps,
  type ScanMethods,
  TOPK_BLOCK,
  topkComposite,
  type TopKOptions,
} from './families/scan/scan.js';
export { hostArgReduce, hostCumsum, hostTopk, type HostView } from './host/host-scan.js';
export { hostOneHot, hostTuplePositions } from './host/host-index.js';
export { batchOffsets, hostIntMatmul } from './host/host-matmul-int.js';
export {
  adamStepComposite,
  adamStepConstants,
  logSoftmaxComposite,
  logsumexpComposite,
  sgdStepComposite,
  softmaxComposite,
  softmaxCrossEntropyComposite,
  withTemps,
} from './families/composite/composites.js';
export {
  BACKEND_PACKAGES,
  type BackendEntry,
  CREATE_BACKEND_OPTION_SPECS,
  createBackend,
  type CreateBackendOptions,
  type PolyHalConfig,
  type ProbeResult,
  registerBackend,
  registeredBackends,
  type SelectionAttempt,
  type SelectionReport,
  type SelectionSource,
  unregisterBackend,
} from './runtime/registry.js';
export {
  DEFAULT_BACKENDS,
  KNOWN_BACKENDS,
  type KnownBackend,
  type KnownBackendName,
} from './runtime/known-backends.js';
export { mulberry32, normal, type Rng } from './core/random.js';
export {
  bitsToUniform,
  checkSeed,
  mulhi32,
  PHILOX_M0,
  PHILOX_M1,
  PHILOX_W0,
  PHILOX_W1,
  philox4x32,
  type PhiloxStream,
  philoxStream,
  philoxUniformFill,
} from './core/philox.js';
export {
  bernoulliComposite,
  type BernoulliOptions,
  checkUniformOptions,
  installRandomOps,
  PI_BELOW,
  type RandomMethods,
  randomNormalComposite,
  type RandomNormalOptions,
  type RandomUniformOptions,
  scaleUniform,
  uniformStream,
} from './families/random/sampling.js';
export {
  coalesce,
  isContiguous,
  mergeable,
  planMatmulBatch,
  planRows,
  type RowPlan,
  type StridedLayout,
} from './core/strided.js';
export { type AxisSplit, splitReduceAxes } from './core/reduce-plan.js';
export { isNodeLike, nodeBuiltin, type NodeBuiltinName } from './runtime/platform.js';
export {
  BASE_OPTION_SPECS,
  defineOptions,
  type OptionSpec,
  type OptionSpecs,
  type OptionsOf,
  type OptionValue,
  optionRange,
  validateOptions,
} from './runtime/options.js';
export {
  CONFIG_FILE_NAME,
  CONFIG_MAX_BYTES,
  CONFIG_OPTION_SPECS,
  loadConfig,
  type LoadedConfig,
} from './runtime/config.js';
export {
  BINARY_OP_SET,
  checkAdamParams,
  checkAxesArg,
  checkAxis,
  checkBoolean,
  checkHostData,
  checkIntList,
  checkNumber,
  checkPadWidths,
  checkPairs,
  checkSgdParams,
  checkSoftmaxCrossEntropyOperands,
  checkStepBuffers,
  checkView,
  checkWriteData,
  matmulDims,
  REDUCE_OP_SET,
  sgdVelocity,
  UNARY_OP_SET,
} from './contract/validate.js';
export { storageBuffer, storageView } from './contract/narrow.js';
