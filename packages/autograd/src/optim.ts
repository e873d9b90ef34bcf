/**
 * Optimizers SGD, Adam and AdamW, and the learning-rate schedulers StepLR and CosineAnnealingLR. Their base,
 * Optimizer (parameters, per-parameter state, `step` and its live section inside `compile`), is in optimizer.ts
 * and exported from here too. The update of each parameter is one backend call (`adamStep`/`sgdStep`), which a
 * backend may run as one fused kernel; parameters, gradients and optimizer state stay on the device — nothing is
 * read back during training.
 */
import { type DeviceBuffer, describeValue, InvalidArgumentError, type NDArray, viewOf } from '@polyhal/hal';
import {
  checkScheduled,
  descend,
  hyper,
  isCount,
  nonNegative,
  option,
  optionsOf,
  positive,
  updateInPlace,
} from './optim-options.js';
import { Optimizer } from './optimizer.js';
import type { Tensor } from './tensor.js';

export { Optimizer } from './optimizer.js';

/** Options of SGD; every other key is an InvalidArgumentError. */
export interface SgdOptions {
  /** Learning rate, finite and > 0 (required). */
  lr: number;
  /** Momentum, finite and ≥ 0 (default 0: none). */
  momentum?: number;
  /** L2 weight decay, finite and ≥ 0 (default 0). */
  weightDecay?: number;
  /** Nesterov momentum (default false); needs momentum > 0. PyTorch's and tfjs's `useNesterov` rule. */
  nesterov?: boolean;
}

/**
 * SGD with momentum, Nesterov momentum and L2 weight decay (PyTorch's convention; no dampening). Every option
 * is checked here: a value outside its domain (SgdOptions), a non-number or an unknown option is an
 * InvalidArgumentError naming SGD, the option and the value.
 */
export class SGD extends Optimizer {
  /** Momentum factor (0: plain SGD, no velocity state). */
  readonly momentum: number;
  /** L2 weight decay added to the gradient. */
  readonly weightDecay: number;
  /** Whether the momentum is Nesterov's: p ← p − lr·(g + momentum·v). */
  readonly nesterov: boolean;
  protected readonly stateSize: number;
  constructor(params: Tensor[], opts: SgdOptions) {
    const owner = new.target.name;
    if (opts === undefined) throw new InvalidArgumentError(`${owner}: options { lr } are required (lr has no default)`);
    const o = optionsOf(owner, opts, ['lr', 'momentum', 'weightDecay', 'nesterov']);
    super(params, o['lr'] as number);
    this.momentum = hyper(owner, 'momentum', option(o, 'momentum', 0), nonNegative, '≥ 0');
    this.weightDecay = hyper(owner, 'weightDecay', option(o, 'weightDecay', 0), nonNegative, '≥ 0');
    const nesterov = option(o, 'nesterov', false);
    if (typeof nesterov !== 'boolean' || (nesterov && this.momentum === 0))
      throw new InvalidArgumentError(
        `${owner}: nesterov must be a boolean and needs momentum > 0, got ${describeValue(nesterov)} with ` +
          `momentum ${this.momentum}`,
      );
    this.nesterov = nesterov;
    this.stateSize = this.momentum > 0 ? 1 : 0;
  }
  /** v ← momentum·v + (g + wd·p); p ← p − lr·v (v = g + wd·p without momentum), one sgdStep on the HAL. */
  protected update(p: Tensor, i: number): void {
    if (this.nesterov) {
      nesterovUpdate(p, this.stateOf(i)[0]!, this.stepLr(), this.momentum, this.weightDecay);
      return;
    }
    const velocity = this.momentum > 0 ? this.stateOf(i)[0]! : null;
    p.backend.sgdStep(p.value.buffer, p.grad!.value, velocity, {
      lr: this.stepLr(),
      momentum: this.momentum,
      weightDecay: this.weightDecay,
    });
  }
}

