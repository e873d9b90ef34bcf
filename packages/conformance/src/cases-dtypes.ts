/**
 * Conformance cases of the narrow dtypes int8, uint8 and float16 (hal/src/core/dtype.ts, contract/narrow.ts): every
 * elementwise op and reduction on them that its storage dtype takes (dtypeTaken) — int8 and uint8 over
 * their whole range, so that results wrap; float16 on the op's domain and the special values —, casts
 * between every pair of dtypes on edge values (NaN, ±Inf, −0, 65504, 65520, subnormals, 127/128/−129/
 * 255/256 ...), and the narrow dtypes through the movement, layout, index and bool ops. The oracle is
 * the float64 one, whose results the comparison stores in the case's dtype (oracle-dtype.ts).
 */
import {
  BINARY_OP_DEFS,
  BINARY_OPS,
  type BinaryOpDef,
  binaryTakes,
  type DType,
  DTYPES,
  dtypeTaken,
  isNarrow,
  REDUCE_OP_DEFS,
  REDUCE_OPS,
  reduceTakes,
  UNARY_OP_DEFS,
  UNARY_OPS,
  unaryTakes,
} from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { I, SPECIAL, U } from './cases-util.js';
import type { Generator } from './random.js';

/** The dtypes of this file's cases: the narrow ones and float64. */
const NARROW = ['int8', 'uint8', 'float16', 'float64'] as const;
type Narrow = (typeof NARROW)[number];
const isFloat = (dtype: Narrow): dtype is 'float16' | 'float64' => dtype === 'float16' || dtype === 'float64';

/** The whole range of each narrow integer dtype. */
const FULL: Record<'int8' | 'uint8', Generator> = { int8: I(-128, 127), uint8: I(0, 255) };
const EDGES: Record<'int8' | 'uint8', number[]> = {
  int8: [-128, -127, -100, -2, -1, 0, 1, 2, 7, 64, 100, 127],
  uint8: [0, 1, 2, 7, 64, 100, 127, 128, 200, 254, 255, 3],
};

/** float32 values at the edges of every cast (rounded to float16 when the source is float16). */
const FLOAT_EDGES = [
  Number.NaN,
  Infinity,
  -Infinity,
  0,
  -0,
  0.4,
  -0.6,
  -0.99,
  1.5,
  127.5,
  128,
  -128.5,
  -129,
  255.9,
  256,
  -1,
  2049,
  2051,
  4097,
  65504,
  65519,
  65520,
  -65520,
  2 ** -24,
  2 ** -25,
  1.5 * 2 ** -24,
  2 ** -14,
  1e-8,
  1e-40,
  3e38,
  0.1,
  1 / 3,
  -3e9,
  3e9,
].map(Math.fround);
const INT32_EDGES = [-2147483648, 2147483647, -129, -128, 127, 128, 255, 256, -1, 0, 1, 2049, 65504, 65520, 300, -300];
const CAST_EDGES: Record<DType, number[]> = {
  float32: FLOAT_EDGES,
  float16: FLOAT_EDGES,
  float64: [...FLOAT_EDGES, 0.1, 1 / 3, 1e300, -1e-300, 65519.99999999999, 2 ** -25 + 2 ** -60, 2 ** 31 - 0.5],
  int32: INT32_EDGES,
  int8: EDGES.int8,
  uint8: EDGES.uint8,
  bool: [0, 1, 1, 0, 1],
};

