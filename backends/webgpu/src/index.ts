import {
  BackendUnavailableError,
  BASE_OPTION_SPECS,
  type BackendEntry,
  type OptionSpecs,
  registerBackend,
  validateOptions,
} from '@polyhal/hal';
import { acquireDevice, adapterInfo, requestAdapter, type WebGpuOptions } from './device.js';
import { checkHardwareFloat16Once } from './half-check.js';
import { TILES } from './kernels/matmul.js';
import { WebGpuBackend } from './webgpu-backend.js';

export { WebGpuBackend, GpuError } from './webgpu-backend.js';
export { findGpu, hasVulkanLoader, type WebGpuOptions } from './device.js';
export { checkHardwareFloat16, type HalfCheck } from './half-check.js';
export { f16Wgsl, type HalfConversions } from './kernels/half.js';
export type { GpuDeviceLike, GpuLike, GpuPowerPreference } from './gpu-types.js';
export { chooseSplitK, chooseTile, TILES, type Tile, type TileName } from './kernels/matmul.js';
export { NO_YIELD_WARN_OPS, NO_YIELD_WARNING_CODE } from './loop-watch.js';

/** The options createWebGpuBackend takes (checked: InvalidArgumentError names a bad key). */
export const WEBGPU_OPTION_SPECS: OptionSpecs = {
  ...BASE_OPTION_SPECS,
  device: { type: 'object', doc: 'a GPUDevice to use as is' },
  gpu: { type: 'object', doc: "a GPU object (navigator.gpu or the webgpu package's create())" },
  powerPreference: {
    type: 'string',
    values: ['low-power', 'high-performance'],
    doc: 'which adapter to request (GPURequestAdapterOptions.powerPreference)',
  },
  dawnFlags: { type: 'string[]', doc: 'Dawn toggles for the Node webgpu package' },
  maxPooledBytes: { type: 'number', min: 0, doc: 'bytes of freed buffers kept for reuse' },
  batchSize: { type: 'integer', min: 1, doc: 'ops per submission' },
  matmulTile: {
    type: 'string',
    values: ['auto', ...Object.keys(TILES)],
    doc: 'one matmul tile for every size; "auto" chooses by shape (the others are for tests and benchmarks)',
  },
  matmulSplitK: {
    type: 'integer',
    min: 1,
    max: 1024,
    values: ['auto'],
    doc: 'split-K count of matmuls; "auto" splits K when the output has too few tiles to fill the GPU, 1 never',
  },
  errorScopes: {
    type: 'string',
    values: ['op', 'batch'],
    doc: 'WebGPU error scopes: "op" adds one per op that creates a pipeline (errors name it), "batch" per submission',
  },
  float16Conversions: {
    type: 'string',
    values: ['auto', 'integer', 'hardware'],
    doc: 'binary16 ↔ f32 conversion of float16 kernels; "auto" uses the hardware ones if they match the integer ones',
  },
  int8Packing: {
    type: 'string',
    values: ['auto', 'always'],
    doc: 'int8 products: "auto" packs the large ones, "always" every one of 16 or more rows',
  },
  int8Kernel: {
    type: 'string',
    values: ['auto', 'subgroup-matrix', 'dot4'],
    doc: 'kernel of large packed int8 products; "auto": subgroup matrices where the adapter offers them, else dot4',
  },
  int8Tile: {
    type: 'string',
    values: ['auto', '128x128', '64x128'],
    doc: 'tile of every packed int8 product; "auto" by robustness and size (the others for tests and benchmarks)',
  },
};

/**
 * Creates a WebGPU backend on the best adapter (or on an injected `device`/`gpu`). Throws
 * BackendUnavailableError with the reason when there is no WebGPU or no adapter, and
 * InvalidArgumentError for an unknown or ill-typed option (WEBGPU_OPTION_SPECS).
 */
export async function createWebGpuBackend(options: WebGpuOptions = {}): Promise<WebGpuBackend> {
  validateOptions('webgpu backend', options, WEBGPU_OPTION_SPECS);
  const acquired = await acquireDevice(options);
  const backend = new WebGpuBackend(acquired, options);
  const conversions = options.float16Conversions ?? 'auto';
  if (conversions === 'auto') {
    const i = acquired.info;
    const key = i.description || i.device ? `${i.vendor}/${i.architecture}/${i.device}/${i.description}` : null;
    if ((await checkHardwareFloat16Once(backend.device, key)).ok) backend.useFloat16Conversions('hardware');
  } else backend.useFloat16Conversions(conversions);
  return backend;
}

/**
 * Registry entry: name `webgpu`, priority 300. The probe reports a software adapter (lavapipe,
 * SwiftShader: isFallbackAdapter or a CPU device) so that `auto` ranks it below wasm.
 */
export const webgpuBackendEntry: BackendEntry = {
  name: 'webgpu',
  priority: 300,
  probe: async () => {
    try {
      const info = adapterInfo(await requestAdapter());
      return { available: true, software: info.isFallbackAdapter, device: info.description || info.device };
    } catch (e) {
      return { available: false, reason: e instanceof BackendUnavailableError ? e.reason : (e as Error).message };
    }
  },
  options: WEBGPU_OPTION_SPECS,
  create: (options?: Record<string, unknown>) => createWebGpuBackend(options as WebGpuOptions),
};

registerBackend(webgpuBackendEntry);
