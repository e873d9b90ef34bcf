/**
 * Numerical gradient checks: compares autograd's gradients with central differences
 * (f(x + h) − f(x − h)) / 2h, with perturbations and quotients in float64. The function is reduced to
 * a scalar by a fixed random weighting of its output, so every output element contributes.
 */
import { type ComputeBackend, mulberry32 } from '@polyhal/hal';
import { mul, sum } from './ops.js';
import { scope } from './scope.js';
import { noGrad, Tensor } from './tensor.js';

/** One input of the checked function: a float32 tensor built from these, with requiresGrad. */
export interface GradCheckInput {
  /** The input's shape. */
  shape: number[];
  /** Its values, row-major (prod(shape) of them). */
  values: number[];
}

/** What gradCheck found. */
export interface GradCheckResult {
  /** Whether every checked element is within atol + rtol·|numeric| of the central difference. */
  pass: boolean;
  /** Largest |analytic − numeric| / (atol + rtol·|numeric|) over all checked elements (≤ 1 passes). */
  worst: number;
  /** The first five elements out of tolerance, one line each (input, index, analytic and numeric values). */
  details: string[];
}

/**
 * Checks f's gradients at `inputs` on `be` against central differences (f(x + h) − f(x − h)) / 2h in float64:
 * defaults h 1e-2, atol 2e-3, rtol 2e-2 and seed 7 (of the output's random weighting).
 */
export async function gradCheck(
  be: ComputeBackend,
  f: (xs: Tensor[]) => Tensor,
  inputs: GradCheckInput[],
  opts: { h?: number; atol?: number; rtol?: number; seed?: number } = {},
): Promise<GradCheckResult> {
  const h = opts.h ?? 1e-2;
  const atol = opts.atol ?? 2e-3;
  const rtol = opts.rtol ?? 2e-2;
  const rng = mulberry32(opts.seed ?? 7);
  // Probe shape: run once to learn the output shape, then fix a random weighting of the output.
  const outShape = await scope(async () => f(inputs.map((i) => Tensor.fromArray(be, i.values, i.shape))).shape.slice());
  const weights = Array.from({ length: outShape.reduce((p, d) => p * d, 1) }, () => rng() * 2 - 1);
  const objective = (xs: Tensor[]): Tensor => sum(mul(f(xs), Tensor.fromArray(be, weights, outShape)));
  const evalAt = (values: number[][]): Promise<number> =>
    scope(() => noGrad(() => objective(inputs.map((inp, k) => Tensor.fromArray(be, values[k]!, inp.shape))).item()));

  const analytic = await scope(async () => {
    const xs = inputs.map((i) => Tensor.fromArray(be, i.values, i.shape, { requiresGrad: true }));
    objective(xs).backward();
    const gs = await Promise.all(xs.map(async (x) => Array.from(await x.grad!.data())));
    return gs;
  });
  const res: GradCheckResult = { pass: true, worst: 0, details: [] };
  for (let k = 0; k < inputs.length; k++) {
    for (let i = 0; i < inputs[k]!.values.length; i++) {
      const plus = inputs.map((inp) => [...inp.values]);
      const minus = inputs.map((inp) => [...inp.values]);
      plus[k]![i]! += h;
      minus[k]![i]! -= h;
      const numeric = ((await evalAt(plus)) - (await evalAt(minus))) / (2 * h);
      const got = analytic[k]![i]!;
      const ratio = Math.abs(got - numeric) / (atol + rtol * Math.abs(numeric));
      res.worst = Math.max(res.worst, ratio);
      if (!(ratio <= 1)) {
        res.pass = false;
        if (res.details.length < 5) res.details.push(`input ${k}[${i}]: analytic ${got}, numeric ${numeric}`);
      }
    }
  }
  return res;
}
