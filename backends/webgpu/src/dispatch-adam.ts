/**
 * Multi-tensor Adam/AdamW on WebGPU. An optimizer calls adamStep once per parameter with the same
 * hyper-parameters; each call is held here (CommandBatch.hold) instead of encoded, and consecutive held
 * steps are encoded as one dispatch of up to `slots` parameters (kernels/adam.ts) — PyTorch's `foreach`
 * Adam without a new API. Held work is encoded before anything else is encoded, read, written or
 * submitted, so every op still sees the updates in call order.
 *
 * Inside a live section of a capture (capture.ts) a dispatch's params are live: each replay recomputes its words
 * from the section's current `lr` and `step` (LiveValues.optimizer), so that the bias corrections and a scheduled
 * learning rate follow the steps as the eager calls would.
 */
import type { AdamStepParams, DeviceBuffer, LiveValues, NDArray } from '@polyhal/hal';
import { adamStepConstants } from '@polyhal/hal/internal';
import type { LiveContext } from './capture.js';
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
  /** The running capture's live section and patch registration (capture.ts), null without a capture. */
  live?: () => LiveContext | null;
}

/** The hyper-parameter words of an Adam dispatch (ADAM_FIXED_WORDS but the trailing 0). */
function adamHyperWords(hyper: AdamStepParams): number[] {
  const k = adamStepConstants(hyper);
  return [hyper.lr, hyper.beta1, hyper.beta2, hyper.eps, k.decay, k.c1, k.c2, k.oneMinusBeta1, k.oneMinusBeta2].map(
    floatBits,
  );
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
  /** The hyper-parameters of the held steps, and the live values they take at replays (inside a live section). */
  private hyper: AdamStepParams | null = null;
  private liveOptimizer: LiveValues['optimizer'] | null = null;

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
    const words = adamHyperWords(hyper);
    const { batch, gpu } = this.ctx;
    const live = this.ctx.live?.()?.values?.optimizer ?? null;
    if (this.held.length > 0 && (live !== this.liveOptimizer || words.some((w, i) => w !== this.words[i])))
      batch.releaseHeld();
    let buffers: GPUBuffer[];
    try {
      buffers = [gpu(param), gpu(grad.buffer), gpu(m), gpu(v)];
    } catch (e) {
      if (temp) this.ctx.free(grad);
      throw e;
    }
    this.words = words;
    this.hyper = { ...hyper };
    this.liveOptimizer = live;
    this.held.push({ buffers, size: param.size });
    if (temp) this.temps.push(grad);
    batch.hold(this.encode);
    if (this.held.length >= this.ctx.slots) batch.releaseHeld();
  }

  /** Encodes the held steps as one dispatch and frees their temporaries (CommandBatch calls it). */
  private readonly encode = (): void => {
    const held = this.held;
    const temps = this.temps;
    const hyper = this.hyper!;
    const live = this.liveOptimizer;
    this.held = [];
    this.temps = [];
    this.liveOptimizer = null;
    try {
      const n = held.length;
      if (n === 0) return;
      const sizes: number[] = [];
      let first = 0;
      for (const h of held) {
        sizes.push(h.size, first);
        first += Math.ceil(h.size / 256);
      }
      const [x, y] = grid(first);
      this.ctx.batch.dispatch(
        'adamStep',
        `adam/${n}`,
        () => adamWgsl(n),
        adamWords(n),
        [...this.words, 0, ...sizes], // ADAM_FIXED_WORDS, then size and first workgroup per parameter
        held.flatMap((h) => h.buffers),
        [x, y, 1],
      );
      const capture = live && this.ctx.live?.();
      if (live && capture)
        capture.patch(() => {
          const { lr, step } = live();
          return { params: [...adamHyperWords({ ...hyper, lr, step }), 0, ...sizes] };
        });
    } finally {
      for (const t of temps) this.ctx.free(t);
    }
  };
}
