/**
 * Conformance cases of the elementwise ops (from the op table: each entry's domain, special values, int32),
 * on every shape class: scalars, size-1, broadcast pairs, empty, odd sizes and strided views.
 */
import {
  BINARY_OP_DEFS,
  BINARY_OPS,
  type BinaryOpDef,
  binaryTakes,
  INT32_UNARY_OPS,
  UNARY_OP_DEFS,
  UNARY_OPS,
} from '@polyhal/hal';
import type { Case, ViewSpec } from './cases.js';
import { fmt, I, SPECIAL, viewName } from './cases-util.js';
import type { Generator } from './random.js';

/** Domain of each elementwise op's ordinary inputs: the op table's (hal/src/ops/). */
const UNARY_DOMAIN: Record<string, Generator> = Object.fromEntries(
  UNARY_OPS.map((op) => [op, UNARY_OP_DEFS[op].domain]),
);
/** float32 domains of the binary ops that take float32 (binaryTakes). */
const BINARY_DOMAIN: Record<string, [Generator, Generator]> = Object.fromEntries(
  BINARY_OPS.filter((op) => binaryTakes(op).includes('float32')).map((op) => [
    op,
    [...(BINARY_OP_DEFS[op] as BinaryOpDef).domain] as [Generator, Generator],
  ]),
);
/** int32 domains of the binary ops that take int32. */
const INT_BINARY_DOMAIN: Record<string, [Generator, Generator]> = Object.fromEntries(
  BINARY_OPS.flatMap((op) => {
    const d = (BINARY_OP_DEFS[op] as BinaryOpDef).int32Domain;
    return d && binaryTakes(op).includes('int32') ? [[op, [...d] as [Generator, Generator]]] : [];
  }),
);
/** The binary ops that take bool operands (0/1). */
const BOOL_BINARY_OPS = BINARY_OPS.filter((op) => binaryTakes(op).includes('bool'));

const ELEMENTWISE_SHAPES: { shape: number[]; view?: ViewSpec }[] = [
  { shape: [] },
  { shape: [1] },
  { shape: [17] },
  { shape: [513] },
  { shape: [31, 33] },
  { shape: [2, 3, 5] },
  { shape: [0] },
  { shape: [3, 0] },
  { shape: [5, 7], view: { permute: [1, 0] } },
  { shape: [9, 8], view: { stride: [2, -1] } },
  {
    shape: [6, 10],
    view: {
      shrink: [
        [1, 5],
        [2, 9],
      ],
    },
  },
  { shape: [3, 1], view: { expand: [2, 3, 4] } },
];

const BROADCAST_PAIRS: [InputShape, InputShape][] = [
  [{ shape: [17] }, { shape: [17] }],
  [{ shape: [] }, { shape: [31] }],
  [{ shape: [31, 33] }, { shape: [33] }],
  [{ shape: [3, 1] }, { shape: [1, 4] }],
  [{ shape: [2, 1, 5] }, { shape: [3, 1] }],
  [{ shape: [1] }, { shape: [513] }],
  [{ shape: [0, 3] }, { shape: [3] }],
  [{ shape: [4, 6], view: { permute: [1, 0] } }, { shape: [6, 4] }],
  [{ shape: [8, 9], view: { stride: [-2, 3] } }, { shape: [3] }],
];
type InputShape = { shape: number[]; view?: ViewSpec };

/** float32 pairs (x, y) with |x/y| from 2^20 to 2^24, both signs, divisors of several magnitudes. */
function modLargeQuotients(): [number[], number[]] {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let k = 20; k <= 24; k++) {
    for (const y of [3, -3, 0.7, -1.3, 1e-3, -2.5e4, 6e-8]) {
      for (const t of [0.04, 0.5, 0.96, 0.3333]) {
        for (const sign of [1, -1]) {
          const y32 = Math.fround(y);
          xs.push(Math.fround(sign * (2 ** k + t) * y32));
          ys.push(y32);
        }
      }
    }
  }
  return [xs, ys];
}

