/**
 * ONNX ops composed from HAL ops, or computed on the host from shapes and scalar inputs: the
 * activations Celu, ThresholdedRelu and Shrink, Hardmax (argmax + oneHot), MeanVarianceNormalization
 * (ONNX's own formula), and Shape, Size, Range, EyeLike and the Hann, Hamming and Blackman windows
 * (outputs that depend only on shapes, attributes and host scalars). Each follows the ONNX operator
 * specification (onnx/docs/Operators.md) and its reference implementation, special values included.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { NotExpressible, type NodeContext, normAxis, type OpMapping } from './table.js';

const FI = ['float32', 'int32'] as const;
const size = (shape: readonly number[]): number => shape.reduce((p, d) => p * d, 1);

/**
 * np.where(cond, a, b) for a 0/1 float32 `cond` and float32 `a`, `b` (broadcast to cond's shape):
 * gathers element i of [a, b] flattened at i + n·(1 − cond_i), so a NaN or ±Inf in the branch not
 * taken never reaches the result (a product by the mask would turn −Inf·0 into NaN).
 */
function where(be: ComputeBackend, cond: NDArray, a: NDArray | number, b: NDArray | number): NDArray {
  const shape = cond.shape;
  const n = size(shape);
  const flat = (v: NDArray | number): NDArray =>
    typeof v === 'number' ? be.full([n], v) : be.reshape(be.contiguous(be.expand(v, shape)), [n]);
  const both = be.concat([flat(a), flat(b)], 0);
  const positions = be.fromArray(
    Int32Array.from({ length: n }, (_, i) => i + n),
    [n],
    'int32',
  );
  const pick = be.reshape(be.contiguous(be.cast(cond, 'int32')), [n]);
  const index = be.sub(positions, be.mul(pick, n));
  return be.reshape(be.gather(both, index, 0), shape);
}

/** Celu: np.maximum(0, x) + np.minimum(0, alpha·(np.exp(x/alpha) − 1)), ONNX's reference formula. */
const celu: OpMapping = {
  plan: (ctx) => {
    const alpha = ctx.attrs.float('alpha', 1);
    return (be, [x]) => [be.add(be.maximum(x!, 0), be.minimum(be.mul(be.sub(be.exp(be.div(x!, alpha)), 1), alpha), 0))];
  },
};

/** ThresholdedRelu: x where x > alpha, else 0 (a NaN gives 0, as np.where(x > alpha, x, 0)). */
const thresholdedRelu: OpMapping = {
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const alpha = ctx.attrs.float('alpha', 1);
    return (be, [x]) => [where(be, be.cmplt(alpha, x!), x!, 0)];
  },
};

/** Shrink: x + bias where x < −lambd, x − bias where x > lambd, else 0 (NaN gives 0, as the reference). */
const shrink: OpMapping = {
  plan: (ctx) => {
    const bias = ctx.attrs.float('bias', 0);
    const lambd = ctx.attrs.float('lambd', 0.5);
    return (be, [x]) => {
      const upper = where(be, be.cmplt(lambd, x!), be.sub(x!, bias), 0);
      return [where(be, be.cmplt(x!, -lambd), be.add(x!, bias), upper)];
    };
  },
};

/**
 * Hardmax: 1 at the first largest element along `axis` (a NaN counts as the largest, as np.argmax), 0
 * elsewhere. Opset ≥ 13: along axis (default −1); before: over the input coerced to 2-D at axis
 * (default 1), [prod(dims[:axis]), prod(dims[axis:])].
 */
const hardmax: OpMapping = {
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const rank = shape.length;
    if (ctx.opset < 13) {
      const axis = ctx.attrs.int('axis', 1);
      const a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a > rank) throw new NotExpressible('attribute', `Hardmax: axis ${axis} for rank ${rank}`);
      const rows = size(shape.slice(0, a));
      const cols = size(shape.slice(a));
      return (be, [x]) => {
        if (rows * cols === 0) return [be.full(shape, 0)];
        const idx = be.argmax(be.reshape(be.contiguous(x!), [rows, cols]), 1);
        return [be.reshape(be.oneHot(idx, cols), shape)];
      };
    }
    const axis = normAxis(ctx.attrs.int('axis', -1), rank, 'Hardmax');
    // oneHot puts the new axis last: move it back to `axis`
    const perm = [...Array(rank).keys()].map((i) => (i < axis ? i : i === axis ? rank - 1 : i - 1));
    return (be, [x]) => {
      if (size(shape) === 0) return [be.full(shape, 0)];
      return [be.contiguous(be.permute(be.oneHot(be.argmax(x!, axis), shape[axis]!), perm))];
    };
  },
};

/**
 * MeanVarianceNormalization (axes default [0, 2, 3]) with ONNX's formula: (x − mean)/(√(E[x²] − mean²) + 1e-9),
 * means over axes, kept.
 */
const meanVarianceNormalization: OpMapping = {
  plan: (ctx) => {
    const rank = ctx.inputShapes[0]!.length;
    const axes = (ctx.attrs.ints('axes') ?? [0, 2, 3]).map((a) => normAxis(a, rank, 'MeanVarianceNormalization'));
    return (be, [x]) => {
      const mean = be.mean(x!, axes, true);
      const sqMean = be.mean(be.mul(x!, x!), axes, true);
      const std = be.sqrt(be.sub(sqMean, be.mul(mean, mean)));
      return [be.div(be.sub(x!, mean), be.add(std, 1e-9))];
    };
  },
};

