/**
 * Optimizers. The update of each parameter is one backend call (`adamStep`/`sgdStep`), which a backend
 * may run as one fused kernel; parameters, gradients and optimizer state stay on the device — nothing
 * is read back during training.
 *
 * Inside `compile` (a capture), `step()` is a live section (live.ts): its kernels take the learning rate of the
 * step (`stepLr()`) and the step count from the optimizer at every replay, and each replay advances stepCount as
 * an eager step does (after checking the parameters and state, as step does); the state's zeros are created once,
 * outside the recording.
 */
import {
  type ComputeBackend,
  type DeviceBuffer,
  DeviceMismatchError,
  describeValue,
  InvalidArgumentError,
  type NDArray,
  UseAfterFreeError,
  viewOf,
} from '@polyhal/hal';
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
import { liveSection, once, zeroedGrads } from './live.js';
import { noGrad, Tensor } from './tensor.js';

/** Per-parameter optimizer state (moments, velocity): buffers of the parameter's shape on one backend. */
interface State {
  backend: ComputeBackend;
  buffers: DeviceBuffer[];
}

/**
 * Base of the optimizers. State (moments, velocities) is created at a parameter's first update, on
 * the parameter's backend — so `await model.to(backend)` before the first step just works, as in
 * PyTorch. A parameter moved after its state exists needs `await optimizer.to(backend)` (a step
 * before that throws DeviceMismatchError). A disposed parameter makes `step` throw UseAfterFreeError.
 */
export abstract class Optimizer {
  /** Number of completed steps. */
  stepCount = 0;
  private readonly state: (State | null)[];
  private rate: number;
  /** Changes when the state is disposed or moved (a captured step then throws at its next replay). */
  private generation = 0;
  /**
   * `params`: an array of whole tensors; `lr` a finite number > 0. InvalidArgumentError (naming the
   * optimizer, the argument and the value) otherwise, at construction.
   */
  constructor(
    /** The parameters it updates, in order (the state of parameter i is created at its first update). */
    readonly params: Tensor[],
    lr: number,
  ) {
    const owner = new.target.name;
    if (!Array.isArray(params))
      throw new InvalidArgumentError(`${owner}: params must be an array of tensors, got ${describeValue(params)}`);
    params.forEach((p, i) => {
      if (!(p instanceof Tensor))
        throw new InvalidArgumentError(`${owner}: params[${i}] must be a Tensor, got ${describeValue(p)}`);
      if (!p.isWhole)
        throw new InvalidArgumentError(
          `${owner}: params[${i}] must be a whole contiguous tensor (create it with Tensor.fromArray or a layer)`,
        );
    });
    this.rate = hyper(owner, 'lr', lr, positive, '> 0');
    this.state = params.map(() => null);
  }

  /**
   * Learning rate; schedulers change it between steps. Set to a finite number ≥ 0 (a schedule may
   * anneal it to 0), else InvalidArgumentError and the rate is unchanged.
   */
  get lr(): number {
    return this.rate;
  }
  /** Sets the learning rate used from the next step: finite and ≥ 0, else InvalidArgumentError (unchanged). */
  set lr(v: number) {
    this.rate = hyper(this.constructor.name, 'lr', v, nonNegative, '≥ 0');
  }

  /** Frees every gradient (call before the next backward). */
  zeroGrad(): void {
    for (const p of this.params) {
      p.grad?.dispose();
      p.grad = null;
    }
    zeroedGrads(this.params);
  }

  /**
   * The learning rate the updates of the current step take (`lr`; Adagrad's decayed and Adamax's bias-corrected
   * rates): what `sgdStep`/`adamStep` get as `lr`, and what a captured step reads at each replay.
   */
  protected stepLr(): number {
    return this.rate;
  }

  /**
   * Applies one update to every parameter that has a gradient. Checks every parameter first and
   * throws (updating none) when one was disposed (UseAfterFreeError) or moved away from its state
   * (DeviceMismatchError). Inside `compile` a replay of it checks the same, advances stepCount and
   * updates with the learning rate of the moment (see the module's comment).
   */
  step(): void {
    this.checkParams();
    this.stepCount++;
    const be = this.params[0]?.backend;
    const run = (): void =>
      noGrad(() => {
        // state first, for every parameter: a first step's updates then follow one another (as every later
        // step's do), so that a backend grouping them (webgpu's Adam) groups the first step's too
        if (this.stateSize > 0) this.params.forEach((p, i) => p.grad && this.stateOf(i));
        this.params.forEach((p, i) => {
          if (p.grad) this.update(p, i);
        });
      });
    if (!be) {
      run();
      return;
    }
    const generation = this.generation;
    liveSection(
      be,
      {
        advance: () => {
          if (this.generation !== generation)
            throw new UseAfterFreeError(
              `${this.constructor.name}.step: the optimizer's state was disposed or moved since the step was ` +
                'captured; release the compiled function (its recordings update the old state)',
            );
          this.checkParams();
          this.stepCount++;
        },
        optimizer: () => ({ lr: this.stepLr(), step: this.stepCount }),
      },
      run,
    );
  }

