import { type BackendEntry, registerBackend } from '@polyhal/hal';
import { acquireDevice, adapterInfo, requestAdapter, type WebGpuOptions } from './device.js';
import { WebGpuBackend } from './webgpu-backend.js';

export { WebGpuBackend, GpuError } from './webgpu-backend.js';
export { findGpu, type WebGpuOptions } from './device.js';
export { chooseSplitK, chooseTile, TILES, type Tile, type TileName } from './kernels/matmul.js';

/**
 * Creates a WebGPU backend on the best adapter (or on an injected `device`/`gpu`). Throws
 * BackendUnavailableError with the reason when there is no WebGPU or no adapter.
 */
export async function createWebGpuBackend(options: WebGpuOptions = {}): Promise<WebGpuBackend> {
  return new WebGpuBackend(await acquireDevice(options), options);
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
      return { available: false, reason: (e as Error).message };
    }
  },
  create: (options?: Record<string, unknown>) => createWebGpuBackend(options as WebGpuOptions),
};

registerBackend(webgpuBackendEntry);
