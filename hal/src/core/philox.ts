/**
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11;
 * the constants and round function of the Random123 reference, which JAX and PyTorch use): a
 * counter-based generator, a pure function of a 128-bit counter and a 64-bit key giving four 32-bit
 * words. Everything here is exact 32-bit integer arithmetic, so every backend computes the same bits.
 *
 * The HAL's random stream for a seed: position p (0, 1, 2, ...) is word p mod 4 of
 * philox4x32_10(counter = [floor(p/4) mod 2^32, floor(p/4 / 2^32), 0, 0], key = [seed mod 2^32,
 * floor(seed / 2^32)]), and its uniform is (word >>> 8) · 2^-24, in [0, 1) on the float32 grid of
 * 2^-24 (exact in float32). A call with `offset` reads positions offset, offset + 1, ...: a call of n
 * elements at offset k and one at k + n continue one stream without overlap.
 */
import { InvalidArgumentError } from './errors.js';
import { describeValue } from './errors.js';

/** The Philox4x32 multipliers and Weyl key increments (Random123's PHILOX_M4x32_0/1, PHILOX_W32_0/1). */
export const PHILOX_M0 = 0xd2511f53;
/** The second Philox4x32 multiplier (PHILOX_M4x32_1). */
export const PHILOX_M1 = 0xcd9e8d57;
/** The Weyl increment of key word 0 per round (PHILOX_W32_0, the golden ratio's bits). */
export const PHILOX_W0 = 0x9e3779b9;
/** The Weyl increment of key word 1 per round (PHILOX_W32_1, √3 − 1's bits). */
export const PHILOX_W1 = 0xbb67ae85;

/** Where a kernel's output starts in a stream: what the randomUniformKernel hook receives. */
export interface PhiloxStream {
  /** The 64-bit key (the seed) as [low, high] 32-bit words. */
  readonly key: readonly [number, number];
  /** The block of out[0]: floor(offset / 4) as [low, high] 32-bit words (counter words 0 and 1; words 2, 3 are 0). */
  readonly block: readonly [number, number];
  /**
   * out[0] is word `skip` = offset mod 4 of its block; out[i] is word (skip + i) mod 4 of block + floor((skip +
   * i) / 4).
   */
  readonly skip: number;
}

/** The high 32 bits of the 64-bit product of two uint32s, from 16-bit halves (exact in doubles). */
export function mulhi32(a: number, b: number): number {
  const al = a & 0xffff;
  const ah = a >>> 16;
  const bl = b & 0xffff;
  const bh = b >>> 16;
  const lh = al * bh;
  const hl = ah * bl;
  const mid = ((al * bl) >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (ah * bh + (lh >>> 16) + (hl >>> 16) + (mid >>> 16)) >>> 0;
}

/**
 * Philox4x32 with `rounds` rounds (10 for Philox4x32-10) of counter [c0, c1, c2, c3] and key [k0, k1]
 * (uint32 each): the four output words. Round: (hi0, lo0) = M0·c0, (hi1, lo1) = M1·c2;
 * c ← [hi1 ⊕ c1 ⊕ k0, lo1, hi0 ⊕ c3 ⊕ k1, lo0]; the key gains (W0, W1) between rounds.
 */
export function philox4x32(
  ctr: readonly [number, number, number, number],
  key: readonly [number, number],
  rounds = 10,
): [number, number, number, number] {
  let [c0, c1, c2, c3] = ctr.map((v) => v >>> 0) as [number, number, number, number];
  let k0 = key[0] >>> 0;
  let k1 = key[1] >>> 0;
  for (let r = 0; r < rounds; r++) {
    if (r > 0) {
      k0 = (k0 + PHILOX_W0) >>> 0;
      k1 = (k1 + PHILOX_W1) >>> 0;
    }
    const hi0 = mulhi32(PHILOX_M0, c0);
    const lo0 = Math.imul(PHILOX_M0, c0) >>> 0;
    const hi1 = mulhi32(PHILOX_M1, c2);
    const lo1 = Math.imul(PHILOX_M1, c2) >>> 0;
    [c0, c1, c2, c3] = [(hi1 ^ c1 ^ k0) >>> 0, lo1, (hi0 ^ c3 ^ k1) >>> 0, lo0];
  }
  return [c0, c1, c2, c3];
}

/** The uniform of 32 random bits: (bits >>> 8) · 2^-24, in [0, 1) and exact in float32. */
export function bitsToUniform(bits: number): number {
  return (bits >>> 8) * 2 ** -24;
}

/**
 * Checks a seed: an integer in [0, 2^53) (a JavaScript number's exact integers), else
 * InvalidArgumentError. It is the 64-bit Philox key [seed mod 2^32, floor(seed / 2^32)].
 */
export function checkSeed(seed: unknown, op: string): asserts seed is number {
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0)
    throw new InvalidArgumentError(
      `${op}: seed must be an integer in [0, 2^53), got ${describeValue(seed)} (it is the 64-bit Philox key)`,
    );
}

/** Checks an offset (an integer ≥ 0 with offset + n ≤ 2^53) and returns where the stream starts. */
export function philoxStream(op: string, seed: unknown, offset: unknown, n: number): PhiloxStream {
  checkSeed(seed, op);
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0 || offset + n > 2 ** 53)
    throw new InvalidArgumentError(
      `${op}: offset must be an integer ≥ 0 with offset + size ≤ 2^53, got ${describeValue(offset)}`,
    );
  const block = Math.floor(offset / 4);
  return {
    key: [seed % 2 ** 32, Math.floor(seed / 2 ** 32)],
    block: [block % 2 ** 32, Math.floor(block / 2 ** 32)],
    skip: offset % 4,
  };
}

/**
 * Fills `out` with the stream's uniforms (exact 32-bit integer arithmetic, the round function
 * inlined): the host implementation, BaseBackend's default randomUniformKernel and the cpu kernel.
 */
export function philoxUniformFill(out: Float32Array | Float64Array, s: PhiloxStream): void {
  const n = out.length;
  const k0 = s.key[0] >>> 0;
  const k1 = s.key[1] >>> 0;
  let b0 = s.block[0] >>> 0;
  let b1 = s.block[1] >>> 0;
  let i = -s.skip; // out index of word 0 of the current block
  const words = [0, 0, 0, 0];
  while (i < n) {
    let c0 = b0;
    let c1 = b1;
    let c2 = 0;
    let c3 = 0;
    let key0 = k0;
    let key1 = k1;
    for (let r = 0; r < 10; r++) {
      const hi0 = mulhi32(PHILOX_M0, c0);
      const lo0 = Math.imul(PHILOX_M0, c0);
      const hi1 = mulhi32(PHILOX_M1, c2);
      const lo1 = Math.imul(PHILOX_M1, c2);
      c0 = hi1 ^ c1 ^ key0;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ key1;
      c3 = lo0;
      key0 = (key0 + PHILOX_W0) | 0;
      key1 = (key1 + PHILOX_W1) | 0;
    }
    words[0] = c0;
    words[1] = c1;
    words[2] = c2;
    words[3] = c3;
    for (let w = 0; w < 4; w++) {
      const j = i + w;
      if (j >= 0 && j < n) out[j] = (words[w]! >>> 8) * 2 ** -24;
    }
    i += 4;
    b0 = (b0 + 1) >>> 0;
    if (b0 === 0) b1 = (b1 + 1) >>> 0;
  }
}
