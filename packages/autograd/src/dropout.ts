/**
 * Dropout (Srivastava et al. 2014) in its inverted form, as PyTorch: in training each element is kept
 * with probability 1 − p and scaled by 1/(1 − p), so the expected value is unchanged and evaluation is
 * the identity. The mask is a HAL Bernoulli draw from the Philox stream of a seed
 * (hal/src/families/random/sampling.ts): the same seed and offset drop the same elements on every backend.
 * A Dropout layer's forward inside `compile` draws its next mask at every replay (see Dropout.forward).
 */
import { InvalidArgumentError, withTemps } from '@polyhal/hal';
import { liveSection } from './live.js';
import { type LayerConfig, Module } from './nn.js';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** Options of the functional `dropout`. */
export interface DropoutOptions {
  /** Seed of the mask's stream (an integer in [0, 2^53)). */
  seed: number;
  /** Stream position of the first element (default 0): see ComputeBackend.bernoulli. */
  offset?: number;
  /** Whether to drop (default true); false returns x itself. */
  training?: boolean;
}

function checkP(p: unknown, op: string): asserts p is number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1))
    throw new InvalidArgumentError(`${op}: p must be a number in [0, 1], got ${String(p)}`);
}

/**
 * Inverted dropout: x · m / (1 − p) with m = bernoulli(x.shape, 1 − p, seed, {offset}) (p = 1 gives
 * zeros). The gradient is the same mask: g · m / (1 − p). Not training, or p = 0: x itself.
 */
export function dropout(x: Tensor, p: number, options: DropoutOptions): Tensor {
  checkP(p, 'dropout');
  if (options === null || typeof options !== 'object')
    throw new InvalidArgumentError('dropout: options must be an object with a seed');
  if (options.training === false || p === 0) return x;
  const be = x.backend;
  const scale = p === 1 ? 0 : 1 / (1 - p);
  const mask = withTemps(be, (t) =>
    be.mul(t(be.bernoulli(x.shape, 1 - p, options.seed, { offset: options.offset ?? 0 })), scale),
  );
  const out = record(
    'dropout',
    [x],
    (b, [v]) => b.mul(v!, mask),
    (b, g) => [b.mul(g, mask)],
    () => be.free(mask),
  );
  if (!out.node) be.free(mask);
  return out;
}

/**
 * Inverted dropout (as `dropout`) whose mask continues a stream the caller keeps: `take(n)` returns the position of
 * the mask's first element and moves the caller's cursor past its n = x.size elements (Dropout's `offset`, a
 * recurrent layer's). Inside `compile` the draw is a live section (live.ts): each replay calls `take` again and
 * draws the mask from the position it returns, as an eager call does. p = 0: x itself, `take` not called.
 */
export function dropoutFromStream(x: Tensor, p: number, seed: number, take: (n: number) => number): Tensor {
  checkP(p, 'dropoutFromStream');
  if (p === 0) return x;
  const n = x.size;
  let at = take(n);
  const live = { advance: () => void (at = take(n)), stream: () => ({ seed, offset: at }) };
  return liveSection(x.backend, live, () => dropout(x, p, { seed, offset: at }));
}

/**
 * A dropout layer: each forward in training draws the next elements of its stream (seed `seed`, the
 * offset advancing by the input's size), so two forwards drop different elements and a module built
 * with the same seed replays a run. `eval()` makes it the identity.
 */
export class Dropout extends Module {
  /** Stream position of the next forward's first element. */
  offset = 0;

  constructor(
    /** Probability of dropping each element, in [0, 1] (InvalidArgumentError otherwise; 1 drops everything). */
    readonly p = 0.5,
    /** Seed of the masks' Philox stream; each forward continues the stream at `offset`. */
    readonly seed = 0,
  ) {
    super();
    checkP(p, 'Dropout');
  }

  /** { p, seed }. */
  override getConfig(): LayerConfig {
    return { p: this.p, seed: this.seed };
  }

  /**
   * x with elements dropped and the rest scaled by 1/(1 − p) in training mode; x itself in eval mode. Inside
   * `compile` the draw is a live section (live.ts): each replay advances `offset` by x's size and draws the mask
   * from there, as an eager forward does.
   */
  forward(x: Tensor): Tensor {
    if (!this.training || this.p === 0) return x;
    return dropoutFromStream(x, this.p, this.seed, (n) => {
      const at = this.offset;
      this.offset += n;
      return at;
    });
  }
}
