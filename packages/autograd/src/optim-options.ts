/**
 * Checks shared by the optimizers and learning-rate schedulers (internal: not exported by the package
 * index). Each throws InvalidArgumentError naming the owner ('Adam', 'OneCycleLR'), the option and the value.
 */
import {
  type ComputeBackend,
  type DeviceBuffer,
  describeValue,
  InvalidArgumentError,
  type NDArray,
} from '@polyhal/hal';
import type { Tensor } from './tensor.js';

/**
 * Checks hyper-parameter `name` of `owner` (e.g. 'Adam'): a number (not a numeric string) that is
 * finite and satisfies `ok`, else InvalidArgumentError naming the owner, the parameter, its domain and
 * the value. Returns the value.
 */
export function hyper(owner: string, name: string, v: unknown, ok: (x: number) => boolean, domain: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v))
    throw new InvalidArgumentError(`${owner}: ${name} must be a finite number ${domain}, got ${describeValue(v)}`);
  return v;
}
/** x > 0. */
export const positive = (x: number): boolean => x > 0;
/** x ≥ 0. */
export const nonNegative = (x: number): boolean => x >= 0;
/** An integer ≥ 0. */
export const isCount = (x: number): boolean => Number.isInteger(x) && x >= 0;
/** 0 ≤ x < 1 (decay rates). */
export const unitInterval = (x: number): boolean => x >= 0 && x < 1;
/** Option `key` of `o`, `fallback` when absent or undefined (null is a value, and refused by its check). */
export const option = (o: Record<string, unknown>, key: string, fallback: unknown): unknown =>
  o[key] === undefined ? fallback : o[key];

/** The options object of `owner` (undefined → {}), with no key outside `keys` (a misspelt option is an error). */
export function optionsOf(owner: string, opts: unknown, keys: readonly string[]): Record<string, unknown> {
  if (opts === undefined) return {};
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts))
    throw new InvalidArgumentError(
      `${owner}: options must be an object { ${keys.join(', ')} }, got ${describeValue(opts)}`,
    );
  for (const k of Object.keys(opts))
    if (!keys.includes(k))
      throw new InvalidArgumentError(`${owner}: unknown option '${k}' (options: ${keys.join(', ')})`);
  return opts as Record<string, unknown>;
}

/** The optimizer a scheduler drives: an object whose lr is a finite number ≥ 0, else InvalidArgumentError. */
export function checkScheduled(owner: string, optimizer: unknown): void {
  if (optimizer === null || typeof optimizer !== 'object' || !('lr' in optimizer))
    throw new InvalidArgumentError(`${owner}: optimizer must be an Optimizer, got ${describeValue(optimizer)}`);
  hyper(owner, 'optimizer.lr', optimizer.lr, nonNegative, '≥ 0');
}

/**
 * Runs an update written with HAL ops: `fn` gets `t`, which registers an intermediate array for freeing,
 * and returns [target buffer, new value] pairs; each value is copied into its buffer (in place, in
 * order), then every intermediate and value is freed — also when `fn` throws.
 */
export function updateInPlace(be: ComputeBackend, fn: (t: (x: NDArray) => NDArray) => [DeviceBuffer, NDArray][]): void {
  const temps: NDArray[] = [];
  const t = (x: NDArray): NDArray => {
    temps.push(x);
    return x;
  };
  try {
    for (const [target, value] of fn(t)) be.assign(target, value);
  } finally {
    for (const x of temps) be.free(x);
  }
}

/**
 * p ← p − lr·d in place, as an sgdStep without momentum or decay: one kernel whose `lr` a captured step takes
 * afresh at each replay (the composed optimizers' last line).
 */
export function descend(p: Tensor, d: NDArray, lr: number): void {
  p.backend.sgdStep(p.value.buffer, d, null, { lr, momentum: 0, weightDecay: 0 });
}
