/**
 * Optimizers. The update of each parameter is one backend call (`adamStep`/`sgdStep`), which a backend
 * may run as one fused kernel; parameters, gradients and optimizer state stay on the device — nothing
 * is read back during training.
 */
import { type DeviceBuffer, InvalidArgumentError } from '@polyhal/hal';
import { add, mul } from './ops.js';
import { noGrad, type Tensor } from './tensor.js';

export abstract class Optimizer {
  /** Learning rate; schedulers change it between steps. */
  lr: number;
  /** Number of completed steps. */
  stepCount = 0;
  constructor(readonly params: Tensor[], lr: number) {
    if (!(lr > 0)) throw new InvalidArgumentError(`learning rate must be > 0, got ${lr}`);
    for (const p of params) {
      if (!p.isWhole) throw new InvalidArgumentError('optimizer parameters must be whole contiguous tensors (create them with Tensor.fromArray or a layer)');
    }
    this.lr = lr;
  }

  /** Frees every gradient (call before the next backward). */
  zeroGrad(): void {
    for (const p of this.params) {
      p.grad?.dispose();
      p.grad = null;
    }
  }

  /** Applies one update to every parameter that has a gradient. */
  step(): void {
    this.stepCount++;
    noGrad(() => {
      this.params.forEach((p, i) => {
        if (p.grad) this.update(p, i);
      });
    });
  }

  protected abstract update(p: Tensor, index: number): void;

  /** Frees the optimizer state (moments, velocities). */
  abstract dispose(): void;

  protected zerosLike(p: Tensor): DeviceBuffer {
    return p.backend.full(p.shape, 0).buffer;
  }
}

export interface SgdOptions {
  lr: number;
  momentum?: number;
  weightDecay?: number;
}

/** SGD with momentum and L2 weight decay (PyTorch's convention). */
export class SGD extends Optimizer {
  readonly momentum: number;
  readonly weightDecay: number;
  private readonly velocity: (DeviceBuffer | null)[];
  constructor(params: Tensor[], opts: SgdOptions) {
    super(params, opts.lr);
    this.momentum = opts.momentum ?? 0;
    this.weightDecay = opts.weightDecay ?? 0;
    this.velocity = params.map((p) => (this.momentum > 0 ? this.zerosLike(p) : null));
  }
  protected update(p: Tensor, i: number): void {
    p.backend.sgdStep(p.value.buffer, p.grad!.value, this.velocity[i]!, { lr: this.lr, momentum: this.momentum, weightDecay: this.weightDecay });
  }
  dispose(): void {
    this.params.forEach((p, i) => this.velocity[i] && p.backend.deallocate(this.velocity[i]!));
  }
}

export interface AdamOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/** Adam (Kingma & Ba, 2015). `weightDecay` here is L2 added to the gradient, as in PyTorch's Adam. */
export class Adam extends Optimizer {
  readonly betas: [number, number];
  readonly eps: number;
  readonly weightDecay: number;
  protected readonly decoupled: boolean = false;
  private readonly m: DeviceBuffer[];
  private readonly v: DeviceBuffer[];
  constructor(params: Tensor[], opts: AdamOptions = {}) {
    super(params, opts.lr ?? 1e-3);
    this.betas = opts.betas ?? [0.9, 0.999];
    this.eps = opts.eps ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0;
    this.m = params.map((p) => this.zerosLike(p));
    this.v = params.map((p) => this.zerosLike(p));
  }
  protected update(p: Tensor, i: number): void {
    const be = p.backend;
    let g = p.grad!;
    const coupled = !this.decoupled && this.weightDecay > 0;
    if (coupled) g = add(g, mul(p.detach(), this.weightDecay));
    be.adamStep(p.value.buffer, g.value, this.m[i]!, this.v[i]!, {
      lr: this.lr, beta1: this.betas[0], beta2: this.betas[1], eps: this.eps,
      weightDecay: this.decoupled ? this.weightDecay : 0, step: this.stepCount,
    });
    if (coupled) g.dispose();
  }
  dispose(): void {
    this.params.forEach((p, i) => {
      p.backend.deallocate(this.m[i]!);
      p.backend.deallocate(this.v[i]!);
    });
  }
  /** The first moment of parameter i (for inspection and tests). */
  moment(i: number): { m: DeviceBuffer; v: DeviceBuffer } {
    return { m: this.m[i]!, v: this.v[i]! };
  }
}

/** AdamW (Loshchilov & Hutter, 2019): decoupled weight decay, default 0.01. */
export class AdamW extends Adam {
  protected override readonly decoupled = true;
  constructor(params: Tensor[], opts: AdamOptions = {}) {
    super(params, { ...opts, weightDecay: opts.weightDecay ?? 0.01 });
  }
}

/** Multiplies the learning rate by `gamma` every `stepSize` epochs (call step() once per epoch). */
export class StepLR {
  private epoch = 0;
  private readonly base: number;
  constructor(readonly optimizer: Optimizer, readonly stepSize: number, readonly gamma = 0.1) {
    this.base = optimizer.lr;
  }
  step(): void {
    this.epoch++;
    this.optimizer.lr = this.base * this.gamma ** Math.floor(this.epoch / this.stepSize);
  }
}

/** Cosine annealing from the initial rate to `etaMin` over `tMax` steps (SGDR without restarts). */
export class CosineAnnealingLR {
  private t = 0;
  private readonly base: number;
  constructor(readonly optimizer: Optimizer, readonly tMax: number, readonly etaMin = 0) {
    this.base = optimizer.lr;
  }
  step(): void {
    this.t = Math.min(this.t + 1, this.tMax);
    this.optimizer.lr = this.etaMin + ((this.base - this.etaMin) * (1 + Math.cos((Math.PI * this.t) / this.tMax))) / 2;
  }
}

