/**
 * Dynamic loss scaling for mixed-precision training (PyTorch's `torch.amp.GradScaler`, Micikevicius et al.
 * 2018, "Mixed Precision Training"): the loss is multiplied by a scale so that small gradients survive the
 * float16 parts of backward, the gradients are divided by it before the optimizer steps, and a step whose
 * gradients hold an Inf or NaN (an overflow) is skipped and the scale lowered.
 */
import {
  type ComputeBackend,
  type DeviceBuffer,
  InvalidArgumentError,
  isWholeBuffer,
  type NDArray,
  withTemps,
} from '@polyhal/hal';
import { mul } from './ops.js';
import type { Optimizer } from './optim.js';
import { keep } from './scope.js';
import { noGrad, Tensor } from './tensor.js';

/** Options of GradScaler (PyTorch's names and defaults). */
export interface GradScalerOptions {
  /** The first scale: finite, > 0 (default 2^16). */
  initScale?: number;
  /** The scale's factor after `growthInterval` steps without overflow: > 1 (default 2). */
  growthFactor?: number;
  /** The scale's factor after an overflow: in (0, 1) (default 0.5). */
  backoffFactor?: number;
  /** Consecutive steps without overflow before the scale grows: an integer ≥ 1 (default 2000). */
  growthInterval?: number;
  /** false makes every method a pass-through: scale(loss) is loss, step(optimizer) steps (default true). */
  enabled?: boolean;
}

/** GradScaler's counters (`stateDict`), to save and restore with a checkpoint. */
export interface GradScalerState {
  /** The current scale. */
  scale: number;
  /** Steps without overflow since the scale last changed. */
  growthTracker: number;
  /** The factor the scale grows by after `growthInterval` steps without overflow. */
  growthFactor: number;
  /** The factor the scale shrinks by after a step whose gradients overflowed. */
  backoffFactor: number;
  /** Steps without overflow before the scale grows. */
  growthInterval: number;
}

/** Where one optimizer is between two `update()` calls. */
interface Stage {
  unscaled: boolean;
  stepped: boolean;
  /** Whether its gradients held an Inf or NaN (known once unscaled). */
  foundInf: boolean;
}

function check(name: string, v: number | undefined, dflt: number, ok: (x: number) => boolean, want: string): number {
  const x = v ?? dflt;
  if (typeof x !== 'number' || !ok(x))
    throw new InvalidArgumentError(`GradScaler: ${name} must be ${want}, got ${String(x)}`);
  return x;
}

/**
 * Dynamic loss scaling. Per iteration: `scaler.scale(loss).backward()`, `await scaler.step(optimizer)`,
 * `scaler.update()`. `step` unscales the gradients (each ·1/scale, in place) unless `unscale` already did (to
 * clip them first), checks all of them for Inf/NaN in the same pass (the HAL's nonFiniteCheckAndUnscale, one
 * call and one read per backend), and runs `optimizer.step()` only when all are finite; `update` then multiplies
 * the scale by `backoffFactor` after an overflow, or by `growthFactor` after `growthInterval` clean steps in a row.
 * Not inside `compile`: `step` reads the overflow flag on the host (a capture refuses a read).
 * Misuse is an InvalidArgumentError: `unscale` or `step` twice on one optimizer before `update`, `update`
 * with no `step` since the last one, a scale that is not finite and > 0.
 */
export class GradScaler {
  private scaleValue: number;
  private growthTracker = 0;
  private readonly growthFactor: number;
  private readonly backoffFactor: number;
  private readonly growthInterval: number;
  private readonly enabled: boolean;
  private stages = new Map<Optimizer, Stage>();

