/**
 * ONNX shape and movement ops on the HAL's views (reshape, permute, expand, shrink, stride), pad and
 * cast. Shapes, axes, starts/ends/steps, pads and repeats are int64 inputs read on the host.
 */
import { type DType, isDType, type NDArray } from '@polyhal/hal';
import { NotExpressible, NUMERIC_TYPES, normAxis, type NodeContext, type OpMapping } from './table.js';

const FI = ['float32', 'int32'] as const;
const EXACT = { kind: 'exact' } as const;
const prod = (xs: readonly number[]): number => xs.reduce((p, d) => p * d, 1);

function required(ctx: NodeContext, i: number, what: string): number[] {
  const v = ctx.numbers(i);
  if (v === undefined) throw new NotExpressible('input', `${ctx.node.opType}: no ${what} input`);
  return v;
}

/** Reshape: 0 copies the input's dimension (unless allowzero = 1), one −1 is inferred. */
const reshape: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const allowzero = ctx.attrs.int('allowzero', 0) !== 0;
    const inShape = ctx.inputShapes[0]!;
    const target = required(ctx, 1, 'shape').map((d, i) => (d === 0 && !allowzero ? inShape[i]! : d));
    return (be, [x]) => [be.reshape(x!, target)];
  },
};

const transpose: OpMapping = {
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const rank = ctx.inputShapes[0]!.length;
    const perm = ctx.attrs.ints('perm') ?? Array.from({ length: rank }, (_, i) => rank - 1 - i);
    return (be, [x]) => [be.permute(x!, perm)];
  },
};

/** Squeeze/Unsqueeze: axes from the input (opset ≥ 13) or the attribute (before). */
function axesOf(ctx: NodeContext): number[] | undefined {
  if (ctx.opset >= 13) return ctx.numbers(1);
  return ctx.attrs.ints('axes');
}

const squeeze: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const axes = axesOf(ctx)?.map((a) => normAxis(a, shape.length, 'Squeeze'));
    if (axes?.some((a) => shape[a] !== 1)) throw new NotExpressible('input', `Squeeze of an axis whose size is not 1`);
    const out = shape.filter((d, i) => (axes ? !axes.includes(i) : d !== 1));
    return (be, [x]) => [be.reshape(x!, out)];
  },
};

const unsqueeze: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const raw = axesOf(ctx);
    if (!raw) throw new NotExpressible('input', 'Unsqueeze without axes');
    const rank = shape.length + raw.length;
    const axes = raw.map((a) => normAxis(a, rank, 'Unsqueeze'));
    const out: number[] = [];
    let j = 0;
    for (let i = 0; i < rank; i++) out.push(axes.includes(i) ? 1 : shape[j++]!);
    return (be, [x]) => [be.reshape(x!, out)];
  },
};

/** Flatten: [∏ dims before axis, ∏ dims from axis] (axis in [−rank, rank], default 1). */
const flatten: OpMapping = {
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const a = ctx.attrs.int('axis', 1);
    const axis = a === shape.length ? a : normAxis(a, shape.length, 'Flatten');
    return (be, [x]) => [be.reshape(x!, [prod(shape.slice(0, axis)), prod(shape.slice(axis))])];
  },
};

/** Expand: broadcasts input and shape together (bidirectional: the result's rank and dims are the larger). */
const expand: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const target = required(ctx, 1, 'shape');
    const rank = Math.max(shape.length, target.length);
    const pad = (s: readonly number[]): number[] => [...Array<number>(rank - s.length).fill(1), ...s];
    const [a, b] = [pad(shape), pad(target)];
    const out = a.map((d, i) => {
      if (d !== b[i] && d !== 1 && b[i] !== 1)
        throw new NotExpressible('input', `Expand: [${shape.join(', ')}] and [${target.join(', ')}] do not broadcast`);
      return d === 1 ? b[i]! : d;
    });
    return (be, [x]) => [be.expand(x!, out)];
  },
};