export function dtypeCases(): Case[] {
  const cases: Case[] = [];
  const push = (c: Case): void => {
    cases.push(c);
  };
  const genFor = (dtype: Narrow, floatGen: Generator): Generator => (isFloat(dtype) ? floatGen : FULL[dtype]);

  // ---- unary ----
  for (const op of UNARY_OPS) {
    for (const dtype of NARROW) {
      if (!dtypeTaken(unaryTakes(op), dtype)) continue;
      const gen = genFor(dtype, UNARY_OP_DEFS[op].domain);
      push({ id: `${op}/${dtype}/[31,33]`, kind: 'unary', op, dtype, inputs: [{ shape: [31, 33], gen, dtype }] });
      push({
        id: `${op}/${dtype}/[9,8].stride`,
        kind: 'unary',
        op,
        dtype,
        inputs: [{ shape: [9, 8], gen, dtype, view: { stride: [2, -1] } }],
      });
      const special: InputSpec = isFloat(dtype)
        ? { shape: [64], gen: SPECIAL, dtype }
        : { shape: [EDGES[dtype].length], gen: SPECIAL, values: EDGES[dtype], dtype };
      push({
        id: `${op}/${dtype}/${isFloat(dtype) ? 'special' : 'edges'}`,
        kind: 'unary',
        op,
        dtype,
        inputs: [special],
      });
    }
  }
  // ---- binary (the comparisons return bool) ----
  for (const op of BINARY_OPS) {
    const def = BINARY_OP_DEFS[op] as BinaryOpDef;
    for (const dtype of NARROW) {
      if (!dtypeTaken(binaryTakes(op), dtype)) continue;
      const [ga, gb] = isFloat(dtype) ? def.domain : [FULL[dtype], FULL[dtype]];
      push({
        id: `${op}/${dtype}/[31,33]x[33]`,
        kind: 'binary',
        op,
        dtype,
        inputs: [
          { shape: [31, 33], gen: ga, dtype },
          { shape: [33], gen: gb, dtype },
        ],
      });
      push({
        id: `${op}/${dtype}/[4,6].permute x[6,4]`,
        kind: 'binary',
        op,
        dtype,
        inputs: [
          { shape: [4, 6], gen: ga, dtype, view: { permute: [1, 0] } },
          { shape: [6, 4], gen: gb, dtype },
        ],
      });
      const edges: [InputSpec, InputSpec] = isFloat(dtype)
        ? [
            { shape: [64, 1], gen: SPECIAL, dtype },
            { shape: [1, 22], gen: SPECIAL, dtype },
          ]
        : [
            { shape: [12, 1], gen: SPECIAL, values: EDGES[dtype], dtype },
            { shape: [1, 12], gen: SPECIAL, values: EDGES[dtype], dtype },
          ];
      push({
        id: `${op}/${dtype}/${isFloat(dtype) ? 'special' : 'edges'}`,
        kind: 'binary',
        op,
        dtype,
        inputs: edges,
      });
    }
  }
  // ---- reductions: accumulated in the storage dtype, stored once; over nothing the identity ----
  for (const op of REDUCE_OPS) {
    for (const dtype of NARROW) {
      if (!dtypeTaken(reduceTakes(op), dtype)) continue;
      const gen = genFor(dtype, op === 'prod' ? U(-1.5, 1.5) : REDUCE_OP_DEFS[op].domain);
      push({
        id: `${op}/${dtype}/[31,33]/axes=0`,
        kind: 'reduce',
        op,
        dtype,
        inputs: [{ shape: [31, 33], gen, dtype }],
        params: { axes: [0] },
      });
      push({
        id: `${op}/${dtype}/[5,7].permute/axes=1/keepdims`,
        kind: 'reduce',
        op,
        dtype,
        inputs: [{ shape: [7, 5], gen, dtype, view: { permute: [1, 0] } }],
        params: { axes: [1], keepdims: true },
      });
      push({
        id: `${op}/${dtype}/[4,0,3]/axes=1`,
        kind: 'reduce',
        op,
        dtype,
        inputs: [{ shape: [4, 0, 3], gen, dtype }],
        params: { axes: [1] },
      });
    }
  }
  // ---- mean on float64 (float32 and float64 only) ----
  push({
    id: 'mean/float64/[31,33]/axes=1',
    kind: 'composite',
    op: 'mean',
    dtype: 'float64',
    inputs: [{ shape: [31, 33], gen: U(-10, 10), dtype: 'float64' }],
    params: { axes: [1] },
  });
  // ---- casts between every pair of dtypes, on edge values, and random float32 → float16 ----
  for (const from of DTYPES) {
    for (const to of DTYPES) {
      const covered = (d: DType): boolean => isNarrow(d) || d === 'float64';
      if (from === to || (!covered(from) && !covered(to))) continue;
      const values = CAST_EDGES[from];
      push({
        id: `cast/${from}/to-${to}/edges`,
        kind: 'movement',
        op: 'cast',
        dtype: from,
        inputs: [{ shape: [values.length], gen: SPECIAL, values, dtype: from }],
        params: { dtype: to },
      });
    }
  }
  push({
    id: 'cast/float32/to-float16/[31,33].permute',
    kind: 'movement',
    op: 'cast',
    dtype: 'float32',
    inputs: [{ shape: [33, 31], gen: U(-70000, 70000), view: { permute: [1, 0] } }],
    params: { dtype: 'float16' },
  });
  push({
    id: 'cast/float32/to-float16/small',
    kind: 'movement',
    op: 'cast',
    dtype: 'float32',
    inputs: [{ shape: [513], gen: U(-1e-4, 1e-4) }],
    params: { dtype: 'float16' },
  });
  push({
    id: 'cast/float32/to-float16/special',
    kind: 'movement',
    op: 'cast',
    dtype: 'float32',
    inputs: [{ shape: [64], gen: SPECIAL }],
    params: { dtype: 'float16' },
  });
  // ---- movement, layout, index and bool ops carry the narrow dtypes unchanged ----
  for (const dtype of NARROW) {
    const gen = genFor(dtype, U(-100, 100));
    const val = (shape: number[], view?: InputSpec['view']): InputSpec => ({ shape, gen, dtype, view });
    const mv = (
      op: string,
      tag: string,
      inputs: InputSpec[],
      params: Case['params'],
      kind: Case['kind'] = 'movement',
    ) => push({ id: `${op}/${dtype}/${tag}`, kind, op, dtype, inputs, params });
    mv('contiguous', '[9,8].stride', [val([9, 8], { stride: [-2, 3] })], {});
    mv('pad', '[3,4]/value', [val([3, 4])], {
      pads: [
        [1, 2],
        [0, 3],
      ],
      value: isFloat(dtype) ? 0.1 : 7,
    });
    mv('pad', '[3,4]/wrapped-value', [val([3, 4])], {
      pads: [
        [0, 1],
        [1, 0],
      ],
      value: isFloat(dtype) ? 7e4 : 265,
    });
    mv('pad', '[3,4]/reflect', [val([3, 4])], {
      pads: [
        [1, 1],
        [2, 1],
      ],
      mode: 'reflect',
    });
    mv('concat', '[2,3]+[4,3]', [val([2, 3]), val([4, 3])], { axis: 0 });
    mv('tile', '[2,3]', [val([2, 3])], { reps: [2, 3] });
    mv('flip', '[4,5]', [val([4, 5])], { axes: [1] });
    const idx = (shape: number[], n: number): InputSpec => ({ shape, gen: I(-n - 3, n + 2), dtype: 'int32' });
    mv('gather', '[4,6]/axis1/out-of-range', [val([4, 6]), idx([17], 6)], { axis: 1 });
    mv('gather', '[6,4].permute/axis0', [val([4, 6], { permute: [1, 0] }), idx([9], 6)], { axis: 0 });
    mv('scatterAdd', '[5,3]', [val([5, 3]), idx([8], 5), val([8, 3])], { axis: 0 });
    for (const reduction of ['none', 'add', 'mul'] as const)
      mv('scatter', `[5,3]/${reduction}`, [val([5, 3]), idx([8], 5), val([8, 3])], { axis: 0, index: { reduction } });
    mv('scatterElements', '[5,4]/axis0/add', [val([5, 4]), idx([7, 4], 5), val([7, 4])], {
      axis: 0,
      index: { reduction: 'add' },
    });
    mv('gatherND', '[4,5]/idx[6,2]', [val([4, 5]), idx([6, 2], 4)], {});
    mv('scatterND', '[4,5]/idx[3,1]/none', [val([4, 5]), idx([3, 1], 4), val([3, 5])], {
      index: { reduction: 'none' },
    });
    const cond = (shape: number[]): InputSpec => ({ shape, gen: I(0, 1), dtype: 'bool' });
    mv('where', '[2,1,5]x[3,1]x[5]', [cond([2, 1, 5]), val([3, 1]), val([5])], {}, 'composite');
    mv('where', 'number-y', [cond([9, 8]), val([9, 8])], { value: isFloat(dtype) ? 0.1 : -3 }, 'composite');
    if (isFloat(dtype)) {
      for (const op of ['isnan', 'isinf', 'isfinite'])
        mv(op, 'special', [{ shape: [64], gen: SPECIAL, dtype }], {}, 'composite');
    } else {
      mv('bitwiseNot', 'edges', [{ shape: [12], gen: SPECIAL, values: EDGES[dtype], dtype }], {}, 'composite');
      mv('isfinite', '[7]', [val([7])], {}, 'composite');
    }
  }
  return cases;
}
