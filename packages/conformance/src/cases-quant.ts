/**
 * The conformance runners, float64/BigInt oracles and cases of quantizeLinear, dequantizeLinear and
 * matmulInteger (hal/src/ops/quant-ops.ts): per-tensor and per-axis parameters, ties at .5 (half to
 * even), saturation at both ends, NaN and ±Inf, uint8 and int8 zero points, a per-row and a per-column
 * zero point, batched products; matmulIntegerToFloat on both of its paths (a backend's fused int8 kernel,
 * and the composite that zero points and uint8 take). Options: `params.axis`; matmulInteger's zero points
 * are inputs 3 and 4; matmulIntegerToFloat's inputs are a, b, aScale, bScale, then zero points (int8/uint8)
 * and a bias (float32), each pair or the bias optional, told apart by dtype.
 */
import type { Case, InputSpec } from './cases.js';
import type { OpRunner } from './op-runners.js';
import { numel, oBroadcastShape, type Ref } from './oracle.js';

const RANGE = { int8: [-128, 127], uint8: [0, 255] } as const;

/** Round half to even, the oracle's own (not the HAL's). */
function roundHalfEven(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  return d < 0.5 ? f : d > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
}

/** The per-axis parameter p (a scalar or [C]) at x's flat index i along `axis`. */
function paramAt(p: Ref, shape: readonly number[], axis: number, i: number): number {
  if (numel(p.shape) === 1) return p.data[0]!;
  const inner = shape.slice(axis + 1).reduce((a, d) => a * d, 1);
  return p.data[Math.floor(i / inner) % shape[axis]!]!;
}

const norm = (axis: number, rank: number): number => (rank === 0 ? 0 : axis < 0 ? axis + rank : axis);

export function oQuantizeLinear(x: Ref, scale: Ref, zero: Ref | undefined, axis: number): Ref {
  const dtype = (zero?.dtype ?? 'uint8') as 'int8' | 'uint8';
  const [lo, hi] = RANGE[dtype];
  const ax = norm(axis, x.shape.length);
  const data = x.data.map((v, i) => {
    const q = Math.fround(Math.fround(v) / paramAt(scale, x.shape, ax, i));
    if (Number.isNaN(q)) return 0;
    const z = zero ? paramAt(zero, x.shape, ax, i) : 0;
    return Math.min(hi, Math.max(lo, roundHalfEven(q) + z));
  });
  return { shape: [...x.shape], data, dtype };
}

export function oDequantizeLinear(x: Ref, scale: Ref, zero: Ref | undefined, axis: number): Ref {
  const ax = norm(axis, x.shape.length);
  const data = x.data.map((v, i) => {
    const z = zero ? paramAt(zero, x.shape, ax, i) : 0;
    return Math.fround((v - z) * paramAt(scale, x.shape, ax, i));
  });
  return { shape: [...x.shape], data, dtype: 'float32' };
}

/** Σ (a − za)(b − zb) in BigInt; za per row [M] or scalar, zb per column [N] or scalar; batch broadcast. */
export function oMatmulInteger(a: Ref, b: Ref, za?: Ref, zb?: Ref): Ref {
  const [M, K, N] = [a.shape[a.shape.length - 2]!, a.shape[a.shape.length - 1]!, b.shape[b.shape.length - 1]!];
  const ba = a.shape.slice(0, -2);
  const bb = b.shape.slice(0, -2);
  const batch = oBroadcastShape(ba, bb);
  const items = numel(batch);
  const itemOf = (shape: number[], t: number): number => {
    // right-aligned broadcast of the batch index t onto `shape`
    let [idx, rest, mul] = [0, t, 1];
    for (let d = batch.length - 1, e = shape.length - 1; d >= 0; d--, e--) {
      const c = rest % batch[d]!;
      rest = Math.floor(rest / batch[d]!);
      if (e >= 0) {
        idx += (shape[e] === 1 ? 0 : c) * mul;
        mul *= shape[e]!;
      }
    }
    return idx;
  };
  const data = new Float64Array(items * M * N);
  for (let t = 0; t < items; t++) {
    const [ia, ib] = [itemOf(ba, t), itemOf(bb, t)];
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let s = 0n;
        const zi = za ? za.data[numel(za.shape) === 1 ? 0 : i]! : 0;
        const zj = zb ? zb.data[numel(zb.shape) === 1 ? 0 : j]! : 0;
        for (let k = 0; k < K; k++)
          s += BigInt(a.data[ia * M * K + i * K + k]! - zi) * BigInt(b.data[ib * K * N + k * N + j]! - zj);
        data[t * M * N + i * N + j] = Number(BigInt.asIntN(32, s));
      }
  }
  return { shape: [...batch, M, N], data, dtype: 'int32' };
}