/** Shape (int64 as int32): the input's dims from `start` to `end` (opset 15; negative counts from the end, clamped). */
const shapeOp: OpMapping = {
  host: [0],
  dtypes: ['int32'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const dims = ctx.inputShapes[0]!;
    const r = dims.length;
    const clamp = (v: number): number => Math.min(Math.max(v < 0 ? v + r : v, 0), r);
    const start = clamp(ctx.attrs.int('start', 0));
    const end = clamp(ctx.attrs.int('end', r));
    const out = dims.slice(start, Math.max(start, end));
    return (be) => [be.fromArray(out, [out.length], 'int32')];
  },
};

/** Size (int64 as int32): the input's element count, a scalar. */
const sizeOp: OpMapping = {
  host: [0],
  dtypes: ['int32'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const n = size(ctx.inputShapes[0]!);
    if (n >= 2 ** 31) throw new NotExpressible('dtype', 'int64 values beyond int32');
    return (be) => [be.fromArray([n], [], 'int32')];
  },
};

/**
 * Range: max(⌈(limit − start)/delta⌉, 0) elements start + i·delta, computed in the inputs' type (the
 * specification's formula; float32: the product and the sum each rounded). int64 runs as int32 when
 * every value fits.
 */
const range: OpMapping = {
  host: [0, 1, 2],
  dtypes: FI,
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const type = ctx.outputTypes[0]!;
    if (type !== 'float32' && type !== 'int32') throw new NotExpressible('dtype', `Range of ${type}`);
    const [start, limit, delta] = [0, 1, 2].map((i) => {
      const v = ctx.numbers(i);
      if (v?.length !== 1) throw new NotExpressible('input', 'Range: start, limit and delta must be scalars');
      return v[0]!;
    }) as [number, number, number];
    if (delta === 0) throw new NotExpressible('input', 'Range with delta 0');
    const f = type === 'float32' ? Math.fround : (v: number) => v;
    const n = Math.max(Math.ceil(f(f(limit - start) / delta)), 0);
    const out = Array.from({ length: n }, (_, i) => f(start + f(i * delta)));
    if (type === 'int32' && out.some((v) => v < -(2 ** 31) || v >= 2 ** 31))
      throw new NotExpressible('dtype', 'int64 values beyond int32');
    return (be) => [be.fromArray(out, [n], type)];
  },
};

/** ONNX TensorProto data types EyeLike makes here: 1 float, 6 int32, 7 int64 (run as int32), 11 double. */
const ONNX_DTYPES: Record<number, 'float32' | 'int32' | 'float64'> = {
  1: 'float32',
  6: 'int32',
  7: 'int32',
  11: 'float64',
};

/** EyeLike: a 2-D array of the input's shape with ones on diagonal k, in `dtype` (default: the input's). */
const eyeLike: OpMapping = {
  host: [0],
  dtypes: [...FI, 'float64'],
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    if (shape.length !== 2) throw new NotExpressible('input', `EyeLike of rank ${shape.length}`);
    const code = ctx.attrs.int('dtype', -1);
    const type = code === -1 ? ctx.outputTypes[0]! : ONNX_DTYPES[code];
    if (type !== 'float32' && type !== 'int32' && type !== 'float64')
      throw new NotExpressible('dtype', `EyeLike dtype ${type ?? code}`);
    const k = ctx.attrs.int('k', 0);
    const [rows, cols] = shape as [number, number];
    const data = new Array<number>(rows * cols).fill(0);
    for (let i = Math.max(0, -k); i < rows && i + k < cols; i++) data[i * cols + i + k] = 1;
    return (be) => [be.fromArray(data, shape, type)];
  },
};

/**
 * A cosine-sum window w[n] = Σ_j (−1)^j a_j cos(2πjn/N), n < size, N = size (periodic, the default) or
 * size − 1 (symmetric), in float64 rounded once. ONNX 1.12's expected outputs were made with π ≈ 3.1415
 * and differ from the formula by up to 7e-5, inside ONNX's tolerance.
 */
const cosineWindow = (a: readonly number[]): OpMapping => ({
  host: [0],
  plan: (ctx: NodeContext) => {
    if (ctx.attrs.int('output_datatype', 1) !== 1)
      throw new NotExpressible('attribute', `${ctx.node.opType}: output_datatype other than float`);
    const periodic = ctx.attrs.int('periodic', 1) !== 0;
    const v = ctx.numbers(0);
    if (v?.length !== 1) throw new NotExpressible('input', `${ctx.node.opType}: size must be a scalar`);
    const n = v[0]!;
    const N = periodic ? n : n - 1;
    if (!Number.isInteger(n) || n < 0 || (n > 0 && N < 1))
      throw new NotExpressible('input', `${ctx.node.opType} of size ${n}${periodic ? '' : ' (symmetric)'}`);
    const w = Array.from({ length: n }, (_, i) =>
      a.reduce((s, aj, j) => s + (j % 2 ? -aj : aj) * Math.cos((2 * Math.PI * j * i) / N), 0),
    );
    return (be) => [be.fromArray(w, [n], 'float32')];
  },
});

export const MISC_OPS: Record<string, OpMapping> = {
  Celu: celu,
  ThresholdedRelu: thresholdedRelu,
  Shrink: shrink,
  Hardmax: hardmax,
  MeanVarianceNormalization: meanVarianceNormalization,
  Shape: shapeOp,
  Size: sizeOp,
  Range: range,
  EyeLike: eyeLike,
  HannWindow: cosineWindow([0.5, 0.5]),
  HammingWindow: cosineWindow([25 / 46, 21 / 46]),
  BlackmanWindow: cosineWindow([0.42, 0.5, 0.08]),
};
