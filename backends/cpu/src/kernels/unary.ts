/**
 * Elementwise unary kernel over a strided input into a contiguous output. Transcendentals use the
 * float64 Math functions (erf: special.ts) and round once to float32 (well inside the tolerance table). relu and abs on
 * contiguous float32 run branch-free on the bit pattern (random signs would defeat the branch predictor).
 */
import { type UnaryOp, UnsupportedOpError } from '@polyhal/hal';
import type { StorageArray } from '@polyhal/hal/internal';
import { erf, normalCdf } from './special.js';
import { planRows, rowMajor, type Strided } from './strided.js';

export function unaryKernel(op: UnaryOp, x: Strided, out: StorageArray): void {
  const plan = planRows(x.shape, [x.strides, rowMajor(x.shape)], [x.offset, 0]);
  const { n, rows, step, starts } = plan;
  if (
    (op === 'relu' || op === 'abs') &&
    rows === 1 &&
    step[0] === 1 &&
    x.data instanceof Float32Array &&
    out instanceof Float32Array
  ) {
    (op === 'relu' ? reluBits : absBits)(x.data, starts[0]![0]!, out, n);
    return;
  }
  for (let r = 0; r < rows; r++) unaryRow(op, n, x.data, starts[0]![r]!, step[0]!, out, starts[1]![r]!);
}

/** relu on float32 bits: keep the value unless the sign bit is set and it is not NaN. */
function reluBits(x: Float32Array, xOff: number, out: Float32Array, n: number): void {
  const xi = new Int32Array(x.buffer, x.byteOffset + xOff * 4, n);
  const oi = new Int32Array(out.buffer, out.byteOffset, n);
  for (let i = 0; i < n; i++) {
    const bits = xi[i]!;
    const nan = (0x7f800000 - (bits & 0x7fffffff)) >> 31; // -1 if NaN, else 0
    oi[i] = bits & (~(bits >> 31) | nan);
  }
}

/** abs on float32 bits: clear the sign bit (NaN stays NaN, with its payload). */
function absBits(x: Float32Array, xOff: number, out: Float32Array, n: number): void {
  const xi = new Int32Array(x.buffer, x.byteOffset + xOff * 4, n);
  const oi = new Int32Array(out.buffer, out.byteOffset, n);
  for (let i = 0; i < n; i++) oi[i] = xi[i]! & 0x7fffffff;
}

/** 1/(1 + e^−v) without overflow. */
const sigmoid = (v: number): number => {
  if (v >= 0) return 1 / (1 + Math.exp(-v));
  const e = Math.exp(v);
  return e / (1 + e);
};
/** geluTanh(x) = x·sigmoid(2√(2/π)·(x + 0.044715·x³)). */
const GELU_2C = 2 * Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

function unaryRow(op: UnaryOp, n: number, x: StorageArray, xi: number, sx: number, o: StorageArray, oi: number): void {
  const end = oi + n;
  switch (op) {
    case 'neg':
      for (; oi < end; oi++, xi += sx) o[oi] = -x[xi]!;
      return;
    case 'exp':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.exp(x[xi]!);
      return;
    case 'log':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.log(x[xi]!);
      return;
    case 'relu':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v > 0 || v !== v ? v : 0;
      }
      return;
    case 'sigmoid':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        if (v >= 0) o[oi] = 1 / (1 + Math.exp(-v));
        else {
          const e = Math.exp(v);
          o[oi] = e / (1 + e);
        }
      }
      return;
    case 'tanh':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.tanh(x[xi]!);
      return;
    case 'sqrt':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.sqrt(x[xi]!);
      return;
    case 'recip':
      for (; oi < end; oi++, xi += sx) o[oi] = 1 / x[xi]!;
      return;
    case 'exp2':
      for (; oi < end; oi++, xi += sx) o[oi] = 2 ** x[xi]!;
      return;
    case 'log2':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.log2(x[xi]!);
      return;
    case 'sin':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.sin(x[xi]!);
      return;
    case 'cos':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.cos(x[xi]!);
      return;
    case 'abs':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.abs(x[xi]!);
      return;
    case 'sign':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v > 0 ? 1 : v < 0 ? -1 : v === 0 ? 0 : v;
      }
      return;
    case 'floor':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.floor(x[xi]!);
      return;
    case 'ceil':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.ceil(x[xi]!);
      return;
    case 'round':
      // Math.round rounds ties up (and keeps −0): step back where that picked the odd neighbour of a tie.
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        const r = Math.round(v);
        o[oi] = r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
      }
      return;
    case 'trunc':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.trunc(x[xi]!);
      return;
    case 'erf':
      for (; oi < end; oi++, xi += sx) o[oi] = erf(x[xi]!);
      return;
    case 'log1p':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.log1p(x[xi]!);
      return;
    case 'expm1':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.expm1(x[xi]!);
      return;
    case 'softplus':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v > 0 ? v + Math.log1p(Math.exp(-v)) : Math.log1p(Math.exp(v));
      }
      return;
    case 'hardSwish': // float32 steps, the bits of wasm's lanes
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v <= -3 ? -0 : v * Math.fround(Math.min(Math.fround(v + 3), 6) / 6);
      }
      return;
    case 'gelu':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v === -Infinity ? -0 : v * normalCdf(v);
      }
      return;
    case 'geluTanh':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v === -Infinity ? -0 : v * sigmoid(GELU_2C * (v + GELU_A * v * v * v));
      }
      return;
    case 'silu':
      for (; oi < end; oi++, xi += sx) {
        const v = x[xi]!;
        o[oi] = v === -Infinity ? -0 : v * sigmoid(v);
      }
      return;
    case 'tan':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.tan(x[xi]!);
      return;
    case 'asin':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.asin(x[xi]!);
      return;
    case 'acos':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.acos(x[xi]!);
      return;
    case 'atan':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.atan(x[xi]!);
      return;
    case 'sinh':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.sinh(x[xi]!);
      return;
    case 'cosh':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.cosh(x[xi]!);
      return;
    case 'asinh':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.asinh(x[xi]!);
      return;
    case 'acosh':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.acosh(x[xi]!);
      return;
    case 'atanh':
      for (; oi < end; oi++, xi += sx) o[oi] = Math.atanh(x[xi]!);
      return;
    default:
      throw new UnsupportedOpError(String(op), x instanceof Int32Array ? 'int32' : 'float32', 'cpu');
  }
}
