import { BackendUnavailableError, type BackendEntry, registerBackend } from '@polyhal/hal';
import { validateOptions } from '@polyhal/hal/internal';
import { type AcquiredDevice, acquireDevice, adapterInfo, requestAdapter, type WebGpuOptions } from './device.js';
import { checkHardwareFloat16Once } from './half-check.js';
import { checkNativeFloat16Once } from './half-native-check.js';
import { subgroupMatrixBuiltins } from './subgroup-matrix-check.js';
import { WEBGPU_OPTION_SPECS } from './options.js';
import { WebGpuBackend } from './webgpu-backend.js';

export { WebGpuBackend, GpuError } from './webgpu-backend.js';
export { findGpu, hasVulkanLoader, type WebGpuOptions } from './device.js';
export { WEBGPU_OPTION_SPECS } from './options.js';
export type { KernelTime } from './replay-timing.js';
export { checkHardwareFloat16, type HalfCheck } from './half-check.js';
export { checkNativeFloat16 } from './half-native-check.js';
export type { HalfArithmetic } from './dispatch-half.js';
export { f16Wgsl, type HalfConversions } from './kernels/half.js';
export type { GpuDeviceLike, GpuLike, GpuPowerPreference } from './gpu-types.js';
export { chooseSplitK, chooseTile, LONG_K, TILES, type Tile, type TileName } from './kernels/matmul.js';
export { gemvSplitK, PACK_OPERANDS_FROM } from './dispatch-matmul.js';
export { NO_YIELD_WARN_OPS, NO_YIELD_WARNING_CODE } from './loop-watch.js';

/** The adapter's description as a key of per-adapter checks (null for an injected device: checked every time). */
function adapterKey(acquired: AcquiredDevice): string | null {
  const i = acquired.info;
  return i.description || i.device ? `${i.vendor}/${i.architecture}/${i.device}/${i.description}` : null;
}

/**
 * Creates a WebGPU backend on the best adapter (or on an injected `device`/`gpu`). Throws
 * BackendUnavailableError with the reason when there is no WebGPU or no adapter, and
 * InvalidArgumentError for an unknown or ill-typed option (WEBGPU_OPTION_SPECS).
 */
export async function createWebGpuBackend(options: WebGpuOptions = {}): Promise<WebGpuBackend> {
  validateOptions('webgpu backend', options, WEBGPU_OPTION_SPECS);
  const acquired = await acquireDevice(options);
  acquired.builtins = await subgroupMatrixBuiltins(acquired.device, options);
  const backend = new WebGpuBackend(acquired, options);
  const conversions = options.float16Conversions ?? 'auto';
  if (conversions === 'auto') {
    if ((await checkHardwareFloat16Once(backend.device, adapterKey(acquired))).ok)
      backend.useFloat16Conversions('hardware');
  } else backend.useFloat16Conversions(conversions);
  const arithmetic = options.float16Arithmetic ?? 'auto';
  if (arithmetic === 'auto') {
    if (
      backend.device.features.has('shader-f16') &&
      (await checkNativeFloat16Once(backend.device, adapterKey(acquired))).ok
    )
      backend.useFloat16Arithmetic('native');
  } else backend.useFloat16Arithmetic(arithmetic);
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
