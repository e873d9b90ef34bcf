/**
 * Capture and replay on the WebGPU backend (the HAL's CaptureMethods, hal/src/capture.ts): while a
 * capture runs, the command batch reports every kernel (pipeline, bind-group layout, buffers, workgroups and
 * its params in the uniform arena), copy and submission to a Recorder, and the backend reports uploads.
 * `endCapture` turns the recording into a ReplayPlan built for replaying fast:
 * - the params of every recorded submission are laid end to end in one uniform buffer of the plan, and each
 *   kernel gets a bind group over it (created once, here), so a replay writes no params;
 * - uploads made during the capture (a lowering's constants) are staged in one buffer of the plan and
 *   replay as copies, in their place between the kernels;
 * - a replay is a few submissions (parts of 48 steps): per kernel a setPipeline (when it changes), a
 *   setBindGroup and a dispatch — no validation, allocation, closures or cache lookups.
 * The buffers the recording touched are reserved in the buffer pool (pool.ts) until `release()`. The plan
 * itself is replay-plan.ts.
 *
 * Live sections (`captureLive`, hal/src/capture.ts's LiveValues): while one runs, `Captures.live` is its values;
 * a kernel whose params come from host numbers that change per replay (an optimizer step's lr and step count, a
 * Philox stream's position: dispatch-adam.ts, dispatch-sgd.ts, dispatch-random.ts) registers a LivePatch, which
 * each replay calls, after the sections' `advance` callbacks, to write the kernel's params anew. Work run inside
 * `uncaptured` is encoded with no recorder.
 */
import {
  type CaptureResult,
  type DeviceBuffer,
  type DType,
  type ElementwiseStep,
  InvalidArgumentError,
  type LiveValues,
  type NDArray,
} from '@polyhal/hal';
import type { BatchRecorder, CommandBatch } from './encoder.js';
import type { BufferPool } from './pool.js';
import { fusePlan, type PlanFusionContext } from './plan-fusion.js';
import { mergePlan, type PlanMergeContext } from './plan-merge.js';
import { ReplayPlan } from './replay-plan.js';
import type { StagingReader } from './reads.js';

/** A buffer the replay writes (an input) or reads (an output), as the capture saw it. */
export interface Slot {
  readonly gpu: GPUBuffer;
  /** Elements. */
  readonly size: number;
  /** Bytes of the array (not of its GPU storage). */
  readonly byteLength: number;
  readonly dtype: DType;
  /** float16 in 2-byte storage. */
  readonly half: boolean;
  /** int8 or uint8 in 1-byte storage (dispatch-int8.ts). */
  readonly bytes: boolean;
}

export interface KernelStep {
  readonly pipe: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  readonly bytes: number;
  /** Index of the recorded submission whose arena holds the params, and their offset in it. */
  readonly segment: number;
  readonly offset: number;
  readonly buffers: readonly GPUBuffer[];
  readonly x: number;
  readonly y: number;
  readonly z: number;
  /** Per buffer: bound read_write (the kernel may write it). */
  readonly writes?: readonly boolean[];
  /** What the kernel computes, where a plan may fuse it (plan-fusion.ts). */
  desc?: KernelDesc;
  /** Its pipeline key and WGSL, where a plan may merge it with others (plan-merge.ts). */
  readonly key?: string;
  readonly source?: () => string;
  /**
   * A merged kernel's parts (plan-merge.ts), in binding order: each part's params (segment, offset, bytes) and
   * buffer count; its bindings are, part after part, the uniform params then the part's buffers.
   */
  readonly parts?: readonly { segment: number; offset: number; bytes: number; buffers: number }[];
}

/**
 * A recorded kernel's computation, for the plan's fusion (plan-fusion.ts): an elementwise chain (fusedElementwise's
 * steps from `root`; a unary or binary kernel is a chain of one step), or a float32 product (with its bias and
 * epilogue steps), writing the whole of `out` (of `shape`), all float32; a fused product's `keep`: the value after
 * its first `at` steps also written whole to `keep.out`. `gpus`: the GPU buffer of every HAL buffer named (valid
 * after the arrays are freed).
 */
export type KernelDesc = (
  | { readonly kind: 'elementwise'; readonly root: NDArray }
  | {
      readonly kind: 'matmul';
      readonly a: NDArray;
      readonly b: NDArray;
      readonly bias: NDArray | null;
      readonly keep?: { readonly at: number; readonly out: DeviceBuffer };
    }
) & {
  readonly steps: readonly ElementwiseStep[];
  readonly out: DeviceBuffer;
  readonly shape: readonly number[];
  readonly gpus: ReadonlyMap<number, GPUBuffer>;
};

export interface CopyStep {
  readonly src: GPUBuffer | null; // null: the plan's staging buffer, at `srcOffset`
  readonly srcOffset: number;
  readonly dst: GPUBuffer;
  readonly bytes: number;
  /** An upload's data (staged at build). */
  readonly data?: Uint8Array;
}