/**
 * matmulIntegerToFloat's reference: the exact integer sum times aScale · bScale, plus bias, in float64; error
 * scale |sum · aScale · bScale| + |bias| (the composite rounds the product and the sum separately).
 */
export function oMatmulIntegerToFloat(a: Ref, b: Ref, sa: Ref, sb: Ref, za?: Ref, zb?: Ref, bias?: Ref): Ref {
  const acc = oMatmulInteger(a, b, za, zb);
  const N = acc.shape[acc.shape.length - 1]!;
  const at = (p: Ref, j: number): number => p.data[numel(p.shape) === 1 ? 0 : j]!;
  const scale = new Float64Array(acc.data.length);
  const data = acc.data.map((v, i) => {
    const j = i % N;
    const product = v * sa.data[0]! * at(sb, j);
    const c = bias ? bias.data[j]! : 0;
    scale[i] = Math.abs(product) + Math.abs(c);
    return product + c;
  });
  return { shape: acc.shape, data, dtype: 'float32', scale };
}

/** matmulIntegerToFloat's optional inputs after a, b, aScale, bScale: zero points (integers), then a bias. */
function integerToFloatExtras<T extends { dtype: string }>(rest: (T | undefined)[]): [T?, T?, T?] {
  const zeros = rest[0] && rest[0].dtype !== 'float32';
  return zeros ? [rest[0], rest[1], rest[2]] : [undefined, undefined, rest[0]];
}

export const QUANT_OP_RUNNERS = {
  quantizeLinear: {
    device: (be, [x, s, z], p) => [be.quantizeLinear(x!, s!, z, p.axis ?? 1)],
    oracle: ([x, s, z], p) => [oQuantizeLinear(x!, s!, z, p.axis ?? 1)],
  },
  dequantizeLinear: {
    device: (be, [x, s, z], p) => [be.dequantizeLinear(x!, s!, z, p.axis ?? 1)],
    oracle: ([x, s, z], p) => [oDequantizeLinear(x!, s!, z, p.axis ?? 1)],
  },
  matmulInteger: {
    device: (be, [a, b, za, zb]) => [be.matmulInteger(a!, b!, za, zb)],
    oracle: ([a, b, za, zb]) => [oMatmulInteger(a!, b!, za, zb)],
  },
  matmulIntegerToFloat: {
    device: (be, [a, b, sa, sb, ...rest]) => {
      const [za, zb, bias] = integerToFloatExtras(rest);
      return [be.matmulIntegerToFloat(a!, b!, sa!, sb!, za, zb, bias)];
    },
    oracle: ([a, b, sa, sb, ...rest]) => {
      const [za, zb, bias] = integerToFloatExtras(rest);
      return [oMatmulIntegerToFloat(a!, b!, sa!, sb!, za, zb, bias)];
    },
  },
} satisfies Record<string, OpRunner>;

const F = (shape: number[], lo: number, hi: number): InputSpec => ({ shape, gen: { kind: 'uniform', lo, hi } });
const S = (shape: number[]): InputSpec => ({ shape, gen: { kind: 'positive', lo: 0.25, hi: 4 }, dtype: 'float32' });
const Z = (shape: number[], dtype: 'int8' | 'uint8', lo: number, hi: number): InputSpec => ({
  shape,
  gen: { kind: 'int', lo, hi },
  dtype,
});
const fmt = (s: number[]): string => `[${s.join(',')}]`;