/** Nesterov SGD on HAL ops: g ← g + wd·p; v ← μ·v + g; p ← p − lr·(g + μ·v) (the last an sgdStep). */
function nesterovUpdate(p: Tensor, v: DeviceBuffer, lr: number, mu: number, wd: number): void {
  const be = p.backend;
  updateInPlace(be, (t) => {
    const g = wd > 0 ? t(be.add(p.grad!.value, t(be.mul(p.value, wd)))) : p.grad!.value;
    const vNew = t(be.add(t(be.mul(viewOf(v, p.shape), mu)), g));
    descend(p, t(be.add(g, t(be.mul(vNew, mu)))), lr);
    return [[v, vNew]];
  });
}

/** Options of Adam and AdamW; every other key (amsgrad, weight_decay, ...) is an InvalidArgumentError. */
export interface AdamOptions {
  /** Learning rate, finite and > 0 (default 1e-3). */
  lr?: number;
  /** [β1, β2], each finite in [0, 1) (default [0.9, 0.999]). */
  betas?: [number, number];
  /** ε added to √v, finite and > 0 (default 1e-8). */
  eps?: number;
  /** Weight decay, finite and ≥ 0 (default 0 for Adam, 0.01 for AdamW). */
  weightDecay?: number;
}

const ADAM_KEYS = ['lr', 'betas', 'eps', 'weightDecay'];

/**
 * Adam (Kingma & Ba, 2015). `weightDecay` here is L2 added to the gradient, as in PyTorch's Adam. Every
 * option is checked here: a value outside its domain (AdamOptions), a non-number or an unknown option
 * (amsgrad, weight_decay, ...) is an InvalidArgumentError naming the optimizer, the option and the value.
 */
export class Adam extends Optimizer {
  /** β1 and β2, the decay rates of the first and second moment estimates. */
  readonly betas: [number, number];
  /** ε added to √v̂ in the denominator. */
  readonly eps: number;
  /** Weight decay: L2 added to the gradient (Adam) or decoupled, p ← p − lr·wd·p (AdamW). */
  readonly weightDecay: number;
  /** Whether weight decay is decoupled from the gradient (AdamW) rather than L2 (Adam). */
  protected readonly decoupled: boolean = false;
  protected readonly stateSize = 2;
  constructor(params: Tensor[], opts: AdamOptions = {}) {
    const owner = new.target.name;
    const o = optionsOf(owner, opts, ADAM_KEYS);
    super(params, option(o, 'lr', 1e-3) as number);
    const betas = option(o, 'betas', [0.9, 0.999]);
    if (!Array.isArray(betas) || betas.length !== 2)
      throw new InvalidArgumentError(`${owner}: betas must be [beta1, beta2], got ${describeValue(betas)}`);
    const beta = (i: number): number => hyper(owner, `betas[${i}]`, betas[i], (b) => b >= 0 && b < 1, 'in [0, 1)');
    this.betas = [beta(0), beta(1)];
    this.eps = hyper(owner, 'eps', option(o, 'eps', 1e-8), positive, '> 0');
    this.weightDecay = hyper(owner, 'weightDecay', option(o, 'weightDecay', 0), nonNegative, '≥ 0');
  }
  /** One Adam/AdamW step of parameter i on the HAL (adamStep), with bias correction for step stepCount. */
  protected update(p: Tensor, i: number): void {
    const be = p.backend;
    const [m, v] = this.stateOf(i) as [DeviceBuffer, DeviceBuffer];
    const coupled = !this.decoupled && this.weightDecay > 0;
    // L2 decay: g + wd·p on the HAL directly (no tensors for a scope to own), freed after the step.
    let g = p.grad!.value;
    const temps: NDArray[] = [];
    if (coupled) {
      temps.push(be.mul(p.value, this.weightDecay));
      g = be.add(g, temps[0]!);
      temps.push(g);
    }
    try {
      be.adamStep(p.value.buffer, g, m, v, {
        lr: this.stepLr(),
        beta1: this.betas[0],
        beta2: this.betas[1],
        eps: this.eps,
        weightDecay: this.decoupled ? this.weightDecay : 0,
        step: this.stepCount,
      });
    } finally {
      for (const t of temps) be.free(t);
    }
  }
  /** The first and second moments of parameter i (for inspection and tests; zeros before its first update). */
  moment(i: number): { m: DeviceBuffer; v: DeviceBuffer } {
    const [m, v] = this.stateOf(i) as [DeviceBuffer, DeviceBuffer];
    return { m, v };
  }
}