export type Step = KernelStep | CopyStep;

export const isKernel = (s: Step): s is KernelStep => 'pipe' in s;

/** A kernel's params (and workgroup grid, when it changes) as a replay recomputes them. */
export interface LiveParams {
  readonly params: readonly number[];
  readonly groups?: readonly [number, number, number];
}

/**
 * What a dispatch sees of a running capture (Captures.liveContext): the live section's values (null outside one)
 * and `patch`, which makes the params of the kernel encoded last a function of them.
 */
export interface LiveContext {
  readonly values: LiveValues | null;
  patch(params: () => LiveParams): void;
}

/** A kernel of the recording whose params each replay recomputes (index `step` of Recorder.steps). */
export interface LivePatch {
  readonly step: number;
  readonly params: () => LiveParams;
}

/** Receives what a capture encodes; `touched` is every GPU buffer the recorded work uses. */
export class Recorder implements BatchRecorder {
  readonly steps: Step[] = [];
  readonly segments: Uint8Array[] = [];
  readonly touched = new Set<GPUBuffer>();
  /** The buffers the recorded work writes (kernels' read_write bindings, copy and upload targets). */
  readonly written = new Set<GPUBuffer>();
  broken: string | null = null;
  /** The `advance` callbacks of the live sections, in the order they ran. */
  readonly advances: (() => void)[] = [];
  /** The kernels whose params a replay recomputes. */
  readonly patches: LivePatch[] = [];
  /** Buffers returned to the pool during the capture, each after the first `at` steps (plan-fusion.ts). */
  readonly frees: { readonly at: number; readonly gpu: GPUBuffer }[] = [];

  dispatch(
    pipe: GPUComputePipeline,
    layout: GPUBindGroupLayout,
    bytes: number,
    offset: number,
    buffers: readonly GPUBuffer[],
    groups: readonly [number, number, number],
    writes: readonly boolean[],
    key?: string,
    source?: () => string,
  ): void {
    const [x, y, z] = groups;
    const segment = this.segments.length;
    const step = { pipe, layout, bytes, segment, offset, buffers: [...buffers], x, y, z, writes, key, source };
    this.steps.push(step);
    buffers.forEach((b, i) => {
      this.touched.add(b);
      if (writes[i]) this.written.add(b);
    });
  }

  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.steps.push({ src, srcOffset: 0, dst, bytes });
    this.touched.add(src).add(dst);
    this.written.add(dst);
  }

  submitted(arena: Uint8Array): void {
    this.segments.push(arena.slice());
  }

  /** An upload of `data` into `dst` (queue.writeBuffer at this point of the work). */
  upload(dst: GPUBuffer, data: ArrayBufferView): void {
    const bytes = new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
    bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    this.steps.push({ src: null, srcOffset: 0, dst, bytes: bytes.byteLength, data: bytes });
    this.touched.add(dst);
    this.written.add(dst);
  }

  /** Describes the kernel recorded last (see KernelDesc). */
  describe(desc: KernelDesc): void {
    const last = this.steps[this.steps.length - 1];
    if (last && isKernel(last)) last.desc = desc;
  }

  /** A buffer went back to the pool: the values it held are not read after this point by the arrays' owners. */
  freed(gpu: GPUBuffer): void {
    this.frees.push({ at: this.steps.length, gpu });
  }

  /** Makes the params of the kernel recorded last a function of the live values (each replay calls `params`). */
  live(params: () => LiveParams): void {
    const step = this.steps.length - 1;
    if (step < 0 || !isKernel(this.steps[step]!)) throw new InvalidArgumentError('capture: no kernel to make live');
    this.patches.push({ step, params });
  }

  /** Marks the capture unreplayable (the first reason is kept). */
  breakWith(reason: string): void {
    this.broken ??= reason;
  }
}

/** What a plan needs of its backend. */
export interface PlanContext {
  readonly device: GPUDevice;
  readonly batch: CommandBatch;
  readonly pool: BufferPool;
  /** Throws when the device is lost. */
  readonly assertUsable: (op: string) => void;
  readonly lostReason: () => string | null;
  /** The GPU buffer of a live array of the backend (UseAfterFreeError, DeviceMismatchError otherwise). */
  readonly gpuOf: (buffer: DeviceBuffer) => GPUBuffer;
  /** A new buffer of the backend (its allocate), and its deallocate. */
  readonly allocate: (size: number, dtype: DType) => DeviceBuffer;
  readonly deallocate: (buffer: DeviceBuffer) => void;
  /** The backend's reads (a replay's copies of small outputs into staging buffers: reads.ts `adopt`). */
  readonly reader: StagingReader;
  /** Called by release() (the backend forgets the plan). */
  readonly released: (plan: ReplayPlan) => void;
  /** What the plan's fusion needs (plan-fusion.ts); absent: recordings are replayed as recorded. */
  readonly fusion?: PlanFusionContext;
  /** What the plan's merging needs (plan-merge.ts); absent: no kernels are merged. */
  readonly merge?: PlanMergeContext;
  /** Honour ReplayOptions.readOutputs (option readAheadInReplay); else reads after a replay copy as usual. */
  readonly readAhead?: boolean;
  /** Time each kernel of each replay on the GPU (option kernelTimestamps: replay-timing.ts). */
  readonly timestamps?: boolean;
  /** Called by each replay (the backend's replayKernelTimes reads the last one's). */
  readonly replayed?: (plan: ReplayPlan) => void;
}

