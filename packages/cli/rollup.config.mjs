import { packageConfig } from '../../rollup.base.mjs';

// main: the command (its models come from @polyhal/models).
const [js] = packageConfig(import.meta.url, { main: 'src/main.ts' });
export default {
  ...js,
  output: js.output
    .filter((o) => o.format === 'es')
    .map((o) => ({ ...o, banner: (chunk) => (chunk.name === 'main' ? '#!/usr/bin/env node' : '') })),
};
