/**
 * Random tensors on the device (PyTorch `torch.rand`/`randn`/`randint`, tfjs `tf.randomUniform`/
 * `randomNormal`): the HAL's Philox4x32-10 stream, so a seed gives the same bits on every backend (uniforms
 * and integers bit for bit; normals within float32 rounding of log, cos and sin). Without a `seed` option a
 * call draws from the global generator, `manualSeed(s)` (default seed 0): each call continues its stream
 * where the previous one stopped, so successive calls differ and a program is reproducible run to run.
 * Inside `compile` a draw from the global generator is a live section (live.ts): each replay advances the
 * generator as the eager call would and reads the stream from the position it gets (a call with a `seed` is the
 * caller's constant, replayed as it is).
 */
import { type ComputeBackend, InvalidArgumentError, type NDArray } from '@polyhal/hal';
import { checkShape } from './creation.js';
import { liveSection } from './live.js';
import { Tensor } from './tensor.js';

/** Options of the random creation functions. */
export interface RandomOptions {
  /** A Philox seed (an integer in [0, 2^53)): the stream from `offset` (default 0) instead of the global one. */
  seed?: number;
  /** The stream position of the first element when `seed` is given (an integer ≥ 0, default 0). */
  offset?: number;
  /** Whether the new tensor is a leaf that records gradients (default false). */
  requiresGrad?: boolean;
}

const generator = { seed: 0, offset: 0 };

/**
 * Seeds the global generator (PyTorch `torch.manual_seed`): later calls without a `seed` option read the
 * Philox stream of `seed` from position 0. InvalidArgumentError unless seed is an integer in [0, 2^53).
 */
export function manualSeed(seed: number): void {
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new InvalidArgumentError(`manualSeed: seed must be an integer in [0, 2^53), got ${String(seed)}`);
  generator.seed = seed;
  generator.offset = 0;
}

/** The global generator's seed and next stream position (what the next call without a seed reads). */
export function generatorState(): { seed: number; offset: number } {
  return { ...generator };
}

/** The global generator's position, advanced past `n` positions (kept even). */
function advance(n: number): { seed: number; offset: number } {
  const at = { ...generator };
  generator.offset += n + (n % 2); // normals use positions in pairs: the next call starts a fresh pair
  return at;
}

/**
 * Runs `run` with the seed and offset of one call of `n` elements on `be`: the options' seed, or the global
 * generator's position (advanced past the call), in a live section that advances it again at each replay.
 */
function draw<T>(
  be: ComputeBackend,
  op: string,
  n: number,
  opts: RandomOptions,
  run: (seed: number, offset: number) => T,
): T {
  if (opts.seed !== undefined) return run(opts.seed, opts.offset ?? 0);
  if (opts.offset !== undefined) throw new InvalidArgumentError(`${op}: offset needs a seed`);
  let at = advance(n);
  return liveSection(be, { advance: () => void (at = advance(n)), stream: () => at }, () => run(at.seed, at.offset));
}

const size = (shape: readonly number[]): number => shape.reduce((p, d) => p * d, 1);

function wrap(be: ComputeBackend, value: NDArray, opts: RandomOptions): Tensor {
  return new Tensor(be, value, { requiresGrad: opts.requiresGrad });
}

/**
 * float32 uniforms in [low, high) (default [0, 1)) of `shape`: `torch.rand`, `tf.randomUniform`. Element i
 * is the HAL's `randomUniform` at stream position offset + i: bit-identical on every backend.
 * InvalidArgumentError for a bad shape, seed or offset, or bounds that are not finite with low ≤ high.
 */
export function rand(
  be: ComputeBackend,
  shape: readonly number[],
  opts: RandomOptions & { low?: number; high?: number } = {},
): Tensor {
  checkShape('rand', shape);
  const u = draw(be, 'rand', size(shape), opts, (seed, offset) =>
    be.randomUniform(shape, seed, { low: opts.low, high: opts.high, offset }),
  );
  return wrap(be, u, opts);
}

/**
 * float32 normals N(mean, std²) (default N(0, 1)) of `shape`: `torch.randn`, `tf.randomNormal`. Box–Muller on
 * the stream (the HAL's `randomNormal`). InvalidArgumentError for a bad shape, seed or offset, a non-finite
 * mean or std, or std < 0.
 */
export function randn(
  be: ComputeBackend,
  shape: readonly number[],
  opts: RandomOptions & { mean?: number; std?: number } = {},
): Tensor {
  checkShape('randn', shape);
  const z = draw(be, 'randn', size(shape), opts, (seed, offset) =>
    be.randomNormal(shape, seed, { mean: opts.mean, std: opts.std, offset }),
  );
  return wrap(be, z, opts);
}

/**
 * int32 integers uniform in [low, high) of `shape` (`torch.randint(low, high, size)`): element i is
 * low + floor(u·(high − low)) with u the stream's uniform at position offset + i (a multiple of 2^-24, the
 * product rounded once in float32, clamped to high − 1): bit-identical on every backend. InvalidArgumentError
 * unless low and high are integers with low < high, high − low ≤ 2^24 and both within int32.
 */
export function randint(
  be: ComputeBackend,
  low: number,
  high: number,
  shape: readonly number[],
  opts: RandomOptions = {},
): Tensor {
  checkShape('randint', shape);
  for (const [name, v] of [
    ['low', low],
    ['high', high],
  ] as const)
    if (!Number.isInteger(v) || v < -(2 ** 31) || v > 2 ** 31 - 1)
      throw new InvalidArgumentError(`randint: ${name} must be an int32 integer, got ${String(v)}`);
  if (!(low < high) || high - low > 2 ** 24)
    throw new InvalidArgumentError(`randint: need low < high and high − low ≤ 2^24, got [${low}, ${high})`);
  const range = high - low;
  const u = draw(be, 'randint', size(shape), opts, (seed, offset) => be.randomUniform(shape, seed, { offset }));
  const temps: NDArray[] = [];
  const t = (a: NDArray): NDArray => {
    temps.push(a);
    return a;
  };
  try {
    t(u);
    const k = t(be.cast(t(be.mul(u, range)), 'int32')); // u·range ≥ 0: the cast truncates, a floor
    const clamped = range > 1 ? t(be.minimum(k, range - 1)) : k;
    const out = low === 0 ? clamped : be.add(clamped, low);
    if (out === clamped) temps.pop();
    return wrap(be, out, opts);
  } finally {
    for (const a of temps) be.free(a);
  }
}

/** Uniforms in [0, 1) (or [low, high)) of `like`'s shape on its backend (PyTorch `torch.rand_like`). */
export function randLike(like: Tensor, opts: RandomOptions & { low?: number; high?: number } = {}): Tensor {
  like.assertLive('randLike');
  return rand(like.backend, like.shape, opts);
}

/** Normals N(mean, std²) of `like`'s shape on its backend (PyTorch `torch.randn_like`). */
export function randnLike(like: Tensor, opts: RandomOptions & { mean?: number; std?: number } = {}): Tensor {
  like.assertLive('randnLike');
  return randn(like.backend, like.shape, opts);
}
