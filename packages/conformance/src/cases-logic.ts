/**
 * Conformance of the bool methods (hal/src/families/logic/logic.ts, entries in hal/src/ops/logic-ops.ts): where, any,
 * all, isnan, isinf, isfinite, logicalNot, bitwiseNot — their float64 oracles (plain loops over
 * contiguous arrays, written from the entries' semantics, sharing nothing with the HAL's composition),
 * their runners and their cases; and bool through cast and the movement, layout and index ops.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { I, SPECIAL, U } from './cases-util.js';
import type { OpRunner } from './op-runners.js';
import { numel, oBroadcastShape, oExpand, type Ref, unravel } from './oracle.js';
import { oHostValue, oIsFloat, oStoreInt } from './oracle-dtype.js';

type Params = NonNullable<Case['params']>;

/** where: cond ? x : y over the broadcast of the three (values unchanged: NaN, −0 and Inf included). */
export function oWhere(c: Ref, x: Ref, y: Ref): Ref {
  const shape = oBroadcastShape(oBroadcastShape(c.shape, x.shape), y.shape);
  const [C, X, Y] = [c, x, y].map((r) => oExpand(r, shape)) as [Ref, Ref, Ref];
  const data = C.data.map((v, i) => (v !== 0 ? X.data[i]! : Y.data[i]!));
  return { shape, data, dtype: x.dtype };
}

/** any / all of a bool array over `axes` (every axis when absent): false / true over none. */
export function oAnyAll(x: Ref, op: 'any' | 'all', axes: number[] | undefined, keepdims: boolean): Ref {
  const r = x.shape.length;
  const ax = (axes ?? x.shape.map((_, i) => i)).map((a) => (a < 0 ? a + r : a));
  const kept = x.shape.map((d, i) => (ax.includes(i) ? 1 : d));
  const data = new Float64Array(numel(kept)).fill(op === 'any' ? 0 : 1);
  for (let i = 0; i < x.data.length; i++) {
    const idx = unravel(i, x.shape);
    let o = 0;
    for (let d = 0; d < r; d++) o = o * kept[d]! + (ax.includes(d) ? 0 : idx[d]!);
    if (op === 'any' && x.data[i] !== 0) data[o] = 1;
    if (op === 'all' && x.data[i] === 0) data[o] = 0;
  }
  return { shape: keepdims ? kept : x.shape.filter((_, i) => !ax.includes(i)), data, dtype: 'bool' };
}

const map = (x: Ref, f: (v: number) => number, dtype: Ref['dtype'] = 'bool'): Ref => ({
  shape: [...x.shape],
  data: x.data.map(f),
  dtype,
});
const isFloat = (x: Ref): boolean => oIsFloat(x.dtype);

export const LOGIC_OP_RUNNERS = {
  where: {
    device: (be: ComputeBackend, [c, x, y]: NDArray[], p: Params) => [be.where(c!, x!, y ?? p.value!)],
    oracle: ([c, x, y]: Ref[], p: Params) => [
      oWhere(c!, x!, y ?? { shape: [], data: Float64Array.of(oHostValue(x!.dtype, p.value!)), dtype: x!.dtype }),
    ],
  },
  any: {
    device: (be: ComputeBackend, [x]: NDArray[], p: Params) => [be.any(x!, p.axes, p.keepdims)],
    oracle: ([x]: Ref[], p: Params) => [oAnyAll(x!, 'any', p.axes, p.keepdims ?? false)],
  },
  all: {
    device: (be: ComputeBackend, [x]: NDArray[], p: Params) => [be.all(x!, p.axes, p.keepdims)],
    oracle: ([x]: Ref[], p: Params) => [oAnyAll(x!, 'all', p.axes, p.keepdims ?? false)],
  },
  isnan: {
    device: (be: ComputeBackend, [x]: NDArray[]) => [be.isnan(x!)],
    oracle: ([x]: Ref[]) => [map(x!, (v) => (isFloat(x!) && Number.isNaN(v) ? 1 : 0))],
  },
  isinf: {
    device: (be: ComputeBackend, [x]: NDArray[]) => [be.isinf(x!)],
    oracle: ([x]: Ref[]) => [map(x!, (v) => (isFloat(x!) && Math.abs(v) === Infinity ? 1 : 0))],
  },
  isfinite: {
    device: (be: ComputeBackend, [x]: NDArray[]) => [be.isfinite(x!)],
    oracle: ([x]: Ref[]) => [map(x!, (v) => (Number.isFinite(v) ? 1 : 0))],
  },
  logicalNot: {
    device: (be: ComputeBackend, [x]: NDArray[]) => [be.logicalNot(x!)],
    oracle: ([x]: Ref[]) => [map(x!, (v) => (v === 0 ? 1 : 0))],
  },
  bitwiseNot: {
    device: (be: ComputeBackend, [x]: NDArray[]) => [be.bitwiseNot(x!)],
    oracle: ([x]: Ref[]) => [map(x!, (v) => oStoreInt(x!.dtype, ~v), x!.dtype)],
  },
} satisfies Record<string, OpRunner>;