/** AdamW (Loshchilov & Hutter, 2019): decoupled weight decay, default 0.01. */
export class AdamW extends Adam {
  /** Always true: AdamW's weight decay is decoupled. */
  protected override readonly decoupled = true;
  constructor(params: Tensor[], opts: AdamOptions = {}) {
    const o = optionsOf(new.target.name, opts, ADAM_KEYS);
    super(params, { ...o, weightDecay: option(o, 'weightDecay', 0.01) as number });
  }
}

/**
 * Multiplies the learning rate by `gamma` every `stepSize` epochs (call step() once per epoch).
 * `stepSize` is an integer ≥ 1 and `gamma` a finite number > 0; InvalidArgumentError otherwise, at
 * construction.
 */
export class StepLR {
  private epoch = 0;
  private readonly base: number;
  constructor(
    /** The optimizer whose lr it sets. */
    readonly optimizer: Optimizer,
    /** Epochs between decays. */
    readonly stepSize: number,
    /** Factor applied at each decay (default 0.1). */
    readonly gamma = 0.1,
  ) {
    checkScheduled('StepLR', optimizer);
    hyper('StepLR', 'stepSize', stepSize, (n) => isCount(n) && n >= 1, '(an integer ≥ 1)');
    hyper('StepLR', 'gamma', gamma, positive, '> 0');
    this.base = optimizer.lr;
  }
  /** Ends an epoch: lr = initial lr · gamma^⌊epoch / stepSize⌋. */
  step(): void {
    this.epoch++;
    this.optimizer.lr = this.base * this.gamma ** Math.floor(this.epoch / this.stepSize);
  }
}

/** Cosine annealing from the initial rate to `etaMin` over `tMax` steps (SGDR without restarts). */
export class CosineAnnealingLR {
  private t = 0;
  private readonly base: number;
  /**
   * lr follows half a cosine from its value at construction to `etaMin` over `tMax` steps; with
   * `warmupSteps`, it first rises linearly from base/warmupSteps to base over those steps (the
   * warm-up transformers train with), and the cosine spans the steps after them. `tMax` is an integer
   * ≥ 1, `etaMin` a finite number ≥ 0 and `warmupSteps` an integer from 0 to `tMax`;
   * InvalidArgumentError otherwise, at construction (before the optimizer's lr is touched).
   */
  constructor(
    /** The optimizer whose lr it sets. */
    readonly optimizer: Optimizer,
    /** Steps of the whole schedule (warm-up included). */
    readonly tMax: number,
    /** The final learning rate (default 0). */
    readonly etaMin = 0,
    /** Steps of linear warm-up before the cosine (default 0). */
    readonly warmupSteps = 0,
  ) {
    const owner = 'CosineAnnealingLR';
    checkScheduled(owner, optimizer);
    hyper(owner, 'tMax', tMax, (n) => isCount(n) && n >= 1, '(an integer ≥ 1)');
    hyper(owner, 'etaMin', etaMin, nonNegative, '≥ 0');
    hyper(owner, 'warmupSteps', warmupSteps, (n) => isCount(n) && n <= tMax, `(an integer from 0 to tMax = ${tMax})`);
    this.base = optimizer.lr;
    if (warmupSteps > 0) optimizer.lr = this.base / warmupSteps;
  }
  /** Advances one step (at most tMax; later calls keep lr at etaMin) and sets the optimizer's lr. */
  step(): void {
    this.t = Math.min(this.t + 1, this.tMax);
    const w = this.warmupSteps;
    if (this.t < w) {
      this.optimizer.lr = (this.base * (this.t + 1)) / w;
      return;
    }
    const phase = (this.t - w) / Math.max(1, this.tMax - w);
    this.optimizer.lr = this.etaMin + ((this.base - this.etaMin) * (1 + Math.cos(Math.PI * phase))) / 2;
  }
}
