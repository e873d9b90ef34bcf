/**
 * THE ONNX op table: ONNX op type (default domain) → its lowering onto the HAL. An op type absent
 * from it is "not expressible: missing op". Families live in ops-elementwise.ts, ops-reduce.ts,
 * ops-movement.ts, ops-linalg.ts, ops-norm.ts, ops-constant.ts, ops-pool.ts, ops-index.ts,
 * ops-misc.ts, ops-logic.ts, ops-scan.ts and ops-recurrent.ts.
 */
import { FUSED_DOMAIN, FUSED_OPS } from './fuse-elementwise.js';
import { CONSTANT_OPS } from './ops-constant.js';
import { ELEMENTWISE_OPS } from './ops-elementwise.js';
import { INDEX_OPS } from './ops-index.js';
import { LINALG_OPS, QUANT_OPS } from './ops-linalg.js';
import { LOGIC_OPS } from './ops-logic.js';
import { LOSS_OPS } from './ops-loss.js';
import { MISC_OPS } from './ops-misc.js';
import { MOVEMENT_OPS } from './ops-movement.js';
import { NORM_OPS } from './ops-norm.js';
import { POOL_OPS } from './ops-pool.js';
import { RECURRENT_OPS } from './ops-recurrent.js';
import { REDUCE_OPS_ONNX } from './ops-reduce.js';
import { SCAN_OPS } from './ops-scan.js';
import type { OpMapping } from './table.js';

/** Every ONNX operator mapped onto HAL ops, by op type: how each is lowered and compared (OpMapping). */
export const ONNX_OPS: Readonly<Record<string, OpMapping>> = Object.freeze({
  ...ELEMENTWISE_OPS,
  ...REDUCE_OPS_ONNX,
  ...MOVEMENT_OPS,
  ...LINALG_OPS,
  ...QUANT_OPS,
  ...NORM_OPS,
  ...CONSTANT_OPS,
  ...POOL_OPS,
  ...INDEX_OPS,
  ...LOSS_OPS,
  ...MISC_OPS,
  ...LOGIC_OPS,
  ...SCAN_OPS,
  ...RECURRENT_OPS,
});

/** The ONNX op types the table maps (sorted). */
export const onnxOpsMapped = (): string[] => Object.keys(ONNX_OPS).sort();

/**
 * The mapping of `op` in `domain`: ONNX's default domain ('' or 'ai.onnx'), or FUSED_DOMAIN for the nodes the
 * session makes itself (fuse-elementwise.ts); undefined for any other op or domain.
 */
export function mappingOf(domain: string, op: string): OpMapping | undefined {
  const table = domain === '' || domain === 'ai.onnx' ? ONNX_OPS : domain === FUSED_DOMAIN ? FUSED_OPS : undefined;
  return table && Object.hasOwn(table, op) ? table[op] : undefined;
}