/**
 * Slice (opset ≥ 10: starts, ends, axes, steps inputs; opset 1: attributes). Per axis, ONNX clamps
 * start to [0, d] and end to [0, d] for a positive step, start to [0, d−1] and end to [−1, d−1] for a
 * negative one; the elements start, start+step, ... before end are kept: a shrink then a stride view.
 */
const slice: OpMapping = {
  host: [1, 2, 3, 4],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const old = ctx.opset < 10;
    const starts = old ? ctx.attrs.ints('starts') : ctx.numbers(1);
    const ends = old ? ctx.attrs.ints('ends') : ctx.numbers(2);
    const axes = (old ? ctx.attrs.ints('axes') : ctx.numbers(3)) ?? starts?.map((_, i) => i);
    const steps = (old ? undefined : ctx.numbers(4)) ?? starts?.map(() => 1);
    if (
      !starts ||
      !ends ||
      !axes ||
      !steps ||
      ends.length !== starts.length ||
      axes.length !== starts.length ||
      steps.length !== starts.length
    ) {
      throw new NotExpressible('input', 'Slice: starts, ends, axes and steps of different lengths');
    }
    const bounds = shape.map((d) => [0, d] as [number, number]);
    const strides = shape.map(() => 1);
    axes.forEach((a, i) => {
      const ax = normAxis(a, shape.length, 'Slice');
      const d = shape[ax]!;
      const step = steps[i]!;
      if (step === 0) throw new NotExpressible('input', 'Slice: step 0');
      let s = starts[i]! < 0 ? starts[i]! + d : starts[i]!;
      let e = ends[i]! < 0 ? ends[i]! + d : ends[i]!;
      if (step > 0) {
        s = Math.min(Math.max(s, 0), d);
        e = Math.min(Math.max(e, 0), d);
        bounds[ax] = [s, Math.max(s, e)];
      } else {
        s = Math.min(Math.max(s, 0), d - 1);
        e = Math.min(Math.max(e, -1), d - 1);
        const n = Math.max(0, Math.ceil((e - s) / step));
        bounds[ax] = n === 0 ? [0, 0] : [s + (n - 1) * step, s + 1];
      }
      strides[ax] = step;
    });
    return (be, [x]) => [be.stride(be.shrink(x!, bounds), strides)];
  },
};

/**
 * Pad: pads from the input (opset ≥ 11; [begin_0, ..., begin_n, end_0, ..., end_n]) with
 * constant_value from input 2, or from the attributes pads/value (before); from opset 18 the pads may
 * cover only the axes of input 3 (the others are not padded). Modes constant, edge, reflect and wrap are
 * the HAL's pad modes of the same names. Negative pads crop.
 */
const pad: OpMapping = {
  host: [1, 2, 3],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const mode = ctx.attrs.string('mode', 'constant');
    if (mode !== 'constant' && mode !== 'edge' && mode !== 'reflect' && mode !== 'wrap')
      throw new NotExpressible('attribute', `Pad mode '${mode}'`);
    const shape = ctx.inputShapes[0]!;
    const r = shape.length;
    const given = ctx.opset >= 11 ? required(ctx, 1, 'pads') : ctx.attrs.ints('pads');
    const value = ctx.opset >= 11 ? (ctx.numbers(2)?.[0] ?? 0) : ctx.attrs.float('value', 0);
    const axesIn = ctx.opset >= 18 ? ctx.numbers(3) : undefined;
    if (ctx.opset < 18 && ctx.node.inputs.length > 3 && ctx.node.inputs[3] !== '')
      throw new NotExpressible('input', `Pad: an axes input before opset 18`);
    const axes = axesIn?.map((a) => normAxis(a, r, 'Pad')) ?? shape.map((_, i) => i);
    if (!given || given.length !== 2 * axes.length || new Set(axes).size !== axes.length)
      throw new NotExpressible('input', `Pad: ${given?.length ?? 0} pads for ${axes.length} axes of rank ${r}`);
    const pads = Array<number>(2 * r).fill(0);
    axes.forEach((a, i) => {
      pads[a] = given[i]!;
      pads[a + r] = given[i + axes.length]!;
    });
    const crop = shape.map((d, i) => [Math.max(0, -pads[i]!), d - Math.max(0, -pads[i + r]!)] as [number, number]);
    const grow = shape.map((_, i) => [Math.max(0, pads[i]!), Math.max(0, pads[i + r]!)] as [number, number]);
    return (be, [x]) => [be.pad(pads.some((p) => p < 0) ? be.shrink(x!, crop) : x!, grow, value, mode)];
  },
};

