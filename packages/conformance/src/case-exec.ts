/**
 * How one conformance case executes: its seeded host inputs, the strided view applied on the device and
 * on the oracle, the op on the device (elementwise and reductions generically, every other op through
 * its typed runner) and on the float64 oracle, and what the comparison needs (elements reduced per
 * output, each output element's inputs).
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { ARRAY_OP_RUNNERS, type OpRunner } from './op-runners.js';
import { oBinary, oExpand, oPermute, oReduce, oShrink, oStride, oUnary, ref, type Ref } from './oracle.js';
import { generate, hashString, mulberry32 } from './random.js';
import { oHostValue, oIsFloat } from './oracle-dtype.js';

/**
 * Host inputs of a case (deterministic in seed and case id), as the input's dtype holds them
 * (oHostValue: float16 rounded, int8/uint8 wrapped), so that the device and the oracle see one value;
 * generated float64 inputs leave the float32 grid (× (1 + k·2^-40), k = 1 … 7).
 */
export function caseInputs(c: Case, seed: number): number[][] {
  const rng = mulberry32(hashString(c.id, seed));
  return c.inputs.map((inp) => {
    const values =
      inp.values ??
      generate(
        inp.gen,
        inp.shape.reduce((p, d) => p * d, 1),
        rng,
      );
    const dtype = inp.dtype ?? c.dtype;
    // float64: generated values (float32 ones) nudged off the float32 grid, so a float32 computation shows
    if (dtype === 'float64' && !inp.values && inp.gen.kind !== 'special')
      return values.map((v, i) => v * (1 + (1 + (i % 7)) * 2 ** -40));
    return dtype === 'float16' || dtype === 'int8' || dtype === 'uint8'
      ? values.map((v) => oHostValue(dtype, v))
      : values;
  });
}

export function applyViewDevice(be: ComputeBackend, x: NDArray, spec: InputSpec): NDArray {
  const v = spec.view;
  if (!v) return x;
  if ('permute' in v) return be.permute(x, v.permute);
  if ('stride' in v) return be.stride(x, v.stride);
  if ('shrink' in v) return be.shrink(x, v.shrink);
  if ('expand' in v) return be.expand(x, v.expand);
  const r = x.shape.length;
  return be.permute(x, [...Array.from({ length: r - 2 }, (_, i) => i), r - 1, r - 2]);
}

export function applyViewOracle(x: Ref, spec: InputSpec): Ref {
  const v = spec.view;
  if (!v) return x;
  if ('permute' in v) return oPermute(x, v.permute);
  if ('stride' in v) return oStride(x, v.stride);
  if ('shrink' in v) return oShrink(x, v.shrink);
  if ('expand' in v) return oExpand(x, v.expand);
  const r = x.shape.length;
  return oPermute(x, [...Array.from({ length: r - 2 }, (_, i) => i), r - 1, r - 2]);
}

/** What a case computes on the device. Returns the arrays to read (views allowed) and to free. */
export function runDevice(be: ComputeBackend, c: Case, xs: NDArray[]): NDArray[] {
  const p = c.params ?? {};
  const [a, b] = xs as [NDArray, NDArray];
  if (c.kind === 'unary') return [be.unary(c.op as never, a)];
  if (c.kind === 'binary') return [be.binary(c.op as never, a, b)];
  if (c.kind === 'reduce' && c.op !== 'mean') return [be.reduce(c.op as never, a, p.axes, p.keepdims)];
  const r = (ARRAY_OP_RUNNERS as Record<string, OpRunner>)[c.op];
  if (!r) throw new Error(`conformance: no device runner for ${c.kind}/${c.op}`);
  return r.device(be, xs, p);
}

/** What a case computes on the oracle: one Ref per device output. */
export function runOracle(c: Case, xs: Ref[]): Ref[] {
  const p = c.params ?? {};
  const [a, b] = xs as [Ref, Ref];
  if (c.kind === 'unary') return [oUnary(c.op, a)];
  if (c.kind === 'binary') return [oBinary(c.op, a, b)];
  if (c.kind === 'reduce' && c.op !== 'mean')
    return [oReduce(c.op, a, p.axes ?? a.shape.map((_, i) => i), p.keepdims ?? false)];
  const r = (ARRAY_OP_RUNNERS as Record<string, OpRunner>)[c.op];
  if (!r) throw new Error(`conformance: no oracle for ${c.kind}/${c.op}`);
  return r.oracle(xs, p);
}

/** The shape the op sees of input `spec` (after its view). */
function viewedShape(spec: InputSpec): number[] {
  return applyViewOracle(ref(spec.shape, new Array<number>(spec.shape.reduce((p, d) => p * d, 1)).fill(0)), spec).shape;
}

/** The rounded float32 additions per output element of a matmul case: K, plus one with a bias. */
export function matmulTerms(c: Case): number {
  return viewedShape(c.inputs[0]!).at(-1)! + (c.inputs.length > 2 ? 1 : 0);
}

/** Elements reduced into each output of a reduce case. */
export function reducedCount(c: Case): number {
  const shape = viewedShape(c.inputs[0]!);
  const axes = (c.params?.axes ?? shape.map((_, i) => i)).map((a) => (a < 0 ? a + shape.length : a));
  return axes.reduce((p, a) => p * shape[a]!, 1);
}

/** For elementwise cases: each input broadcast to the output's shape (the inputs of every output element). */
export function elementInputs(c: Case, host: number[][], outShape: number[]): Float64Array[] | null {
  if ((c.kind !== 'unary' && c.kind !== 'binary') || !oIsFloat(c.dtype)) return null;
  return c.inputs.map((spec, i) => oExpand(applyViewOracle(ref(spec.shape, host[i]!, c.dtype), spec), outShape).data);
}

/** "Name: message" of anything thrown (a backend may throw a non-Error). */
export function describeError(e: unknown): string {
  if (e instanceof Error || (e !== null && typeof e === 'object' && 'message' in e)) {
    const err = e as Error;
    return `${err.name ?? 'Error'}: ${err.message}`;
  }
  return `${typeof e} ${String(e)}`;
}
