import type { NDArray } from './ndarray.js';

/** Frees every array passed to `keep` after `fn`, whether it returns or throws. */
export function withTemps<T>(be: { free(x: NDArray): void }, fn: (keep: <A extends NDArray>(a: A) => A) => T): T {
  const temps: NDArray[] = [];
  try {
    return fn((a) => {
      temps.push(a);
      return a;
    });
  } finally {
    for (const t of temps) be.free(t);
  }
}