/** Concat of every input along `axis` (negative counts from the end). */
const concat: OpMapping = {
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const axis = normAxis(ctx.attrs.int('axis', 0), ctx.inputShapes[0]!.length, 'Concat');
    return (be, xs) => [be.concat(xs as NDArray[], axis)];
  },
};

/** Trilu: the lower (upper = 0) or upper triangle of the last two dims from diagonal k (input 1, default 0). */
const trilu: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const upper = ctx.attrs.int('upper', 1) !== 0;
    const k = ctx.numbers(1)?.[0] ?? 0;
    return (be, [x]) => [be.trilu(x!, k, upper)];
  },
};

/**
 * Tile, one axis at a time (so no view has more than rank + 1 dimensions): [pre, d, post] → reshape
 * [pre, 1, d, post] → expand [pre, r, d, post] → reshape [pre, r·d, post].
 */
const tile: OpMapping = {
  host: [1],
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const reps = required(ctx, 1, 'repeats');
    if (reps.length !== shape.length)
      throw new NotExpressible('input', `Tile: ${reps.length} repeats for rank ${shape.length}`);
    return (be, [x]) => {
      let y = x!;
      const cur = [...shape];
      reps.forEach((r, i) => {
        if (r === 1) return;
        const [pre, d, post] = [prod(cur.slice(0, i)), cur[i]!, prod(cur.slice(i + 1))];
        y = be.expand(be.reshape(y, [pre, 1, d, post]), [pre, r, d, post]);
        cur[i] = r * d;
        y = be.reshape(y, cur);
      });
      return [y];
    };
  },
};

/** DepthToSpace (DCR or CRD) and SpaceToDepth: reshape, permute, reshape, as in ONNX's definitions. */
const depthToSpace: OpMapping = {
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const bs = ctx.attrs.int('blocksize', 0);
    const mode = ctx.attrs.string('mode', 'DCR');
    const [b, c, h, w] = ctx.inputShapes[0]! as [number, number, number, number];
    if (ctx.inputShapes[0]!.length !== 4 || bs < 1 || c % (bs * bs) !== 0)
      throw new NotExpressible('input', 'DepthToSpace: not [N, C, H, W] with C divisible by blocksize²');
    const cc = c / (bs * bs);
    const [split, perm] =
      mode === 'DCR'
        ? [
            [b, bs, bs, cc, h, w],
            [0, 3, 4, 1, 5, 2],
          ]
        : mode === 'CRD'
          ? [
              [b, cc, bs, bs, h, w],
              [0, 1, 4, 2, 5, 3],
            ]
          : [undefined, undefined];
    if (!split || !perm) throw new NotExpressible('attribute', `DepthToSpace mode '${mode}'`);
    return (be, [x]) => [be.reshape(be.permute(be.reshape(x!, split), perm), [b, cc, h * bs, w * bs])];
  },
};

