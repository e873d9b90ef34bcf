/**
 * Memory management for tensors: `scope` frees every tensor created inside it except what it returns
 * (like tfjs `tidy`, but it also works with async functions), `keep` exempts a tensor, and a
 * FinalizationRegistry safety net reports (and frees) tensors that were garbage-collected undisposed.
 *
 * Scopes nest and follow the code that runs between `scope` entering and its promise settling; two
 * scopes running concurrently (interleaved awaits) would share tracking, so run them one after another.
 */
/** What a scope tracks and frees: a tensor, or anything else with the same two members. */
export interface Disposable {
  /** Frees what it holds; a second call does nothing. */
  dispose(): void;
  /** Whether dispose() has run. */
  readonly isDisposed: boolean;
}

const stack: Set<Disposable>[] = [];

/** Called by every new tensor: the innermost open scope tracks it. */
export function track<T extends Disposable>(t: T): T {
  stack[stack.length - 1]?.add(t);
  return t;
}

/** Exempts a tensor from the scopes it was created in (it then lives until disposed). */
export function keep<T extends Disposable>(t: T): T {
  for (const s of stack) s.delete(t);
  return t;
}

function collect(value: unknown, out: Set<Disposable>, depth = 0): void {
  if (!value || typeof value !== 'object' || depth > 4) return;
  if (typeof (value as Disposable).dispose === 'function' && 'isDisposed' in (value as object)) {
    out.add(value as Disposable);
    return;
  }
  if (Array.isArray(value)) for (const v of value) collect(v, out, depth + 1);
  else if (Object.getPrototypeOf(value) === Object.prototype)
    for (const v of Object.values(value)) collect(v, out, depth + 1);
}

function close(frame: Set<Disposable>, result: unknown): void {
  const keepSet = new Set<Disposable>();
  collect(result, keepSet);
  stack.splice(stack.lastIndexOf(frame), 1);
  for (const t of frame) {
    if (keepSet.has(t)) stack[stack.length - 1]?.add(t);
    else if (!t.isDisposed) t.dispose();
  }
}

/**
 * Runs `fn` and disposes every tensor it created, except those in its result (a tensor, or arrays and
 * plain objects of tensors), which move to the enclosing scope. Works with sync and async `fn`.
 */
export function scope<T>(fn: () => T): T {
  const frame = new Set<Disposable>();
  stack.push(frame);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    close(frame, undefined);
    throw e;
  }
  if (result instanceof Promise) {
    return result.then(
      (v) => {
        close(frame, v);
        return v;
      },
      (e) => {
        close(frame, undefined);
        throw e;
      },
    ) as T;
  }
  close(frame, result);
  return result;
}

/** How leaks found by the garbage collector are reported (default: console.warn). */
export let leakReporter: (message: string) => void = (m) => console.warn(m);
/** Replaces leakReporter (e.g. to collect leak messages in tests, or to throw). */
export function setLeakReporter(fn: (message: string) => void): void {
  leakReporter = fn;
}

interface LeakRecord {
  description: string;
  release: () => boolean;
}

/** Safety net: a tensor collected without dispose() is reported and its buffer freed. */
export const leakRegistry = new FinalizationRegistry<LeakRecord>((rec) => {
  if (rec.release())
    leakReporter(`polyhal: a tensor was garbage-collected without dispose(): ${rec.description}; its buffer was freed`);
});
