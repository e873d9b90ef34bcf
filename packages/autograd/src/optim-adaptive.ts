/**
 * Adaptive-rate optimizers: RMSprop, Adagrad, Adadelta and Adamax. Each follows PyTorch's update rule
 * and defaults (torch.optim), written as a few HAL ops per parameter; parameters and state stay on the
 * device. Where TensorFlow.js differs, the class docstring says how and how to get tfjs's rule.
 */
import {
  type ComputeBackend,
  type DeviceBuffer,
  describeValue,
  InvalidArgumentError,
  type NDArray,
  viewOf,
} from '@polyhal/hal';
import { once } from './live.js';
import { Optimizer } from './optim.js';
import {
  descend,
  hyper,
  nonNegative,
  option,
  optionsOf,
  positive,
  unitInterval,
  updateInPlace,
} from './optim-options.js';
import type { Tensor } from './tensor.js';

/** Options every adaptive optimizer takes. */
export interface AdaptiveOptions {
  /** Learning rate, finite and > 0 (each optimizer's default: see the class). */
  lr?: number;
  /** Added to the denominator, finite and > 0 (each optimizer's default: see the class). */
  eps?: number;
  /** L2 weight decay added to the gradient, finite and ≥ 0 (default 0). */
  weightDecay?: number;
}

/** The gradient with L2 decay: g + wd·p (g itself when wd is 0). */
function decayed(be: ComputeBackend, t: (x: NDArray) => NDArray, p: Tensor, wd: number): NDArray {
  return wd > 0 ? t(be.add(p.grad!.value, t(be.mul(p.value, wd)))) : p.grad!.value;
}

/** Options of RMSprop; every other key is an InvalidArgumentError. */
export interface RmspropOptions extends AdaptiveOptions {
  /** Smoothing constant α of the mean square, in [0, 1) (default 0.99; tfjs calls it decay, default 0.9). */
  alpha?: number;
  /** Momentum, finite and ≥ 0 (default 0). */
  momentum?: number;
  /** Normalize by the variance (mean square − squared mean) instead of the mean square (default false). */
  centered?: boolean;
}

/**
 * RMSprop (Hinton): s ← α·s + (1−α)·g²; with `centered`, ḡ ← α·ḡ + (1−α)·g and s̃ = s − ḡ²;
 * d = g / (√s̃ + ε); with momentum b ← μ·b + d, p ← p − lr·b, else p ← p − lr·d. Defaults lr 0.01,
 * α 0.99, ε 1e-8 (PyTorch). tfjs's rmsprop puts ε inside the root, √(s + ε), with ε 1e-7 and decay 0.9:
 * the two agree to within ε/(2√s) relative. Options outside their domain: InvalidArgumentError.
 */
export class RMSprop extends Optimizer {
  /** Smoothing constant of the running mean square. */
  readonly alpha: number;
  /** ε added to the root. */
  readonly eps: number;
  /** Momentum of the scaled step (0: none). */
  readonly momentum: number;
  /** Whether the mean square is centered by the running mean. */
  readonly centered: boolean;
  /** L2 weight decay. */
  readonly weightDecay: number;
  /** 1 (the mean square), + 1 with centered (the mean), + 1 with momentum (the buffer). */
  protected readonly stateSize: number;
  constructor(params: Tensor[], opts: RmspropOptions = {}) {
    const owner = new.target.name;
    const o = optionsOf(owner, opts, ['lr', 'alpha', 'eps', 'weightDecay', 'momentum', 'centered']);
    super(params, option(o, 'lr', 0.01) as number);
    this.alpha = hyper(owner, 'alpha', option(o, 'alpha', 0.99), unitInterval, 'in [0, 1)');
    this.eps = hyper(owner, 'eps', option(o, 'eps', 1e-8), positive, '> 0');
    this.momentum = hyper(owner, 'momentum', option(o, 'momentum', 0), nonNegative, '≥ 0');
    this.weightDecay = hyper(owner, 'weightDecay', option(o, 'weightDecay', 0), nonNegative, '≥ 0');
    const centered = option(o, 'centered', false);
    if (typeof centered !== 'boolean')
      throw new InvalidArgumentError(`${owner}: centered must be a boolean, got ${describeValue(centered)}`);
    this.centered = centered;
    this.stateSize = 1 + (centered ? 1 : 0) + (this.momentum > 0 ? 1 : 0);
  }
  /** One RMSprop step of parameter i (state: mean square, mean gradient, momentum buffer). */
  protected update(p: Tensor, i: number): void {
    const be = p.backend;
    const state = this.stateOf(i);
    const sq = state[0]!;
    const avg = this.centered ? state[1]! : null;
    const buf = this.momentum > 0 ? state[state.length - 1]! : null;
    const { alpha: a, eps, momentum: mu } = this;
    updateInPlace(be, (t) => {
      const g = decayed(be, t, p, this.weightDecay);
      const out: [DeviceBuffer, NDArray][] = [];
      const s = t(be.add(t(be.mul(viewOf(sq, p.shape), a)), t(be.mul(t(be.mul(g, g)), 1 - a))));
      out.push([sq, s]);
      let denomSq = s;
      if (avg) {
        const m = t(be.add(t(be.mul(viewOf(avg, p.shape), a)), t(be.mul(g, 1 - a))));
        out.push([avg, m]);
        denomSq = t(be.sub(s, t(be.mul(m, m))));
      }
      let d = t(be.div(g, t(be.add(t(be.sqrt(denomSq)), eps))));
      if (buf) {
        d = t(be.add(t(be.mul(viewOf(buf, p.shape), mu)), d));
        out.push([buf, d]);
      }
      descend(p, d, this.stepLr());
      return out;
    });
  }
}

