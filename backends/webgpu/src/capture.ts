/**
 * Capture and replay on the WebGPU backend (the HAL's CaptureMethods, hal/src/capture.ts): while a
 * capture runs, the command batch reports every kernel (pipeline, bind-group layout, buffers, workgroups and
 * its params in the uniform arena), copy and submission to a Recorder, and the backend reports uploads.
 * `endCapture` turns the recording into a ReplayPlan built for replaying fast:
 * - the params of every recorded submission are laid end to end in one uniform buffer of the plan, and each
 *   kernel gets a bind group over it (created once, here), so a replay writes no params;
 * - uploads made during the capture (a lowering's constants) are staged in one buffer of the plan and
 *   replay as copies, in their place between the kernels;
 * - a replay is one command encoder, one submission: per kernel a setPipeline (when it changes), a
 *   setBindGroup and a dispatch — no validation, allocation, closures or cache lookups.
 * The buffers the recording touched are reserved in the buffer pool (pool.ts) until `release()`.
 */
import {
  type CaptureResult,
  type DType,
  type HostArray,
  InvalidArgumentError,
  ShapeMismatchError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { checkWriteData, hostToStorage, type StorageArray, storageToHost } from '@polyhal/hal/internal';
import { decodeHalf, encodeHalf } from './dispatch-half.js';
import type { BatchRecorder, CommandBatch } from './encoder.js';
import type { BufferPool } from './pool.js';
import { StagingReader } from './reads.js';

const UNIFORM_COPY_DST = 0x40 | 0x8;
/**
 * Steps per submission of a replay: the GPU starts on the first part while JavaScript encodes the next (an
 * encoded kernel costs ~5 µs of JavaScript on an H200 host: PP-OCRv4 det's 242 would otherwise all wait 1.2 ms).
 */
const REPLAY_PART = 48;
const COPY_SRC_DST = 0x4 | 0x8;

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
}

interface KernelStep {
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
}

interface CopyStep {
  readonly src: GPUBuffer | null; // null: the plan's staging buffer, at `srcOffset`
  readonly srcOffset: number;
  readonly dst: GPUBuffer;
  readonly bytes: number;
  /** An upload's data (staged at build). */
  readonly data?: Uint8Array;
}

type Step = KernelStep | CopyStep;

const isKernel = (s: Step): s is KernelStep => 'pipe' in s;

/** Receives what a capture encodes; `touched` is every GPU buffer the recorded work uses. */
export class Recorder implements BatchRecorder {
  readonly steps: Step[] = [];
  readonly segments: Uint8Array[] = [];
  readonly touched = new Set<GPUBuffer>();
  broken: string | null = null;

  dispatch(
    pipe: GPUComputePipeline,
    layout: GPUBindGroupLayout,
    bytes: number,
    offset: number,
    buffers: readonly GPUBuffer[],
    groups: readonly [number, number, number],
  ): void {
    const [x, y, z] = groups;
    this.steps.push({ pipe, layout, bytes, segment: this.segments.length, offset, buffers: [...buffers], x, y, z });
    for (const b of buffers) this.touched.add(b);
  }

  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.steps.push({ src, srcOffset: 0, dst, bytes });
    this.touched.add(src).add(dst);
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
  /** Called by release() (the backend forgets the plan). */
  readonly released: (plan: ReplayPlan) => void;
}

/** The backend's captures: the one running, if any, and the plans made and not released. */
export class Captures {
  /** The recorder of the running capture (the backend reports uploads and reads to it). */
  recorder: Recorder | null = null;
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

  /** Releases every plan (the backend's dispose). */
  releaseAll(): void {
    for (const plan of [...this.plans]) plan.release();
  }

  private stop(): void {
    this.recorder = null;
    this.ctx.batch.recorder = null;
    this.ctx.pool.protect = null;
    this.inputs = [];
  }
}

