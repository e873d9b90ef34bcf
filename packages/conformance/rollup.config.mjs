import { packageConfig } from '../../rollup.base.mjs';

const [js, dts] = packageConfig(import.meta.url, { index: 'src/index.ts', cli: 'src/cli.ts', bin: 'src/bin.ts' });
const banner = (chunk) => (chunk.name === 'bin' ? '#!/usr/bin/env node' : '');
export default [{ ...js, output: js.output.map((o) => ({ ...o, banner })) }, dts];
