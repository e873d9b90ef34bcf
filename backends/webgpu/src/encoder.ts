/**
 * The batch of the WebGPU backend: the command encoder of the open submission, the uniform arena
 * that stages every kernel's params, the error scopes of submissions and ops, and the submission of
 * a batch. Ops only encode work here; command buffers are submitted every `batchSize` ops, when the
 * encoded matmuls reach SUBMIT_FLOPS, when the arena is full, and before any read, write or
 * synchronize (the backend calls flush()).
 */
import { ShapeMismatchError } from '@polyhal/hal';
import type { LoopWatch } from './loop-watch.js';
import type { KernelDesc } from './capture.js';
import { PipelineCache } from './pipelines.js';
import { type Submission, SubmissionTracker } from './submissions.js';

export const UNIFORM_ARENA = 1 << 16;
// Encoded matmul work that triggers a submission: 2^30 FLOP is ~25 µs of an H200 at 40 TFLOP/s, about
// the CPU cost of encoding one op plus a submit, so a 1024² matmul goes to the GPU at once while
// streams of small ops are still batched. On the H200, matmul 1024 repeated 50 times measured
// ~19-20 TFLOP/s with every tile while the 50 were encoded before one submission.
export const SUBMIT_FLOPS = 2 ** 30;

export interface BatchOptions {
  /** Ops per submission. */
  batchSize: number;
  /** One error-scope pair per op (errorScopes 'op') as well as the one per submission. */
  opScopes: boolean;
  /** Throws when the device is lost (BackendUnavailableError naming `op`). */
  assertUsable: (op: string) => void;
  /** Called after each submission (the buffer pool hands out buffers freed before it again). */
  submitted: () => void;
  /** Counts encoded ops per turn of the event loop (warns when the loop never yields). */
  loopWatch: LoopWatch;
}

/** Hears what the batch encodes while a capture runs (capture.ts). */
export interface BatchRecorder {
  /** A kernel: its params are `bytes` at `offset` of the uniform arena of the submission being encoded. */
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
  ): void;
  /** A whole-buffer copy (from offset 0 to offset 0). */
  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void;
  /** A submission was made; `arena`: its uniform arena's contents (the staged params of its kernels). */
  submitted(arena: Uint8Array): void;
  /** What the kernel recorded last computes, where a capture's plan may fuse it (plan-fusion.ts). */
  describe?(desc: KernelDesc): void;
}

export class CommandBatch {
  /** The open submission and the outcome of every submitted one (which arrays a failure poisons). */
  readonly tracker = new SubmissionTracker();
  /** Tracker key of each GPU buffer in use: the HAL buffer id, or a negative key for scratch buffers. */
  readonly keys = new Map<GPUBuffer, number>();
  readonly pipelines: PipelineCache;
  private scratchKeys = 0;
  private encoder: GPUCommandEncoder | null = null;
  /**
   * The open compute pass: consecutive kernels share one (WebGPU orders the dispatches of a pass and
   * synchronizes their storage accesses), so a kernel costs a setPipeline, setBindGroup and dispatch, not
   * a pass of its own; a copy or the submission ends it.
   */
  private pass: GPUComputePassEncoder | null = null;
  private pending = 0;
  /** Floating-point operations encoded since the last submission (matmuls only; others are small). */
  private pendingFlops = 0;
  private readonly arena: GPUBuffer;
  private readonly arenaHost = new ArrayBuffer(UNIFORM_ARENA);
  /** The staged params as i32 words (one view, not one per kernel). */
  private readonly arenaWords = new Int32Array(this.arenaHost);
  private arenaUsed = 0;
  private readonly align: number;
  /** Work held back to be merged with the next calls of its kind (dispatch-adam.ts), encoded before anything else. */
  private held: (() => void) | null = null;
  /** Set while a capture runs: hears every kernel, copy and submission. */
  recorder: BatchRecorder | null = null;
  /** Kernels encoded and command buffers submitted since creation (kernelStats). */
  readonly stats = { dispatches: 0, submissions: 0 };

  constructor(
    private readonly device: GPUDevice,
    private readonly options: BatchOptions,
  ) {
    this.align = Math.max(16, device.limits.minUniformBufferOffsetAlignment);
    this.arena = device.createBuffer({ size: UNIFORM_ARENA, usage: 0x40 | 0x8 }); // UNIFORM | COPY_DST
    this.pipelines = new PipelineCache(device, this.arena);
  }

  /** A fresh negative tracker key for a scratch buffer of the backend. */
  scratchKey(): number {
    return --this.scratchKeys;
  }

  /**
   * The open submission (with its command encoder), started on first use: one error-scope pair per
   * submission catches what only surfaces at encoder.finish()/submit (pass and dispatch validation).
   */
  begin(): Submission {
    this.releaseHeld();
    if (!this.tracker.open) {
      this.device.pushErrorScope('out-of-memory');
      this.device.pushErrorScope('validation');
      this.encoder = this.device.createCommandEncoder();
    }
    return this.tracker.begin();
  }

  /** Encodes a buffer-to-buffer copy into the open submission (begin() first). */
  copyBufferToBuffer(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.endPass();
    this.encoder!.copyBufferToBuffer(src, 0, dst, 0, bytes);
    this.recorder?.copy(src, dst, bytes);
  }

