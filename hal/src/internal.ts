/**
 * `@polyhal/hal/internal`: the API for writing a backend, and for packages built on the HAL's machinery
 * (autograd's gradients, the ONNX runtime) — not for computing with a backend, which is `@polyhal/hal`.
 * It holds BaseBackend with its hooks and routing step, the op families it is composed of (FAMILIES), dtype
 * storage, strided-layout plans, host kernels, composites a fused override falls back on, argument checks,
 * Philox's counter-based generator, option specs and Node built-ins. The guide is docs/WRITING-A-BACKEND.md.
 *
 * Each name here that @polyhal/hal 0.1 exported from its main entry is still exported there, as the same
 * binding, for one release; import it from here.
 */

// The base class, its hooks, the routing step and the op families.
export { BaseBackend, FAMILIES } from './base.js';
export { defineFamilyMethods, type FamilyTable } from './contract/family-table.js';
export {
  type AnyHooks,
  type BackendHooks,
  type HookArgs,
  type HookResult,
  type HookSpec,
  missingHooks,
  OPTIONAL_HOOKS,
  type OptionalBackendHooks,
  REQUIRED_HOOKS,
} from './contract/hooks.js';
export { KernelRouter, type RoutedBackend, routeOf } from './contract/kernel-router.js';

// dtype storage: descriptors and conversions between host values and the storage kernels see.
export {
  boolToStorage,
  DTYPE_DESCRIPTORS,
  type DTypeDescriptor,
  dtypeDescriptor,
  type DTypeRoute,
  hostToStorage,
  hostValue,
  narrowCast,
  newStorageArray,
  type StorageArray,
  storageDType,
  type StorageDType,
  storageToBool,
  storageToHost,
  wrapInt8,
  wrapUint8,
} from './core/dtype.js';
export { storageBuffer, storageView } from './contract/narrow.js';
export { isWholeBuffer } from './core/ndarray.js';

// Strided layouts: plans that turn views into loops.
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

// Host kernels (float64 and the optional hooks' host fallbacks).
export { hostArgReduce, hostCumsum, hostTopk, type HostView } from './host/host-scan.js';
export { hostOneHot, hostTuplePositions } from './host/host-index.js';
export { batchOffsets, hostIntMatmul } from './host/host-matmul-int.js';

// Composites, their frames and geometry: what an op is without a fused kernel, and the gradients built on them.
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
export { softmaxRows } from './families/composite/softmax-rows.js';
export { nonFiniteCheckAndUnscaleComposite } from './families/composite/unscale.js';
export { attentionBackwardComposite, attentionComposite } from './families/composite/attention.js';
export { attentionBackwardPackedComposite, packedHeads } from './families/composite/attention-packed.js';
export { type LayoutHost, padArray, padBoxes, type PadRun, padRuns } from './families/layout/layout.js';
export { GATHER_FILL, type IndexingHost } from './families/indexing/indexing.js';
export {
  checkGatherND,
  checkScatterElements,
  checkScatterND,
  type FlatIndexPlan,
  gatherNDPlan,
  scatterElementsPlan,
  scatterNDPlan,
} from './families/indexing/indexing-nd.js';
export {
  perAxis,
  spatialRank,
  type Window2d,
  type WindowGeometry,
  window2d,
  windowGeometry,
} from './families/conv/conv-geometry.js';
export { checkConvBias, checkConvOperands, convGradDims, type ConvHost } from './families/conv/conv-check.js';
export { convTransposeWindow2d, type TransposeWindow2d } from './families/conv/conv-transpose-window.js';
export {
  col2im,
  convComposite,
  convTransposeComposite,
  convWeightGrad,
  cropTo,
  isDepthwise,
  padSpatial,
  windowsView,
} from './families/conv/conv.js';
export { avgPoolComposite, avgPoolGrad, maxPoolComposite, maxPoolGrad, poolGeometry } from './families/conv/pool.js';
export { type AxisTaps, axisTaps, resizeBackward, resizeComposite } from './families/conv/resize.js';
export { CUMSUM_BLOCK, cumsumComposite, TOPK_BLOCK, topkComposite } from './families/scan/scan.js';
export {
  bernoulliComposite,
  checkUniformOptions,
  PI_BELOW,
  randomNormalComposite,
  scaleUniform,
  uniformStream,
} from './families/random/sampling.js';

// Philox4x32-10, the counter-based generator every backend's random kernels reproduce bit for bit.
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

// Argument checks, with the messages every backend shares.
export { describeValue } from './core/errors.js';
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

// A backend's options and its platform.
export { BASE_OPTION_SPECS, defineOptions, optionRange, validateOptions } from './runtime/options.js';
export { isNodeLike, nodeBuiltin, type NodeBuiltinName } from './runtime/platform.js';
