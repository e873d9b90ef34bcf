/**
 * Host evaluation of small tensors: the shape arithmetic of dynamic graphs (Shape, Size, Gather, Slice,
 * Concat, Reshape, Unsqueeze, Cast, Add, Equal, ... on int64 shape tensors and scalars) runs here in
 * plain JavaScript, never on a device and never through a device round trip. Values are held as
 * float64 numbers, exact for every type the session holds (int64 to ±2^53); each result is stored by
 * its ONNX type (float32 rounded, int32 wrapped, int64 exact or not evaluated here).
 *
 * `evalHost` returns undefined where it does not take the node (an op, type, attribute or value it does
 * not evaluate, a result over HOST_MAX elements): the session then runs the node on the device.
 */
import type { OnnxAttribute, OnnxNode, OnnxTensor } from './proto.js';

/** A tensor on the host: its ONNX type, dims and values (one float64 per element, row-major). */
export interface HostTensor {
  readonly type: string;
  readonly dims: readonly number[];
  readonly data: Float64Array;
}

/** The most elements a host-evaluated result (or a host-resident constant) holds. */
export const HOST_MAX = 1024;

/** The ONNX types host evaluation computes in (others run on the device). */
const HOST_TYPES = new Set(['float32', 'float64', 'int32', 'int64', 'bool', 'int8', 'uint8']);

const sizeOf = (dims: readonly number[]): number => dims.reduce((p, d) => p * d, 1);
const stridesOf = (dims: readonly number[]): number[] => {
  const s = Array<number>(dims.length).fill(1);
  for (let i = dims.length - 2; i >= 0; i--) s[i] = s[i + 1]! * dims[i + 1]!;
  return s;
};

/** Thrown inside to decline a node; caught by evalHost. */
class Decline extends Error {}
const decline = (): never => {
  throw new Decline();
};

/** A value stored by its type; declines where the type cannot hold it exactly as ONNX would. */
function store(type: string, v: number): number {
  switch (type) {
    case 'float32':
      return Math.fround(v);
    case 'float64':
      return v;
    case 'int32':
      return Number.isFinite(v) ? v | 0 : decline();
    case 'int64':
      return Number.isSafeInteger(v) ? v : decline();
    case 'int8':
      return Number.isFinite(v) ? (v << 24) >> 24 : decline();
    case 'uint8':
      return Number.isFinite(v) ? v & 255 : decline();
    case 'bool':
      return v !== 0 ? 1 : 0;
    default:
      return decline();
  }
}

const isInt = (t: string): boolean => t === 'int32' || t === 'int64' || t === 'int8' || t === 'uint8';

/** A host tensor from a decoded ONNX tensor (int64 beyond ±2^53 clamped there, as ONNX's INT64 sentinels mean). */
export function hostFromOnnx(t: OnnxTensor): HostTensor | undefined {
  if (!t.data) return undefined;
  let data: Float64Array;
  if (t.data instanceof BigInt64Array) {
    const lim = 2n ** 53n;
    data = Float64Array.from(t.data, (v) => Number(v > lim ? lim : v < -lim ? -lim : v));
  } else data = Float64Array.from(t.data);
  return { type: t.dtype, dims: [...t.dims], data };
}

function make(type: string, dims: readonly number[], fill: (i: number) => number): HostTensor {
  const n = sizeOf(dims);
  if (n > HOST_MAX) decline();
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) data[i] = store(type, fill(i));
  return { type, dims: [...dims], data };
}

/** Row-major position in `dims` (with `strides`) of flat output index i mapped through `map(axis, coord)`. */
function gatherIndex(
  outDims: readonly number[],
  i: number,
  inStrides: readonly number[],
  map: (axis: number, c: number) => number,
): number {
  let rem = i;
  let pos = 0;
  for (let a = outDims.length - 1; a >= 0; a--) {
    const d = outDims[a]!;
    const c = d === 0 ? 0 : rem % d;
    rem = d === 0 ? 0 : Math.floor(rem / d);
    pos += map(a, c) * inStrides[a]!;
  }
  return pos;
}

