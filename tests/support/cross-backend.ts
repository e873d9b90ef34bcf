// The fixture of the cross-backend bit-exactness tests (bool-kernels, int-ops): a cpu backend as the
// baseline and wasm (threads from 2^16 elements, so the threaded paths run), webgpu and reference to
// compare with it. A backend missing here is skipped unless CI requires it (requiredBackends).
import { afterAll, beforeAll } from '@jest/globals';
import { CpuBackend } from '@polyhal/backend-cpu';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import type { ComputeBackend } from '@polyhal/hal';
import { requiredBackends } from './backends.js';

const factories: Record<string, () => Promise<ComputeBackend>> = {
  wasm: () => createWasmBackend({ elementwiseThreadThreshold: 2 ** 16 }),
  webgpu: () => createWebGpuBackend(),
  reference: async () => new ReferenceBackend(),
};

/** Registers beforeAll/afterAll; `cpu` and `backends` are filled before the tests run. */
export function crossBackends(): { readonly cpu: CpuBackend; readonly backends: Record<string, ComputeBackend> } {
  const fixture = { cpu: undefined as unknown as CpuBackend, backends: {} as Record<string, ComputeBackend> };
  beforeAll(async () => {
    fixture.cpu = new CpuBackend();
    for (const [name, factory] of Object.entries(factories)) {
      try {
        fixture.backends[name] = await factory();
      } catch (e) {
        if (requiredBackends().includes(name) || (e as Error).name !== 'BackendUnavailableError') throw e;
      }
    }
  });
  afterAll(() => {
    fixture.cpu.dispose();
    for (const be of Object.values(fixture.backends)) be.dispose();
  });
  return fixture;
}
