// The suites of `npm run bench` by name (benches/suites/run.mjs --suite): each takes a PolyHAL backend, TensorFlow.js
// with the counterpart backend set, and { software }, and returns its rows. Order is `--suite all`'s order.
import { CONVOLUTION_SUITES } from './convolution.mjs';
import { CORE_SUITES } from './core.mjs';
import { LOSS_SUITES } from './losses.mjs';
import { TFJS_PORT_SUITES } from './tfjs-ports.mjs';
import { VIT_SUITES } from './vit.mjs';
import { VOCABULARY_SUITES } from './vocabulary.mjs';

export const SUITES = {
  ...VOCABULARY_SUITES,
  ...LOSS_SUITES,
  ...CONVOLUTION_SUITES,
  ...CORE_SUITES,
  // Last in `all`: the heaviest suites.
  ...VIT_SUITES,
  ...TFJS_PORT_SUITES,
};