const B = I(0, 1);
const INT_EDGES = [-2147483648, -2147483647, -65536, -7, -1, 0, 1, 7, 65536, 2147483646, 2147483647];

export function logicCases(): Case[] {
  const cases: Case[] = [];
  const add = (op: string, dtype: Case['dtype'], tag: string, inputs: InputSpec[], params?: Params): void => {
    cases.push({ id: `${op}/${dtype}/${tag}`, kind: 'composite', op, dtype, inputs, params });
  };
  // ---- where: every dtype, broadcasting of all three operands, views, special values, a number operand
  const cond = (shape: number[], view?: InputSpec['view']): InputSpec => ({ shape, gen: B, dtype: 'bool', view });
  add('where', 'float32', '[17]', [cond([17]), { shape: [17], gen: U(-5, 5) }, { shape: [17], gen: U(-5, 5) }]);
  add('where', 'float32', '[2,1,5]x[3,1]x[5]', [
    cond([2, 1, 5]),
    { shape: [3, 1], gen: U(-5, 5) },
    { shape: [5], gen: U(-5, 5) },
  ]);
  add('where', 'float32', 'special', [
    cond([64, 1]),
    { shape: [64, 22], gen: SPECIAL },
    { shape: [1, 22], gen: SPECIAL },
  ]);
  add('where', 'float32', '[1031].stride', [
    cond([2062], { stride: [2] }),
    { shape: [1031], gen: SPECIAL },
    { shape: [2062], gen: U(-1, 1), view: { stride: [-2] } },
  ]);
  add('where', 'float32', 'number-y-NaN', [cond([9, 8]), { shape: [9, 8], gen: U(-5, 5) }], { value: Number.NaN });
  add('where', 'float32', '[0,3]', [cond([0, 3]), { shape: [3], gen: U(-5, 5) }, { shape: [1], gen: U(-5, 5) }]);
  add('where', 'int32', '[31,33].permute', [
    cond([33, 31], { permute: [1, 0] }),
    { shape: [31, 33], gen: I(-2147483648, 2147483647), dtype: 'int32' },
    { shape: [33], gen: I(-100, 100), dtype: 'int32' },
  ]);
  add('where', 'bool', '[6,7]', [cond([6, 7]), cond([6, 7]), cond([7])]);
  // ---- any / all: axes, keepdims, empty axes, views
  for (const op of ['any', 'all'] as const) {
    // sparse or dense trues so that both answers occur
    const gen = op === 'any' ? { kind: 'int', lo: -12, hi: 1 } : { kind: 'int', lo: 0, hi: 12 };
    const bools = (shape: number[], view?: InputSpec['view']): InputSpec => ({
      shape,
      gen: gen as InputSpec['gen'],
      dtype: 'bool',
      view,
    });
    add(op, 'bool', '[5,7]/all-axes', [bools([5, 7])]);
    add(op, 'bool', '[5,7]/axis1', [bools([5, 7])], { axes: [1] });
    add(op, 'bool', '[4,6,5]/axes0,2/keepdims', [bools([4, 6, 5])], { axes: [0, 2], keepdims: true });
    add(op, 'bool', '[6,9].permute/axis-1', [bools([9, 6], { permute: [1, 0] })], { axes: [-1] });
    add(op, 'bool', '[3,0]/axis1', [bools([3, 0])], { axes: [1] });
    add(op, 'bool', '[0,3]/axis1', [bools([0, 3])], { axes: [1] });
    add(op, 'bool', '[2053]', [bools([2053])], { axes: [0] });
    add(op, 'bool', '[6,1031]/axis1', [bools([6, 1031])], { axes: [1] });
    add(op, 'bool', '[]', [bools([])]);
  }
  // ---- predicates and negations
  for (const op of ['isnan', 'isinf', 'isfinite']) {
    add(op, 'float32', 'special', [{ shape: [64], gen: SPECIAL }]);
    add(op, 'float32', '[9,8].stride', [{ shape: [9, 8], gen: SPECIAL, view: { stride: [2, -1] } }]);
    add(op, 'int32', '[17]', [{ shape: [17], gen: I(-100, 100), dtype: 'int32' }]);
    add(op, 'bool', '[5]', [{ shape: [5], gen: B, dtype: 'bool' }]);
  }
  add('logicalNot', 'bool', '[17]', [{ shape: [17], gen: B, dtype: 'bool' }]);
  add('logicalNot', 'bool', '[5,7].permute', [{ shape: [5, 7], gen: B, dtype: 'bool', view: { permute: [1, 0] } }]);
  add('bitwiseNot', 'int32', 'edges', [{ shape: [INT_EDGES.length], gen: SPECIAL, values: INT_EDGES, dtype: 'int32' }]);
  add('bitwiseNot', 'int32', '[3,1].expand', [
    { shape: [3, 1], gen: I(-1e9, 1e9), dtype: 'int32', view: { expand: [2, 3, 4] } },
  ]);
  return cases;
}

