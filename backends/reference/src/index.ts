import { type BackendEntry, registerBackend } from '@polyhal/hal';
import { BASE_OPTION_SPECS, validateOptions } from '@polyhal/hal/internal';
import { ReferenceBackend, type ReferenceBackendOptions } from './reference-backend.js';

export { REFERENCE_DEFAULT_MEMORY_LIMIT, ReferenceBackend, type ReferenceBackendOptions } from './reference-backend.js';

/**
 * Registry entry: name `reference`, priority 10 — below cpu (100), so `auto` never picks it over a
 * real backend; ask for it by name (`createBackend({ backend: 'reference' })`, POLYHAL_BACKEND).
 * Options: BASE_OPTION_SPECS (`memoryLimit`), checked before the backend is made.
 */
export const referenceBackendEntry: BackendEntry = {
  name: 'reference',
  priority: 10,
  probe: async () => ({ available: true, device: 'host CPU (float64 reference kernels)' }),
  options: BASE_OPTION_SPECS,
  create: async (options?: Record<string, unknown>) => {
    validateOptions('reference backend', options, BASE_OPTION_SPECS);
    return new ReferenceBackend(options as ReferenceBackendOptions);
  },
};

registerBackend(referenceBackendEntry);

/**
 * A backend factory, as `runConformance` takes; also the module's default export, which is what
 * `polyhal-conformance --backend ./node_modules/@polyhal/backend-reference/dist/index.js` calls.
 * InvalidArgumentError for an unknown option or an ill-typed value.
 */
export function createReferenceBackend(options: ReferenceBackendOptions = {}): ReferenceBackend {
  validateOptions('reference backend', options, BASE_OPTION_SPECS);
  return new ReferenceBackend(options);
}

export default createReferenceBackend;
