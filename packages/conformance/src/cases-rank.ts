/**
 * Conformance cases at ranks 7 and 8: views whose dimensions do not merge (alternating broadcasts, reversed
 * or paired permutations, a tile-like expand), elementwise, reductions, movement and batched matmul.
 */
import { REDUCE_OP_DEFS, REDUCE_OPS } from '@polyhal/hal';
import type { Case } from './cases.js';
import { I, U } from './cases-util.js';

export function rankCases(): Case[] {
  const cases: Case[] = [];
  // ---- ranks 7 and 8: views whose dimensions do not merge (alternating broadcasts, reversed or
  // paired permutations, a tile-like expand), elementwise, reductions, movement and batched matmul ----
  const r8 = [2, 3, 2, 3, 2, 3, 2, 3];
  cases.push({
    id: 'add/float32/rank7-broadcast',
    kind: 'binary',
    op: 'add',
    dtype: 'float32',
    inputs: [
      { shape: [2, 1, 3, 1, 2, 1, 3], gen: U(-10, 10) },
      { shape: [1, 2, 1, 3, 1, 2, 1], gen: U(-10, 10) },
    ],
  });
  cases.push({
    id: 'mul/float32/rank8.permute',
    kind: 'binary',
    op: 'mul',
    dtype: 'float32',
    inputs: [
      { shape: r8, gen: U(-10, 10), view: { permute: [7, 6, 5, 4, 3, 2, 1, 0] } },
      { shape: [3, 1, 3, 1, 3, 1, 3, 1], gen: U(-10, 10) },
    ],
  });
  cases.push({
    id: 'maximum/int32/rank8-broadcast',
    kind: 'binary',
    op: 'maximum',
    dtype: 'int32',
    inputs: [
      { shape: [2, 1, 2, 1, 2, 1, 2, 1], gen: I(-50, 50), dtype: 'int32' },
      { shape: [1, 3, 1, 3, 1, 3, 1, 3], gen: I(-50, 50), dtype: 'int32' },
    ],
  });
  cases.push({
    id: 'neg/float32/rank8.permute',
    kind: 'unary',
    op: 'neg',
    dtype: 'float32',
    inputs: [{ shape: r8, gen: U(-10, 10), view: { permute: [1, 0, 3, 2, 5, 4, 7, 6] } }],
  });
  for (const op of REDUCE_OPS) {
    cases.push({
      id: `${op}/float32/rank8.permute/axes=1,3,5,6`,
      kind: 'reduce',
      op,
      dtype: 'float32',
      inputs: [{ shape: r8, gen: REDUCE_OP_DEFS[op].domain, view: { permute: [7, 6, 5, 4, 3, 2, 1, 0] } }],
      params: { axes: [1, 3, 5, 6] },
    });
    cases.push({
      id: `${op}/float32/rank7.stride/axes=0,2,4,6`,
      kind: 'reduce',
      op,
      dtype: 'float32',
      inputs: [
        { shape: [3, 4, 3, 4, 3, 4, 3], gen: REDUCE_OP_DEFS[op].domain, view: { stride: [1, 2, 1, -2, 1, 2, -1] } },
      ],
      params: { axes: [0, 2, 4, 6] },
    });
  }
  cases.push({
    id: 'expand/float32/rank8-tile',
    kind: 'movement',
    op: 'expand',
    dtype: 'float32',
    inputs: [{ shape: [2, 1, 3, 1, 2, 1, 3, 1], gen: U(-10, 10) }],
    params: { shape: [2, 2, 3, 2, 2, 3, 3, 2] },
  });
  cases.push({
    id: 'contiguous/int32/rank8.permute',
    kind: 'movement',
    op: 'contiguous',
    dtype: 'int32',
    inputs: [{ shape: r8, gen: I(-1000, 1000), dtype: 'int32', view: { permute: [0, 2, 4, 6, 1, 3, 5, 7] } }],
    params: {},
  });
  cases.push({
    id: 'pad/float32/rank7',
    kind: 'movement',
    op: 'pad',
    dtype: 'float32',
    inputs: [{ shape: [2, 1, 2, 1, 2, 1, 2], gen: U(-10, 10) }],
    params: {
      pads: [
        [0, 1],
        [1, 0],
        [0, 1],
        [1, 0],
        [0, 1],
        [1, 0],
        [0, 1],
      ],
      value: -1,
    },
  });
  cases.push({
    id: 'matmul/float32/rank9-batch7',
    kind: 'matmul',
    op: 'matmul',
    dtype: 'float32',
    inputs: [
      { shape: [2, 1, 2, 1, 2, 1, 2, 3, 4], gen: U(-1, 1) },
      { shape: [1, 2, 1, 2, 1, 2, 1, 4, 5], gen: U(-1, 1) },
    ],
  });
  return cases;
}
