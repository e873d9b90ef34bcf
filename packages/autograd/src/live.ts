/**
 * The autograd's side of a capture's live values (hal/src/capture.ts, LiveValues): host numbers that change from
 * call to call — an optimizer's learning rate and step count, a generator's or a Dropout layer's stream position —
 * reach a backend that captures through `liveSection`, so that `compile` replays them as eager calls would; work
 * done once (an optimizer's new state) goes through `once`. Internal (not exported by the package index).
 */
import type { ComputeBackend, LiveValues } from '@polyhal/hal';
import type { Tensor } from './tensor.js';

let sections = 0;

/** Runs `run` as a live section of `be`'s running capture (plain `run()` without a capture or the method). */
export function liveSection<T>(be: ComputeBackend, live: LiveValues, run: () => T): T {
  sections++;
  return be.captureLive ? be.captureLive(live, run) : run();
}

/** How many live sections have run (compile refuses a trace that ran one on a backend without captureLive). */
export function liveSectionCount(): number {
  return sections;
}

/** Runs `run` unrecorded by `be`'s running capture (its work is done once; plain `run()` without a capture). */
export function once<T>(be: ComputeBackend, run: () => T): T {
  return be.uncaptured ? be.uncaptured(run) : run();
}

let zeroGradObserver: ((params: readonly Tensor[]) => void) | null = null;

/** Sets (or clears, with null) the observer of optimizers' zeroGrad calls; returns the one it replaces. */
export function observeZeroGrad(fn: ((params: readonly Tensor[]) => void) | null) {
  const prev = zeroGradObserver;
  zeroGradObserver = fn;
  return prev;
}

/** Tells the observer (compile's trace) that `params`' gradients were freed. */
export function zeroedGrads(params: readonly Tensor[]): void {
  zeroGradObserver?.(params);
}
