import { packageConfig } from '../../rollup.base.mjs';

// main: the command; vit: the Vision Transformer as a module of its own, for the benchmark harness (benches/).
const [js] = packageConfig(import.meta.url, { main: 'src/main.ts', vit: 'src/vit.ts' });
export default {
  ...js,
  output: js.output
    .filter((o) => o.format === 'es')
    .map((o) => ({ ...o, banner: (chunk) => (chunk.name === 'main' ? '#!/usr/bin/env node' : '') })),
};
