import { type BackendEntry, registerBackend } from '@polyhal/hal';
import { CpuBackend, type CpuBackendOptions } from './cpu-backend.js';

export { CpuBackend, type CpuBackendOptions } from './cpu-backend.js';

/** Registry entry: name `cpu`, priority 100 (the fallback everywhere: it is always available). */
export const cpuBackendEntry: BackendEntry = {
  name: 'cpu',
  priority: 100,
  probe: async () => ({ available: true, device: 'host CPU' }),
  create: async (options?: Record<string, unknown>) => new CpuBackend(options as CpuBackendOptions),
};

registerBackend(cpuBackendEntry);
