/**
 * The base of the optimizers (Optimizer): the parameters, the learning rate, the per-parameter state and `step`.
 * The update of each parameter is one backend call (`adamStep`/`sgdStep`) in the subclasses (optim.ts,
 * optim-adaptive.ts), which a backend may run as one fused kernel; parameters, gradients and optimizer state stay
 * on the device — nothing is read back during training.
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
  UseAfterFreeError,
} from '@polyhal/hal';
import { hyper, nonNegative, positive } from './optim-options.js';
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
