import { packageConfig } from '../rollup.base.mjs';

// Two entries: `@polyhal/hal` (src/index.ts) and `@polyhal/hal/internal` (src/internal.ts, the backend-author
// API); the modules both use go into one shared chunk, so the entries hand out the same bindings (one BaseBackend).
export default packageConfig(import.meta.url, { index: 'src/index.ts', internal: 'src/internal.ts' });