/** Options of Adagrad; every other key is an InvalidArgumentError. */
export interface AdagradOptions extends AdaptiveOptions {
  /** Learning-rate decay per step, finite and ≥ 0: lr_t = lr / (1 + (t−1)·lrDecay) (default 0). */
  lrDecay?: number;
  /** Starting value of the sum of squares, finite and ≥ 0 (default 0, PyTorch; tfjs uses 0.1). */
  initialAccumulatorValue?: number;
}

/**
 * Adagrad (Duchi et al., 2011): s ← s + g²; p ← p − lr_t·g / (√s + ε), lr_t = lr / (1 + (t−1)·lrDecay).
 * Defaults lr 0.01, ε 1e-10, initial sum 0 (PyTorch). tfjs's adagrad starts the sum at 0.1 and puts ε
 * (1e-7) inside the root: pass `initialAccumulatorValue: 0.1` for its start. InvalidArgumentError for an
 * option outside its domain.
 */
export class Adagrad extends Optimizer {
  /** ε added to the root. */
  readonly eps: number;
  /** Learning-rate decay per step. */
  readonly lrDecay: number;
  /** Starting value of the sum of squares. */
  readonly initialAccumulatorValue: number;
  /** L2 weight decay. */
  readonly weightDecay: number;
  protected readonly stateSize = 1;
  private readonly started = new Set<number>();
  constructor(params: Tensor[], opts: AdagradOptions = {}) {
    const owner = new.target.name;
    const o = optionsOf(owner, opts, ['lr', 'lrDecay', 'eps', 'weightDecay', 'initialAccumulatorValue']);
    super(params, option(o, 'lr', 0.01) as number);
    this.eps = hyper(owner, 'eps', option(o, 'eps', 1e-10), positive, '> 0');
    this.lrDecay = hyper(owner, 'lrDecay', option(o, 'lrDecay', 0), nonNegative, '≥ 0');
    const init = option(o, 'initialAccumulatorValue', 0);
    this.initialAccumulatorValue = hyper(owner, 'initialAccumulatorValue', init, nonNegative, '≥ 0');
    this.weightDecay = hyper(owner, 'weightDecay', option(o, 'weightDecay', 0), nonNegative, '≥ 0');
  }
  /** One Adagrad step of parameter i (state: the sum of squared gradients). */
  protected update(p: Tensor, i: number): void {
    const be = p.backend;
    const sum = this.stateOf(i)[0]!;
    if (!this.started.has(i)) {
      this.started.add(i);
      if (this.initialAccumulatorValue !== 0)
        once(be, () => updateInPlace(be, (t) => [[sum, t(be.full(p.shape, this.initialAccumulatorValue))]]));
    }
    updateInPlace(be, (t) => {
      const g = decayed(be, t, p, this.weightDecay);
      const s = t(be.add(viewOf(sum, p.shape), t(be.mul(g, g))));
      const d = t(be.div(g, t(be.add(t(be.sqrt(s)), this.eps))));
      descend(p, d, this.stepLr());
      return [[sum, s]];
    });
  }
  /** lr_t = lr / (1 + (t − 1)·lrDecay) of step t = stepCount. */
  protected override stepLr(): number {
    return this.lr / (1 + (this.stepCount - 1) * this.lrDecay);
  }
  /** Frees the state; the next step starts the sums at initialAccumulatorValue again. */
  override dispose(): void {
    super.dispose();
    this.started.clear();
  }
}

/** Options of Adadelta; every other key is an InvalidArgumentError. */
export interface AdadeltaOptions extends AdaptiveOptions {
  /** Decay ρ of the running averages, in [0, 1) (default 0.9; tfjs 0.95). */
  rho?: number;
}

/**
 * Adadelta (Zeiler, 2012): v ← ρ·v + (1−ρ)·g²; d = √(u + ε) / √(v + ε) · g; u ← ρ·u + (1−ρ)·d²;
 * p ← p − lr·d. Defaults lr 1, ρ 0.9, ε 1e-6 (PyTorch). tfjs's adadelta (lr 0.001, ρ 0.95, ε 1e-7)
 * divides by √(v + ε) of the previous step, before this step's g² is added (4.22): its steps differ,
 * most at the first step. InvalidArgumentError for an option outside its domain.
 */
