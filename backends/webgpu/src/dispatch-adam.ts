/**
 * Multi-tensor Adam/AdamW on WebGPU. An optimizer calls adamStep once per parameter with the same
 * hyper-parameters; each call is held here (CommandBatch.hold) instead of encoded, and consecutive held
 * steps are encoded as one dispatch of up to `slots` parameters (kernels/adam.ts) — PyTorch's `foreach`
 * Adam without a new API. Held work is encoded before anything else is encoded, read, written or
 * submitted, so every op still sees the updates in call order.
 */
import type { AdamStepParams, DeviceBuffer, NDArray } from '@polyhal/hal';
import { adamStepConstants } from '@polyhal/hal/internal';
import type { CommandBatch } from './encoder.js';
import { adamWgsl, adamWords } from './kernels/adam.js';
import { floatBits, grid } from './layout.js';

/** At most this many parameters per dispatch, whatever the adapter's binding limits allow. */
export const MAX_ADAM_SLOTS = 8;

export interface AdamContext {
  batch: CommandBatch;
  gpu: (buffer: DeviceBuffer) => GPUBuffer;
  free: (x: NDArray) => void;
  /** Parameters per dispatch: four storage bindings each (param, grad, m, v). */
  slots: number;
}

interface HeldStep {
  buffers: GPUBuffer[];
  size: number;
}

/** The Adam steps held for the next dispatch, their hyper-parameter words and the gradients' temporaries. */
export class AdamGroups {
  private held: HeldStep[] = [];
  private words: number[] = [];
  private temps: NDArray[] = [];

  constructor(private readonly ctx: AdamContext) {}

  /**
   * Holds one validated step on param, grad (whole, float32), m and v of `param.size` elements; `temp`:
   * grad is a temporary to free once encoded. Encodes the held steps first when the hyper-parameters differ.
   */
  add(
    param: DeviceBuffer,
    grad: NDArray,
    m: DeviceBuffer,
    v: DeviceBuffer,
    hyper: AdamStepParams,
    temp: boolean,
  ): void {
    const k = adamStepConstants(hyper);
    const words = [
      hyper.lr,
      hyper.beta1,
      hyper.beta2,
      hyper.eps,
      k.decay,
      k.c1,
      k.c2,
      k.oneMinusBeta1,
      k.oneMinusBeta2,
    ].map(floatBits);
    const { batch, gpu } = this.ctx;
    if (this.held.length > 0 && words.some((w, i) => w !== this.words[i])) batch.releaseHeld();
    let buffers: GPUBuffer[];
    try {
      buffers = [gpu(param), gpu(grad.buffer), gpu(m), gpu(v)];
    } catch (e) {
      if (temp) this.ctx.free(grad);
      throw e;
    }
    this.words = words;
    this.held.push({ buffers, size: param.size });
    if (temp) this.temps.push(grad);
    batch.hold(this.encode);
    if (this.held.length >= this.ctx.slots) batch.releaseHeld();
  }

  /** Encodes the held steps as one dispatch and frees their temporaries (CommandBatch calls it). */
  private readonly encode = (): void => {
    const held = this.held;
    const temps = this.temps;
    this.held = [];
    this.temps = [];
    try {
      const n = held.length;
      if (n === 0) return;
      const params = [...this.words, 0]; // ADAM_FIXED_WORDS
      let first = 0;
      for (const h of held) {
        params.push(h.size, first);
        first += Math.ceil(h.size / 256);
      }
      const [x, y] = grid(first);
      this.ctx.batch.dispatch(
        'adamStep',
        `adam/${n}`,
        () => adamWgsl(n),
        adamWords(n),
        params,
        held.flatMap((h) => h.buffers),
        [x, y, 1],
      );
    } finally {
      for (const t of temps) this.ctx.free(t);
    }
  };
}