/** The backend's captures: the one running, if any, and the plans made and not released. */
export class Captures {
  /** The recorder of the running capture (the backend reports uploads and reads to it). */
  recorder: Recorder | null = null;
  /** The live values of the section running inside the capture (captureLive), if any. */
  live: LiveValues | null = null;
  private inputs: Slot[] = [];
  private readonly plans = new Set<ReplayPlan>();
  private readonly ctx: PlanContext;

  constructor(ctx: Omit<PlanContext, 'released'>) {
    this.ctx = { ...ctx, released: (plan) => this.plans.delete(plan) };
  }

  begin(inputs: Slot[]): void {
    if (this.recorder) throw new InvalidArgumentError('beginCapture: a capture is already running');
    this.ctx.batch.flush();
    this.recorder = new Recorder();
    this.inputs = inputs;
    this.ctx.batch.recorder = this.recorder;
    this.ctx.pool.protect = this.recorder.touched;
    const rec = this.recorder;
    this.ctx.pool.onRelease = (b) => rec.freed(b);
  }

  /** `outputs` gives the output slots (it may throw: the capture stops either way). */
  end(outputs: () => Slot[]): CaptureResult {
    const rec = this.recorder;
    if (!rec) throw new InvalidArgumentError('endCapture: no capture is running');
    const inputs = this.inputs;
    let slots: Slot[];
    try {
      slots = outputs();
      this.ctx.batch.flush();
    } finally {
      this.stop();
    }
    if (rec.broken) return { broken: rec.broken };
    if (this.ctx.fusion) fusePlan(rec, this.ctx.fusion);
    if (this.ctx.merge) mergePlan(rec, this.ctx.merge);
    const plan = new ReplayPlan(this.ctx, rec, inputs, slots);
    this.plans.add(plan);
    return { work: plan };
  }

  abort(): void {
    if (!this.recorder) return;
    try {
      this.ctx.batch.flush();
    } finally {
      this.stop();
    }
  }

  /** The running capture's LiveContext; null when no capture runs (or inside `uncaptured`). */
  liveContext(): LiveContext | null {
    const rec = this.recorder;
    return rec && { values: this.live, patch: (params) => rec.live(params) };
  }

  /**
   * captureLive: runs `run` with `live` as the section's values (during a capture; `run()` otherwise). Held work
   * (Adam's grouped steps) is encoded before the section ends, so that it is recorded with these values.
   */
  runLive<T>(live: LiveValues, run: () => T): T {
    const rec = this.recorder;
    if (!rec) return run();
    if (live.advance) rec.advances.push(live.advance);
    this.ctx.batch.releaseHeld();
    const outer = this.live; // a nested section's kernels take its values; the outer's resume after it
    this.live = live;
    try {
      const r = run();
      this.ctx.batch.releaseHeld();
      return r;
    } finally {
      this.live = outer;
    }
  }

  /**
   * uncaptured: runs `run` with the recorder detached (its work is done once, not recorded), in submissions of its
   * own (the work encoded before is submitted first, with its params recorded; `run`'s after, unrecorded). The
   * buffers the recording touched are reserved meanwhile, so that an array `run` creates (an optimizer's state,
   * which outlives the capture) never gets one the replays write (an intermediate freed earlier in the capture).
   */
  runUncaptured<T>(run: () => T): T {
    const rec = this.recorder;
    if (!rec) return run();
    const { batch, pool } = this.ctx;
    batch.flush();
    const live = this.live;
    const touched = [...rec.touched];
    pool.reserve(touched);
    this.recorder = null;
    this.live = null;
    batch.recorder = null;
    try {
      return run();
    } finally {
      batch.flush();
      this.recorder = rec;
      this.live = live;
      batch.recorder = rec;
      pool.unreserve(touched);
    }
  }

  /** Releases every plan (the backend's dispose). */
  releaseAll(): void {
    for (const plan of [...this.plans]) plan.release();
  }

  private stop(): void {
    this.recorder = null;
    this.live = null;
    this.ctx.batch.recorder = null;
    this.ctx.pool.protect = null;
    this.ctx.pool.onRelease = null;
    this.inputs = [];
  }
}
