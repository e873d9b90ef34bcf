/** ONNX Constant, ConstantOfShape and Split: uploads, fills and views. */
import type { DType } from '@polyhal/hal';
import type { OnnxTensor } from './proto.js';
import { NotExpressible, NUMERIC_TYPES, normAxis, type OpMapping } from './table.js';

/** Every dtype the HAL holds, with int64 (held as int32). */
const ALL = [...NUMERIC_TYPES, 'bool'] as const;
const DEVICE: Record<string, DType> = {
  float32: 'float32',
  float16: 'float16',
  float64: 'float64',
  int32: 'int32',
  int8: 'int8',
  uint8: 'uint8',
  bool: 'bool',
  int64: 'int32',
};

/**
 * int64 values as the int32 the HAL holds them in; NotExpressible('dtype') naming `what` and the value for one
 * outside [−2^31, 2^31), never a wrapped number.
 */
export function int64AsInt32(data: BigInt64Array, what: string): Int32Array {
  for (const v of data)
    if (v < -(2n ** 31n) || v >= 2n ** 31n)
      throw new NotExpressible('dtype', `${what}: int64 value ${v} is beyond int32 (the HAL holds int64 as int32)`);
  return Int32Array.from(data, Number);
}

/** A decoded tensor's values and the HAL dtype that holds them; NotExpressible for the others. */
export function deviceValues(t: OnnxTensor, what: string): { data: ArrayLike<number>; dtype: DType } {
  const dtype = DEVICE[t.dtype];
  if (!dtype || !t.data) throw new NotExpressible('dtype', `${what}: dtype ${t.dtype}`);
  const data = t.data instanceof BigInt64Array ? int64AsInt32(t.data, what) : t.data;
  return { data, dtype };
}

/**
 * Constant: its `value` tensor, or value_float / value_floats (float32) / value_int / value_ints (int64, held
 * as int32) from opset 12; value_string(s) and sparse_value are not expressible.
 */
const constant: OpMapping = {
  dtypes: ALL,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const a = ctx.attrs;
    const name = `Constant '${ctx.node.outputs[0] ?? ''}'`;
    for (const other of ['value_string', 'value_strings', 'sparse_value'])
      if (a.has(other)) throw new NotExpressible('dtype', `${name}: ${other}`);
    let v: { data: ArrayLike<number>; dtype: DType; dims: readonly number[] };
    const t = a.tensor('value');
    const floats = a.has('value_float') ? [a.float('value_float', 0)] : a.floats('value_floats');
    const ints = a.has('value_int') ? [a.int('value_int', 0)] : a.ints('value_ints');
    const scalar = a.has('value_float') || a.has('value_int');
    if (t) v = { ...deviceValues(t, name), dims: t.dims };
    else if (floats) v = { data: floats, dtype: 'float32', dims: scalar ? [] : [floats.length] };
    else if (ints) {
      const data = int64AsInt32(
        BigInt64Array.from(ints, (n) => BigInt(n)),
        name,
      );
      v = { data, dtype: 'int32', dims: scalar ? [] : [ints.length] };
    } else throw new NotExpressible('attribute', `${name} without a value`);
    const { data, dtype, dims } = v;
    return (be) => [be.fromArray(data, dims, dtype)];
  },
};

/** ConstantOfShape: the shape from input 0 (host), filled with `value` (a one-element tensor, default float32 0). */
const constantOfShape: OpMapping = {
  host: [0],
  dtypes: ALL,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.numbers(0);
    if (!shape) throw new NotExpressible('input', 'ConstantOfShape without a shape');
    const t = ctx.attrs.tensor('value');
    if (t && t.dims.reduce((p, d) => p * d, 1) !== 1)
      throw new NotExpressible('attribute', `ConstantOfShape value of shape [${t.dims.join(', ')}], not one element`);
    const { data, dtype } = t ? deviceValues(t, 'ConstantOfShape value') : { data: [0], dtype: 'float32' as const };
    const value = data[0]!;
    return (be) => [be.full(shape, value, dtype)];
  },
};

/**
 * Split along `axis` into the sizes of the `split` input (opset ≥ 13) or attribute, or equal parts: from
 * opset 18 `num_outputs` parts of ⌈d / n⌉, the last one smaller where d does not divide. Shrink views.
 */
const split: OpMapping = {
  host: [1],
  dtypes: ALL,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axis = normAxis(ctx.attrs.int('axis', 0), shape.length, 'Split');
    const n = ctx.node.outputs.length;
    const d = shape[axis]!;
    let sizes = ctx.opset >= 13 ? ctx.numbers(1) : ctx.attrs.ints('split');
    if (ctx.opset >= 18 && ctx.attrs.has('num_outputs')) {
      const parts = ctx.attrs.int('num_outputs', n);
      if (sizes || parts !== n)
        throw new NotExpressible(
          'input',
          `Split: num_outputs ${parts} with ${sizes ? 'a split input' : `${n} outputs`}`,
        );
      const chunk = Math.ceil(d / parts);
      sizes = Array.from({ length: parts }, (_, i) => Math.max(0, Math.min(chunk, d - i * chunk)));
    }
    if (!sizes) {
      if (d % n !== 0) throw new NotExpressible('input', `Split of ${d} into ${n} unequal parts`);
      sizes = Array<number>(n).fill(d / n);
    }
    if (sizes.length !== n || sizes.reduce((p, s) => p + s, 0) !== d)
      throw new NotExpressible('input', `Split sizes [${sizes.join(', ')}] for ${n} outputs of ${d}`);
    const parts = sizes;
    return (be, [x]) => {
      let start = 0;
      return parts.map((len) => {
        const bounds = shape.map((s, i) => (i === axis ? [start, start + len] : [0, s]) as [number, number]);
        start += len;
        return be.shrink(x!, bounds);
      });
    };
  },
};

export const CONSTANT_OPS: Record<string, OpMapping> = {
  Constant: constant,
  ConstantOfShape: constantOfShape,
  Split: split,
};
