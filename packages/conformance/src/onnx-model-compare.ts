/**
 * One node output of a backend against the reference's: the error of a whole-model run
 * (`runOnnxModel`), measured as the largest absolute difference relative to the output's scale (its
 * largest finite |value| in the reference), as tests/onnx/models.test.ts measures model outputs. Float
 * outputs pass within a tolerance; integer and bool outputs must be equal.
 */
import type { OutputTensor } from '@polyhal/onnx';

/**
 * Per-node tolerances by backend name, on the error relative to the output's scale: 1e-4 (cpu, wasm and
 * any other), 3e-4 on webgpu, whose exp, tanh and sigmoid follow WGSL's accuracy rules. Measured on
 * PP-OCR's direction classifier (two inputs) against the reference backend: at most 3.2e-6 on wasm, 2.6e-6 on
 * webgpu (lavapipe), 0 on cpu (docs/guide/running-onnx-models.md).
 */
export const ONNX_MODEL_TOLERANCE: Readonly<Record<string, number>> = { webgpu: 3e-4 };
/** The per-node tolerance of a backend that ONNX_MODEL_TOLERANCE does not list: 1e-4 of the output's scale. */
export const ONNX_MODEL_DEFAULT_TOLERANCE = 1e-4;

/** The tolerance of `backend`: the table's, else ONNX_MODEL_DEFAULT_TOLERANCE. */
export const modelTolerance = (backend: string): number =>
  Object.hasOwn(ONNX_MODEL_TOLERANCE, backend) ? ONNX_MODEL_TOLERANCE[backend]! : ONNX_MODEL_DEFAULT_TOLERANCE;

/** One output of one node, a backend's value against the reference's. */
export interface OutputComparison {
  /** The node's name (`#i` where the model gives none), with the If/Loop/Scan nodes holding it, outermost first. */
  node: string;
  /** The If/Loop/Scan nodes holding the node, outermost first (empty at the top level). */
  path: readonly string[];
  /** The node's op type. */
  op: string;
  /** The output value's name. */
  output: string;
  /** The output's dtype on the backend. */
  dtype: string;
  /** The output's dims on the backend. */
  dims: readonly number[];
  /** max |backend − reference| over the elements (Infinity where a NaN or an infinity does not match). */
  maxAbsError: number;
  /** The reference's largest finite |value| (0 for an empty or all-zero output). */
  scale: number;
  /** maxAbsError / scale (0 when both are 0; Infinity when only the scale is). */
  error: number;
  /** The error allowed: the backend's tolerance for floats, 0 for integers and bools. */
  tolerance: number;
  /** Whether error ≤ tolerance (and the dtype and dims match the reference's). */
  pass: boolean;
  /** Why it failed where no number says it: a dtype or dims other than the reference's, a missing output. */
  reason?: string;
  /** The first element beyond the tolerance: its flat index and both values. */
  at?: { index: number; got: number; want: number };
}

const isFloat = (dtype: string): boolean => dtype.startsWith('float');

/** `got` against `want` (the reference) for output `output` of a node; `tolerance` applies to floats. */
export function compareOutput(
  node: { node: string; path: readonly string[]; op: string },
  output: string,
  got: OutputTensor | undefined,
  want: OutputTensor,
  tolerance: number,
): OutputComparison {
  const base = { ...node, output, dtype: want.dtype, dims: want.dims };
  const tol = isFloat(want.dtype) ? tolerance : 0;
  const fail = (reason: string): OutputComparison => ({
    ...base,
    maxAbsError: Infinity,
    scale: 0,
    error: Infinity,
    tolerance: tol,
    pass: false,
    reason,
  });
  if (!got) return fail('not produced');
  if (got.dtype !== want.dtype) return fail(`dtype ${got.dtype}, the reference's ${want.dtype}`);
  if (got.dims.length !== want.dims.length || got.dims.some((d, i) => d !== want.dims[i]))
    return fail(`dims [${got.dims.join(', ')}], the reference's [${want.dims.join(', ')}]`);
  const g = got.data;
  const w = want.data;
  let scale = 0;
  for (let i = 0; i < w.length; i++) {
    const v = Math.abs(Number(w[i]));
    if (Number.isFinite(v) && v > scale) scale = v;
  }
  let maxAbs = 0;
  let at: OutputComparison['at'];
  for (let i = 0; i < w.length; i++) {
    const a = Number(g[i]);
    const b = Number(w[i]);
    let d: number;
    if (Number.isNaN(a) || Number.isNaN(b)) d = Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
    else if (!Number.isFinite(a) || !Number.isFinite(b)) d = a === b ? 0 : Infinity;
    else d = Math.abs(a - b);
    if (d > maxAbs) maxAbs = d;
    if (!at && d > tol * scale) at = { index: i, got: a, want: b };
  }
  const error = maxAbs === 0 ? 0 : scale === 0 ? Infinity : maxAbs / scale;
  const pass = error <= tol;
  return { ...base, maxAbsError: maxAbs, scale, error, tolerance: tol, pass, ...(pass ? {} : { at }) };
}
