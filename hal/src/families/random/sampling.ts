/**
 * Random numbers on the device: uniform, normal and Bernoulli samples from the Philox4x32-10 stream of
 * a seed (hal/src/core/philox.ts), the same on every backend. One kernel hook fills uniforms
 * (randomUniformKernel, exact integer arithmetic: bit-identical everywhere); normals and Bernoulli
 * samples are composed from it with HAL ops.
 */
import type { ComputeBackend } from '../../backend.js';
import type { FamilyTable } from '../../contract/family-table.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { type DeviceBuffer, type NDArray, viewOf } from '../../core/ndarray.js';
import { type PhiloxStream, philoxStream } from '../../core/philox.js';
import { assertShape, sizeOf } from '../../core/shape.js';
import { withTemps } from '../../core/temps.js';
import { describeValue } from '../../contract/validate.js';

/** Options of `randomUniform`: values in [low, high). */
export interface RandomUniformOptions {
  /** Lower bound (default 0). */
  low?: number;
  /** Upper bound (default 1). */
  high?: number;
  /** Stream position of the first element (default 0): see RandomMethods. */
  offset?: number;
}

/** Options of `randomNormal`: values from N(mean, std²). */
export interface RandomNormalOptions {
  /** Mean (default 0). */
  mean?: number;
  /** Standard deviation (default 1, ≥ 0). */
  std?: number;
  /** Stream position of the first element (default 0). */
  offset?: number;
}

/** Options of `bernoulli`. */
export interface BernoulliOptions {
  /** Stream position of the first element (default 0). */
  offset?: number;
}

/**
 * Random arrays (float32, row-major `shape`) from the Philox4x32-10 stream of `seed` — an integer in
 * [0, 2^53), the 64-bit key [seed mod 2^32, floor(seed / 2^32)]; anything else is an
 * InvalidArgumentError. Element i reads stream position offset + i (`offset`: an integer ≥ 0, default
 * 0), so a call at offset k of n elements and one at k + n continue one stream without overlap, and
 * the same seed, shape and offset give the same array on every backend and every run.
 */
export interface RandomMethods {
  /**
   * Uniform samples in [low, high) (PyTorch `torch.rand`/`uniform_`, JAX `random.uniform`): position
   * p's uniform u = (bits >>> 8) · 2^-24 (a multiple of 2^-24 in [0, 1)), then low + (high − low)·u in
   * float32 (one mul, one add; rounding may reach `high`). Bit-identical across backends.
   * InvalidArgumentError unless low and high are finite with low ≤ high.
   */
  randomUniform(shape: readonly number[], seed: number, options?: RandomUniformOptions): NDArray;
  /**
   * Normal samples (Box–Muller): positions 2k and 2k + 1 share the uniforms u1 = U(2k), u2 = U(2k + 1);
   * r = sqrt(−2·log(1 − u1)) (finite: 1 − u1 > 0), θ = π₃₂⁻·(2·u2 − 1) with π₃₂⁻ the float32 below π,
   * so θ stays in [−π, π] where WGSL bounds sin and cos; position 2k is r·cos θ, 2k + 1 is r·sin θ; then
   * mean + std·z. Within the entry's tolerance of the float64 formula on every backend, not bit for bit
   * (float32 log, cos and sin differ). InvalidArgumentError unless mean and std are finite, std ≥ 0.
   */
  randomNormal(shape: readonly number[], seed: number, options?: RandomNormalOptions): NDArray;
  /**
   * Bernoulli samples (PyTorch `torch.bernoulli` with a scalar p): 1 where u < p, else 0, with u the
   * position's uniform, so P(1) = ceil(p·2^24) / 2^24. Bit-identical across backends.
   * InvalidArgumentError unless p is in [0, 1].
   */
  bernoulli(shape: readonly number[], p: number, seed: number, options?: BernoulliOptions): NDArray;
}

/** The float32 just below π: θ = PI_BELOW·(2u − 1) never leaves [−π, π]. */
export const PI_BELOW = 3.1415925025939941;

function checkFinite(v: unknown, op: string, arg: string): asserts v is number {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new InvalidArgumentError(`${op}: ${arg} must be a finite number, got ${describeValue(v)}`);
}

function checkOptions(o: unknown, op: string): void {
  if (o === null || typeof o !== 'object')
    throw new InvalidArgumentError(`${op}: options must be an object, got ${describeValue(o)}`);
}

/**
 * The frame of randomUniform: validates shape, seed and offset, allocates and lets `fill` (the hook,
 * guarded: it frees the buffer if it throws) write the stream's uniforms into the fresh buffer.
 */
export function uniformStream(
  be: ComputeBackend,
  op: string,
  shape: readonly number[],
  seed: unknown,
  offset: unknown,
  fill: (out: DeviceBuffer, s: PhiloxStream) => void,
): NDArray {
  assertShape(shape, `${op}: shape`);
  const n = sizeOf(shape);
  const s = philoxStream(op, seed, offset ?? 0, n);
  const out = be.allocate(n, 'float32');
  if (n > 0) fill(out, s);
  return viewOf(out, shape);
}

