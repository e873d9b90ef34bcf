/**
 * ONNX forms of the op table's elementwise ops (`unary`, `binary`, their per-op methods and `fusedElementwise`):
 * one standard node where ONNX has the op, a few where it is a composition (gelu as x·½·(1 + erf(x/√2)), silu
 * as x·sigmoid(x), exp2 as 2^x, ...). Ops with no exact ONNX form (trunc, mod on floats, bit shifts, ...) are
 * reported as unmapped.
 */
import type { DType, ElementwiseStep, NDArray, Operand } from '@polyhal/hal';
import { type CallMapping, type ExportContext, isArray } from './context.js';
import { elemType } from './graph.js';

type Unary = (c: ExportContext, x: string, dtype: DType) => string;
type Binary = (c: ExportContext, a: string, b: string) => string;

const node =
  (op: string): Unary =>
  (c, x) =>
    c.g.op(op, [x]);
const node2 =
  (op: string, attrs: Record<string, number> = {}): Binary =>
  (c, a, b) =>
    c.g.op(op, [a, b], attrs);
const k = (c: ExportContext, v: number, dtype: DType): string => c.g.scalar(v, elemType(dtype));

/** Unary op of the table → its ONNX form. */
export const UNARY_ONNX: Readonly<Record<string, Unary>> = {
  neg: node('Neg'),
  exp: node('Exp'),
  log: node('Log'),
  relu: node('Relu'),
  sigmoid: node('Sigmoid'),
  tanh: node('Tanh'),
  sqrt: node('Sqrt'),
  recip: node('Reciprocal'),
  sin: node('Sin'),
  cos: node('Cos'),
  tan: node('Tan'),
  abs: node('Abs'),
  sign: node('Sign'),
  floor: node('Floor'),
  ceil: node('Ceil'),
  round: node('Round'),
  erf: node('Erf'),
  softplus: node('Softplus'),
  asin: node('Asin'),
  acos: node('Acos'),
  atan: node('Atan'),
  sinh: node('Sinh'),
  cosh: node('Cosh'),
  asinh: node('Asinh'),
  acosh: node('Acosh'),
  atanh: node('Atanh'),
  hardSwish: node('HardSwish'),
  exp2: (c, x, t) => c.g.op('Pow', [k(c, 2, t), x]),
  log2: (c, x, t) => c.g.op('Div', [c.g.op('Log', [x]), k(c, Math.LN2, t)]),
  log1p: (c, x, t) => c.g.op('Log', [c.g.op('Add', [x, k(c, 1, t)])]),
  expm1: (c, x, t) => c.g.op('Sub', [c.g.op('Exp', [x]), k(c, 1, t)]),
  silu: (c, x) => c.g.op('Mul', [x, c.g.op('Sigmoid', [x])]),
  // exact GELU (the op table's): x · ½ · (1 + erf(x / √2)); ONNX's Gelu op arrives only in opset 20
  gelu: (c, x, t) => {
    const e = c.g.op('Erf', [c.g.op('Div', [x, k(c, Math.SQRT2, t)])]);
    return c.g.op('Mul', [c.g.op('Mul', [x, k(c, 0.5, t)]), c.g.op('Add', [e, k(c, 1, t)])]);
  },
  // tanh approximation: ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
  geluTanh: (c, x, t) => {
    const cube = c.g.op('Mul', [c.g.op('Mul', [x, x]), x]);
    const inner = c.g.op('Add', [x, c.g.op('Mul', [cube, k(c, 0.044715, t)])]);
    const th = c.g.op('Tanh', [c.g.op('Mul', [inner, k(c, Math.sqrt(2 / Math.PI), t)])]);
    return c.g.op('Mul', [c.g.op('Mul', [x, k(c, 0.5, t)]), c.g.op('Add', [th, k(c, 1, t)])]);
  },
};

/** Binary op of the table → its ONNX form. */
export const BINARY_ONNX: Readonly<Record<string, Binary>> = {
  add: node2('Add'),
  sub: node2('Sub'),
  mul: node2('Mul'),
  div: node2('Div'),
  pow: node2('Pow'),
  maximum: node2('Max'),
  minimum: node2('Min'),
  fmod: node2('Mod', { fmod: 1 }),
  equal: node2('Equal'),
  notEqual: (c, a, b) => c.g.op('Not', [c.g.op('Equal', [a, b])]),
  cmplt: node2('Less'),
  less: node2('Less'),
  lessEqual: node2('LessOrEqual'),
  greater: node2('Greater'),
  greaterEqual: node2('GreaterOrEqual'),
  logicalAnd: node2('And'),
  logicalOr: node2('Or'),
  logicalXor: node2('Xor'),
};

/** Integer division and the floored `mod` differ from ONNX's Div and Mod on ints: float operands only there. */
const FLOAT_ONLY = new Set(['div', 'pow']);

/** `unary(op, x)` (or the method `op(x)`). */
export function mapUnary(c: ExportContext, op: string, x: NDArray, y: NDArray): string | undefined {
  const f = UNARY_ONNX[op];
  if (!f) return `unary:${op} (no ONNX form)`;
  c.out(y, f(c, c.in(x, x.dtype), x.dtype));
  return undefined;
}

/** `binary(op, a, b)` (or the method `op(a, b)`): numbers become scalars of the other operand's dtype. */
export function mapBinary(c: ExportContext, op: string, a: Operand, b: Operand, y: NDArray): string | undefined {
  const f = BINARY_ONNX[op];
  if (!f) return `binary:${op} (no ONNX form)`;
  const dtype = isArray(a) ? a.dtype : isArray(b) ? b.dtype : y.dtype;
  if (FLOAT_ONLY.has(op) && dtype !== 'float32' && dtype !== 'float64') return `binary:${op} on ${dtype}`;
  c.out(y, f(c, c.in(a, dtype), c.in(b, dtype)));
  return undefined;
}

/** `fusedElementwise(x, steps)`: the steps one after another (an array step's array an input of its node). */
export const mapFused: CallMapping = (c, args, y) => {
  const [x, steps] = args as [NDArray, readonly ElementwiseStep[]];
  let t = c.in(x, x.dtype);
  for (const s of steps) {
    if ('array' in s) {
      // the array as an input of the binary node (ONNX broadcasts it to the chain's shape, as the HAL does)
      const f = BINARY_ONNX[s.op];
      if (!f) return `fusedElementwise step ${s.op} (no ONNX form)`;
      const v = c.in(s.array, x.dtype);
      t = s.arrayFirst ? f(c, v, t) : f(c, t, v);
    } else if ('scalar' in s) {
      const f = BINARY_ONNX[s.op];
      if (!f) return `fusedElementwise step ${s.op} (no ONNX form)`;
      const v = k(c, s.scalar, x.dtype);
      t = s.scalarFirst ? f(c, v, t) : f(c, t, v);
    } else {
      const f = UNARY_ONNX[s.op];
      if (!f) return `fusedElementwise step ${s.op} (no ONNX form)`;
      t = f(c, t, x.dtype);
    }
  }
  c.out(y as NDArray, t);
  return undefined;
};