/** A recording ready to replay (the HAL's CapturedWork). */
export class ReplayPlan {
  readonly kernels: number;
  readonly copies: number;
  readonly reservedBytes: number;
  private readonly uniforms: GPUBuffer | null;
  private readonly staging: GPUBuffer | null;
  /** Per step: a kernel's pipeline, bind group and dynamic offset, or a copy. */
  private readonly encoded: (
    | { pipe: GPUComputePipeline; bind: GPUBindGroup; dyn: number[]; x: number; y: number; z: number }
    | { src: GPUBuffer; srcOffset: number; dst: GPUBuffer; bytes: number }
  )[] = [];
  private readonly reserved: GPUBuffer[];
  /** Tracker keys of the outputs (negative: scratch keys), written by each replay. */
  private readonly outKeys: number[];
  private readonly reader: StagingReader;
  private live = true;

  constructor(
    private readonly ctx: PlanContext,
    rec: Recorder,
    private readonly inputs: readonly Slot[],
    private readonly outputs: readonly Slot[],
  ) {
    const { device, batch, pool } = ctx;
    const align = Math.max(16, device.limits.minUniformBufferOffsetAlignment);
    // The params of every recorded submission, end to end (each at an aligned base).
    const bases: number[] = [];
    let total = 0;
    for (const seg of rec.segments) {
      bases.push(total);
      total = Math.ceil((total + seg.byteLength) / align) * align;
    }
    this.uniforms = total > 0 ? device.createBuffer({ size: total, usage: UNIFORM_COPY_DST }) : null;
    rec.segments.forEach((seg, i) => seg.byteLength && device.queue.writeBuffer(this.uniforms!, bases[i]!, seg));
    // The uploads, end to end in one staging buffer.
    let staged = 0;
    for (const s of rec.steps) if (!isKernel(s) && s.data) staged += s.data.byteLength;
    this.staging = staged > 0 ? device.createBuffer({ size: staged, usage: COPY_SRC_DST }) : null;
    let at = 0;
    const layoutIds = new Map<GPUBindGroupLayout, number>();
    const bufferIds = new Map<GPUBuffer, number>();
    const idOf = <K>(m: Map<K, number>, k: K): number => {
      let id = m.get(k);
      if (id === undefined) m.set(k, (id = m.size));
      return id;
    };
    const binds = new Map<string, GPUBindGroup>();
    let kernels = 0;
    let copies = 0;
    for (const s of rec.steps) {
      if (isKernel(s)) {
        const key = `${idOf(layoutIds, s.layout)}|${s.bytes}|${s.buffers.map((b) => idOf(bufferIds, b)).join(',')}`;
        let bind = binds.get(key);
        if (!bind) {
          bind = device.createBindGroup({
            layout: s.layout,
            entries: [
              { binding: 0, resource: { buffer: this.uniforms!, offset: 0, size: s.bytes } },
              ...s.buffers.map((buffer, i) => ({ binding: i + 1, resource: { buffer } })),
            ],
          });
          binds.set(key, bind);
        }
        this.encoded.push({ pipe: s.pipe, bind, dyn: [bases[s.segment]! + s.offset], x: s.x, y: s.y, z: s.z });
        kernels++;
      } else if (s.data) {
        device.queue.writeBuffer(this.staging!, at, s.data);
        this.encoded.push({ src: this.staging!, srcOffset: at, dst: s.dst, bytes: s.bytes });
        at += s.data.byteLength;
        copies++;
      } else {
        this.encoded.push({ src: s.src!, srcOffset: 0, dst: s.dst, bytes: s.bytes });
        copies++;
      }
    }
    this.kernels = kernels;
    this.copies = copies;
    const slots = new Set([...inputs, ...outputs].map((slot) => slot.gpu));
    const reserved = new Set([...rec.touched, ...slots]);
    this.reserved = [...reserved];
    pool.reserve(this.reserved);
    // What the plan alone holds: its params and staged uploads, the buffers no array holds now (intermediates
    // freed during the capture), the inputs and the outputs; not the buffers of live arrays (weights).
    let bytes = total + staged;
    for (const b of reserved) if (!batch.keys.has(b) || slots.has(b)) bytes += b.size;
    this.reservedBytes = bytes;
    this.outKeys = outputs.map(() => batch.scratchKey());
    const byKey = new Map(this.outKeys.map((k, i) => [k, outputs[i]!.gpu]));
    this.reader = new StagingReader(device, batch, (b) => byKey.get(b.id)!, ctx.lostReason);
  }

