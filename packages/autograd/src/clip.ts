/**
 * Gradient clipping, PyTorch's torch.nn.utils.clip_grad_norm_ and clip_grad_value_: in place on the
 * parameters' `.grad`, on the device (nothing is read back). Call between backward() and step().
 */
import { DeviceMismatchError, describeValue, InvalidArgumentError, type NDArray } from '@polyhal/hal';
import { updateInPlace } from './optim-options.js';
import { Tensor } from './tensor.js';

/** Options of clipGradNorm. */
export interface ClipGradNormOptions {
  /** The norm's order p: a finite number > 0 (default 2) or Infinity (the largest |g|). */
  normType?: number;
}

/** The parameters' gradients (those that have one), checked: an array of tensors on one backend. */
function gradsOf(op: string, params: readonly Tensor[]): Tensor[] {
  if (!Array.isArray(params) || params.some((p) => !(p instanceof Tensor)))
    throw new InvalidArgumentError(`${op}: params must be an array of tensors, got ${describeValue(params)}`);
  const grads = params.flatMap((p) => (p.grad ? [p.grad] : []));
  const be = grads[0]?.backend;
  for (const g of grads)
    if (g.backend !== be)
      throw new DeviceMismatchError(`${op}: gradients are on ${be!.name} and ${g.backend.name}; use one backend`);
  return grads;
}

/**
 * Scales every gradient of `params` by min(1, maxNorm / (‖g‖ + 1e-6)), ‖g‖ the p-norm of all gradients
 * together (as if concatenated), so their joint norm is at most `maxNorm`. Returns the norm before
 * clipping, a float32 scalar tensor on the gradients' backend (0 on params[0]'s backend when no
 * parameter has a gradient). InvalidArgumentError for maxNorm not finite and ≥ 0, normType not > 0,
 * params not an array of tensors or empty; DeviceMismatchError for gradients on several backends.
 */
export function clipGradNorm(params: readonly Tensor[], maxNorm: number, options: ClipGradNormOptions = {}): Tensor {
  const op = 'clipGradNorm';
  const grads = gradsOf(op, params);
  if (typeof maxNorm !== 'number' || !Number.isFinite(maxNorm) || maxNorm < 0)
    throw new InvalidArgumentError(`${op}: maxNorm must be a finite number ≥ 0, got ${describeValue(maxNorm)}`);
  const p = options.normType ?? 2;
  if (typeof p !== 'number' || Number.isNaN(p) || p <= 0)
    throw new InvalidArgumentError(`${op}: normType must be a number > 0 or Infinity, got ${describeValue(p)}`);
  if (params.length === 0) throw new InvalidArgumentError(`${op}: params is empty`);
  if (grads.length === 0) return Tensor.full(params[0]!.backend, [], 0);
  const be = grads[0]!.backend;
  let total: NDArray | null = null;
  updateInPlace(be, (t) => {
    const parts = grads.map((g) => {
      const a = t(be.abs(g.value));
      if (p === Number.POSITIVE_INFINITY) return t(be.max(a));
      return t(be.sum(p === 2 ? t(be.mul(a, a)) : p === 1 ? a : t(be.pow(a, p))));
    });
    let acc = parts[0]!;
    for (const x of parts.slice(1)) acc = t(p === Number.POSITIVE_INFINITY ? be.maximum(acc, x) : be.add(acc, x));
    total =
      p === Number.POSITIVE_INFINITY || p === 1 ? be.contiguous(acc) : p === 2 ? be.sqrt(acc) : be.pow(acc, 1 / p);
    const coef = t(be.minimum(t(be.div(t(be.full([], maxNorm)), t(be.add(total, 1e-6)))), 1));
    return grads.map((g) => [g.value.buffer, t(be.mul(g.value, coef))]);
  });
  return new Tensor(be, total!);
}

/**
 * Clamps every gradient of `params` to [−clipValue, clipValue], in place. InvalidArgumentError for
 * clipValue not a finite number ≥ 0 or params not an array of tensors; DeviceMismatchError for
 * gradients on several backends.
 */
export function clipGradValue(params: readonly Tensor[], clipValue: number): void {
  const op = 'clipGradValue';
  const grads = gradsOf(op, params);
  if (typeof clipValue !== 'number' || !Number.isFinite(clipValue) || clipValue < 0)
    throw new InvalidArgumentError(`${op}: clipValue must be a finite number ≥ 0, got ${describeValue(clipValue)}`);
  if (grads.length === 0) return;
  const be = grads[0]!.backend;
  updateInPlace(be, (t) =>
    grads.map((g) => [g.value.buffer, t(be.minimum(t(be.maximum(g.value, -clipValue)), clipValue))]),
  );
}
