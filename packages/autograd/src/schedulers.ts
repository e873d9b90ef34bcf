/**
 * More learning-rate schedulers (beside StepLR and CosineAnnealingLR in optim.ts), each PyTorch's
 * (torch.optim.lr_scheduler) rule: ExponentialLR, LinearLR (linear warm-up), OneCycleLR and
 * ReduceLROnPlateau. Each sets `optimizer.lr` at construction and at every step(); every option is
 * checked at construction (InvalidArgumentError naming the scheduler, the option and the value).
 */
import { describeValue, InvalidArgumentError } from '@polyhal/hal';
import type { Optimizer } from './optim.js';
import { checkScheduled, hyper, isCount, nonNegative, option, optionsOf, positive } from './optim-options.js';

/** Multiplies the learning rate by `gamma` at every step: lr_t = lr_0 · gammaᵗ. */
export class ExponentialLR {
  private t = 0;
  private readonly base: number;
  /** `gamma`: a finite number > 0 (InvalidArgumentError otherwise). */
  constructor(
    /** The optimizer whose lr it sets. */
    readonly optimizer: Optimizer,
    /** Factor per step. */
    readonly gamma: number,
  ) {
    checkScheduled('ExponentialLR', optimizer);
    hyper('ExponentialLR', 'gamma', gamma, positive, '> 0');
    this.base = optimizer.lr;
  }
  /** Advances one step (an epoch, or a batch: as the caller counts). */
  step(): void {
    this.t++;
    this.optimizer.lr = this.base * this.gamma ** this.t;
  }
}

/** Options of LinearLR. */
export interface LinearLROptions {
  /** Factor of the initial lr at step 0, in (0, 1] (default 1/3, PyTorch). */
  startFactor?: number;
  /** Factor reached at `totalIters` and kept after, in [0, 1] (default 1). */
  endFactor?: number;
  /** Steps of the ramp, an integer ≥ 1 (default 5). */
  totalIters?: number;
}

/**
 * Linear warm-up (or decay): lr_t = lr_0 · (startFactor + (endFactor − startFactor) · min(t, totalIters) / totalIters).
 * With the defaults it ramps from lr_0/3 to lr_0 over 5 steps.
 */
export class LinearLR {
  private t = 0;
  private readonly base: number;
  /** Factor at step 0. */
  readonly startFactor: number;
  /** Factor from step totalIters on. */
  readonly endFactor: number;
  /** Steps of the ramp. */
  readonly totalIters: number;
  constructor(
    /** The optimizer whose lr it sets. */
    readonly optimizer: Optimizer,
    opts: LinearLROptions = {},
  ) {
    const owner = 'LinearLR';
    checkScheduled(owner, optimizer);
    const o = optionsOf(owner, opts, ['startFactor', 'endFactor', 'totalIters']);
    this.startFactor = hyper(
      owner,
      'startFactor',
      option(o, 'startFactor', 1 / 3),
      (x) => x > 0 && x <= 1,
      'in (0, 1]',
    );
    this.endFactor = hyper(owner, 'endFactor', option(o, 'endFactor', 1), (x) => x >= 0 && x <= 1, 'in [0, 1]');
    this.totalIters = hyper(
      owner,
      'totalIters',
      option(o, 'totalIters', 5),
      (n) => isCount(n) && n >= 1,
      '(an integer ≥ 1)',
    );
    this.base = optimizer.lr;
    optimizer.lr = this.base * this.startFactor;
  }
  /** Advances one step. */
  step(): void {
    this.t++;
    const f = Math.min(this.t, this.totalIters) / this.totalIters;
    this.optimizer.lr = this.base * (this.startFactor + (this.endFactor - this.startFactor) * f);
  }
}

/** Options of OneCycleLR. */
export interface OneCycleLROptions {
  /** The peak learning rate, finite and > 0 (required). */
  maxLr: number;
  /** Steps of the whole cycle, an integer ≥ 2 (required; usually epochs × batches per epoch). */
  totalSteps: number;
  /** Fraction of the cycle spent rising, in (0, 1) (default 0.3). */
  pctStart?: number;
  /** Shape of each phase, 'cos' (default) or 'linear'. */
  annealStrategy?: 'cos' | 'linear';
  /** The start is maxLr / divFactor, finite and > 0 (default 25). */
  divFactor?: number;
  /** The end is start / finalDivFactor, finite and > 0 (default 1e4). */
  finalDivFactor?: number;
}

