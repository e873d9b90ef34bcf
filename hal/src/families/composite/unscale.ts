/**
 * Mixed precision's gradient unscaling (ops/amp-ops.ts): `nonFiniteCheckAndUnscale(grads, foundInf, invScale)`,
 * after PyTorch's `torch._amp_foreach_non_finite_check_and_unscale_`. Each gradient is multiplied in place by
 * invScale and foundInf[0] becomes 1 where any element of any gradient is Inf or NaN (before or after the
 * multiply). The operands are validated here, before anything is written; the default kernel is composed from
 * HAL ops, and a backend with the optional hook `nonFiniteCheckAndUnscaleKernel` (hooks.ts) runs fused kernels.
 *
 * For a finite float32 factor v, x·v is non-finite whenever x is (Inf·0 and NaN·v are NaN, Inf·v is ±Inf), so a
 * kernel that tests the rounded product alone already tests the operand; the product can also overflow to ±Inf
 * from a finite operand (invScale > 1), which flags the gradients too, as GradScaler wants.
 */
import type { ComputeBackend } from '../../backend.js';
import { DTypeError, describeValue, InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import { withTemps } from '../../core/temps.js';

const OP = 'nonFiniteCheckAndUnscale';

/**
 * The operands of nonFiniteCheckAndUnscale: `grads` an array of live float32 buffers (each through `liveBuffer`,
 * the backend's checkBuffer), none listed twice and none foundInf's (InvalidArgumentError: it would be scaled
 * twice, or the flag scaled); foundInf a live float32 buffer of one element (DTypeError, ShapeMismatchError);
 * invScale a finite number (InvalidArgumentError). Nothing is written.
 */
export function checkUnscaleOperands(
  grads: readonly DeviceBuffer[],
  foundInf: DeviceBuffer,
  invScale: number,
  liveBuffer: (buffer: DeviceBuffer, arg: string) => void,
): void {
  if (!Array.isArray(grads))
    throw new InvalidArgumentError(`${OP}: grads must be an array of DeviceBuffers, got ${describeValue(grads)}`);
  if (typeof invScale !== 'number' || !Number.isFinite(invScale))
    throw new InvalidArgumentError(`${OP}: invScale must be a finite number, got ${describeValue(invScale)}`);
  liveBuffer(foundInf, 'foundInf');
  if (foundInf.dtype !== 'float32') throw new DTypeError(`${OP}: foundInf must be float32, got ${foundInf.dtype}`);
  if (foundInf.size !== 1)
    throw new ShapeMismatchError(`${OP}: foundInf must hold one element, it holds ${foundInf.size}`, [
      [foundInf.size],
      [1],
    ]);
  const seen = new Set<number>([foundInf.id]);
  grads.forEach((g, i) => {
    liveBuffer(g, `grads[${i}]`);
    if (g.dtype !== 'float32') throw new DTypeError(`${OP}: grads[${i}] must be float32, got ${g.dtype}`);
    if (seen.has(g.id))
      throw new InvalidArgumentError(
        `${OP}: grads[${i}] is ${g.id === foundInf.id ? 'foundInf' : 'listed twice'}; every buffer must be distinct`,
      );
    seen.add(g.id);
  });
}

/**
 * The default kernel, from HAL ops on validated operands: per gradient y = g·invScale (mul rounds invScale and
 * the product to float32), its finiteness with g's (isfinite, logicalAnd, all), y assigned into g; then
 * foundInf ← where(every element finite, foundInf, 1). About six kernels per gradient on a GPU.
 */
export function nonFiniteCheckAndUnscaleComposite(
  be: ComputeBackend,
  grads: readonly DeviceBuffer[],
  foundInf: DeviceBuffer,
  invScale: number,
): void {
  withTemps(be, (t) => {
    let finite: NDArray | null = null;
    for (const g of grads) {
      if (g.size === 0) continue;
      const x = viewOf(g);
      const y = t(be.mul(x, invScale));
      const ok = t(be.all(t(be.logicalAnd(t(be.isfinite(x)), t(be.isfinite(y))))));
      finite = finite ? t(be.logicalAnd(finite, ok)) : ok;
      be.assign(g, y);
    }
    if (finite) be.assign(foundInf, t(be.where(finite, viewOf(foundInf), 1)));
  });
}