/** bool through cast and the ops that move data: the same 0/1 must come out as went in. */
export function boolMovementCases(): Case[] {
  const cases: Case[] = [];
  const bool = (shape: number[], view?: InputSpec['view']): InputSpec => ({ shape, gen: B, dtype: 'bool', view });
  const mv = (op: string, tag: string, inputs: InputSpec[], params: Params, dtype: Case['dtype'] = 'bool'): void => {
    cases.push({ id: `${op}/${dtype}/${tag}`, kind: 'movement', op, dtype, inputs, params });
  };
  mv('cast', 'float32->bool/special', [{ shape: [64], gen: SPECIAL }], { dtype: 'bool' }, 'float32');
  mv('cast', 'int32->bool', [{ shape: [31], gen: I(-3, 3), dtype: 'int32' }], { dtype: 'bool' }, 'int32');
  mv('cast', 'bool->float32', [bool([7, 5], { permute: [1, 0] })], { dtype: 'float32' });
  mv('cast', 'bool->int32', [bool([33])], { dtype: 'int32' });
  mv('contiguous', '[9,8].stride', [bool([9, 8], { stride: [-2, 3] })], {});
  mv('pad', '[3,4]/value1', [bool([3, 4])], {
    pads: [
      [1, 0],
      [0, 2],
    ],
    value: 1,
  });
  mv('pad', '[3,4]/reflect', [bool([3, 4])], {
    pads: [
      [1, 1],
      [2, 1],
    ],
    mode: 'reflect',
  });
  mv('concat', '[2,3]+[4,3]', [bool([2, 3]), bool([4, 3])], { axis: 0 });
  mv('tile', '[2,3]', [bool([2, 3])], { reps: [2, 3] });
  mv('flip', '[4,5]', [bool([4, 5])], { axes: [1] });
  mv('gather', '[4,6]/axis1', [bool([4, 6]), { shape: [7], gen: I(-8, 7), dtype: 'int32' }], { axis: 1 });
  return cases;
}