export class Adadelta extends Optimizer {
  /** Decay of the running averages of g² and of the squared updates. */
  readonly rho: number;
  /** ε inside both roots. */
  readonly eps: number;
  /** L2 weight decay. */
  readonly weightDecay: number;
  protected readonly stateSize = 2;
  constructor(params: Tensor[], opts: AdadeltaOptions = {}) {
    const owner = new.target.name;
    const o = optionsOf(owner, opts, ['lr', 'rho', 'eps', 'weightDecay']);
    super(params, option(o, 'lr', 1) as number);
    this.rho = hyper(owner, 'rho', option(o, 'rho', 0.9), unitInterval, 'in [0, 1)');
    this.eps = hyper(owner, 'eps', option(o, 'eps', 1e-6), positive, '> 0');
    this.weightDecay = hyper(owner, 'weightDecay', option(o, 'weightDecay', 0), nonNegative, '≥ 0');
  }
  /** One Adadelta step of parameter i (state: running g², running squared update). */
  protected update(p: Tensor, i: number): void {
    const be = p.backend;
    const [sq, acc] = this.stateOf(i) as [DeviceBuffer, DeviceBuffer];
    const { rho, eps } = this;
    updateInPlace(be, (t) => {
      const g = decayed(be, t, p, this.weightDecay);
      const v = t(be.add(t(be.mul(viewOf(sq, p.shape), rho)), t(be.mul(t(be.mul(g, g)), 1 - rho))));
      const u0 = viewOf(acc, p.shape);
      const ratio = t(be.div(t(be.sqrt(t(be.add(u0, eps)))), t(be.sqrt(t(be.add(v, eps))))));
      const d = t(be.mul(ratio, g));
      const u = t(be.add(t(be.mul(u0, rho)), t(be.mul(t(be.mul(d, d)), 1 - rho))));
      descend(p, d, this.stepLr());
      return [
        [sq, v],
        [acc, u],
      ];
    });
  }
}

/** Options of Adamax; every other key is an InvalidArgumentError. */
export interface AdamaxOptions extends AdaptiveOptions {
  /** [β1, β2], each finite in [0, 1) (default [0.9, 0.999]). */
  betas?: [number, number];
}

/**
 * Adamax (Kingma & Ba, 2015, the ∞-norm Adam): m ← β1·m + (1−β1)·g; u ← max(β2·u, |g| + ε);
 * p ← p − lr/(1−β1^t) · m/u. Defaults lr 0.002, betas [0.9, 0.999], ε 1e-8 (PyTorch). tfjs's adamax
 * adds ε after the max, m/(u + ε), and has no weight decay but a learning-rate decay.
 * InvalidArgumentError for an option outside its domain.
 */
export class Adamax extends Optimizer {
  /** β1 and β2. */
  readonly betas: [number, number];
  /** ε added to |g| inside the max. */
  readonly eps: number;
  /** L2 weight decay. */
  readonly weightDecay: number;
  protected readonly stateSize = 2;
  constructor(params: Tensor[], opts: AdamaxOptions = {}) {
    const owner = new.target.name;
    const o = optionsOf(owner, opts, ['lr', 'betas', 'eps', 'weightDecay']);
    super(params, option(o, 'lr', 2e-3) as number);
    const betas = option(o, 'betas', [0.9, 0.999]) as unknown[];
    const ok = Array.isArray(betas) && betas.length === 2;
    const beta = (i: number): number =>
      hyper(owner, `betas[${i}]`, ok ? betas[i] : betas, unitInterval, 'in [0, 1) (betas is [beta1, beta2])');
    this.betas = [beta(0), beta(1)];
    this.eps = hyper(owner, 'eps', option(o, 'eps', 1e-8), positive, '> 0');
    this.weightDecay = hyper(owner, 'weightDecay', option(o, 'weightDecay', 0), nonNegative, '≥ 0');
  }
  /** One Adamax step of parameter i (state: first moment, ∞-norm), bias-corrected for step stepCount. */
  protected update(p: Tensor, i: number): void {
    const be = p.backend;
    const [mb, ub] = this.stateOf(i) as [DeviceBuffer, DeviceBuffer];
    const [b1, b2] = this.betas;
    updateInPlace(be, (t) => {
      const g = decayed(be, t, p, this.weightDecay);
      const m = t(be.add(t(be.mul(viewOf(mb, p.shape), b1)), t(be.mul(g, 1 - b1))));
      const u = t(be.maximum(t(be.mul(viewOf(ub, p.shape), b2)), t(be.add(t(be.abs(g)), this.eps))));
      descend(p, t(be.div(m, u)), this.stepLr());
      return [
        [mb, m],
        [ub, u],
      ];
    });
  }
  /** The bias-corrected rate lr / (1 − β1^t) of step t = stepCount. */
  protected override stepLr(): number {
    return this.lr / (1 - this.betas[0] ** this.stepCount);
  }
}
