/**
 * The options of the WebGPU backend, declared once: WEBGPU_OPTION_SPECS, which createWebGpuBackend and the
 * registry check them against (and docs/reference/OPTIONS.md renders), and WebGpuOptions, the options'
 * TypeScript type derived from it (what createWebGpuBackend and WebGpuBackend take).
 */
import type { OptionsOf } from '@polyhal/hal';
import { BASE_OPTION_SPECS, defineOptions } from '@polyhal/hal/internal';
import type { GpuDeviceLike, GpuLike } from './gpu-types.js';
import { TILES, type TileName } from './kernels/matmul.js';

/** The options createWebGpuBackend takes (checked: InvalidArgumentError names a bad key). */
export const WEBGPU_OPTION_SPECS = defineOptions({
  ...BASE_OPTION_SPECS,
  /** Upper bound on live buffer bytes (default: min(2 GiB, the adapter's maxBufferSize·4)). */
  memoryLimit: BASE_OPTION_SPECS.memoryLimit,
  /** A GPUDevice to use as is (its adapter info is then unknown unless `adapterInfo` is given). */
  device: { type: 'object', doc: 'a GPUDevice to use as is' },
  /** A GPU object (navigator.gpu or the webgpu package's create()). */
  gpu: { type: 'object', doc: "a GPU object (navigator.gpu or the webgpu package's create())" },
  powerPreference: {
    type: 'string',
    values: ['low-power', 'high-performance'],
    doc: 'which adapter to request (GPURequestAdapterOptions.powerPreference)',
  },
  /** Dawn toggles for the Node `webgpu` package, e.g. ['enable-dawn-features=allow_unsafe_apis']. */
  dawnFlags: { type: 'string[]', doc: 'Dawn toggles for the Node webgpu package' },
  /**
   * Bytes of freed storage buffers kept for reuse (default 512 MiB); past it the least recently
   * freed are destroyed. Raise it when one op's buffers are larger (e.g. 8192² float32 is 256 MiB).
   */
  maxPooledBytes: {
    type: 'number',
    min: 0,
    doc: 'bytes of freed buffers kept for reuse (default: what memoryLimit leaves above the live buffers)',
  },
  /**
   * Fuse kernels in captures (default true): chains of unary ops and binary ops with a number or an array of the
   * result's shape are encoded as one fusedElementwise kernel per result kept (capture-fusion.ts); and when the
   * capture ends, a kernel whose result one later elementwise kernel alone reads is folded into it — a float32
   * product into its store as an epilogue, a chain into the chain reading it (plan-fusion.ts), so replays run
   * fewer kernels. false records and replays every op as its own kernel, as eager calls always are.
   */
  fuseInCapture: {
    type: 'boolean',
    doc: 'fuse elementwise chains, and products with the elementwise work on them, in captures and their replays',
  },
  /**
   * Merge independent kernels in captures' plans (default true): when a capture ends, runs of consecutive kernels
   * that share no written buffer run as one dispatch each, each workgroup running one kernel's code as its own
   * dispatch did (same bits; plan-merge.ts), so replays make fewer dispatches. false replays every kernel alone.
   */
  mergeInCapture: {
    type: 'boolean',
    doc: 'merge runs of independent kernels of captures into single dispatches (same results, fewer dispatches)',
  },
  /**
   * Let captures' replays copy the outputs their caller says it reads next into mappable staging buffers with the
   * replay's own work (ReplayOptions.readOutputs; default true): such a read maps the copy without a submission of
   * its own (reads.ts). false: those reads copy and submit as any other read.
   */
  readAheadInReplay: {
    type: 'boolean',
    doc: "copy the outputs a replay's caller reads next toward the host with the replay's work (one submission)",
  },
  /**
   * Time every kernel of captures' replays on the GPU (default false; needs the adapter's `timestamp-query`
   * feature, which the device then requests): each replay encodes each kernel in a pass of its own with start and
   * end timestamps, and `replayKernelTimes()` returns the last replay's (replay-timing.ts). For profiling.
   */
  kernelTimestamps: {
    type: 'boolean',
    doc: "time each kernel of captures' replays on the GPU (timestamp queries; replayKernelTimes())",
  },
  /** Ops encoded per command-buffer submission (default 64). */
  batchSize: { type: 'integer', min: 1, doc: 'ops per submission' },
  /** Force one matmul tile for every size ('auto' = shape-aware choice; others for tests and benchmarks). */
  matmulTile: {
    type: 'string',
    values: ['auto', ...(Object.keys(TILES) as TileName[])],
    doc: 'one matmul tile for every size; "auto" chooses by shape (the others are for tests and benchmarks)',
  },
  /**
   * Split-K count for matmuls: 'auto' (default) splits K when the output has
   * too few tiles to fill the GPU (see `chooseSplitK`; float16 products on tensor cores: `halfSplitK`, products of
   * one item whose tile divides the output); a number forces it (1 = never split).
   */
  matmulSplitK: {
    type: 'integer',
    min: 1,
    max: 1024,
    values: ['auto'],
    doc: 'split-K count of matmuls; "auto" splits K when the output has too few tiles to fill the GPU, 1 never',
  },
  /**
   * WebGPU error scopes. Every submission has one (errors found at encoder finish or submit, e.g. of
   * a dispatch, name the ops of that submission). 'op' (default) adds one to each op that creates a
   * pipeline or a bind group, so errors raised at once name their op (an op on cached ones creates
   * nothing and needs none); 'batch' skips those (less CPU per op).
   */
  errorScopes: {
    type: 'string',
    values: ['op', 'batch'],
    doc: 'WebGPU error scopes: "op" adds one per op that creates a pipeline (errors name it), "batch" per submission',
  },
  /**
   * How float16 kernels convert between binary16 and f32 (the same bits either way): 'auto' (default)
   * checks the adapter's pack2x16float/unpack2x16float against the exact integer conversions at creation
   * and uses them if they agree ('hardware'), else 'integer'. See `float16Conversions` on the backend.
   */
  float16Conversions: {
    type: 'string',
    values: ['auto', 'integer', 'hardware'],
    doc: 'binary16 ↔ f32 conversion of float16 kernels; "auto" uses the hardware ones if they match the integer ones',
  },
  /**
   * How float16 elementwise ops and reductions compute: 'auto' (default) binds float16 arrays as f16 (`shader-f16`:
   * add, sub, mul in f16, the other ops in f32 on exact conversions, reductions accumulating in f32) where the device
   * offers `shader-f16` and a check at creation finds its f16 conversions and arithmetic exact (half-native-check.ts),
   * else 'emulated' (binary16 decoded from u32 words); 'native' skips the check (BackendUnavailableError without
   * `shader-f16`). Same results either way. Dawn on NVIDIA offers `shader-f16` with `dawnFlags` naming
   * `enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia`. See `float16Arithmetic` on the backend.
   */
  float16Arithmetic: {
    type: 'string',
    values: ['auto', 'native', 'emulated'],
    doc: 'float16 elementwise ops and reductions: "auto" on shader-f16 (f16 loads, add/sub/mul) where checked exact',
  },
  /**
   * How int8 and uint8 arrays are stored: 'packed' (default) 1 byte per element, four to a 32-bit word (the
   * HAL's packedInt8 hook; dispatch-int8.ts), which matmulInteger's int8 kernels read as the words they multiply;
   * 'int32' one element per 32-bit word, as before (named in deviceName).
   */
  int8Storage: {
    type: 'string',
    values: ['packed', 'int32'],
    doc: 'int8 and uint8 storage: "packed" 1 byte per element (default) or "int32" 4 bytes',
  },
  /**
   * int8 products ('auto', default: products of at most INT8_DIRECT_MACS multiply-adds read their operands
   * as they are, larger ones are packed first for the tiled dot4I8Packed or subgroup-matrix kernel;
   * 'always': every product of 16 or more rows is packed, for tests and benchmarks of the packed kernels).
   */
  int8Packing: {
    type: 'string',
    values: ['auto', 'always'],
    doc: 'int8 products: "auto" packs the large ones, "always" every one of 16 or more rows',
  },
  /**
   * The kernel of large packed int8 products: 'subgroup-matrix' or 'auto' (default): tensor cores where the
   * adapter offers `chromium-experimental-subgroup-matrix` (i8×i8→i32 at 16×16×32, subgroups of 32), else
   * dot4; 'dot4': dot4I8Packed always. With Dawn's robustness off (`dawnFlags` naming `disable_robustness`)
   * large products take a 128×128 tile, with it on a 64×128 one (benches/results/h100/webgpu-int8-*.json).
   */
  int8Kernel: {
    type: 'string',
    values: ['auto', 'subgroup-matrix', 'dot4'],
    doc: 'kernel of large packed int8 products; "auto": subgroup matrices where the adapter offers them, else dot4',
  },
  /**
   * The kernel of float16 products (float16 operands, float32 accumulation): 'auto' (default) takes the tensor
   * cores where the device offers subgroup matrices with an f16×f16→f32 16×16×16 configuration and `shader-f16`
   * (Dawn on NVIDIA: `dawnFlags` with `enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia`) for
   * products of 2^21 multiply-adds or more, and the float32 kernels on widened copies otherwise;
   * 'subgroup-matrix' takes the tensor cores for every size where offered (tests); 'float32' never.
   */
  float16Matmul: {
    type: 'string',
    values: ['auto', 'subgroup-matrix', 'float32'],
    doc: 'kernel of float16 products; "auto": tensor cores where offered (f16 subgroup matrices) for large ones',
  },
  /**
   * The subgroup-matrix tile of every float16 product on the tensor cores ('auto' = by shape; the others for tests
   * and benchmarks): 'large' 128×128, 'medium' 64×128, 'small' 64×64 (the large one needs about 21 KiB of
   * workgroup memory, else 'medium' is used).
   */
  /**
   * Run attention over sequences past one block of workgroup memory (k and v of a leading index) as the fused
   * tiled kernels (dispatch-attention.ts: FlashAttention-2's key and query blocks; one dispatch forward, three
   * backward). Default false, the composite: on an H100 the float32 ViT-S step (197 tokens) took 170 ms with
   * them and 147 ms without, and on lavapipe they are 2–3.5× slower. Short sequences take the one-block kernels
   * either way.
   */
  tiledAttention: {
    type: 'boolean',
    doc: 'fused tiled attention for sequences past workgroup memory (default false: slower than the composite today)',
  },
  /**
   * The kernels of layerNorm's forward and of layerNormBackward's dx: 'subgroup' (a workgroup per row,
   * kernels/layer-norm-rows.ts, kernels/layer-norm-backward-rows.ts, its row sums through subgroup operations where
   * the device has the `subgroups` feature, kernels/workgroup-sum.ts, else as 'workgroup'), 'workgroup' (the same,
   * its sums as a tree in workgroup memory), 'invocation' (an invocation per row, kernels/layer-norm.ts,
   * kernels/layer-norm-backward.ts), 'auto' (default): 'subgroup' on hardware adapters,
   * where a row per invocation leaves the GPU idle and reads rows D apart (forward ~27 µs for [1088, 64],
   * backward 0.3–0.77 ms for [12608, 384] on an H100), 'invocation' on software ones, where a barrier costs more
   * than a row.
   */
  layerNormKernel: {
    type: 'string',
    values: ['auto', 'subgroup', 'workgroup', 'invocation'],
    doc:
      'layerNorm forward and backward dx: a workgroup per row, its sums through subgroups ("subgroup", where the ' +
      'device has them) or a tree ("workgroup"), or an invocation per row; "auto": "subgroup" on hardware',
  },
  float16MatmulTile: {
    type: 'string',
    values: ['auto', 'large', 'medium', 'small'],
    doc: 'tensor-core tile of every float16 product; "auto" chooses by shape (the others for tests and benchmarks)',
  },
  /**
   * The subgroup-matrix tile of every packed int8 product ('auto' = by robustness and size, as above; the others
   * for tests and benchmarks: '128x128' needs 20 KiB of workgroup memory, else 64×128 is used). On the dot4 path
   * '128x128' forces the register-blocked 128×128 kernel and '64x128' the 64×64 one, whatever the product's size.
   */
  /**
   * The form of the subgroup-matrix builtins in the int8 and float16 tensor-core kernels
   * (kernels/subgroup-matrix-gemm.ts SubgroupMatrixBuiltins): 'vector' (majorness a template parameter, slabs of
   * vec4 words), 'legacy' (majorness a runtime argument, slabs of the fragments' type; deprecated in Dawn), or
   * 'auto' (default): 'vector' where the device's compiler takes it (subgroup-matrix-check.ts).
   */
  subgroupMatrixBuiltins: {
    type: 'string',
    values: ['auto', 'legacy', 'vector'],
    doc: 'subgroup-matrix builtins of the tensor-core kernels; "auto": the vec4-slab form where it compiles',
  },
  int8Tile: {
    type: 'string',
    values: ['auto', '128x128', '64x128'],
    doc: 'tile of every packed int8 product; "auto" by robustness and size (the others for tests and benchmarks)',
  },
});

/**
 * What createWebGpuBackend and WebGpuBackend take (OptionsOf WEBGPU_OPTION_SPECS): `device` and `gpu` are
 * the consumer's GPUDevice and GPU where it has WebGPU types (gpu-types.ts), else object.
 */
export type WebGpuOptions = OptionsOf<typeof WEBGPU_OPTION_SPECS, { device: GpuDeviceLike; gpu: GpuLike }>;
