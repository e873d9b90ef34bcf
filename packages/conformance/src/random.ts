/** Seeded input generators (mulberry32), so every case is reproducible from (seed, case id). */
import { mulberry32, type Rng } from '@polyhal/hal';

export { mulberry32, type Rng };

/** FNV-1a hash of a string, to derive a per-case seed from the run seed and the case id. */
export function hashString(s: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Named value generators. Values are float32-representable (rounded with Math.fround) so the oracle
 * sees exactly what the backend sees.
 */
export type Generator =
  | { kind: 'uniform'; lo: number; hi: number }
  | { kind: 'normal'; std: number }
  | { kind: 'positive'; lo: number; hi: number }
  | { kind: 'int'; lo: number; hi: number }
  | { kind: 'nonzero'; lo: number; hi: number }
  | { kind: 'special' }
  | { kind: 'onehot'; classes: number };

/** IEEE special and edge values mixed into `special` inputs. */
export const SPECIAL_VALUES: readonly number[] = [
  NaN,
  Infinity,
  -Infinity,
  0,
  -0,
  1,
  -1,
  1e-30,
  -1e-30,
  1.4e-45,
  -1.4e-45,
  1.1754942e-38,
  1000,
  -1000,
  88.7,
  -103,
  3.4e38,
  -3.4e38,
  0.5,
  -0.5,
  2,
  1e-7,
];

/** `size` values drawn from `gen` with `rng`, each rounded to float32 (integers for `int`, 0/1 for `onehot`). */
export function generate(gen: Generator, size: number, rng: Rng): number[] {
  const out = new Array<number>(size);
  let hot = 0;
  for (let i = 0; i < size; i++) {
    switch (gen.kind) {
      case 'uniform':
        out[i] = Math.fround(gen.lo + (gen.hi - gen.lo) * rng());
        break;
      case 'normal': {
        const u = Math.max(rng(), 1e-12);
        out[i] = Math.fround(gen.std * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng()));
        break;
      }
      case 'positive':
        out[i] = Math.fround(gen.lo + (gen.hi - gen.lo) * rng());
        break;
      case 'int':
        out[i] = gen.lo + Math.floor((gen.hi - gen.lo + 1) * rng());
        break;
      case 'nonzero': {
        const v = Math.fround(gen.lo + (gen.hi - gen.lo) * rng());
        out[i] = Math.abs(v) < 0.05 ? 0.5 : v;
        break;
      }
      case 'special':
        out[i] = Math.fround(
          i < SPECIAL_VALUES.length ? SPECIAL_VALUES[i]! : SPECIAL_VALUES[Math.floor(rng() * SPECIAL_VALUES.length)]!,
        );
        break;
      case 'onehot': {
        if (i % gen.classes === 0) hot = Math.floor(rng() * gen.classes);
        out[i] = i % gen.classes === hot ? 1 : 0;
        break;
      }
    }
  }
  return out;
}