export function quantCases(): Case[] {
  const cases: Case[] = [];
  const q = (tag: string, inputs: InputSpec[], axis = 1): void => {
    cases.push({
      id: `quantizeLinear/float32/${fmt(inputs[0]!.shape)}/${tag}/axis=${axis}`,
      kind: 'composite',
      op: 'quantizeLinear',
      dtype: 'float32',
      inputs,
      params: { axis },
    });
  };
  // Ties at .5 round to even; past the range saturates; NaN → 0; ±Inf saturate; −0 → 0.
  const ties = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, 254.5, 255.5, 300, -300];
  const special = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0];
  const values = { shape: [16], gen: { kind: 'uniform', lo: 0, hi: 1 }, values: [...ties, ...special] } as InputSpec;
  q('ties+special/uint8', [values, { ...S([]), values: [1] }]);
  q('ties+special/int8', [values, { ...S([]), values: [1] }, { ...Z([], 'int8', 0, 0), values: [0] }]);
  q('per-tensor/uint8', [F([7, 33], -200, 600), S([]), Z([], 'uint8', 0, 255)]);
  q('per-tensor/int8', [F([7, 33], -300, 300), S([1]), Z([1], 'int8', -20, 20)]);
  q('per-axis/int8', [F([3, 5, 6], -300, 300), S([5]), Z([5], 'int8', -20, 20)], 1);
  q('per-axis/uint8', [F([3, 5, 6], -100, 500), S([6]), Z([6], 'uint8', 0, 255)], -1);
  q('per-axis/0', [F([4, 9], -100, 100), S([4]), Z([4], 'int8', -3, 3)], 0);
  q('no-zero-point', [F([50], -10, 300), S([])]);
  const d = (tag: string, inputs: InputSpec[], axis = 1): void => {
    cases.push({
      id: `dequantizeLinear/${inputs[0]!.dtype}/${fmt(inputs[0]!.shape)}/${tag}/axis=${axis}`,
      kind: 'composite',
      op: 'dequantizeLinear',
      dtype: inputs[0]!.dtype!,
      inputs,
      params: { axis },
    });
  };
  d('per-tensor', [Z([9, 10], 'uint8', 0, 255), S([]), Z([], 'uint8', 0, 255)]);
  d('per-tensor', [Z([9, 10], 'int8', -128, 127), S([1]), Z([1], 'int8', -128, 127)]);
  d('per-axis', [Z([2, 4, 3], 'int8', -128, 127), S([4]), Z([4], 'int8', -5, 5)], 1);
  d('no-zero-point', [Z([40], 'uint8', 0, 255), S([])]);
  d('int32', [{ shape: [20], gen: { kind: 'int', lo: -1e6, hi: 1e6 }, dtype: 'int32' }, S([])]);
  const m = (tag: string, inputs: InputSpec[]): void => {
    cases.push({
      id: `matmulInteger/${inputs[0]!.dtype}/${fmt(inputs[0]!.shape)}x${fmt(inputs[1]!.shape)}/${tag}`,
      kind: 'composite',
      op: 'matmulInteger',
      dtype: inputs[0]!.dtype!,
      inputs,
    });
  };
  m('plain', [Z([65, 70], 'int8', -128, 127), Z([70, 33], 'int8', -128, 127)]);
  m('plain', [Z([20, 30], 'uint8', 0, 255), Z([30, 9], 'uint8', 0, 255)]);
  // few rows (batch-1 inference: webgpu's one-invocation-per-output int8 kernel), batched
  m('few-rows', [Z([1, 300], 'int8', -128, 127), Z([300, 70], 'int8', -128, 127)]);
  m('few-rows', [Z([3, 2, 75], 'int8', -128, 127), Z([3, 75, 9], 'int8', -128, 127)]);
  m('mixed', [Z([20, 30], 'uint8', 0, 255), Z([30, 9], 'int8', -128, 127)]);
  m('zero-points', [
    Z([17, 40], 'uint8', 0, 255),
    Z([40, 21], 'uint8', 0, 255),
    Z([], 'uint8', 0, 255),
    Z([], 'uint8', 0, 255),
  ]);
  m('per-row-and-column', [
    Z([2, 6, 8], 'int8', -128, 127),
    Z([8, 5], 'int8', -128, 127),
    Z([6], 'int8', -128, 127),
    Z([5], 'int8', -128, 127),
  ]);
  const f = (tag: string, inputs: InputSpec[]): void => {
    cases.push({
      id: `matmulIntegerToFloat/${inputs[0]!.dtype}/${fmt(inputs[0]!.shape)}x${fmt(inputs[1]!.shape)}/${tag}`,
      kind: 'composite',
      op: 'matmulIntegerToFloat',
      dtype: 'float32',
      inputs,
    });
  };
  const i8 = (shape: number[]): InputSpec => Z(shape, 'int8', -128, 127);
  const bias = (n: number): InputSpec => ({ ...F([n], -3, 3), dtype: 'float32' });
  const small = (shape: number[]): InputSpec => ({ shape, gen: { kind: 'positive', lo: 1e-4, hi: 0.02 } });
  // int8 without zero points: a backend's fused kernel (webgpu: tiles, few rows, batches); the bias is of
  // the products' size, so the sum cancels in places.
  f('per-column+bias', [i8([65, 70]), i8([70, 33]), small([]), small([33]), bias(33)]);
  f('per-tensor', [i8([40, 64]), i8([64, 20]), small([1]), small([])]);
  f('few-rows+bias', [i8([1, 300]), i8([300, 70]), small([]), small([70]), bias(70)]);
  f('batched+bias', [i8([3, 2, 75]), i8([3, 75, 9]), small([]), small([9]), bias(9)]);
  f('broadcast-b+bias', [i8([2, 20, 33]), i8([33, 17]), small([]), small([17]), bias(17)]);
  // zero points and uint8: the composite
  f('zero-points+bias', [
    Z([17, 40], 'uint8', 0, 255),
    Z([40, 21], 'int8', -128, 127),
    small([]),
    small([21]),
    Z([], 'uint8', 0, 255),
    Z([21], 'int8', -128, 127),
    bias(21),
  ]);
  return cases;
}