function broadcastDims(shapes: readonly (readonly number[])[]): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out = Array<number>(rank).fill(1);
  for (const s of shapes)
    s.forEach((d, k) => {
      const a = rank - s.length + k;
      if (out[a] === 1) out[a] = d;
      else if (d !== 1 && d !== out[a]) decline();
    });
  return out;
}

/** Element of `t` read at output index i of `outDims` (NumPy broadcasting). */
function reader(t: HostTensor, outDims: readonly number[]): (i: number) => number {
  const shift = outDims.length - t.dims.length;
  const padded = [...Array<number>(shift).fill(1), ...t.dims];
  const strides = stridesOf(padded).map((s, a) => (padded[a] === 1 ? 0 : s));
  return (i) => t.data[gatherIndex(outDims, i, strides, (_, c) => c)]!;
}

type Fn = (a: number, b: number) => number;
const ARITH: Record<string, (type: string) => Fn> = {
  Add: () => (a, b) => a + b,
  Sub: () => (a, b) => a - b,
  Mul: () => (a, b) => a * b,
  Div: (t) => (isInt(t) ? (a, b) => (b === 0 ? decline() : Math.trunc(a / b)) : (a, b) => a / b),
  Max: () => (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? Number.NaN : Math.max(a, b)),
  Min: () => (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? Number.NaN : Math.min(a, b)),
  Equal: () => (a, b) => Number(a === b),
  Less: () => (a, b) => Number(a < b),
  LessOrEqual: () => (a, b) => Number(a <= b),
  Greater: () => (a, b) => Number(a > b),
  GreaterOrEqual: () => (a, b) => Number(a >= b),
  And: () => (a, b) => Number(a !== 0 && b !== 0),
  Or: () => (a, b) => Number(a !== 0 || b !== 0),
  Xor: () => (a, b) => Number((a !== 0) !== (b !== 0)),
};
const UNARY: Record<string, (v: number) => number> = {
  Identity: (v) => v,
  Neg: (v) => -v,
  Abs: (v) => Math.abs(v),
  Not: (v) => Number(v === 0),
  Floor: (v) => Math.floor(v),
  Ceil: (v) => Math.ceil(v),
  Sqrt: (v) => Math.sqrt(v),
  Sign: (v) => Math.sign(v),
};

/** What a host op sees. */
interface Args {
  node: OnnxNode;
  opset: number;
  inputs: (HostTensor | undefined)[];
  /** Dims of each input (for Shape and Size, whose input may live on a device). */
  dims: (readonly number[] | undefined)[];
  outType: string;
  attr(name: string): OnnxAttribute['value'] | undefined;
}

const ints = (t: HostTensor | undefined): number[] => (t ? Array.from(t.data) : decline());
const int = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);
const normAxis = (a: number, rank: number): number => (a < -rank || a >= rank ? decline() : a < 0 ? a + rank : a);

function concat({ inputs, attr, outType }: Args): HostTensor {
  const parts = inputs.filter((t): t is HostTensor => t !== undefined);
  const rank = parts[0]!.dims.length;
  const axis = normAxis(int(attr('axis'), Number.NaN), rank);
  if (parts.some((p) => p.dims.length !== rank || p.dims.some((d, k) => k !== axis && d !== parts[0]!.dims[k])))
    decline();
  const dims = [...parts[0]!.dims];
  dims[axis] = parts.reduce((s, p) => s + p.dims[axis]!, 0);
  const outer = sizeOf(dims.slice(0, axis));
  const data: number[] = [];
  for (let o = 0; o < outer; o++)
    for (const p of parts) {
      const run = sizeOf(p.dims.slice(axis));
      for (let k = 0; k < run; k++) data.push(p.data[o * run + k]!);
    }
  return make(outType, dims, (i) => data[i]!);
}