/** low + (high − low)·u on the uniforms `u` (owned: freed unless returned). */
export function scaleUniform(be: ComputeBackend, u: NDArray, options: RandomUniformOptions): NDArray {
  const low = options.low ?? 0;
  const high = options.high ?? 1;
  if (low === 0 && high === 1) return u;
  return withTemps(be, (t) => {
    t(u);
    return be.add(t(be.mul(u, high - low)), low);
  });
}

/**
 * Checks randomUniform's options: an options object with finite `low` ≤ `high` and a finite difference;
 * InvalidArgumentError otherwise.
 */
export function checkUniformOptions(options: RandomUniformOptions): void {
  checkOptions(options, 'randomUniform');
  const low = options.low ?? 0;
  const high = options.high ?? 1;
  checkFinite(low, 'randomUniform', 'low');
  checkFinite(high, 'randomUniform', 'high');
  if (!(low <= high) || !Number.isFinite(high - low))
    throw new InvalidArgumentError(`randomUniform: need low ≤ high with a finite difference, got [${low}, ${high})`);
}

/** randomNormal composed from randomUniform: Box–Muller on the pairs of the stream (RandomMethods). */
export function randomNormalComposite(
  be: ComputeBackend,
  shape: readonly number[],
  seed: number,
  options: RandomNormalOptions,
): NDArray {
  checkOptions(options, 'randomNormal');
  const mean = options.mean ?? 0;
  const std = options.std ?? 1;
  checkFinite(mean, 'randomNormal', 'mean');
  checkFinite(std, 'randomNormal', 'std');
  if (std < 0) throw new InvalidArgumentError(`randomNormal: std must be ≥ 0, got ${std}`);
  assertShape(shape, 'randomNormal: shape');
  const offset = options.offset ?? 0;
  const n = sizeOf(shape);
  // Validates seed and offset (and offset + n ≤ 2^53) before anything is allocated.
  philoxStream('randomNormal', seed, offset, n);
  if (n === 0) return be.full(shape, 0);
  const first = offset - (offset % 2); // the pair of the first element starts here
  const pairs = Math.ceil((offset + n - first) / 2);
  return withTemps(be, (t) => {
    const u = be.reshape(t(be.randomUniform([pairs * 2], seed, { offset: first })), [pairs, 2]); // a view
    const u1 = be.shrink(u, [
      [0, pairs],
      [0, 1],
    ]);
    const u2 = be.shrink(u, [
      [0, pairs],
      [1, 2],
    ]);
    const r = t(be.sqrt(t(be.mul(t(be.log(t(be.sub(1, u1)))), -2))));
    const theta = t(be.mul(t(be.sub(t(be.mul(u2, 2)), 1)), PI_BELOW));
    const z0 = t(be.mul(r, t(be.cos(theta))));
    const z1 = t(be.mul(r, t(be.sin(theta))));
    // Interleave: z0 into column 0, z1 into column 1 (each padded with a zero column).
    const z = t(
      be.add(
        t(
          be.pad(z0, [
            [0, 0],
            [0, 1],
          ]),
        ),
        t(
          be.pad(z1, [
            [0, 0],
            [1, 0],
          ]),
        ),
      ),
    );
    const flat = be.shrink(be.reshape(z, [pairs * 2]), [[offset - first, offset - first + n]]);
    const scaled = std === 1 && mean === 0 ? be.contiguous(flat) : be.add(t(be.mul(flat, std)), mean);
    return be.reshape(scaled, shape); // a view of the contiguous result
  });
}

/** bernoulli composed from randomUniform: u < ceil(p·2^24)/2^24 (exact on the 2^-24 grid). */
export function bernoulliComposite(
  be: ComputeBackend,
  shape: readonly number[],
  p: number,
  seed: number,
  options: BernoulliOptions,
): NDArray {
  checkOptions(options, 'bernoulli');
  if (typeof p !== 'number' || !(p >= 0 && p <= 1))
    throw new InvalidArgumentError(`bernoulli: p must be a number in [0, 1], got ${describeValue(p)}`);
  const threshold = Math.ceil(p * 2 ** 24) / 2 ** 24;
  return withTemps(be, (t) => be.cmplt(t(be.randomUniform(shape, seed, { offset: options.offset ?? 0 })), threshold));
}

/** What randomUniform uses of a BaseBackend: its frame (guard frees `out` if the hook throws) and the hook. */
interface RandomHost extends ComputeBackend {
  guard(out: DeviceBuffer, run: () => void): void;
  randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void;
}

/** The random methods (RandomMethods) as BaseBackend has them (FAMILIES, base.ts): randomUniform on the hook. */
export const RANDOM_METHODS: FamilyTable<RandomMethods> = {
  randomUniform(shape: readonly number[], seed: number, options: RandomUniformOptions = {}) {
    checkUniformOptions(options);
    const u = uniformStream(this, 'randomUniform', shape, seed, options.offset, (out, s) =>
      this.guard(out, () => this.randomUniformKernel(out, s)),
    );
    return scaleUniform(this, u, options);
  },
  randomNormal(shape: readonly number[], seed: number, options: RandomNormalOptions = {}) {
    return randomNormalComposite(this, shape, seed, options);
  },
  bernoulli(shape: readonly number[], p: number, seed: number, options: BernoulliOptions = {}) {
    return bernoulliComposite(this, shape, p, seed, options);
  },
} satisfies FamilyTable<RandomMethods, RandomHost>;