  constructor(options: GradScalerOptions = {}) {
    this.scaleValue = check('initScale', options.initScale, 2 ** 16, (x) => Number.isFinite(x) && x > 0, 'finite, > 0');
    this.growthFactor = check('growthFactor', options.growthFactor, 2, (x) => Number.isFinite(x) && x > 1, '> 1');
    this.backoffFactor = check('backoffFactor', options.backoffFactor, 0.5, (x) => x > 0 && x < 1, 'in (0, 1)');
    this.growthInterval = check(
      'growthInterval',
      options.growthInterval,
      2000,
      (x) => Number.isInteger(x) && x >= 1,
      'an integer ≥ 1',
    );
    this.enabled = options.enabled ?? true;
  }

  /** Whether the scaler scales (false: every method passes through). */
  isEnabled(): boolean {
    return this.enabled;
  }

  /** The current scale (1 when disabled). */
  getScale(): number {
    return this.enabled ? this.scaleValue : 1;
  }

  /** Consecutive steps without overflow since the scale last changed. */
  getGrowthTracker(): number {
    return this.growthTracker;
  }

  /**
   * loss · scale, a new tensor in the graph (a float16 loss is cast to float32 first, so the product
   * cannot overflow where float32 holds it). Any shape; backward of a non-scalar needs its gradOutput as
   * usual. Disabled: `loss` itself.
   */
  scale(loss: Tensor): Tensor {
    if (!(loss instanceof Tensor)) throw new InvalidArgumentError('GradScaler.scale: loss must be a Tensor');
    if (!this.enabled) return loss;
    if (loss.dtype !== 'float32' && loss.dtype !== 'float16')
      throw new InvalidArgumentError(`GradScaler.scale: loss must be float32 or float16, got ${loss.dtype}`);
    return mul(loss.dtype === 'float16' ? loss.cast('float32') : loss, this.scaleValue);
  }

  private stage(optimizer: Optimizer): Stage {
    let s = this.stages.get(optimizer);
    if (!s) {
      s = { unscaled: false, stepped: false, foundInf: false };
      this.stages.set(optimizer, s);
    }
    return s;
  }

  /**
   * Divides every gradient of `optimizer`'s parameters by the scale and records whether any holds an Inf or NaN:
   * per backend, one `nonFiniteCheckAndUnscale` over all its float32 gradients (multiplied in place, checked in
   * the same pass; PyTorch's `_amp_foreach_non_finite_check_and_unscale_`) and one read of its flag. A gradient
   * that is a view, or whose buffer another gradient of the list holds, is first replaced by a copy of its own; a
   * gradient of another dtype (float16) is unscaled by `mul` and checked by `all(isfinite)`, as separate ops. The
   * products are those of `mul(grad, 1/scale)`, bit for bit. Call it before clipping gradients; `step` then does not
   * unscale again. InvalidArgumentError when called twice for one optimizer before `update`, or after its `step`.
   */
  async unscale(optimizer: Optimizer): Promise<void> {
    if (!this.enabled) return;
    const s = this.stage(optimizer);
    if (s.unscaled)
      throw new InvalidArgumentError('GradScaler.unscale: already called for this optimizer since the last update()');
    if (s.stepped)
      throw new InvalidArgumentError('GradScaler.unscale: step() was already called since the last update()');
    const inv = 1 / this.scaleValue;
    const flags = new Map<ComputeBackend, NDArray>(); // float32 [1]: 1 once an Inf or NaN was met
    try {
      noGrad(() => {
        const lists = new Map<ComputeBackend, DeviceBuffer[]>();
        const seen = new Set<string>(); // backend id / buffer id of the gradients listed
        for (const p of optimizer.params) {
          const g = p.grad;
          if (!g) continue;
          const be = g.backend;
          let flag = flags.get(be);
          if (!flag) flags.set(be, (flag = be.full([1], 0, 'float32')));
          if (g.dtype !== 'float32') {
            const unscaled = be.mul(g.value, inv);
            p.grad = keep(new Tensor(be, unscaled)); // a gradient outlives the scope, as backward's
            g.dispose();
            const next = withTemps(be, (t) => be.where(t(be.all(t(be.isfinite(unscaled)))), flag, 1));
            be.free(flag);
            flags.set(be, next);
            continue;
          }
          const key = `${be.id}/${g.value.buffer.id}`;
          const shared = seen.has(key);
          let value = g.value;
          if (shared || !isWholeBuffer(value)) {
            value = be.contiguous(value);
            p.grad = keep(new Tensor(be, value));
            if (!shared) g.dispose(); // a shared one stays the other parameter's
          }
          const buffer = value.buffer;
          seen.add(`${be.id}/${buffer.id}`);
          const list = lists.get(be);
          if (list) list.push(buffer);
          else lists.set(be, [buffer]);
        }
        for (const [be, list] of lists) be.nonFiniteCheckAndUnscale(list, flags.get(be)!.buffer, inv);
      });
      let foundInf = false;
      for (const [be, flag] of flags) if ((await be.read(flag))[0] !== 0) foundInf = true;
      s.unscaled = true;
      s.foundInf = foundInf;
    } finally {
      for (const [be, flag] of flags) be.free(flag);
    }
  }