function gather({ inputs, attr, outType }: Args): HostTensor {
  const [x, idx] = inputs as [HostTensor, HostTensor];
  const axis = normAxis(int(attr('axis'), 0), x.dims.length);
  const n = x.dims[axis]!;
  const dims = [...x.dims.slice(0, axis), ...idx.dims, ...x.dims.slice(axis + 1)];
  const strides = stridesOf(x.dims);
  const q = idx.dims.length;
  return make(outType, dims, (i) => {
    // output coords: [pre (axis), idx (q), post]
    const coords: number[] = [];
    let rem = i;
    for (let a = dims.length - 1; a >= 0; a--) {
      coords[a] = rem % dims[a]!;
      rem = Math.floor(rem / dims[a]!);
    }
    const flat = coords.slice(axis, axis + q).reduce((p, c, k) => p * idx.dims[k]! + c, 0);
    let j = idx.data[flat]!;
    if (j < -n || j >= n) decline();
    if (j < 0) j += n;
    const src = [...coords.slice(0, axis), j, ...coords.slice(axis + q)];
    return x.data[src.reduce((p, c, k) => p + c * strides[k]!, 0)]!;
  });
}

function slice({ inputs, attr, opset, outType }: Args): HostTensor {
  const x = inputs[0]!;
  const rank = x.dims.length;
  const old = opset < 10;
  const starts = old ? (attr('starts') as number[] | undefined) : ints(inputs[1]);
  const ends = old ? (attr('ends') as number[] | undefined) : ints(inputs[2]);
  if (!starts || !ends || starts.length !== ends.length) return decline();
  const axes = (old ? (attr('axes') as number[] | undefined) : inputs[3] && ints(inputs[3])) ?? starts.map((_, k) => k);
  const steps = (!old && inputs[4] && ints(inputs[4])) || starts.map(() => 1);
  const begin = x.dims.map(() => 0);
  const step = x.dims.map(() => 1);
  const dims = [...x.dims];
  axes.forEach((a0, k) => {
    const a = normAxis(a0, rank);
    const d = x.dims[a]!;
    const s = steps[k]!;
    if (s === 0) decline();
    let b = starts[k]!;
    let e = ends[k]!;
    b = b < 0 ? b + d : b;
    e = e < 0 ? e + d : e;
    if (s > 0) {
      b = Math.min(Math.max(b, 0), d);
      e = Math.min(Math.max(e, 0), d);
      dims[a] = Math.max(0, Math.ceil((e - b) / s));
    } else {
      b = Math.min(Math.max(b, 0), d - 1);
      e = Math.min(Math.max(e, -1), d - 1);
      dims[a] = Math.max(0, Math.ceil((b - e) / -s));
    }
    begin[a] = b;
    step[a] = s;
  });
  const strides = stridesOf(x.dims);
  return make(outType, dims, (i) => x.data[gatherIndex(dims, i, strides, (a, c) => begin[a]! + c * step[a]!)]!);
}

