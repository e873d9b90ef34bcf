import { type BackendEntry, BackendUnavailableError, registerBackend } from '@polyhal/hal';
import { hasWasmSimd, instantiateKernels } from './module.js';
import { WasmBackend, type WasmBackendOptions } from './wasm-backend.js';

export { WasmBackend, type WasmBackendOptions } from './wasm-backend.js';
export { hasWasmSimd } from './module.js';

/** Creates a WASM backend; throws BackendUnavailableError when the runtime lacks WebAssembly SIMD. */
export async function createWasmBackend(options: WasmBackendOptions = {}): Promise<WasmBackend> {
  if (!hasWasmSimd()) throw new BackendUnavailableError('wasm', 'this runtime has no WebAssembly SIMD (simd128)');
  return new WasmBackend(await instantiateKernels(), options);
}

/** Registry entry: name `wasm`, priority 200 (above cpu, below a hardware GPU). */
export const wasmBackendEntry: BackendEntry = {
  name: 'wasm',
  priority: 200,
  probe: async () => (hasWasmSimd() ? { available: true, device: 'WebAssembly SIMD128' } : { available: false, reason: 'no WebAssembly SIMD (simd128) in this runtime' }),
  create: (options?: Record<string, unknown>) => createWasmBackend(options as WasmBackendOptions),
};

registerBackend(wasmBackendEntry);
