/**
 * The recording of a traced run: every method of one backend instance is wrapped (as own properties of the
 * instance, deleted after, the mechanism of autograd's `compile`), and each top-level call — one the traced code
 * made, not one a backend method made inside another — is handed to `onCall` with its arguments and result,
 * in order, as it returns. Calls of the HAL's random family are counted, so that a function that draws random
 * numbers is refused.
 */
import type { ComputeBackend } from '@polyhal/hal';
import { FAMILIES } from '@polyhal/hal/internal';

/** The HAL's random methods (randomUniform, randomNormal, bernoulli, ...). */
export const RANDOM_METHODS: ReadonlySet<string> = new Set(Object.keys(FAMILIES.random));

/** A recorded top-level call. */
export type OnCall = (method: string, args: readonly unknown[], result: unknown) => void;

/** The methods of `be` (its prototype chain's function-valued data properties, and its own). */
function methodNames(be: ComputeBackend): string[] {
  const names = new Set<string>();
  for (let p: object | null = be; p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const k of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, k);
      if (k !== 'constructor' && d && 'value' in d && typeof d.value === 'function') names.add(k);
    }
  return [...names];
}

/**
 * Runs `run` with every method of `be` recorded (see the module's comment); returns its result and the random
 * methods called. The originals of the methods are `originals` for the caller's own reads during the run.
 */
export function traceBackend<T>(
  be: ComputeBackend,
  onCall: OnCall,
  run: (originals: Readonly<Record<string, (...a: unknown[]) => unknown>>) => T,
): { result: T; random: string[] } {
  const own = be as unknown as Record<string, unknown>;
  const names = methodNames(be);
  const ownBefore = new Map(names.filter((m) => Object.hasOwn(own, m)).map((m) => [m, own[m]]));
  const originals: Record<string, (...a: unknown[]) => unknown> = {};
  const random = new Set<string>();
  let depth = 0;
  for (const m of names) {
    const orig = own[m] as (...a: unknown[]) => unknown;
    // the caller's own calls (its reads of weights) are not the traced code's: never recorded
    originals[m] = (...a: unknown[]) => {
      depth++;
      try {
        return orig.apply(be, a);
      } finally {
        depth--;
      }
    };
    own[m] = (...a: unknown[]) => {
      if (RANDOM_METHODS.has(m)) random.add(m);
      depth++;
      let result: unknown;
      try {
        result = orig.apply(be, a);
      } finally {
        depth--;
      }
      if (depth === 0) onCall(m, a, result);
      return result;
    };
  }
  try {
    return { result: run(originals), random: [...random] };
  } finally {
    for (const m of names) {
      if (ownBefore.has(m)) own[m] = ownBefore.get(m);
      else delete own[m];
    }
  }
}