/** Reshape, Squeeze, Unsqueeze, Flatten: the same values under new dims. */
function reshaped(args: Args): HostTensor {
  const { node, inputs, attr, opset } = args;
  const x = inputs[0]!;
  const rank = x.dims.length;
  let dims: number[];
  switch (node.opType) {
    case 'Reshape': {
      const allowzero = int(attr('allowzero'), 0) !== 0;
      dims = ints(inputs[1]).map((d, k) => (d === 0 && !allowzero ? (x.dims[k] ?? decline()) : d));
      const free = dims.indexOf(-1);
      if (free >= 0) {
        const known = sizeOf(dims.filter((_, k) => k !== free));
        if (known === 0 || sizeOf(x.dims) % known !== 0) decline();
        dims[free] = sizeOf(x.dims) / known;
      }
      break;
    }
    case 'Squeeze': {
      const raw = opset >= 13 ? inputs[1] && ints(inputs[1]) : (attr('axes') as number[] | undefined);
      const axes = raw?.map((a) => normAxis(a, rank));
      if (axes?.some((a) => x.dims[a] !== 1)) decline();
      dims = x.dims.filter((d, k) => (axes ? !axes.includes(k) : d !== 1));
      break;
    }
    case 'Unsqueeze': {
      const raw = opset >= 13 ? ints(inputs[1]) : ((attr('axes') as number[] | undefined) ?? decline());
      const out = rank + raw.length;
      const axes = raw.map((a) => normAxis(a, out));
      dims = [];
      let j = 0;
      for (let k = 0; k < out; k++) dims.push(axes.includes(k) ? 1 : x.dims[j++]!);
      break;
    }
    default: {
      const a0 = int(attr('axis'), 1);
      const axis = a0 === rank ? a0 : normAxis(a0, rank);
      dims = [sizeOf(x.dims.slice(0, axis)), sizeOf(x.dims.slice(axis))];
    }
  }
  if (dims.some((d) => !Number.isInteger(d) || d < 0) || sizeOf(dims) !== sizeOf(x.dims)) decline();
  return make(args.outType, dims, (i) => x.data[i]!);
}

function cast({ inputs, outType }: Args): HostTensor {
  const x = inputs[0]!;
  return make(outType, x.dims, (i) => {
    const v = x.data[i]!;
    if (isInt(outType)) {
      if (!Number.isFinite(v)) decline();
      const t = Math.trunc(v);
      if (outType === 'int32' && (t < -(2 ** 31) || t >= 2 ** 31)) decline();
      return t;
    }
    return v;
  });
}

function elementwise({ node, inputs, outType }: Args): HostTensor {
  const unary = UNARY[node.opType];
  if (unary) {
    const x = inputs[0]!;
    return make(outType, x.dims, (i) => unary(x.data[i]!));
  }
  const parts = inputs.filter((t): t is HostTensor => t !== undefined);
  const f = ARITH[node.opType]!(parts[0]!.type);
  const dims = broadcastDims(parts.map((p) => p.dims));
  const reads = parts.map((p) => reader(p, dims));
  return make(outType, dims, (i) => reads.slice(1).reduce((acc, r) => f(acc, r(i)), reads[0]!(i)));
}

function where({ inputs, outType }: Args): HostTensor {
  const parts = inputs as HostTensor[];
  const dims = broadcastDims(parts.map((p) => p.dims));
  const [c, a, b] = parts.map((p) => reader(p, dims));
  return make(outType, dims, (i) => (c!(i) !== 0 ? a!(i) : b!(i)));
}

