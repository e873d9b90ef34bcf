/**
 * Optimizers. The update of each parameter is one backend call (`adamStep`/`sgdStep`), which a backend
 * may run as one fused kernel; parameters, gradients and optimizer state stay on the device — nothing
 * is read back during training.
 */
import {
  type ComputeBackend,
  type DeviceBuffer,
  DeviceMismatchError,
  InvalidArgumentError,
  type NDArray,
  UseAfterFreeError,
} from '@polyhal/hal';
import { noGrad, type Tensor } from './tensor.js';

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
  /** Learning rate; schedulers change it between steps. */
  lr: number;
  /** Number of completed steps. */
  stepCount = 0;
  private readonly state: (State | null)[];
  constructor(
    readonly params: Tensor[],
    lr: number,
  ) {
    if (!(lr > 0)) throw new InvalidArgumentError(`learning rate must be > 0, got ${lr}`);
    for (const p of params) {
      if (!p.isWhole)
        throw new InvalidArgumentError(
          'optimizer parameters must be whole contiguous tensors (create them with Tensor.fromArray or a layer)',
        );
    }
    this.lr = lr;
    this.state = params.map(() => null);
  }

  /** Frees every gradient (call before the next backward). */
  zeroGrad(): void {
    for (const p of this.params) {
      p.grad?.dispose();
      p.grad = null;
    }
  }

  /**
   * Applies one update to every parameter that has a gradient. Checks every parameter first and
   * throws (updating none) when one was disposed (UseAfterFreeError) or moved away from its state
   * (DeviceMismatchError).
   */
  step(): void {
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
    this.stepCount++;
    noGrad(() => {
      this.params.forEach((p, i) => {
        if (p.grad) this.update(p, i);
      });
    });
  }

  protected abstract update(p: Tensor, index: number): void;

  /** Number of state buffers per parameter (moments, velocity). */
  protected abstract readonly stateSize: number;

  /** The state buffers of parameter i, created (zeros, on the parameter's backend) at first use. */
  protected stateOf(i: number): DeviceBuffer[] {
    const p = this.params[i]!;
    let st = this.state[i];
    if (!st) {
      st = { backend: p.backend, buffers: [] };
      this.state[i] = st;
      for (let k = 0; k < this.stateSize; k++) st.buffers.push(p.backend.full(p.shape, 0).buffer);
    }
    return st.buffers;
  }

  /** Moves the optimizer state to `backend` (after `await model.to(backend)` once steps were taken). */
  async to(backend: ComputeBackend): Promise<this> {
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
    this.state.forEach((st, i) => {
      for (const b of st?.buffers ?? []) st!.backend.deallocate(b);
      this.state[i] = null;
    });
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
  protected readonly stateSize: number;
  constructor(params: Tensor[], opts: SgdOptions) {
    super(params, opts.lr);
    this.momentum = opts.momentum ?? 0;
    this.weightDecay = opts.weightDecay ?? 0;
    this.stateSize = this.momentum > 0 ? 1 : 0;
  }
  protected update(p: Tensor, i: number): void {
    const velocity = this.momentum > 0 ? this.stateOf(i)[0]! : null;
    p.backend.sgdStep(p.value.buffer, p.grad!.value, velocity, {
      lr: this.lr,
      momentum: this.momentum,
      weightDecay: this.weightDecay,
    });
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
  protected readonly stateSize = 2;
  constructor(params: Tensor[], opts: AdamOptions = {}) {
    super(params, opts.lr ?? 1e-3);
    this.betas = opts.betas ?? [0.9, 0.999];
    this.eps = opts.eps ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0;
  }
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
        lr: this.lr,
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
  protected override readonly decoupled = true;
  constructor(params: Tensor[], opts: AdamOptions = {}) {
    super(params, { ...opts, weightDecay: opts.weightDecay ?? 0.01 });
  }
}

/** Multiplies the learning rate by `gamma` every `stepSize` epochs (call step() once per epoch). */
export class StepLR {
  private epoch = 0;
  private readonly base: number;
  constructor(
    readonly optimizer: Optimizer,
    readonly stepSize: number,
    readonly gamma = 0.1,
  ) {
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
  /**
   * lr follows half a cosine from its value at construction to `etaMin` over `tMax` steps; with
   * `warmupSteps`, it first rises linearly from base/warmupSteps to base over those steps (the
   * warm-up transformers train with), and the cosine spans the steps after them.
   */
  constructor(
    readonly optimizer: Optimizer,
    readonly tMax: number,
    readonly etaMin = 0,
    readonly warmupSteps = 0,
  ) {
    this.base = optimizer.lr;
    if (warmupSteps > 0) optimizer.lr = this.base / warmupSteps;
  }
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