/**
 * The 1cycle policy (Smith & Topin, 2017), PyTorch's two-phase form: lr rises from maxLr/divFactor to
 * maxLr over the first pctStart of `totalSteps` steps, then falls to maxLr/divFactor/finalDivFactor at
 * step totalSteps − 1 (call step() once per batch). Momentum is not cycled. A step past the end is an
 * InvalidArgumentError, as in PyTorch.
 */
export class OneCycleLR {
  private t = 0;
  /** The options, with defaults filled in. */
  readonly options: Required<OneCycleLROptions>;
  constructor(
    /** The optimizer whose lr it sets. */
    readonly optimizer: Optimizer,
    opts: OneCycleLROptions,
  ) {
    const owner = 'OneCycleLR';
    checkScheduled(owner, optimizer);
    if (opts === undefined) throw new InvalidArgumentError(`${owner}: options { maxLr, totalSteps } are required`);
    const keys = ['maxLr', 'totalSteps', 'pctStart', 'annealStrategy', 'divFactor', 'finalDivFactor'];
    const o = optionsOf(owner, opts, keys);
    const anneal = option(o, 'annealStrategy', 'cos');
    if (anneal !== 'cos' && anneal !== 'linear')
      throw new InvalidArgumentError(
        `${owner}: annealStrategy must be 'cos' or 'linear', got ${describeValue(anneal)}`,
      );
    this.options = {
      maxLr: hyper(owner, 'maxLr', o['maxLr'], positive, '> 0'),
      totalSteps: hyper(owner, 'totalSteps', o['totalSteps'], (n) => isCount(n) && n >= 2, '(an integer ≥ 2)'),
      pctStart: hyper(owner, 'pctStart', option(o, 'pctStart', 0.3), (x) => x > 0 && x < 1, 'in (0, 1)'),
      annealStrategy: anneal,
      divFactor: hyper(owner, 'divFactor', option(o, 'divFactor', 25), positive, '> 0'),
      finalDivFactor: hyper(owner, 'finalDivFactor', option(o, 'finalDivFactor', 1e4), positive, '> 0'),
    };
    optimizer.lr = this.lrAt(0);
  }
  /** The learning rate at step t (0 ≤ t < totalSteps). */
  lrAt(t: number): number {
    const { maxLr, totalSteps, pctStart, annealStrategy, divFactor, finalDivFactor } = this.options;
    const initial = maxLr / divFactor;
    const phases = [
      { end: pctStart * totalSteps - 1, from: initial, to: maxLr },
      { end: totalSteps - 1, from: maxLr, to: initial / finalDivFactor },
    ];
    let start = 0;
    for (const [i, ph] of phases.entries()) {
      if (t <= ph.end || i === phases.length - 1) {
        const pct = (t - start) / (ph.end - start);
        return annealStrategy === 'cos'
          ? ph.to + ((ph.from - ph.to) / 2) * (Math.cos(Math.PI * pct) + 1)
          : (ph.to - ph.from) * pct + ph.from;
      }
      start = ph.end;
    }
    return initial;
  }
  /** Advances one step; InvalidArgumentError past totalSteps − 1 (the lr is then unchanged). */
  step(): void {
    if (this.t + 1 >= this.options.totalSteps)
      throw new InvalidArgumentError(
        `OneCycleLR: stepped past totalSteps = ${this.options.totalSteps} (set it to epochs × batches per epoch)`,
      );
    this.t++;
    this.optimizer.lr = this.lrAt(this.t);
  }
}

