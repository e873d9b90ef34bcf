import { packageConfig } from '../../rollup.base.mjs';

const [js] = packageConfig(import.meta.url, { main: 'src/main.ts' });
export default {
  ...js,
  output: js.output.filter((o) => o.format === 'es').map((o) => ({ ...o, banner: '#!/usr/bin/env node' })),
};