const OPS: Record<string, { attrs: readonly string[]; run: (a: Args) => HostTensor }> = {
  Shape: {
    attrs: ['start', 'end'],
    run: ({ dims, attr, outType }) => {
      const d = dims[0]!;
      const r = d.length;
      const clamp = (v: number): number => Math.min(Math.max(v < 0 ? v + r : v, 0), r);
      const s = clamp(int(attr('start'), 0));
      const out = d.slice(s, Math.max(s, clamp(int(attr('end'), r))));
      return make(outType, [out.length], (i) => out[i]!);
    },
  },
  Size: { attrs: [], run: ({ dims, outType }) => make(outType, [], () => sizeOf(dims[0]!)) },
  Cast: { attrs: ['to', 'saturate'], run: cast },
  Concat: { attrs: ['axis'], run: concat },
  Gather: { attrs: ['axis'], run: gather },
  Slice: { attrs: ['starts', 'ends', 'axes'], run: slice },
  Reshape: { attrs: ['allowzero'], run: reshaped },
  Squeeze: { attrs: ['axes'], run: reshaped },
  Unsqueeze: { attrs: ['axes'], run: reshaped },
  Flatten: { attrs: ['axis'], run: reshaped },
  Where: { attrs: [], run: where },
  ConstantOfShape: {
    attrs: ['value'],
    run: ({ inputs, attr, outType }) => {
      const v = attr('value') as OnnxTensor | undefined;
      const fill = v?.data ? Number(v.data[0]) : 0;
      return make(outType, ints(inputs[0]), () => fill);
    },
  },
  Range: {
    attrs: [],
    run: ({ inputs, outType }) => {
      const [start, limit, delta] = inputs.map((t) => (t?.data.length === 1 ? t.data[0]! : decline())) as number[];
      if (delta === 0) decline();
      const f = outType === 'float32' ? Math.fround : (v: number) => v;
      const n = Math.max(Math.ceil(f(f(limit! - start!) / delta!)), 0);
      return make(outType, [n], (i) => f(start! + f(i * delta!)));
    },
  },
  Transpose: {
    attrs: ['perm'],
    run: ({ inputs, attr, outType }) => {
      const x = inputs[0]!;
      const r = x.dims.length;
      const perm = (attr('perm') as number[] | undefined) ?? x.dims.map((_, k) => r - 1 - k);
      if (perm.length !== r || [...perm].sort().some((p, k) => p !== k)) decline();
      const dims = perm.map((p) => x.dims[p]!);
      const strides = stridesOf(x.dims);
      return make(
        outType,
        dims,
        (i) =>
          x.data[
            gatherIndex(
              dims,
              i,
              perm.map((p) => strides[p]!),
              (_, c) => c,
            )
          ]!,
      );
    },
  },
  Expand: {
    attrs: [],
    run: ({ inputs, outType }) => {
      const x = inputs[0]!;
      const dims = broadcastDims([x.dims, ints(inputs[1])]);
      const r = reader(x, dims);
      return make(outType, dims, r);
    },
  },
};
for (const op of [...Object.keys(ARITH), ...Object.keys(UNARY)]) OPS[op] = { attrs: [], run: elementwise };

/** Ops host evaluation takes (given host values for their inputs; Shape and Size need only dims). */
export const HOST_OPS: ReadonlySet<string> = new Set(Object.keys(OPS));
/** Ops whose only input is read for its dims: they run on the host whatever holds the input. */
export const DIMS_ONLY_OPS: ReadonlySet<string> = new Set(['Shape', 'Size']);

/**
 * Evaluates `node` on the host, or returns undefined where it does not (see the file's comment).
 * `inputs[i]`: host values (undefined for an omitted input); `dims[i]`: every input's dims; `outTypes`:
 * the node's output types.
 */
export function evalHost(
  node: OnnxNode,
  opset: number,
  inputs: (HostTensor | undefined)[],
  dims: (readonly number[] | undefined)[],
  outTypes: readonly string[],
): HostTensor[] | undefined {
  const op = OPS[node.opType];
  if (!op || node.outputs.length !== 1 || node.domain !== '') return undefined;
  if (node.attributes.some((a) => !op.attrs.includes(a.name))) return undefined;
  const outType = outTypes[0]!;
  if (!HOST_TYPES.has(outType)) return undefined;
  const dimsOnly = DIMS_ONLY_OPS.has(node.opType);
  if (!dimsOnly && inputs.some((t, i) => t === undefined && node.inputs[i] !== '')) return undefined;
  if (!dimsOnly && inputs.some((t) => t && !HOST_TYPES.has(t.type))) return undefined;
  if (node.opType === 'Cast' && node.attributes.some((a) => a.name === 'saturate' && a.value !== 1)) return undefined;
  const byName = new Map(node.attributes.map((a) => [a.name, a.value]));
  try {
    return [op.run({ node, opset, inputs, dims, outType, attr: (n) => byName.get(n) })];
  } catch (e) {
    if (e instanceof Decline) return undefined;
    throw e;
  }
}
