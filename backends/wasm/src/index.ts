import { type BackendEntry, BackendUnavailableError, registerBackend } from '@polyhal/hal';
import { nodeBuiltin, validateOptions } from '@polyhal/hal/internal';
import {
  createSharedMemory,
  hasRelaxedSimd,
  hasWasmSimd,
  instantiateKernels,
  kernelModule,
  relaxedMaddIsFused,
} from './module.js';
import { canBlock, ThreadPool } from './threads.js';
import { WASM_OPTION_SPECS, type WasmBackendOptions } from './options.js';
import { WasmBackend } from './wasm-backend.js';

export { WASM_OPTION_SPECS, type WasmBackendOptions } from './options.js';
export { WasmBackend } from './wasm-backend.js';
export { hasRelaxedSimd, hasWasmSimd, relaxedMaddIsFused } from './module.js';
export { WasmKernelError } from './threads.js';

function cores(): number {
  const g = globalThis as { navigator?: { hardwareConcurrency?: number } };
  return g.navigator?.hardwareConcurrency ?? 1;
}

async function nodeCores(): Promise<number> {
  const os = await nodeBuiltin<{ availableParallelism?: () => number; cpus(): unknown[] }>('os');
  if (!os) return cores();
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/**
 * Creates a WASM backend; throws BackendUnavailableError when the runtime lacks WebAssembly SIMD.
 * With threads > 1 (default 'auto': the cores, at most 8) it starts workers on one shared memory;
 * where that is impossible (no SharedArrayBuffer, a browser page that is not cross-origin isolated,
 * or a thread that may not block) it runs on one thread and its deviceName says why.
 * With relaxedSimd 'auto' (default) it uses the relaxed-SIMD build where the runtime has it (matmul
 * then uses f32x4.relaxed_madd: a fused multiply-add, faster and rounded once, where the engine fuses
 * it — V8 does; JavaScriptCore multiplies then adds; deviceName says which); `relaxedSimd: false`
 * keeps the plain SIMD build; `relaxedSimd: true` throws BackendUnavailableError where it is missing.
 * An unknown or ill-typed option (WASM_OPTION_SPECS) throws InvalidArgumentError naming it.
 */
export async function createWasmBackend(options: WasmBackendOptions = {}): Promise<WasmBackend> {
  validateOptions('wasm backend', options, WASM_OPTION_SPECS);
  if (!hasWasmSimd()) throw new BackendUnavailableError('wasm', 'this runtime has no WebAssembly SIMD (simd128)');
  const relaxedAvailable = hasRelaxedSimd();
  if (options.relaxedSimd === true && !relaxedAvailable) {
    throw new BackendUnavailableError(
      'wasm',
      'relaxedSimd: true was asked for, but this runtime has no WebAssembly relaxed SIMD',
    );
  }
  const relaxed = options.relaxedSimd !== false && relaxedAvailable;
  const wanted =
    options.threads === undefined || options.threads === 'auto' ? Math.min(8, await nodeCores()) : options.threads;
  let note = '';
  if (wanted > 1) {
    if (typeof SharedArrayBuffer === 'undefined')
      note = 'threads unavailable: no SharedArrayBuffer (cross-origin isolation needed)';
    else if (!canBlock())
      note = 'threads unavailable: this thread may not block (browser main thread); run in a Worker';
    else {
      try {
        const { memory, maxBytes } = createSharedMemory();
        const kernels = await instantiateKernels(memory, relaxed, maxBytes);
        const pool = await ThreadPool.create(await kernelModule(true, relaxed), memory, wanted);
        return new WasmBackend(kernels, options, pool, '', relaxed, relaxed && relaxedMaddIsFused());
      } catch (e) {
        note = `threads unavailable: ${(e as Error).message}`;
      }
    }
  }
  return new WasmBackend(
    await instantiateKernels(undefined, relaxed),
    options,
    null,
    note,
    relaxed,
    relaxed && relaxedMaddIsFused(),
  );
}

/** Registry entry: name `wasm`, priority 200 (above cpu, below a hardware GPU). */
export const wasmBackendEntry: BackendEntry = {
  name: 'wasm',
  priority: 200,
  probe: async () =>
    hasWasmSimd()
      ? { available: true, device: hasRelaxedSimd() ? 'WebAssembly SIMD128 + relaxed SIMD' : 'WebAssembly SIMD128' }
      : { available: false, reason: 'no WebAssembly SIMD (simd128) in this runtime' },
  options: WASM_OPTION_SPECS,
  create: (options?: Record<string, unknown>) => createWasmBackend(options as WasmBackendOptions),
};

registerBackend(wasmBackendEntry);
