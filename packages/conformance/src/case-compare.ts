/**
 * The judgement of one conformance case's outputs: the float64 oracle run on the case's host inputs (through
 * the inputs' views), each device output's shape and dtype checked, its values compared under the op's
 * tolerance for the backend's arithmetic class (widened for reductions and matmuls by the terms summed),
 * elements outside the backend's domain for the op left out. Shared by the eager runner (runner.ts) and the
 * captured one (captured.ts), which judges a replay's outputs at new inputs the same way.
 */
import type { BackendCapabilities, HostArray, NDArray } from '@polyhal/hal';
import { applyViewOracle, elementInputs, matmulTerms, reducedCount, runOracle } from './case-exec.js';
import type { Case } from './cases.js';
import { compare } from './compare.js';
import { ref } from './oracle.js';
import type { CaseResult } from './runner.js';
import {
  FLOAT32_ACCUMULATION,
  FLOAT32_MAX,
  inDomain,
  matmulTolerance,
  reduceTolerance,
  type Tolerance,
  toleranceFor,
} from './tolerances.js';

/** The tolerance a case's outputs are judged with on a backend of arithmetic class `caps.arithmetic`. */
export function caseTolerance(c: Case, caps: BackendCapabilities): Tolerance {
  const baseTol = toleranceFor(c.op, c.dtype, caps.arithmetic);
  if (c.kind === 'reduce') return reduceTolerance(c.op, baseTol, reducedCount(c), caps.arithmetic);
  return c.op === 'matmul' ? matmulTolerance(c.dtype, baseTol, matmulTerms(c)) : baseTol;
}

/**
 * Compares the outputs a case computed at host inputs `host` (as caseInputs gives them, before the views)
 * with the float64 oracle's at the same inputs. `outs`: the device outputs' shapes and dtypes; `got`: their
 * values, read back (one per output, in order). Returns `res` with the errors folded in, and `pass: false`
 * with the first failure's message when an output's shape, dtype or a value is outside the tolerance.
 */
export function compareOutputs(
  c: Case,
  caps: BackendCapabilities,
  host: readonly number[][],
  outs: readonly Pick<NDArray, 'shape' | 'dtype'>[],
  got: readonly HostArray[],
  res: CaseResult,
): CaseResult {
  const want = runOracle(
    c,
    c.inputs.map((spec, i) => applyViewOracle(ref(spec.shape, host[i]!, spec.dtype ?? c.dtype), spec)),
  );
  const tol = caseTolerance(c, caps);
  for (let k = 0; k < outs.length; k++) {
    const o = outs[k]!;
    const w = want[k]!;
    if (o.shape.length !== w.shape.length || o.shape.some((d, i) => d !== w.shape[i])) {
      return { ...res, pass: false, message: `output ${k} has shape [${o.shape}] but the oracle's is [${w.shape}]` };
    }
    if (o.dtype !== w.dtype)
      return { ...res, pass: false, message: `output ${k} has dtype ${o.dtype}, expected ${w.dtype}` };
    const perElement = elementInputs(c, host as number[][], w.shape);
    // float32 accumulators: skip sums whose finite terms add up past float32's range (scale = Σ|x|, or its mean).
    const count = c.op === 'mean' ? reducedCount(c) : 1;
    const overflowSafe =
      c.kind === 'reduce' && (c.op === 'sum' || c.op === 'mean') && FLOAT32_ACCUMULATION.has(caps.arithmetic) && w.scale
        ? (i: number) => w.scale![i]! * count <= FLOAT32_MAX
        : undefined;
    const checked = perElement
      ? (i: number) =>
          inDomain(
            c.op,
            caps,
            perElement.map((d) => d[i]!),
          )
      : overflowSafe;
    const cmp = compare(got[k]!, w, tol, checked, caps.flushesSubnormals);
    if (cmp.skipped) res.skipped = (res.skipped ?? 0) + cmp.skipped;
    res.maxAbsError = Math.max(res.maxAbsError, cmp.maxAbsError);
    res.maxRelError = Math.max(res.maxRelError, cmp.maxRelError);
    res.maxUlpError = Math.max(res.maxUlpError, cmp.maxUlpError);
    if (!cmp.pass && res.pass) {
      const f = cmp.firstFailure!;
      res.pass = false;
      res.message =
        f.index < 0
          ? `output ${k}: ${f.got} elements, expected ${f.want}`
          : `output ${k}[${f.index}]: got ${f.got}, want ${f.want} (tolerance abs ${tol.abs} + rel ${tol.rel})`;
    }
  }
  return res;
}
