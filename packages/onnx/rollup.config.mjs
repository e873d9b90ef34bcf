import { packageConfig } from '../../rollup.base.mjs';

export default packageConfig(import.meta.url);