  replay(data: readonly HostArray[]): void {
    this.assertLive('replay');
    this.ctx.assertUsable('replay');
    if (data.length !== this.inputs.length)
      throw new ShapeMismatchError(`replay: ${data.length} inputs given, the capture took ${this.inputs.length}`);
    const stored: ArrayBufferView[] = this.inputs.map((slot, i) => {
      const d = data[i];
      checkWriteData(d, 'replay', slot.dtype);
      if (d.length !== slot.size)
        throw new ShapeMismatchError(`replay: input ${i} has ${d.length} elements, the capture's had ${slot.size}`);
      const s = hostToStorage(slot.dtype, d);
      return slot.half ? encodeHalf(s as Float32Array) : s;
    });
    const { batch, device } = this.ctx;
    batch.flush(); // work queued before uses the inputs' old contents
    this.inputs.forEach((slot, i) => {
      const s = stored[i]!;
      if (s.byteLength > 0) device.queue.writeBuffer(slot.gpu, 0, s.buffer, s.byteOffset, s.byteLength);
    });
    // Submitted in parts, so that the GPU starts on the first kernels while the rest are encoded.
    const n = this.encoded.length;
    for (let from = 0; from < n; from += REPLAY_PART) {
      const to = Math.min(n, from + REPLAY_PART);
      batch.replay((enc) => this.encode(enc, from, to), to === n ? this.outKeys : []);
    }
    if (n === 0) batch.replay(() => 0, this.outKeys);
  }

  async read(i: number): Promise<HostArray> {
    this.assertLive('read');
    const slot = this.outputs[i];
    if (!slot) throw new ShapeMismatchError(`read: output ${i} of ${this.outputs.length}`);
    const words = Math.max(4, Math.ceil(slot.byteLength / 4) * 4);
    const view = { id: this.outKeys[i]!, byteLength: slot.half ? words : slot.byteLength, dtype: slot.dtype };
    const raw = await this.reader.read(view as Parameters<StagingReader['read']>[0]);
    const stored: StorageArray = slot.half
      ? decodeHalf(new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2), slot.size)
      : raw;
    return storageToHost(slot.dtype, stored);
  }

  release(): void {
    if (!this.live) return;
    this.live = false;
    this.ctx.batch.flush();
    this.ctx.pool.unreserve(this.reserved);
    for (const k of this.outKeys) this.ctx.batch.tracker.forget(k);
    this.reader.destroy();
    // Destroyed after the work queued so far (destroy() waits for submitted work that uses it).
    this.uniforms?.destroy();
    this.staging?.destroy();
    this.ctx.released(this);
  }

  /** Encodes steps [from, to); returns the kernels among them. */
  private encode(enc: GPUCommandEncoder, from: number, to: number): number {
    let pass: GPUComputePassEncoder | null = null;
    let pipe: GPUComputePipeline | null = null;
    let kernels = 0;
    for (let i = from; i < to; i++) {
      const s = this.encoded[i]!;
      if ('pipe' in s) {
        if (!pass) {
          pass = enc.beginComputePass();
          pipe = null;
        }
        if (s.pipe !== pipe) pass.setPipeline((pipe = s.pipe));
        pass.setBindGroup(0, s.bind, s.dyn);
        pass.dispatchWorkgroups(s.x, s.y, s.z);
        kernels++;
      } else {
        pass?.end();
        pass = null;
        enc.copyBufferToBuffer(s.src, s.srcOffset, s.dst, 0, s.bytes);
      }
    }
    pass?.end();
    return kernels;
  }

  private assertLive(op: string): void {
    if (!this.live) throw new UseAfterFreeError(`${op}: the captured work was released`);
  }
}