  /**
   * Unscales `optimizer`'s gradients (unless `unscale` did) and runs `optimizer.step()` when every one is
   * finite; skips it otherwise, leaving the parameters and the optimizer's state as they were. Resolves to
   * whether it stepped. Disabled: steps. InvalidArgumentError when called twice for one optimizer before
   * `update`.
   */
  async step(optimizer: Optimizer): Promise<boolean> {
    if (!this.enabled) {
      optimizer.step();
      return true;
    }
    const s = this.stage(optimizer);
    if (s.stepped)
      throw new InvalidArgumentError('GradScaler.step: already called for this optimizer since the last update()');
    if (!s.unscaled) await this.unscale(optimizer);
    s.stepped = true;
    if (s.foundInf) return false;
    optimizer.step();
    return true;
  }

  /**
   * Adjusts the scale for the next iteration from what the `step`s since the last update found: any
   * overflow → scale · backoffFactor and the growth count restarts; else the count grows, and at
   * `growthInterval` the scale is multiplied by growthFactor (and the count restarts). `newScale` (finite,
   * > 0) sets the scale instead. InvalidArgumentError when no `step` ran since the last update.
   */
  update(newScale?: number): void {
    if (!this.enabled) return;
    if (newScale !== undefined) {
      this.scaleValue = check('newScale', newScale, 1, (x) => Number.isFinite(x) && x > 0, 'finite, > 0');
      this.growthTracker = 0;
      this.stages.clear();
      return;
    }
    const stepped = [...this.stages.values()].filter((s) => s.stepped || s.unscaled);
    if (stepped.length === 0)
      throw new InvalidArgumentError('GradScaler.update: no step(optimizer) (no inf check) since the last update()');
    if (stepped.some((s) => s.foundInf)) {
      this.scaleValue *= this.backoffFactor;
      this.growthTracker = 0;
    } else if (++this.growthTracker === this.growthInterval) {
      const grown = this.scaleValue * this.growthFactor;
      if (Number.isFinite(grown)) this.scaleValue = grown;
      this.growthTracker = 0;
    }
    this.stages.clear();
  }

  /** The scale, growth count and settings, to save with a checkpoint. */
  stateDict(): GradScalerState {
    return {
      scale: this.scaleValue,
      growthTracker: this.growthTracker,
      growthFactor: this.growthFactor,
      backoffFactor: this.backoffFactor,
      growthInterval: this.growthInterval,
    };
  }

  /** Restores the scale and growth count of `stateDict()` (the settings stay the constructor's). */
  loadStateDict(state: GradScalerState): void {
    this.scaleValue = check('state.scale', state?.scale, 1, (x) => Number.isFinite(x) && x > 0, 'finite, > 0');
    this.growthTracker = check(
      'state.growthTracker',
      state.growthTracker,
      0,
      (x) => Number.isInteger(x) && x >= 0,
      'an integer ≥ 0',
    );
  }
}