export function elementwiseCases(): Case[] {
  const cases: Case[] = [];
  // ---- unary ----
  for (const [op, gen] of Object.entries(UNARY_DOMAIN)) {
    for (const { shape, view } of ELEMENTWISE_SHAPES) {
      cases.push({
        id: `${op}/float32/${fmt(shape)}${viewName(view)}`,
        kind: 'unary',
        op,
        dtype: 'float32',
        inputs: [{ shape, gen, view }],
      });
    }
    cases.push({
      id: `${op}/float32/special`,
      kind: 'unary',
      op,
      dtype: 'float32',
      inputs: [{ shape: [64], gen: SPECIAL }],
    });
  }
  const INT32_EDGES = [-2147483648, -2147483647, -65536, -7, -1, 0, 1, 7, 65536, 2147483646, 2147483647];
  for (const op of INT32_UNARY_OPS) {
    cases.push({
      id: `${op}/int32/[31,33]`,
      kind: 'unary',
      op,
      dtype: 'int32',
      inputs: [{ shape: [31, 33], gen: I(-2147483648, 2147483647), dtype: 'int32' }],
    });
    cases.push({
      id: `${op}/int32/edges`,
      kind: 'unary',
      op,
      dtype: 'int32',
      inputs: [{ shape: [INT32_EDGES.length], gen: SPECIAL, values: INT32_EDGES, dtype: 'int32' }],
    });
  }
  // Rounding at and next to halves, where a kernel built on floor(x + 0.5) or on JS Math.round goes
  // wrong (0.49999997 + 0.5 rounds up to 1; ties go up), around 2^23 (the last float32s with a
  // fraction) and past it (integers only).
  const halves = [0.5, 1.5, 2.5, 3.5, 0.49999997, 0.50000006, 1.4999999, 2.5000002, 4194304.5, 8388607.5, 8388607];
  halves.push(8388608, 8388609, 16777218, 1.1754944e-38, 0.99999994, 1.0000001);
  const halfValues = [...halves, ...halves.map((v) => -v)];
  for (const op of ['sign', 'floor', 'ceil', 'round', 'trunc']) {
    cases.push({
      id: `${op}/float32/halves`,
      kind: 'unary',
      op,
      dtype: 'float32',
      inputs: [{ shape: [halfValues.length], gen: SPECIAL, values: halfValues }],
    });
  }
  // ---- binary ----
  for (const [op, [ga, gb]] of Object.entries(BINARY_DOMAIN)) {
    for (const [a, b] of BROADCAST_PAIRS) {
      cases.push({
        id: `${op}/float32/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}${viewName(b.view)}`,
        kind: 'binary',
        op,
        dtype: 'float32',
        inputs: [
          { ...a, gen: ga },
          { ...b, gen: gb },
        ],
      });
    }
    cases.push({
      id: `${op}/float32/special`,
      kind: 'binary',
      op,
      dtype: 'float32',
      inputs: [
        { shape: [64, 1], gen: SPECIAL },
        { shape: [1, 22], gen: SPECIAL },
      ],
    });
  }
  // mod where |x/y| is 2^20..2^24 (a remainder computed as x − trunc(x/y)·y without a fused
  // multiply-add, or from an inexact quotient, is off by up to |y|) and signed zeros (a zero result
  // keeps x's sign; x mod ±Inf).
  const [mx, my] = modLargeQuotients();
  cases.push({
    id: 'mod/float32/quotient-2^20..2^24',
    kind: 'binary',
    op: 'mod',
    dtype: 'float32',
    inputs: [
      { shape: [mx.length], gen: SPECIAL, values: mx },
      { shape: [my.length], gen: SPECIAL, values: my },
    ],
  });
  const zx = [-0, 0, -6, 6, -0, 0, 6, -6, -3, 3, 0, -0, -0, 0, 1e-30, -1e-30];
  const zy = [3, 3, -3, -3, -3, -3, 3, 3, 3, -3, Infinity, Infinity, -Infinity, -Infinity, Infinity, -Infinity];
  cases.push({
    id: 'mod/float32/signed-zeros',
    kind: 'binary',
    op: 'mod',
    dtype: 'float32',
    inputs: [
      { shape: [zx.length], gen: SPECIAL, values: zx },
      { shape: [zy.length], gen: SPECIAL, values: zy },
    ],
  });
  // pow on integers: (±0..12)^(−12..12), exact wherever float32 holds the result (hal/src/ops/binary.ts),
  // and on negative bases with integer and non-integer exponents, large odd and even ones included.
  const ints = Array.from({ length: 25 }, (_, i) => i - 12);
  cases.push({
    id: 'pow/float32/integers',
    kind: 'binary',
    op: 'pow',
    dtype: 'float32',
    inputs: [
      { shape: [25, 1], gen: SPECIAL, values: ints },
      { shape: [1, 25], gen: SPECIAL, values: ints },
    ],
  });
  const negBases = [-0.5, -0.99999994, -1.0000001, -2, -3.5, -1e-20, -1e20];
  const exponents = [-3, -2, -1, 1, 2, 3, 0.5, -0.5, 1 / 3, 16777217, 16777216, -16777217, 2.5e9, 101];
  cases.push({
    id: 'pow/float32/negative-bases',
    kind: 'binary',
    op: 'pow',
    dtype: 'float32',
    inputs: [
      { shape: [negBases.length, 1], gen: SPECIAL, values: negBases.map(Math.fround) },
      { shape: [1, exponents.length], gen: SPECIAL, values: exponents.map(Math.fround) },
    ],
  });
  for (const [op, [ga, gb]] of Object.entries(INT_BINARY_DOMAIN)) {
    for (const [a, b] of [BROADCAST_PAIRS[2]!, BROADCAST_PAIRS[3]!, BROADCAST_PAIRS[7]!]) {
      cases.push({
        id: `${op}/int32/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}`,
        kind: 'binary',
        op,
        dtype: 'int32',
        inputs: [
          { ...a, gen: ga, dtype: 'int32' },
          { ...b, gen: gb, dtype: 'int32' },
        ],
      });
    }
  }
  // bool operands (0/1) of the logical ops, equal and notEqual: every pair of values, broadcast and viewed
  const B = I(0, 1);
  for (const op of BOOL_BINARY_OPS) {
    for (const [a, b] of [BROADCAST_PAIRS[1]!, BROADCAST_PAIRS[3]!, BROADCAST_PAIRS[7]!, BROADCAST_PAIRS[8]!]) {
      cases.push({
        id: `${op}/bool/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}`,
        kind: 'binary',
        op,
        dtype: 'bool',
        inputs: [
          { ...a, gen: B, dtype: 'bool' },
          { ...b, gen: B, dtype: 'bool' },
        ],
      });
    }
  }
  // fmod's signed zeros and infinite divisors (the result takes x's sign), int32 edges of the bitwise ops
  cases.push({
    id: 'fmod/float32/signed-zeros',
    kind: 'binary',
    op: 'fmod',
    dtype: 'float32',
    inputs: [
      { shape: [zx.length], gen: SPECIAL, values: zx },
      { shape: [zy.length], gen: SPECIAL, values: zy },
    ],
  });
  cases.push({
    id: 'fmod/float32/quotient-2^20..2^24',
    kind: 'binary',
    op: 'fmod',
    dtype: 'float32',
    inputs: [
      { shape: [mx.length], gen: SPECIAL, values: mx },
      { shape: [my.length], gen: SPECIAL, values: my },
    ],
  });
  const edges = [-2147483648, -2147483647, -65536, -7, -1, 0, 1, 7, 65536, 2147483646, 2147483647];
  for (const op of ['bitwiseAnd', 'bitwiseOr', 'bitwiseXor', 'fmod', 'equal', 'less', 'greaterEqual']) {
    cases.push({
      id: `${op}/int32/edges`,
      kind: 'binary',
      op,
      dtype: 'int32',
      inputs: [
        { shape: [edges.length, 1], gen: SPECIAL, values: edges, dtype: 'int32' },
        { shape: [1, edges.length], gen: SPECIAL, values: edges, dtype: 'int32' },
      ],
    });
  }
  return cases;
}
