/**
 * The per-family installers of @polyhal/hal 0.1, kept as aliases for one release. BaseBackend no longer calls
 * them: its methods come from one table of op families, FAMILIES (base.ts, exported by @polyhal/hal/internal),
 * whose entries (LAYOUT_METHODS, CONV_METHODS, ...) the compiler checks against the families' interfaces. Each
 * installer defines its family's table on `proto`, as before (writable, configurable, not enumerable,
 * replacing what is there).
 */
import { ARG_REDUCE_METHODS } from './indexing/argreduce.js';
import { CONV_METHODS } from './conv/conv-methods.js';
import { INDEXING_METHODS } from './indexing/indexing.js';
import { INDEXING_ND_METHODS } from './indexing/indexing-nd.js';
import { LAYOUT_METHODS } from './layout/layout.js';
import { LOGIC_METHODS } from './logic/logic.js';
import { LOSS_METHODS } from './loss/losses.js';
import { NORM_METHODS } from './norm/norm.js';
import { QUANT_METHODS } from './quant/quantize.js';
import { RANDOM_METHODS } from './random/sampling.js';
import { SCAN_METHODS } from './scan/scan.js';

function install(proto: object, table: object): void {
  for (const [name, value] of Object.entries(table))
    Object.defineProperty(proto, name, { value, writable: true, configurable: true });
}

/** @deprecated BaseBackend has the layout methods from FAMILIES; defines LAYOUT_METHODS on `proto`. */
export function installLayoutOps(proto: object): void {
  install(proto, LAYOUT_METHODS);
}
/** @deprecated BaseBackend has the index methods from FAMILIES; defines INDEXING_METHODS on `proto`. */
export function installIndexingOps(proto: object): void {
  install(proto, INDEXING_METHODS);
}
/** @deprecated BaseBackend has gatherND, scatterND, scatterElements from FAMILIES; defines INDEXING_ND_METHODS. */
export function installIndexingNDOps(proto: object): void {
  install(proto, INDEXING_ND_METHODS);
}
/** @deprecated BaseBackend has argmax and argmin from FAMILIES; defines ARG_REDUCE_METHODS on `proto`. */
export function installArgReduceOps(proto: object): void {
  install(proto, ARG_REDUCE_METHODS);
}
/** @deprecated BaseBackend has the losses from FAMILIES; defines LOSS_METHODS on `proto`. */
export function installLossOps(proto: object): void {
  install(proto, LOSS_METHODS);
}
/** @deprecated BaseBackend has layerNorm and layerNormBackward from FAMILIES; defines NORM_METHODS on `proto`. */
export function installNormOps(proto: object): void {
  install(proto, NORM_METHODS);
}
/** @deprecated BaseBackend has conv, convTranspose, the pools and resize from FAMILIES; defines CONV_METHODS. */
export function installConvOps(proto: object): void {
  install(proto, CONV_METHODS);
}
/** @deprecated BaseBackend has the bool methods from FAMILIES; defines LOGIC_METHODS on `proto`. */
export function installLogicOps(proto: object): void {
  install(proto, LOGIC_METHODS);
}
/** @deprecated BaseBackend has the quantization methods from FAMILIES; defines QUANT_METHODS on `proto`. */
export function installQuantOps(proto: object): void {
  install(proto, QUANT_METHODS);
}
/** @deprecated BaseBackend has cumsum and topk from FAMILIES; defines SCAN_METHODS on `proto`. */
export function installScanOps(proto: object): void {
  install(proto, SCAN_METHODS);
}
/** @deprecated BaseBackend has the random methods from FAMILIES; defines RANDOM_METHODS on `proto`. */
export function installRandomOps(proto: object): void {
  install(proto, RANDOM_METHODS);
}
