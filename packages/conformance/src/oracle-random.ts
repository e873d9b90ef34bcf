/**
 * The oracle of the random ops: Philox4x32-10 written again, independently of the HAL's, in BigInt
 * arithmetic (64-bit products taken whole), and the uniform, normal and Bernoulli rules of the op table
 * (hal/src/ops/random-ops.ts) on its words — normals in float64.
 */
import type { Ref } from './oracle.js';

const MASK = 0xffffffffn;
const M = [0xd2511f53n, 0xcd9e8d57n] as const;
const W = [0x9e3779b9n, 0xbb67ae85n] as const;

/** Philox4x32 with `rounds` rounds: counter [4 × uint32], key [2 × uint32] → 4 words (Random123's philox4x32_R). */
export function oPhilox4x32(ctr: readonly number[], key: readonly number[], rounds = 10): number[] {
  let c = ctr.map((v) => BigInt(v >>> 0));
  let k = key.map((v) => BigInt(v >>> 0));
  for (let r = 0; r < rounds; r++) {
    if (r > 0) k = [(k[0]! + W[0]) & MASK, (k[1]! + W[1]) & MASK];
    const p0 = M[0] * c[0]!;
    const p1 = M[1] * c[2]!;
    c = [(p1 >> 32n) ^ c[1]! ^ k[0]!, p1 & MASK, (p0 >> 32n) ^ c[3]! ^ k[1]!, p0 & MASK];
  }
  return c.map((v) => Number(v));
}

/** The uniforms of stream positions offset .. offset + n − 1 of `seed` (the rule of the op table). */
export function oUniforms(seed: number, offset: number, n: number): Float64Array {
  const key = [Number(BigInt(seed) & MASK), Number(BigInt(seed) >> 32n)];
  const out = new Float64Array(n);
  let block = -1n;
  let words: number[] = [];
  for (let i = 0; i < n; i++) {
    const pos = BigInt(offset + i);
    if (pos / 4n !== block) {
      block = pos / 4n;
      words = oPhilox4x32([Number(block & MASK), Number(block >> 32n), 0, 0], key);
    }
    out[i] = Math.floor(words[Number(pos % 4n)]! / 256) / 2 ** 24;
  }
  return out;
}

const numel = (shape: readonly number[]): number => shape.reduce((p, d) => p * d, 1);
const f = Math.fround;

/** randomUniform: low + (high − low)·u with float32 roundings where the op has them (exact otherwise). */
export function oRandomUniform(shape: number[], seed: number, low = 0, high = 1, offset = 0): Ref {
  const u = oUniforms(seed, offset, numel(shape));
  const data = low === 0 && high === 1 ? u : u.map((v) => f(f(v * f(high - low)) + f(low)));
  return { shape: [...shape], data, dtype: 'float32' };
}

/** randomNormal: Box–Muller on the stream's pairs, in float64. */
export function oRandomNormal(shape: number[], seed: number, mean = 0, std = 1, offset = 0): Ref {
  const n = numel(shape);
  const first = offset - (offset % 2);
  const u = oUniforms(seed, first, offset + n - first + ((offset + n - first) % 2));
  const PI_BELOW = 3.1415925025939941; // the float32 just below π
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const pos = offset + i - first;
    const pair = pos - (pos % 2);
    const r = Math.sqrt(-2 * Math.log(1 - u[pair]!));
    const theta = PI_BELOW * (2 * u[pair + 1]! - 1);
    data[i] = mean + std * (pos % 2 === 0 ? r * Math.cos(theta) : r * Math.sin(theta));
  }
  return { shape: [...shape], data, dtype: 'float32' };
}

/** bernoulli: 1 where u < p on the 2^-24 grid (u < ceil(p·2^24)/2^24 is u < p for such u), else 0. */
export function oBernoulli(shape: number[], p: number, seed: number, offset = 0): Ref {
  const u = oUniforms(seed, offset, numel(shape));
  return { shape: [...shape], data: u.map((v) => (v < p ? 1 : 0)), dtype: 'float32' };
}