  /** Throws when a parameter was disposed or moved away from its state (see step). */
  private checkParams(): void {
    this.params.forEach((p, i) => {
      if (p.isDisposed) {
        throw new UseAfterFreeError(
          `${this.constructor.name}.step: parameter ${i} (tensor ${p.id} [${p.shape.join(', ')}]) ` +
            `was disposed; an optimizer needs its parameters alive (move a model with await ` +
            `model.to(backend), which keeps them)`,
        );
      }
      const st = this.state[i];
      if (st && st.backend !== p.backend) {
        throw new DeviceMismatchError(
          `${this.constructor.name}.step: parameter ${i} is on ${p.backend.name} ` +
            `(${p.backend.deviceName}) but its optimizer state is on ${st.backend.name} ` +
            `(${st.backend.deviceName}); call await optimizer.to(backend) after moving the model`,
        );
      }
      if (p.grad && p.grad.backend !== p.backend) {
        throw new DeviceMismatchError(
          `${this.constructor.name}.step: parameter ${i} is on ${p.backend.name} but its gradient is ` +
            `on ${p.grad.backend.name}`,
        );
      }
    });
  }

  /**
   * One training step of `lossFn` (tfjs's `optimizer.minimize`): zeroGrad, `lossFn()` → a one-element
   * loss tensor, backward, step. Returns the loss (graph freed; the caller disposes it, or a scope does).
   * InvalidArgumentError when `lossFn` is not a function or does not return a Tensor.
   */
  minimize(lossFn: () => Tensor): Tensor {
    if (typeof lossFn !== 'function')
      throw new InvalidArgumentError(
        `${this.constructor.name}.minimize: lossFn must be a function, got ${describeValue(lossFn)}`,
      );
    this.zeroGrad();
    const loss = lossFn();
    if (!(loss instanceof Tensor))
      throw new InvalidArgumentError(
        `${this.constructor.name}.minimize: lossFn must return a Tensor, got ${describeValue(loss)}`,
      );
    loss.backward();
    this.step();
    return loss;
  }

  /** Updates parameter `p` (index `index` in params) in place from its gradient, without recording a graph. */
  protected abstract update(p: Tensor, index: number): void;

  /** Number of state buffers per parameter (moments, velocity). */
  protected abstract readonly stateSize: number;

  /** The state buffers of parameter i, created (zeros, on the parameter's backend) at first use. */
  protected stateOf(i: number): DeviceBuffer[] {
    const p = this.params[i]!;
    let st = this.state[i];
    if (!st) {
      const created: State = { backend: p.backend, buffers: [] };
      this.state[i] = created;
      // once: a captured first step creates the zeros now, and its replays do not zero the state again
      once(p.backend, () => {
        for (let k = 0; k < this.stateSize; k++) created.buffers.push(p.backend.full(p.shape, 0).buffer);
      });
      st = created;
    }
    return st.buffers;
  }

  /** Moves the optimizer state to `backend` (after `await model.to(backend)` once steps were taken). */
  async to(backend: ComputeBackend): Promise<this> {
    this.generation++;
    for (let i = 0; i < this.state.length; i++) {
      const st = this.state[i];
      if (!st || st.backend === backend) continue;
      const shape = this.params[i]!.shape;
      const moved: DeviceBuffer[] = [];
      for (const b of st.buffers) moved.push(backend.fromArray(await st.backend.read(b), shape).buffer);
      for (const b of st.buffers) st.backend.deallocate(b);
      this.state[i] = { backend, buffers: moved };
    }
    return this;
  }

  /** Frees the optimizer state (moments, velocities). The optimizer can step again afterwards (from zero state). */
  dispose(): void {
    this.generation++;
    this.state.forEach((st, i) => {
      for (const b of st?.buffers ?? []) st!.backend.deallocate(b);
      this.state[i] = null;
    });
  }
}

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
