/**
 * The random ops' entries of the op table (spread into ARRAY_OP_DEFS, kind 'random'): uniform, normal
 * and Bernoulli arrays from the Philox4x32-10 stream of a seed (hal/src/core/philox.ts, the API in
 * hal/src/families/random/sampling.ts). The uniforms are exact integer arithmetic, so they and the Bernoulli samples
 * are bit-identical on every backend; normals go through float32 log, sqrt, cos and sin.
 */
import type { ArrayOpDef } from './types.js';
import { EXACT } from './types.js';

const F32 = ['float32'] as const;
const STREAM =
  'Element i (row-major) reads position offset + i of the stream of seed (an integer in [0, 2^53), ' +
  'the 64-bit key [seed mod 2^32, floor(seed / 2^32)]): word p mod 4 of Philox4x32-10 of counter ' +
  '[floor(p/4) as two words, 0, 0], u = (word >>> 8)·2^-24. Calls at offset k (n elements) and k + n ' +
  'continue one stream. InvalidArgumentError for a seed or offset that is not an integer ≥ 0 (seed < ' +
  '2^53, offset + n ≤ 2^53).';

export const RANDOM_OP_DEFS = {
  randomUniform: {
    kind: 'random',
    signature: 'randomUniform(shape, seed, {low = 0, high = 1, offset = 0}) → shape',
    semantics:
      `${STREAM} Result low + (high − low)·u in float32 (one mul, one add; rounding may ` +
      `reach high); low ≤ high, both finite. Bit-identical across backends.`,
    dtypes: F32,
    accuracy: { float32: EXACT },
    grad: null,
  },
  randomNormal: {
    kind: 'random',
    signature: 'randomNormal(shape, seed, {mean = 0, std = 1, offset = 0}) → shape',
    semantics:
      `${STREAM} Box–Muller: positions 2k, 2k + 1 share u1 = U(2k), u2 = U(2k + 1); r = ` +
      `sqrt(−2·log(1 − u1)), θ = π⁻·(2·u2 − 1) (π⁻ the float32 below π, so θ stays in [−π, π]); ` +
      `position 2k is r·cos θ, 2k + 1 is r·sin θ; then mean + std·z (std ≥ 0). Composed of HAL ops ` +
      `on the uniforms: within the bound below, not bit for bit (float32 log, cos and sin differ between backends).`,
    dtypes: F32,
    accuracy: {
      float32: { abs: 2e-6, rel: 1e-6 },
      wgsl: {
        accuracy: { abs: 5e-3, rel: 1e-5 },
        why: 'WGSL: sin/cos within 2^-11 absolute (times r ≤ 5.8) and log within 2^-21 absolute near 1',
      },
    },
    grad: null,
  },
  bernoulli: {
    kind: 'random',
    signature: 'bernoulli(shape, p, seed, {offset = 0}) → shape',
    semantics:
      `${STREAM} 1 where u < p, else 0 (float32), so P(1) = ceil(p·2^24) / 2^24; p in [0, ` +
      `1]. Bit-identical across backends.`,
    dtypes: F32,
    accuracy: { float32: EXACT },
    grad: null,
  },
} as const satisfies Record<string, ArrayOpDef>;