/** Options of ReduceLROnPlateau. */
export interface ReduceLROnPlateauOptions {
  /** 'min' (default: a loss) or 'max' (an accuracy): which way is better. */
  mode?: 'min' | 'max';
  /** Factor applied to lr on a plateau, in (0, 1) (default 0.1). */
  factor?: number;
  /** Steps without improvement tolerated, an integer ≥ 0 (default 10). */
  patience?: number;
  /** Smallest change that counts as improvement, ≥ 0 (default 1e-4). */
  threshold?: number;
  /** 'rel' (default): relative to the best; 'abs': absolute. */
  thresholdMode?: 'rel' | 'abs';
  /** Steps to wait after a reduction before counting again, an integer ≥ 0 (default 0). */
  cooldown?: number;
  /** Lower bound of lr, ≥ 0 (default 0). */
  minLr?: number;
  /** A reduction smaller than this is skipped, ≥ 0 (default 1e-8). */
  eps?: number;
}

/**
 * Divides the learning rate by 1/factor when a monitored value (validation loss, accuracy) has not
 * improved for more than `patience` steps (PyTorch's rule). Call step(value) once per epoch.
 */
export class ReduceLROnPlateau {
  /** The options, with defaults filled in. */
  readonly options: Required<ReduceLROnPlateauOptions>;
  /** The best value seen. */
  best: number;
  private bad = 0;
  private cooling = 0;
  constructor(
    /** The optimizer whose lr it sets. */
    readonly optimizer: Optimizer,
    opts: ReduceLROnPlateauOptions = {},
  ) {
    const owner = 'ReduceLROnPlateau';
    checkScheduled(owner, optimizer);
    const keys = ['mode', 'factor', 'patience', 'threshold', 'thresholdMode', 'cooldown', 'minLr', 'eps'];
    const o = optionsOf(owner, opts, keys);
    const mode = option(o, 'mode', 'min');
    const thresholdMode = option(o, 'thresholdMode', 'rel');
    if (mode !== 'min' && mode !== 'max')
      throw new InvalidArgumentError(`${owner}: mode must be 'min' or 'max', got ${describeValue(mode)}`);
    if (thresholdMode !== 'rel' && thresholdMode !== 'abs')
      throw new InvalidArgumentError(
        `${owner}: thresholdMode must be 'rel' or 'abs', got ${describeValue(thresholdMode)}`,
      );
    const count = (n: number): boolean => isCount(n);
    this.options = {
      mode,
      factor: hyper(owner, 'factor', option(o, 'factor', 0.1), (x) => x > 0 && x < 1, 'in (0, 1)'),
      patience: hyper(owner, 'patience', option(o, 'patience', 10), count, '(an integer ≥ 0)'),
      threshold: hyper(owner, 'threshold', option(o, 'threshold', 1e-4), nonNegative, '≥ 0'),
      thresholdMode,
      cooldown: hyper(owner, 'cooldown', option(o, 'cooldown', 0), count, '(an integer ≥ 0)'),
      minLr: hyper(owner, 'minLr', option(o, 'minLr', 0), nonNegative, '≥ 0'),
      eps: hyper(owner, 'eps', option(o, 'eps', 1e-8), nonNegative, '≥ 0'),
    };
    this.best = mode === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  }
  /** Whether `value` improves on the best by more than the threshold. */
  private better(value: number): boolean {
    const { mode, threshold, thresholdMode } = this.options;
    if (mode === 'min')
      return thresholdMode === 'rel' ? value < this.best * (1 - threshold) : value < this.best - threshold;
    return thresholdMode === 'rel' ? value > this.best * (1 + threshold) : value > this.best + threshold;
  }
  /** Records one value of the monitored quantity (a finite number, else InvalidArgumentError). */
  step(value: number): void {
    hyper('ReduceLROnPlateau', 'step(value)', value, () => true, '(the monitored loss or metric)');
    if (this.better(value)) {
      this.best = value;
      this.bad = 0;
    } else this.bad++;
    if (this.cooling > 0) {
      this.cooling--;
      this.bad = 0;
    }
    if (this.bad > this.options.patience) {
      const lr = this.optimizer.lr;
      const next = Math.max(lr * this.options.factor, this.options.minLr);
      if (lr - next > this.options.eps) this.optimizer.lr = next;
      this.cooling = this.options.cooldown;
      this.bad = 0;
    }
  }
}