const spaceToDepth: OpMapping = {
  dtypes: FI,
  contract: EXACT,
  plan: (ctx) => {
    const bs = ctx.attrs.int('blocksize', 0);
    const [b, c, h, w] = ctx.inputShapes[0]! as [number, number, number, number];
    if (ctx.inputShapes[0]!.length !== 4 || bs < 1 || h % bs !== 0 || w % bs !== 0)
      throw new NotExpressible('input', 'SpaceToDepth: not [N, C, H, W] with H, W divisible by blocksize');
    return (be, [x]) => [
      be.reshape(be.permute(be.reshape(x!, [b, c, h / bs, bs, w / bs, bs]), [0, 3, 5, 1, 2, 4]), [
        b,
        c * bs * bs,
        h / bs,
        w / bs,
      ]),
    ];
  },
};

/**
 * ONNX data type codes the HAL has: 1 float, 2 uint8, 3 int8, 6 int32, 9 bool, 10 float16, 11 double, and 7
 * int64, held as int32 (as every int64 device value).
 */
const HAL_TYPE: Record<number, DType> = {
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  6: 'int32',
  7: 'int32',
  9: 'bool',
  10: 'float16',
  11: 'float64',
};

/**
 * Cast (`to`) and CastLike (the second input's dtype) between float32, float16, float64, int32, int8,
 * uint8 and bool, by the HAL's cast rules (base.ts): to float16 rounds to nearest even once, from float64
 * too (NumPy's astype), float to an integer truncates and saturates (out of range ONNX leaves undefined;
 * its tests stay in range). To int64 is to int32 (int64 device values are int32): a float beyond int32's
 * range saturates there where int64 would hold it.
 */
const cast = (like: boolean): OpMapping => ({
  dtypes: [...NUMERIC_TYPES, 'bool'],
  contract: EXACT,
  plan: (ctx) => {
    const to = like ? ctx.outputTypes[0] : HAL_TYPE[ctx.attrs.int('to', 0)];
    ctx.attrs.int('saturate', 1); // opset 19: float8 targets only, none of which the HAL has
    if (!isDType(to)) throw new NotExpressible('dtype', `${ctx.node.opType} to ${ctx.outputTypes[0]}`);
    return (be, [x]) => [x!.dtype === to ? x! : be.cast(x!, to)];
  },
});

/**
 * Dropout in inference (training_mode absent or false; before opset 12 always): the identity; ratio
 * and seed have no effect there. Training mode is random (not expressible) unless the ratio is 0.
 */
const dropout: OpMapping = {
  host: [1, 2],
  dtypes: [...FI, 'bool'],
  contract: EXACT,
  plan: (ctx) => {
    ctx.attrs.int('seed', 0);
    if (ctx.opset < 12) ctx.attrs.float('ratio', 0.5);
    if (ctx.attrs.int('is_test', 1) === 0)
      throw new NotExpressible('attribute', 'Dropout is_test=0 (training: random)');
    const training = ctx.numbers(2)?.[0];
    // training with ratio 0 drops nothing: the identity (and an all-true mask), as ONNX's reference
    const ratio = ctx.numbers(1)?.[0] ?? 0.5;
    if (training && ratio !== 0) throw new NotExpressible('input', 'Dropout training_mode=true (random)');
    // the optional mask output: all true in inference (ONNX's reference: np.ones(x.shape, dtype=bool))
    const withMask = ctx.node.outputs.length > 1 && ctx.node.outputs[1] !== '';
    return (be, [x]) => (withMask ? [x!, be.full(x!.shape, 1, 'bool')] : [x!]);
  },
};

export const MOVEMENT_OPS: Record<string, OpMapping> = {
  Reshape: reshape,
  Transpose: transpose,
  Squeeze: squeeze,
  Unsqueeze: unsqueeze,
  Flatten: flatten,
  Expand: expand,
  Slice: slice,
  Pad: pad,
  Concat: concat,
  Trilu: trilu,
  Tile: tile,
  DepthToSpace: depthToSpace,
  SpaceToDepth: spaceToDepth,
  Cast: cast(false),
  CastLike: cast(true),
  Dropout: dropout,
};
