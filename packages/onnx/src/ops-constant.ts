/** ONNX Constant, ConstantOfShape and Split: uploads, fills and views. */
import { NotExpressible, normAxis, type OpMapping } from './table.js';

const FI = ['float32', 'int32'] as const;

/** Constant with its `value` tensor (the other value_* forms are not mapped). */
const constant: OpMapping = {
  dtypes: FI,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const t = ctx.attrs.tensor('value');
    if (!t) throw new NotExpressible('attribute', 'Constant without a value tensor');
    if ((t.dtype !== 'float32' && t.dtype !== 'int32') || !t.data)
      throw new NotExpressible('dtype', `dtype ${t.dtype}`);
    const data = t.data as Float32Array | Int32Array;
    return (be) => [be.fromArray(data, t.dims, t.dtype as 'float32' | 'int32')];
  },
};

/** ConstantOfShape: the shape from input 0 (host), filled with `value` (a one-element tensor, default float32 0). */
const constantOfShape: OpMapping = {
  host: [0],
  dtypes: FI,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.numbers(0);
    if (!shape) throw new NotExpressible('input', 'ConstantOfShape without a shape');
    const t = ctx.attrs.tensor('value');
    const dtype = t?.dtype ?? 'float32';
    if ((dtype !== 'float32' && dtype !== 'int32') || (t && t.data?.length !== 1))
      throw new NotExpressible('dtype', `dtype ${dtype}`);
    const value = t ? Number((t.data as Float32Array | Int32Array)[0]) : 0;
    return (be) => [be.full(shape, value, dtype)];
  },
};

/** Split along `axis` into the sizes of the `split` input (opset ≥ 13) or attribute, or equal parts: shrink views. */
const split: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axis = normAxis(ctx.attrs.int('axis', 0), shape.length, 'Split');
    const n = ctx.node.outputs.length;
    let sizes = ctx.opset >= 13 ? ctx.numbers(1) : ctx.attrs.ints('split');
    if (!sizes) {
      if (shape[axis]! % n !== 0) throw new NotExpressible('input', `Split of ${shape[axis]} into ${n} unequal parts`);
      sizes = Array<number>(n).fill(shape[axis]! / n);
    }
    if (sizes.length !== n || sizes.reduce((p, d) => p + d, 0) !== shape[axis])
      throw new NotExpressible('input', `Split sizes [${sizes.join(', ')}] for ${n} outputs of ${shape[axis]}`);
    const parts = sizes;
    return (be, [x]) => {
      let start = 0;
      return parts.map((len) => {
        const bounds = shape.map((d, i) => (i === axis ? [start, start + len] : [0, d]) as [number, number]);
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
