import { type BackendEntry, registerBackend } from '@polyhal/hal';
import { BASE_OPTION_SPECS, validateOptions } from '@polyhal/hal/internal';
import { CpuBackend, type CpuBackendOptions } from './cpu-backend.js';

export { CpuBackend, type CpuBackendOptions } from './cpu-backend.js';

/** Registry entry: name `cpu`, priority 100 (the fallback everywhere: it is always available). */
export const cpuBackendEntry: BackendEntry = {
  name: 'cpu',
  priority: 100,
  probe: async () => ({ available: true, device: 'host CPU' }),
  options: BASE_OPTION_SPECS,
  create: async (options?: Record<string, unknown>) => {
    validateOptions('cpu backend', options, BASE_OPTION_SPECS);
    return new CpuBackend(options as CpuBackendOptions);
  },
};

registerBackend(cpuBackendEntry);