  /**
   * Submits recorded work (capture.ts) on its own: pending work first, then one submission whose encoder
   * `encode` fills, with the error scopes of any submission; `written`: the tracker keys it writes.
   */
  replay(encode: (encoder: GPUCommandEncoder) => number, written: readonly number[]): Submission {
    this.flush();
    const sub = this.begin();
    sub.ops.push('replay');
    this.stats.dispatches += encode(this.encoder!);
    for (const k of written) this.tracker.write(k);
    return this.submit();
  }

  /**
   * Encodes one kernel: uniform params (i32 words) at binding 0, then the storage buffers. Work is submitted
   * every `batchSize` ops, or as soon as the encoded matmuls
   * reach SUBMIT_FLOPS (`flops`), so that the GPU starts on large work while the caller is still
   * encoding instead of idling until the batch fills or a read.
   */
  /** `n` ops done outside dispatch (a replayed recording's kernels and copies): the loop watch counts them. */
  countOps(n: number): void {
    this.options.loopWatch.opsDone(n);
  }

  dispatch(
    op: string,
    key: string,
    source: () => string,
    words: number,
    params: number[],
    buffers: GPUBuffer[],
    groups: [number, number, number],
    flops = 0,
  ): void {
    this.releaseHeld();
    this.options.assertUsable(op);
    this.options.loopWatch.op();
    const bytes = Math.ceil(Math.max(words, 4) / 4) * 16;
    if (bytes > UNIFORM_ARENA)
      throw new ShapeMismatchError(
        `webgpu ${op}: views of this many non-mergeable dimensions need ${bytes} bytes of kernel ` +
          `parameters, more than the ${UNIFORM_ARENA} of a uniform binding`,
      );
    if (this.arenaUsed + bytes > UNIFORM_ARENA) this.flush();
    const offset = this.arenaUsed;
    const at = offset / 4;
    this.arenaWords.set(params, at);
    this.arenaWords.fill(0, at + params.length, at + bytes / 4);
    this.arenaUsed = Math.ceil((offset + bytes) / this.align) * this.align;
    const sub = this.begin();
    sub.ops.push(op);
    // With errorScopes 'op' a scope pair names the op of errors raised at once. Only creating a pipeline or
    // a bind group can raise one (encoding errors surface at finish(), in the submission's scope), so an op
    // whose pipeline and bind group are both cached needs no scope.
    const id = this.pipelines.bindGroupId(key, bytes, buffers);
    const scoped = this.options.opScopes && !this.pipelines.cached(key, id);
    if (scoped) {
      this.device.pushErrorScope('out-of-memory');
      this.device.pushErrorScope('validation');
    }
    const { pipe, layout, writes } = this.pipelines.pipeline(key, source);
    const bind = this.pipelines.bindGroup(id, layout, bytes, buffers);
    for (let i = 0; i < buffers.length; i++) {
      const k = this.keys.get(buffers[i]!);
      if (k === undefined) continue;
      if (writes[i]) this.tracker.write(k);
      else this.tracker.read(k);
    }
    this.pass ??= this.encoder!.beginComputePass();
    this.pass.setPipeline(pipe);
    this.pass.setBindGroup(0, bind, [offset]);
    this.pass.dispatchWorkgroups(groups[0], groups[1], groups[2]);
    this.recorder?.dispatch(pipe, layout, bytes, offset, buffers, groups, writes, key, source);
    this.stats.dispatches++;
    if (scoped) {
      sub.watch(op, 'validation', this.device.popErrorScope());
      sub.watch(op, 'out-of-memory', this.device.popErrorScope());
    }
    this.pendingFlops += flops;
    if (++this.pending >= this.options.batchSize || this.pendingFlops >= SUBMIT_FLOPS) this.flush();
  }

  /** Submits the open submission (there must be one), pops its error scopes and seals it. */
  submit(): Submission {
    this.endPass();
    const enc = this.encoder!;
    this.encoder = null;
    if (this.arenaUsed > 0) this.device.queue.writeBuffer(this.arena, 0, this.arenaHost, 0, this.arenaUsed);
    this.recorder?.submitted(new Uint8Array(this.arenaHost, 0, this.arenaUsed));
    this.arenaUsed = 0;
    this.device.queue.submit([enc.finish()]);
    this.stats.submissions++;
    this.pending = 0;
    this.pendingFlops = 0;
    const sub = this.tracker.open!;
    const ops = [...new Set(sub.ops)];
    const label = ops.length === 1 ? ops[0]! : `one of ${ops.slice(0, 6).join(', ')}${ops.length > 6 ? ', …' : ''}`;
    sub.watch(label, 'validation', this.device.popErrorScope());
    sub.watch(label, 'out-of-memory', this.device.popErrorScope());
    this.tracker.seal();
    this.options.submitted();
    return sub;
  }

  private endPass(): void {
    this.pass?.end();
    this.pass = null;
  }

  /** Submits the encoded work (if any), held work included. */
  flush(): void {
    this.releaseHeld();
    if (this.encoder) this.submit();
  }

  /**
   * Holds work back: `encode` runs (once) before the next kernel, copy or submission is encoded, or at
   * releaseHeld(), so that consecutive calls of one kind can share a dispatch while every other op still
   * sees their effects in call order. Held work of another owner is encoded first.
   */
  hold(encode: () => void): void {
    if (this.held !== encode) this.releaseHeld();
    this.held = encode;
  }

  /** Encodes the held work now (if any). */
  releaseHeld(): void {
    const encode = this.held;
    if (!encode) return;
    this.held = null;
    encode();
  }

  /** Destroys the uniform arena (after a final flush()). */
  destroy(): void {
    this.arena.destroy();
  }
}
